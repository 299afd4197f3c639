"""The branches of a callee that the literal argument every call passes decides.

MOON's ``init_nets(..., device='cpu')`` is called only with ``device='cpu'``;
its body reads ``if device == 'cpu': net.to(device) else: net = net.cuda()``.
Every run takes the first arm, so the nets it returns are on the CPU: the
``else`` never runs, and ``device`` holds the CPU device where the taken arm
reads it. The function alone cannot tell; its calls can.

Two steps, each silent when it cannot tell:

- ``agreed_values``: per parameter, the one literal value (a string, a
  number, ``True``/``False``/``None``) that every call binds it to, by
  position or keyword, or leaves at a literal default. A call passing
  anything else (a name, an expression, ``*args``/``**kwargs`` from there on)
  or two calls passing different values leave the parameter out. The
  caller decides whether the calls it hands over are all the calls there are.
- ``decided_branches``: the ``if`` statements of the function (outside
  nested functions, lambdas and classes) whose test reads only such a
  parameter, compared with literals (``p``, ``not p``, ``p == "cpu"``,
  ``p != 0``, ``p is None``, ``p in ("a", "b")``), and which arm runs: True
  for the body, False for the ``else``/``elif``. A parameter the function
  rebinds (assignment, loop target, ``del``, ``global``...) decides nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import libcst as cst

from memlint.analysis.scope.callgraph import bound_params
from memlint.parse.traversal import visit_fast

# Stands for "no literal here": a call passing an expression, a parameter
# without a literal default that a call leaves out.
UNKNOWN = object()


def literal_value(expr: cst.BaseExpression | None) -> object:
    """The value of a literal string, number, ``True``, ``False`` or ``None``
    (a sign allowed on numbers); ``UNKNOWN`` for anything else."""
    if expr is None:
        return UNKNOWN
    if isinstance(expr, cst.Name) and expr.value in _CONSTANTS:
        return _CONSTANTS[expr.value]
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
        value = expr.evaluated_value
        return value if isinstance(value, str) else UNKNOWN  # a bytes literal is no device nor flag
    number = expr.expression if isinstance(expr, cst.UnaryOperation) else expr
    if isinstance(number, (cst.Integer, cst.Float)):
        amount = number.evaluated_value
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, cst.Minus):
                return -amount
            return amount if isinstance(expr.operator, cst.Plus) else UNKNOWN
        return amount
    return UNKNOWN


_CONSTANTS: dict[str, object] = {"True": True, "False": False, "None": None}


def _params(fn: cst.FunctionDef) -> list[cst.Param]:
    return [*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params]


def bound_values(call: cst.Call, fn: cst.FunctionDef) -> dict[str, object]:
    """Per parameter of ``fn`` that ``call`` binds, the ``literal_value`` it
    passes; with a ``*args`` or ``**kwargs`` in the call, every parameter it
    does not name is ``UNKNOWN`` (the splat may fill it)."""
    passed = {name: literal_value(arg.value) for arg, name in bound_params(call, fn)}
    if any(arg.star for arg in call.args):
        return {**dict.fromkeys((p.name.value for p in _params(fn)), UNKNOWN), **passed}
    return passed


def agreed_values(fn: cst.FunctionDef, calls: Sequence[Mapping[str, object]]) -> dict[str, object]:
    """Per parameter of ``fn``, the literal value every one of ``calls``
    binds it to (each call a mapping parameter -> ``literal_value`` of what
    it passes; a parameter it leaves out takes the default). Nothing when
    there is no call."""
    if not calls:
        return {}
    out: dict[str, object] = {}
    for param in _params(fn):
        name = param.name.value
        default = literal_value(param.default) if param.default is not None else UNKNOWN
        seen = [call.get(name, default) for call in calls]
        first = seen[0]
        if first is UNKNOWN:
            continue
        if all(v is not UNKNOWN and type(v) is type(first) and v == first for v in seen):
            out[name] = first
    return out


def fixed_values(fn: cst.FunctionDef, values: Mapping[str, object]) -> dict[str, object]:
    """Of ``values`` (parameter -> literal), those of parameters ``fn`` never
    rebinds: they hold the literal wherever the function reads them."""
    if not values:
        return {}
    walk = _Walk()
    visit_fast(fn.body, walk)
    return {name: value for name, value in values.items() if name not in walk.rebound}


def decided_branches(fn: cst.FunctionDef, values: Mapping[str, object]) -> dict[cst.If, bool]:
    """The ``if`` statements of ``fn`` whose test ``values`` (parameters it
    never rebinds: ``fixed_values``) decide: the statement -> True when its
    body runs, False when its ``else`` does."""
    if not values:
        return {}
    walk = _Walk()
    visit_fast(fn.body, walk)
    known = {name: value for name, value in values.items() if name not in walk.rebound}
    if not known:
        return {}
    out: dict[cst.If, bool] = {}
    for node in walk.ifs:
        taken = truth_of(node.test, known)
        if isinstance(taken, bool):
            out[node] = taken
    return out


def truth_of(test: cst.BaseExpression, values: Mapping[str, object]) -> object:
    """The truth of ``test`` when its names hold ``values``; ``UNKNOWN``
    when it reads anything else."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = truth_of(test.expression, values)
        return UNKNOWN if inner is UNKNOWN else not inner
    if isinstance(test, cst.Name) and test.value in values:
        return bool(values[test.value])
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        left = _operand(test.left, values)
        right = _operand(target.comparator, values)
        if left is UNKNOWN or right is UNKNOWN:
            return UNKNOWN
        if not (_names_param(test.left, values) or _names_param(target.comparator, values)):
            return UNKNOWN  # two literals: nothing a call decides
        return _compare(target.operator, left, right)
    return UNKNOWN


