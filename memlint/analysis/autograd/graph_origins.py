"""Which computed values the autograd graph of an expression runs through,
flow-sensitively, within one function.

``graph_reach`` answers "through which calls"; this answers "through which
assignments": two backward calls share buffers only when both graphs run
through the same computed value (``feats`` read by two losses), so a value
recomputed under the same name (``actions, log_probs = actor.sample(s)``
twice in an SAC update) or cut by ``.detach()`` does not count.

API:

- ``dominates(stmt, read, facts)`` -> every path to ``read`` runs ``stmt``.
- ``graph_origins(expr, scope, facts)`` -> ``Origins``:
  ``bindings``, the assignment statements of ``scope`` whose value (with a
  graph) the graph of ``expr`` runs through; ``outside``, the names and
  attributes it reads that are not assigned before the read in ``scope``
  (parameters, ``self.fake``, globals): they may hold a graph built
  elsewhere; ``complete`` is False where the walk cannot tell what a name
  holds (loop-carried, bound by a loop or ``with``, an augmented or
  conditional assignment, a container filled in place, a comprehension):
  callers stay silent then.

A name's value is its last assignment completed before the read, when that
assignment is in the same block as the read or an enclosing one (so every
path to the read runs it). Module objects (``self``, ``self.actor`` built
by a class constructor, imported modules) hold no graph of their own: their
calls build a fresh one. Tensor factories (``torch.tensor``, ``torch.zeros``,
``torch.autograd.Variable``),
numpy, ``.detach()``, ``.item()``, ``.data``, comparisons and the targets
of a loop over a data loader (``for x, y in loader``) hold none.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from memlint.analysis.autograd.graph_reach import CUTTING_ATTRIBUTES, CUTTING_FUNCTIONS, CUTTING_METHODS
from memlint.analysis.autograd.history import param_names
from memlint.analysis.scope.blocks import inside
from memlint.analysis.scope.names import dotted_name
from memlint.parse.traversal import visit_fast
from memlint.vocabulary.tokens import DATA_TOKENS

# Results that are new leaves, whatever their arguments hold.
_FACTORIES = frozenset(
    {
        "tensor",
        "Tensor",
        "FloatTensor",
        "LongTensor",
        "DoubleTensor",
        "IntTensor",
        "BoolTensor",
        "ByteTensor",
        "zeros",
        "ones",
        "empty",
        "full",
        "randn",
        "rand",
        "randint",
        "randperm",
        "arange",
        "linspace",
        "eye",
        "zeros_like",
        "ones_like",
        "empty_like",
        "full_like",
        "randn_like",
        "rand_like",
        "from_numpy",
        "no_grad",
        # ``Variable(x, requires_grad=True)`` detaches ``x`` (the legacy
        # constructor copies ``data.detach()``): a new leaf, as a penalty's
        # interpolated input is.
        "Variable",
    }
)
# Tensor methods whose arguments are shapes, devices or dtypes, not data.
_SHAPE_METHODS = frozenset(
    {
        "to",
        "view",
        "reshape",
        "cuda",
        "cpu",
        "type",
        "permute",
        "transpose",
        "expand",
        "repeat",
        "squeeze",
        "unsqueeze",
        "flatten",
        "float",
        "double",
        "half",
        "contiguous",
        "view_as",
        "reshape_as",
        "type_as",
        "size",
    }
)
_CONTAINER_ADD = frozenset({"append", "extend", "insert", "add", "appendleft", "update", "put", "setdefault"})

# What a value is: no graph (a number, a leaf tensor), maybe a graph, or a module-like object.
_NONE, _GRAPH, _OBJECT = 0, 1, 2


@dataclass
class Origins:
    bindings: set = field(default_factory=set)
    outside: set = field(default_factory=set)
    complete: bool = True

    def keys(self) -> set[str]:
        """The names assigned by ``bindings``."""
        out: set[str] = set()
        for stmt in self.bindings:
            for t in stmt.targets:
                out |= _target_keys(t.target)
        return out


def graph_origins(expr: cst.BaseExpression, scope: cst.CSTNode, facts) -> Origins:
    walk = _Walk(scope, facts)
    walk.eval(expr)
    return walk.out


class _Walk:
    def __init__(self, scope: cst.CSTNode, facts) -> None:
        self.scope = scope
        self.facts = facts
        self.index = facts.recurrent.bindings_in(scope)
        self.parents = facts.calls.parents
        self.out = Origins()
        self.memo: dict[cst.CSTNode, int] = {}
        self.mutated = _mutated_keys(scope)
        self.declared: set[str] | None = None  # ``global``/``nonlocal`` names, on first need

    # -- expressions -------------------------------------------------------
    def eval(self, node: cst.CSTNode) -> int:
        if isinstance(node, cst.Name):
            if node.value in ("True", "False", "None"):
                return _NONE
            return self.read(node, node.value)
        if isinstance(node, cst.Attribute):
            if node.attr.value in CUTTING_ATTRIBUTES:
                return _NONE
            key = dotted_name(node)
            if key is None:
                return self.eval(node.value)
            if self.facts.names.qualified_name(node) is not None:
                return _OBJECT  # ``torch.float``, ``np.pi``
            return self.read(node, key)
        if isinstance(node, cst.Call):
            return self.call(node)
        if isinstance(node, cst.Subscript):
            return self.eval(node.value)
        if isinstance(node, cst.BinaryOperation):
            return _tensor(self.eval(node.left)) | _tensor(self.eval(node.right))
        if isinstance(node, cst.UnaryOperation):
            return _tensor(self.eval(node.expression))
        if isinstance(node, cst.BooleanOperation):
            return _tensor(self.eval(node.left)) | _tensor(self.eval(node.right))
        if isinstance(node, cst.IfExp):
            return _tensor(self.eval(node.body)) | _tensor(self.eval(node.orelse))
        if isinstance(node, (cst.Tuple, cst.List)):
            found = _NONE
            for el in node.elements:
                found |= _tensor(self.eval(el.value))
            return found
        if isinstance(node, (cst.Comparison, cst.Lambda, cst.BaseNumber, cst.BaseString, cst.Ellipsis)):
            return _NONE
        self.out.complete = False  # comprehensions, dicts, starred, await...
        return _GRAPH

    def call(self, node: cst.Call) -> int:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in CUTTING_METHODS:
            return _NONE
        if isinstance(func, cst.Name) and func.value in CUTTING_FUNCTIONS:
            return _NONE
        qn = self.facts.names.call_name(node)
        if qn is not None:
            head, _, last = qn.rpartition(".")
            if qn.split(".")[0] == "numpy" or (head.split(".")[0] == "torch" and last in _FACTORIES):
                return _NONE
        receiver = _OBJECT  # a function or a module called directly
        if isinstance(func, cst.Attribute) and qn is None:
            receiver = self.eval(func.value)
        elif not isinstance(func, (cst.Name, cst.Attribute)):
            receiver = _tensor(self.eval(func))
        args = _NONE
        if not (isinstance(func, cst.Attribute) and func.attr.value in _SHAPE_METHODS):
            for arg in node.args:
                args |= _tensor(self.eval(arg.value))
        if receiver == _OBJECT and qn is None:
            return _GRAPH  # a model, a method of one, an unknown function: a fresh graph
        if qn is not None and qn.split(".")[0] != "torch":
            return _GRAPH  # an imported function we do not know
        return _tensor(receiver) | args

    # -- names ---------------------------------------------------------------
    def read(self, node: cst.CSTNode, key: str) -> int:
        facts = self.facts
        bindings = self.index.get(key, [])
        at = facts.calls.pos(node)
        before = [
            b
            for b in bindings
            if facts.calls.end(b.stmt) <= at or (b.kind == "for" and inside(node, b.stmt.body, self.parents))
        ]
        last = max(before, key=lambda b: b.pos) if before else None
        for loop in facts.loops.enclosing_loops(node):
            if (last is None or not loop.contains(last.pos)) and any(
                b not in before and loop.contains(b.pos) for b in bindings
            ):
                self.out.complete = False  # loop-carried: the previous iteration's value
                return _GRAPH
        if key in self.mutated:
            self.out.complete = False
            return _GRAPH
        if not before:
            if key in ("self", "cls"):
                return _OBJECT
            if "." in key and self._object_attribute(key):
                return _OBJECT
            self.out.outside.add(key)
            return _GRAPH
        b = last
        assert b is not None  # ``before`` is not empty
        if b.kind == "for" and self._batch_target(b.stmt, node):
            return _NONE
        if b.kind != "assign" or b.value is None or not isinstance(b.stmt, cst.Assign):
            self.out.complete = False
            return _GRAPH
        if not self._dominates(b.stmt, node):
            return self._branches(node, before)
        if b.stmt in self.memo:
            return self.memo[b.stmt]
        self.memo[b.stmt] = _GRAPH  # a cycle cannot happen in straight-line code; be safe
        kind = self.eval(b.value)
        self.memo[b.stmt] = kind
        if kind == _GRAPH:
            self.out.bindings.add(b.stmt)
        return kind

    def _branches(self, read: cst.CSTNode, before: list) -> int:
        """The last assignment before ``read`` runs only on some paths
        (``if gpu: z = z.cuda()``, ``if supervised: y = ... else: y = ...``):
        the value is one of the assignments back to one every path runs (or
        to the target of the data loop around the read).
        When each of them holds no graph (tensor factories, data batches),
        neither does the read; otherwise the walk cannot tell."""
        for b in sorted(before, key=lambda b: b.pos, reverse=True):
            if b.kind == "for" and self._batch_target(b.stmt, read):
                return _NONE  # ``for x, y in loader:`` runs before every read in its body
            if b.kind != "assign" or b.value is None or not isinstance(b.stmt, cst.Assign):
                break
            if b.stmt not in self.memo:
                self.memo[b.stmt] = _GRAPH  # be safe on a cycle
                self.memo[b.stmt] = self.eval(b.value)
            if self.memo[b.stmt] != _NONE:
                break
            if self._dominates(b.stmt, read):
                return _NONE
        else:
            # Every assignment before the read holds no graph and none runs
            # on every path: a local name (no parameter, global or
            # attribute) read unassigned would raise, so it holds one of them.
            if self._plain_local(before[0].key):
                return _NONE
        self.out.complete = False
        return _GRAPH

    def _plain_local(self, key: str) -> bool:
        scope = self.scope
        if "." in key or not isinstance(scope, cst.FunctionDef) or key in param_names(scope):
            return False
        if self.declared is None:
            found = _Declared()
            visit_fast(scope, found)
            self.declared = found.names
        return key not in self.declared

    def _dominates(self, stmt: cst.CSTNode, read: cst.CSTNode) -> bool:
        return dominates(stmt, read, self.facts)

    def _batch_target(self, loop_node: cst.CSTNode, read: cst.CSTNode) -> bool:
        """``x`` of ``for x, y in loader:`` read inside that loop: a batch of
        data, no graph."""
        for info in self.facts.loops.enclosing_loops(read):
            if info.node is loop_node:
                return bool(info.data_tokens & DATA_TOKENS)
        return False

    def _object_attribute(self, key: str) -> bool:
        """``self.actor`` is only ever assigned a class instance (``ActorNetwork(...)``)."""
        values = self.facts.bindings.values(key, self.scope)
        if not values:
            return False
        for v in values:
            if not isinstance(v, cst.Call):
                return False
            name = dotted_name(v.func)
            if name is None or not name.rsplit(".", 1)[-1][:1].isupper():
                return False
        return True


def dominates(stmt: cst.CSTNode, read: cst.CSTNode, facts) -> bool:
    """Every path from the function's start to ``read`` runs the simple
    statement ``stmt``: the block holding ``stmt`` holds ``read``, and no
    loop around ``stmt`` leaves ``read`` outside."""
    parents = facts.calls.parents
    line = parents.get(stmt)
    block = parents.get(line) if line is not None else None
    if block is None or not inside(read, block, parents):
        return False
    return all(loop.contains(facts.calls.pos(read)) for loop in facts.loops.enclosing_loops(stmt))


def _tensor(kind: int) -> int:
    """A module object used as a value (``x + model``) is no graph of its own."""
    return _GRAPH if kind == _GRAPH else _NONE


def _target_keys(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        out: set[str] = set()
        for el in target.elements:
            out |= _target_keys(el.value)
        return out
    if isinstance(target, cst.StarredElement):
        return _target_keys(target.value)
    key = dotted_name(target)
    return {key} if key is not None else set()


class _Declared(cst.CSTVisitor):
    """The names a function declares ``global`` or ``nonlocal``."""

    # A module-level class, not one per call: see _MutatedKeys.
    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def visit_Global(self, node: cst.Global) -> None:
        self.names.update(n.name.value for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.names.update(n.name.value for n in node.names)


class _MutatedKeys(cst.CSTVisitor):
    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, scope: cst.CSTNode) -> None:
        super().__init__()
        self.scope = scope
        self.found: set[str] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.scope

    def visit_Assign(self, node: cst.Assign) -> None:
        v = node.value
        if isinstance(v, cst.UnaryOperation):
            v = v.expression
        if isinstance(v, (cst.BaseNumber, cst.BaseString)) or (
            isinstance(v, cst.Name) and v.value in ("True", "False", "None")
        ):
            return
        for t in node.targets:
            if isinstance(t.target, cst.Subscript):
                key = dotted_name(t.target.value)
                if key is not None:
                    self.found.add(key)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _CONTAINER_ADD:
            key = dotted_name(func.value)
            if key is not None:
                self.found.add(key)


def _mutated_keys(scope: cst.CSTNode) -> set[str]:
    """Names filled in place in ``scope``: ``buf[i] = x``, ``buf.append(x)``.
    ``v[done] = 0.0`` (a constant) stores no graph."""
    visitor = _MutatedKeys(scope)
    visit_fast(scope, visitor)
    return visitor.found
