"""Where the autograd graph of a value was built, and through which modules.

A backward runs through every call that produced its tensor, however many
statements ago. The walk starts at an expression and follows, within one
function, each local name to its last assignment completed before the read,
and each call to its receiver and arguments. What cuts a graph stops it:
``.detach()``, ``.item()``, ``.data``, ``float()``, comparisons.

API:

- ``graph_calls(expr, scope, bindings, pos, end, unpacks=None)`` -> the
  calls the graph of ``expr`` runs back through, in no particular order. A
  name unpacked from the result of a call ``unpacks`` accepts (``fake, code
  = D(x)``, a model's) runs back through that call. A name bound by a loop,
  other tuple unpacking, ``with ... as`` or an augmented assignment (where the walk
  cannot tell what it holds), or bound only outside ``scope``, ends the walk:
  callers that report use this as "not reached", which keeps them silent.
  With ``outside``, the ``self.<attr>`` it reads that ``scope`` never
  assigns are collected there (MEM404 follows them into other methods).
- ``calls_module(call, module)`` -> ``call`` runs the module spelled
  ``module`` (``D(x)``, ``D.forward(x)``, ``model.encoder(x)`` for
  ``model``), not a method that returns no tensor (``D.parameters()``).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from memlint.analysis.scope.bindings import Bindings
from memlint.analysis.scope.names import dotted_name
from memlint.parse.traversal import visit_fast

Pos = Callable[[cst.CSTNode], tuple[int, int]]

# Results that carry no graph, whatever the receiver carried.
CUTTING_METHODS = frozenset(
    {"detach", "detach_", "item", "tolist", "numpy", "argmax", "argmin", "size", "dim", "numel", "long", "int", "bool"}
)
CUTTING_ATTRIBUTES = frozenset({"data", "shape", "dtype", "device", "requires_grad", "grad_fn"})
CUTTING_FUNCTIONS = frozenset({"float", "int", "bool", "len", "str", "round", "isinstance"})
# Methods of a module that return no tensor computed from its parameters.
_MODULE_BOOKKEEPING = frozenset(
    {
        "parameters",
        "named_parameters",
        "buffers",
        "named_buffers",
        "modules",
        "named_modules",
        "children",
        "named_children",
        "state_dict",
        "load_state_dict",
        "zero_grad",
        "train",
        "eval",
        "to",
        "cuda",
        "cpu",
        "half",
        "float",
        "double",
        "requires_grad_",
        "apply",
        "register_forward_hook",
        "register_buffer",
        "register_parameter",
        "add_module",
        "type",
    }
)


def calls_module(call: cst.Call, module: str) -> bool:
    """``call`` runs ``module`` or one of its parts: ``D(x)``, ``D.forward(x)``,
    ``model.encoder(x)`` or ``model.encode(x)`` for ``model``."""
    callee = dotted_name(call.func)
    if callee is None:
        return False
    if callee == module:
        return True
    if not callee.startswith(module + "."):
        return False
    return callee.rsplit(".", 1)[-1] not in _MODULE_BOOKKEEPING


def graph_calls(
    expr: cst.BaseExpression,
    scope: cst.CSTNode,
    bindings: Bindings,
    pos: Pos,
    end: Pos,
    unpacks: Callable[[cst.Call], bool] | None = None,
    outside: list[str] | None = None,
) -> list[cst.Call]:
    """The calls whose results the graph of ``expr`` runs back through.
    ``unpacks``: the calls whose unpacked results are followed (a model's,
    ``D_fake, D_code = self.D(G_)``); None: none. ``outside``: where to add
    the ``self.<attr>`` the graph reads that ``scope`` never assigns (set by
    another method: ``self.fake_B`` of ``forward()``)."""
    found: list[cst.Call] = []
    seen: set[int] = set()
    todo: list[cst.BaseExpression] = [expr]
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        reads: list[cst.CSTNode] = []
        _walk(node, found, reads)
        for read in reads:
            values = _last_binding(read, scope, bindings, pos, end, unpacks)
            if values:
                todo += values
            elif outside is not None:
                text = dotted_name(read)  # type: ignore[arg-type]
                if text is not None and text.startswith("self.") and not bindings.binds_in(text, scope):
                    outside.append(text)
    return found


def _last_binding(
    read: cst.CSTNode,
    scope: cst.CSTNode,
    bindings: Bindings,
    pos: Pos,
    end: Pos,
    unpacks: Callable[[cst.Call], bool] | None = None,
) -> list[cst.BaseExpression] | None:
    """The value last assigned to the name ``read`` before it is read, in
    ``scope``, with what augmented assignments between the two add (``loss =
    a; loss += b``: both ``a`` and ``b``); None when it cannot tell."""
    text = dotted_name(read)  # type: ignore[arg-type]
    if text is None or not bindings.binds_in(text, scope):
        return None
    values = bindings.values(text, scope)
    augmented = bindings.augmented_in(text, scope)
    unknown = sum(v is None for v in values) - len(augmented)
    if unknown:
        # ``D_fake, D_cont = D(G_)``: an element of a model's outputs runs
        # back through that call. Not of any function's (``img, _ =
        # augment(img, p)``: the walk would follow ``p`` too, often a number
        # computed from an older graph); any other binding we cannot
        # evaluate leaves its place unknown.
        unpacked = bindings.unpacked_in(text, scope)
        if unpacks is None or len(unpacked) != unknown or not all(unpacks(c) for c in unpacked):
            return None
        values = [*(v for v in values if v is not None), *unpacked]
    at = pos(read)
    before = [v for v in values if v is not None and end(v) <= at]
    if not before:
        return None
    last = max(before, key=pos)
    return [last, *(a.value for a in augmented if pos(a) > pos(last) and end(a) <= at)]


class _Reach(cst.CSTVisitor):
    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, found: list[cst.Call], reads: list[cst.CSTNode]) -> None:
        super().__init__()
        self.found = found
        self.reads = reads

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Comparison(self, node: cst.Comparison) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in CUTTING_METHODS:
            return False
        if isinstance(func, cst.Name) and func.value in CUTTING_FUNCTIONS:
            return False
        self.found.append(node)
        if isinstance(func, cst.Attribute):
            func.value.visit(self)  # the receiver of ``out.view(-1)``, not ``D`` in ``D.forward``
        for arg in node.args:
            arg.value.visit(self)
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if node.attr.value in CUTTING_ATTRIBUTES:
            return False
        if dotted_name(node) is not None:
            self.reads.append(node)  # ``self.fake`` assigned as a whole
        node.value.visit(self)  # ``out`` of ``out.logits``, never the attribute's own name
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.reads.append(node)


def _walk(expr: cst.CSTNode, found: list[cst.Call], reads: list[cst.CSTNode]) -> None:
    visit_fast(expr, _Reach(found, reads))
