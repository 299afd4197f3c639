"""Tensors created as leaves that require grad, across scopes.

A manual SGD step ``w -= lr * w.grad`` outside ``no_grad`` raises when ``w``
is such a leaf. MEM401 follows leaves created in the function it reads; this
module adds the ones created elsewhere:

- ``creates_leaf(value, names)``: ``torch.randn(..., requires_grad=True)``,
  ``x.requires_grad_()``, ``nn.Parameter(...)``.
- ``module_leaf(name, fn)``: inside ``fn``, ``name`` is a variable of an
  enclosing function or of the module (not a parameter or local of ``fn``,
  or declared ``global``) and every binding of it there creates a leaf.
- ``leaf_list(iterable, fn)``: ``for p in params`` where ``params`` is a list
  or tuple of such leaves (``[w, b]``, ``[torch.zeros(3, requires_grad=True),
  ...]``), bound in ``fn`` or at module level, or the result of a function of
  this module that only returns such lists (``params = init_params()``).

Every binding must agree; anything else is not a leaf (silence).
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.autograd.history import param_names
from memlint.analysis.scope.callgraph import bound_params
from memlint.analysis.scope.names import ImportTable, dotted_name
from memlint.analysis.scope.own_returns import own_returns
from memlint.analysis.training.loops import local_names

LEAF_FACTORIES = frozenset(
    {
        "tensor",
        "zeros",
        "ones",
        "randn",
        "rand",
        "empty",
        "full",
        "arange",
        "linspace",
        "logspace",
        "eye",
        "randint",
        "normal",
        "zeros_like",
        "ones_like",
        "randn_like",
        "rand_like",
        "empty_like",
        "full_like",
    }
)
PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})


def _literal(expr: cst.BaseExpression, value: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == value


def creates_leaf(value: cst.BaseExpression, names: ImportTable) -> bool:
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_":
        return not value.args or _literal(value.args[0].value, "True")
    qn = names.call_name(value) or ""
    rg = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "requires_grad"), None)
    if qn in PARAMETER_CLASSES:
        return rg is None or not _literal(rg, "False")
    head, _, last = qn.rpartition(".")
    return head == "torch" and last in LEAF_FACTORIES and rg is not None and _literal(rg, "True")


class LeafTable:
    def __init__(self, facts) -> None:
        self.facts = facts
        self._locals: dict[cst.FunctionDef, set[str]] = {}
        self._busy: set[tuple[cst.FunctionDef, str]] = set()

    def _module_values(self, name: str) -> list[cst.BaseExpression | None]:
        module = self.facts.module
        return self.facts.bindings.values_in(name, module)

    def _is_global_in(self, name: str, fn: cst.FunctionDef) -> bool:
        if fn not in self._locals:
            self._locals[fn] = local_names(fn)
        return name not in self._locals[fn]

    def _outer_values(self, name: str, fn: cst.FunctionDef) -> list[cst.BaseExpression | None]:
        """The bindings of the variable ``name`` refers to in ``fn`` when
        ``fn`` does not bind it: those of the nearest enclosing function that
        does (a closure; none for a parameter), else the module's."""
        owner = self.facts.calls.owner.get(fn)
        while isinstance(owner, cst.FunctionDef):
            if not self._is_global_in(name, owner):
                return [] if name in param_names(owner) else self.facts.bindings.values_in(name, owner)
            owner = self.facts.calls.owner.get(owner)
        return self._module_values(name)

    def module_leaf(self, name: str, fn: cst.FunctionDef) -> bool:
        """``name`` in ``fn`` is a leaf created in an enclosing scope."""
        if not self._is_global_in(name, fn):
            return False
        values = self._outer_values(name, fn)
        return bool(values) and all(v is not None and creates_leaf(v, self.facts.names) for v in values)

    def leaf_list(self, iterable: cst.BaseExpression, scope) -> bool:
        key = dotted_name(iterable) if isinstance(iterable, cst.Name) else None
        if key is None:
            return False
        bindings = self.facts.bindings
        if isinstance(scope, cst.FunctionDef) and not self._is_global_in(key, scope):
            values = bindings.values_in(key, scope)
            fn = scope
            if not values and key in param_names(scope):
                return self._passed_leaf_lists(key, scope)
        elif isinstance(scope, cst.FunctionDef):
            values = self._outer_values(key, scope)
            fn = scope
        else:
            values = self._module_values(key)
            fn = None
        return bool(values) and all(v is not None and self._leaves_literal(v, fn) for v in values)

    def _passed_leaf_lists(self, param: str, fn: cst.FunctionDef) -> bool:
        """Every call site of ``fn`` in this module passes a list of leaves as ``param``."""
        calls = self.facts.calls
        sites = calls.call_sites.get(fn, [])
        if not sites or fn in calls.escapes or (fn, param) in self._busy:
            return False  # a recursive call proves nothing
        self._busy.add((fn, param))
        try:
            for site in sites:
                arg = next((a for a, p in bound_params(site, fn) if p == param), None)
                if arg is None or not isinstance(arg.value, cst.Name):
                    return False
                caller = calls.scope_of_call(site)
                if caller is None or not self.leaf_list(arg.value, caller):
                    return False
            return True
        finally:
            self._busy.discard((fn, param))

    def _leaves_literal(self, value: cst.BaseExpression, fn, depth: int = 0) -> bool:
        """``[w, b]``, ``(torch.zeros(3, requires_grad=True), ...)``, or a call
        of a function of this module that only returns such lists."""
        if isinstance(value, (cst.List, cst.Tuple)):
            if not value.elements:
                return False
            for el in value.elements:
                if isinstance(el, cst.StarredElement):
                    return False
                v = el.value
                if creates_leaf(v, self.facts.names):
                    continue
                if isinstance(v, cst.Name) and self._leaf_name(v.value, fn):
                    continue
                return False
            return True
        if isinstance(value, cst.Call) and depth < 2:
            callee = self.facts.calls.resolve(value)
            if callee is None:
                return False
            returns, _ = own_returns(callee)
            return bool(returns) and all(r is not None and self._leaves_literal(r, callee, depth + 1) for r in returns)
        return False

    def _leaf_name(self, name: str, fn) -> bool:
        if fn is not None and not self._is_global_in(name, fn):
            values = self.facts.bindings.values_in(name, fn)
        elif fn is not None:
            values = self._outer_values(name, fn)
        else:
            values = self._module_values(name)
        return bool(values) and all(v is not None and creates_leaf(v, self.facts.names) for v in values)
