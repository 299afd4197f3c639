"""Does an ``nn.Module`` class hold no parameters? (MEM201's buffers-only modules)

melgan's ``Audio2Mel`` is an ``nn.Module`` that keeps a window and a mel
basis with ``register_buffer`` and runs ``torch.stft`` on its input: calling
it records nothing autograd did not already record for the input, so a loop
that only runs it is no forward pass that wastes a graph.

Proved, never guessed (an unproved class stays a model): every base is
``torch.nn.Module`` itself; nothing in the class builds or registers a
parameter or a submodule (``Parameter``, ``register_parameter``,
``add_module``, ``setattr``...) or mentions ``requires_grad``; and every
attribute a method stores on ``self`` is inert: a constant, a parameter of the
method whose default is a constant (``n_fft=1024``: a number, not a layer
handed in), ``self.other``, or arithmetic, tuples and f-strings of those.
A layer (``self.conv = nn.Conv1d(...)``), anything handed in without a default
(``self.backbone = backbone``) or built by a call makes it unproved.

Read on Python's ``ast`` by the project summary (summary.py: other modules'
classes) and, for a class of the module being linted, by
analysis/scope/objects.py, so both sides judge a class alike.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping

from memlint.gate.ast_fields import nodes
from memlint.project.arg_modes import dotted

_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
# Calls that may keep a parameter or a submodule: any receiver, any spelling.
_KEEPS = frozenset(
    {"Parameter", "ParameterList", "ParameterDict", "register_parameter", "add_module", "register_module"}
    | {"setattr", "__setattr__", "UninitializedParameter", "Buffer"}
)
_INERT_OPS = (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Tuple, ast.List, ast.JoinedStr, ast.IfExp)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _qualified(e: ast.AST, bindings: Mapping[str, str]) -> str:
    spelled = dotted(e)
    head, _, rest = spelled.partition(".")
    target = bindings.get(head)
    if not target:
        return spelled
    return f"{target}.{rest}" if rest else target


def holds_no_parameters(
    cls: ast.ClassDef, bindings: Mapping[str, str], walk: Callable[[ast.AST], list[ast.AST]] | None = None
) -> bool:
    """``cls`` is an ``nn.Module`` proved to own no parameter and no submodule;
    ``bindings`` maps the module's import names to qualified names.
    ``walk``: ``nodes``, or the summary's NodeLists (node_lists.py): the
    methods class_moves.py has walked are not walked again."""
    walk = walk or nodes  # looked up at the call: tests count the walks through the module's ``nodes``
    if not cls.bases or cls.keywords:
        return False
    if any(_qualified(b, bindings) not in _MODULE_BASES for b in cls.bases):
        return False
    # Every node of the class but itself, part by part (the order does not
    # matter: any one of them decides).
    parts = (*cls.decorator_list, *cls.bases, *cls.body, *getattr(cls, "type_params", ()))
    for part in parts:
        for node in walk(part):
            kind = node.__class__
            if kind is ast.Call:
                func = node.func  # type: ignore[attr-defined]
                last = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if last in _KEEPS:
                    return False
            elif (kind is ast.Attribute and node.attr == "requires_grad") or (  # type: ignore[attr-defined]
                kind is ast.keyword and node.arg == "requires_grad"  # type: ignore[attr-defined]
            ):
                return False
    for stmt in cls.body:
        if isinstance(stmt, _FUNCTIONS) and not _stores_inert(stmt, walk):
            return False
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None and not _inert(stmt.value, {}):
            return False  # a class attribute: ``proj = nn.Linear(...)`` is no parameter, but stay sure
    return True


def _stores_inert(
    method: ast.FunctionDef | ast.AsyncFunctionDef, walk: Callable[[ast.AST], list[ast.AST]] | None = None
) -> bool:
    """Every ``self.x = value`` of ``method`` stores an inert value."""
    walk = walk or nodes  # looked up at the call: tests count the walks through the module's ``nodes``
    args = method.args
    positional = [*args.posonlyargs, *args.args]
    if not positional:
        return True
    me = positional[0].arg
    defaults: dict[str, bool] = {a.arg: False for a in (*positional, *args.kwonlyargs)}
    for a, d in zip(reversed(positional), reversed(args.defaults)):
        defaults[a.arg] = isinstance(d, ast.Constant)
    for a, kd in zip(args.kwonlyargs, args.kw_defaults):
        defaults[a.arg] = isinstance(kd, ast.Constant)
    for node in walk(method):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(_on_self(t, me) for t in targets) and (node.value is None or not _inert(node.value, defaults, me)):
                return False
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.NamedExpr, ast.comprehension)):
            held = [node.target] if not isinstance(node, (ast.With, ast.AsyncWith)) else []
            held += [i.optional_vars for i in getattr(node, "items", ()) if i.optional_vars is not None]
            if any(_on_self(t, me) for t in held):
                return False
    return True


def _on_self(target: ast.AST, me: str) -> bool:
    """``target`` writes an attribute of ``me`` (``self.x``, ``self.a, self.b``)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_on_self(t, me) for t in target.elts)
    if isinstance(target, ast.Starred):
        return _on_self(target.value, me)
    return isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me


def _inert(value: ast.AST, defaults: Mapping[str, bool], me: str = "") -> bool:
    """A value that is no tensor requiring grad and no module."""
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Name):
        return defaults.get(value.id, False)
    if isinstance(value, ast.Attribute):
        return bool(me) and isinstance(value.value, ast.Name) and value.value.id == me
    if isinstance(value, ast.FormattedValue):
        return _inert(value.value, defaults, me)
    if isinstance(value, _INERT_OPS):
        return all(_inert(c, defaults, me) for c in ast.iter_child_nodes(value) if not _is_operator(c))
    return False


def _is_operator(node: ast.AST) -> bool:
    return isinstance(node, (ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.expr_context))