def _names_param(expr: cst.BaseExpression, values: Mapping[str, object]) -> bool:
    return isinstance(expr, cst.Name) and expr.value in values


def _operand(expr: cst.BaseExpression, values: Mapping[str, object]) -> object:
    if isinstance(expr, cst.Name) and expr.value in values:
        return values[expr.value]
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        items = [literal_value(el.value) for el in expr.elements if not isinstance(el, cst.StarredElement)]
        if len(items) != len(expr.elements) or any(v is UNKNOWN for v in items):
            return UNKNOWN
        return tuple(items)
    return literal_value(expr)


def _compare(operator: cst.BaseCompOp, left: object, right: object) -> object:
    if isinstance(operator, cst.Equal):
        return _same(left, right)
    if isinstance(operator, cst.NotEqual):
        return not _same(left, right)
    if isinstance(operator, cst.Is):
        return left is None and right is None if None in (left, right) else UNKNOWN
    if isinstance(operator, cst.IsNot):
        return not (left is None and right is None) if None in (left, right) else UNKNOWN
    if isinstance(operator, (cst.In, cst.NotIn)) and isinstance(right, tuple):
        inside = any(_same(left, item) for item in right)
        return inside if isinstance(operator, cst.In) else not inside
    return UNKNOWN


def _same(left: object, right: object) -> bool:
    # ``1 == True`` holds in Python; a flag compared with a number is read as Python reads it.
    return bool(left == right)


class _Walk(cst.CSTVisitor):
    """The function's own ``if`` statements, and the names it rebinds."""

    def __init__(self) -> None:
        self.ifs: list[cst.If] = []
        self.rebound: set[str] = set()

    def visit_If(self, node: cst.If) -> None:
        self.ifs.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # its own code, run when called

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._targets(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._targets(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._targets(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._targets(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._targets(node.name)

    def visit_Del(self, node: cst.Del) -> None:
        self._targets(node.target)

    def visit_Global(self, node: cst.Global) -> None:
        self.rebound.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.rebound.update(item.name.value for item in node.names)

    def _targets(self, target: cst.BaseExpression | None) -> None:
        for name in _names(target):
            self.rebound.add(name)


def _names(target: cst.BaseExpression | cst.CSTNode | None) -> Iterable[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            yield from _names(el.value)
    elif isinstance(target, cst.StarredElement):
        yield from _names(target.value)
