"""Modules whose parameters are frozen.

``model.requires_grad_(False)``, ``for p in model.parameters():
p.requires_grad = False`` (or ``p.detach_()``), ``ema =
copy.deepcopy(model).requires_grad_(False)`` and the helpers of DiT and
CycleGAN (``requires_grad(ema, False)``, ``set_requires_grad(netD, False)``)
stop a model's parameters from requiring grad: they are not leaves autograd
guards, and the model's outputs carry no history for inputs that need none.
The answers are flow-insensitive, per function or module.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import dotted_name
from memlint.parse.traversal import visit_fast

_WRAPPERS = frozenset({"list", "tuple", "reversed", "tqdm", "iter"})
_HELPERS = frozenset({"requires_grad", "set_requires_grad"})


def frozen_modules(scope: cst.CSTNode) -> frozenset[str]:
    """The dotted names of modules ``scope`` freezes and never thaws
    (``requires_grad_(True)``, ``p.requires_grad = flag``)."""
    visitor = _Freezes()
    visit_fast(scope, visitor)
    return frozenset(visitor.frozen - visitor.thawed)


def ever_frozen(scope: cst.CSTNode) -> frozenset[str]:
    """The dotted names of modules ``scope`` freezes somewhere."""
    visitor = _Freezes()
    visit_fast(scope, visitor)
    return frozenset(visitor.frozen)


def parameter_loop_targets(target: cst.BaseExpression, iterable: cst.BaseExpression) -> list[tuple[str, str]]:
    """``[("p", "model")]`` for ``for p in model.parameters()``; also
    ``named_parameters()``, ``enumerate``, ``zip`` and ``list(...)``."""
    if not isinstance(iterable, cst.Call):
        return []
    func = iterable.func
    args = [a.value for a in iterable.args if a.keyword is None and not a.star]
    if isinstance(func, cst.Name) and func.value in _WRAPPERS and len(args) == 1:
        return parameter_loop_targets(target, args[0])
    if isinstance(func, cst.Name) and func.value == "enumerate" and args and isinstance(target, cst.Tuple):
        if len(target.elements) == 2:
            return parameter_loop_targets(target.elements[1].value, args[0])
        return []
    if isinstance(func, cst.Name) and func.value == "zip" and isinstance(target, cst.Tuple):
        if len(target.elements) != len(args):
            return []
        out: list[tuple[str, str]] = []
        for el, arg in zip(target.elements, args):
            out.extend(parameter_loop_targets(el.value, arg))
        return out
    if isinstance(func, cst.Attribute) and not iterable.args:
        owner = dotted_name(func.value)
        if owner is None:
            return []
        if func.attr.value == "parameters" and isinstance(target, cst.Name):
            return [(target.value, owner)]
        if func.attr.value == "named_parameters" and isinstance(target, cst.Tuple) and len(target.elements) == 2:
            el = target.elements[1].value
            if isinstance(el, cst.Name):
                return [(el.value, owner)]
    return []


def _freezes(expr: cst.BaseExpression) -> bool | None:
    """True for ``False``, False for ``True``; None (not known) otherwise."""
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "False"
    return None


def _frozen_chain(value: cst.BaseExpression) -> bool:
    """``copy.deepcopy(model).eval().requires_grad_(False)``."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        if value.func.attr.value == "requires_grad_" and value.args and _freezes(value.args[0].value):
            return True
        value = value.func.value
    return False


class _Freezes(cst.CSTVisitor):
    def __init__(self) -> None:
        self.frozen: set[str] = set()
        self.thawed: set[str] = set()
        self._loops: list[tuple[str, str]] = []  # (parameter variable, its module)

    def _record(self, key: str | None, freezes: bool | None) -> None:
        """``key`` (a module, or a loop's parameter variable) is frozen or thawed."""
        if key is None:
            return
        owners = {o for n, o in self._loops if n == key} or {key}
        (self.frozen if freezes else self.thawed).update(owners)

    def visit_For(self, node: cst.For) -> None:
        self._loops.extend(parameter_loop_targets(node.target, node.iter))

    def leave_For(self, original_node: cst.For) -> None:
        for _ in parameter_loop_targets(original_node.target, original_node.iter):
            self._loops.pop()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "detach_" and not node.args:
            key = dotted_name(func.value)
            if any(n == key for n, _ in self._loops):
                self._record(key, True)
        elif isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_":
            # ``requires_grad_()`` defaults to True
            self._record(dotted_name(func.value), _freezes(node.args[0].value) if node.args else False)
        elif isinstance(func, cst.Name) and func.value in _HELPERS and len(node.args) == 2:
            self._record(dotted_name(node.args[0].value), _freezes(node.args[1].value))

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            target = t.target
            if isinstance(target, cst.Attribute) and target.attr.value == "requires_grad":
                key = dotted_name(target.value)
                if any(n == key for n, _ in self._loops):
                    self._record(key, _freezes(node.value))
            elif _frozen_chain(node.value):
                self._record(dotted_name(target), True)
