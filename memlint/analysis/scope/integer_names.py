"""Names a function binds only to integers (image sizes, counts).

nerf-pytorch's ``main``: ``H, W, focal = None, None, None``, then
``H, W, focal = hwf`` and ``H, W = int(H), int(W)`` before the training loop,
which builds ``torch.arange(H).to(device)`` on every iteration. A name whose
every binding in its function is an integer (a literal, ``int(...)``,
``len(...)``, arithmetic on them), ``None``, or an item unpacked from a value
that one of those ``int(...)`` bindings then converts, holds a number: nothing
in a loop can change it in place, so a loop that does not rebind it sees one
value on every iteration.

Any other binding says nothing: a parameter, a loop target, ``with ... as``,
an import, an augmented or annotated assignment, a walrus, a value that is
no integer (``H = img.shape[0]`` may be an int, but is not shown to be one),
and a name bound only by unpacking (``H, W = size``, never converted).
"""

from __future__ import annotations

import libcst as cst

from memlint.parse.traversal import visit_fast

_INT = "int"
_NONE = "none"
_UNPACKED = "unpacked"
_OTHER = "other"
_INTEGER_CALLS = frozenset({"int", "len"})


def _kind(value: cst.BaseExpression) -> str:
    if isinstance(value, cst.Integer):
        return _INT
    if isinstance(value, cst.Name) and value.value == "None":
        return _NONE
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in _INTEGER_CALLS:
        return _INT
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        return _kind(value.expression)
    if isinstance(value, cst.BinaryOperation) and isinstance(
        value.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide)
    ):
        return _INT if _kind(value.left) == _INT and _kind(value.right) == _INT else _OTHER
    return _OTHER


class _Kinds(cst.CSTVisitor):
    """Per name, the kinds of its bindings in one scope (nested scopes skipped)."""

    def __init__(self, scope: cst.CSTNode) -> None:
        self.scope = scope
        self.kinds: dict[str, set[str]] = {}

    def _add(self, name: str, kind: str) -> None:
        self.kinds.setdefault(name, set()).add(kind)

    def _bind(self, target: cst.BaseExpression, kind: str) -> None:
        if isinstance(target, cst.Name):
            self._add(target.value, kind)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value, kind)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, _OTHER)

    def _pair(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            targets = target.elements
            values = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
            starred = any(isinstance(e, cst.StarredElement) for e in (*targets, *(values or ())))
            if values is None or starred or len(values) != len(targets):
                self._bind(target, _UNPACKED)
                return
            for t, v in zip(targets, values):
                self._pair(t.value, v.value)
        else:
            self._bind(target, _kind(value))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if node is self.scope:
            params = node.params
            for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                self._add(param.name.value, _OTHER)
            for star in (params.star_arg, params.star_kwarg):
                if isinstance(star, cst.Param):
                    self._add(star.name.value, _OTHER)
            return True
        self._add(node.name.value, _OTHER)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._add(node.name.value, _OTHER)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._pair(target.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, _OTHER)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, _OTHER)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, _OTHER)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, _OTHER)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target, _OTHER)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._bind(node.name, _OTHER)  # ``with ... as x``, ``except E as x``, ``import a as x``

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None:
            self._add((node.evaluated_name or "").split(".")[0], _OTHER)

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self._add(item.name.value, _OTHER)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        for item in node.names:
            self._add(item.name.value, _OTHER)


class IntegerNames:
    """Which names a scope binds only to integers, read once per scope asked."""

    def __init__(self) -> None:
        self._read: dict[int, dict[str, set[str]]] = {}

    def holds_integer(self, scope: cst.FunctionDef | cst.Module, name: str) -> bool:
        """Every binding of ``name`` in ``scope`` is an integer or ``None``, or
        an unpacked item, and at least one is an integer."""
        found = self._read.get(id(scope))
        if found is None:
            visitor = _Kinds(scope)
            visit_fast(scope, visitor)
            found = self._read[id(scope)] = visitor.kinds
        kinds = found.get(name, set())
        return _INT in kinds and not kinds & {_OTHER}
