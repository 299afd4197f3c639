"""Decorators defined in this module that run the function they wrap with grad off.

The libcst reader of project/off_decorators.py's shapes (same kinds; the
verdict is vocabulary/off_decorators.py's, shared by both):
``name = torch.no_grad()`` and ``def name(fn): return torch.no_grad()(fn)``
are ``"bare"`` (``@name``); a factory whose every return is a grad-off
context or such a function of its own (yolov5's ``smart_inference_mode``,
``(torch.inference_mode if new else torch.no_grad)()(fn)``) is ``"called"``
(``@name(...)``); so is ``def name(fn)`` returning a nested wrapper that
calls ``fn`` only inside a grad-off ``with`` (GwcNet's ``make_nograd_func``).
A function that may return anything else, fall off its end or yield is not
one: unknown, silent.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import ImportTable
from memlint.analysis.scope.own_returns import own_returns
from memlint.parse.traversal import visit_fast
from memlint.vocabulary.off_decorators import GRAD_OFF, GRAD_ON, decorator_kind, wrapper_runs_off


def off_decorators(module: cst.Module, names: ImportTable) -> dict[str, str]:
    """Module-level name -> ``"bare"`` or ``"called"``."""
    out: dict[str, str] = {}
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and _off_object(small.value, names):
                    for target in small.targets:
                        if isinstance(target.target, cst.Name):
                            out[target.target.value] = "bare"
        elif isinstance(stmt, cst.FunctionDef) and stmt.asynchronous is None:
            kind = _function_kind(stmt, names)
            if kind:
                out[stmt.name.value] = kind
    return out


def _function_kind(fn: cst.FunctionDef, names: ImportTable) -> str:
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else ()
    tails = _tails(body)
    if not tails:  # most functions stop here, before any walk
        return ""
    params = [*fn.params.posonly_params, *fn.params.params]
    first = params[0].name.value if params else None
    nested = {s.name.value: s for s in body if isinstance(s, cst.FunctionDef) and s.asynchronous is None}

    def bare(r: cst.BaseExpression) -> bool:
        if first is None:
            return False
        inner = nested.get(r.value) if isinstance(r, cst.Name) else None
        if inner is not None:
            return wrapper_runs_off(_param_uses(inner, first, names))
        return _applies_off(r, first, names)

    def made(r: cst.BaseExpression) -> bool:
        if _off_object(r, names):
            return True
        if isinstance(r, cst.Lambda):  # ``return lambda fn: torch.no_grad()(fn)``
            args = [*r.params.posonly_params, *r.params.params]
            return bool(args) and _applies_off(r.body, args[0].name.value, names)
        inner = nested.get(r.value) if isinstance(r, cst.Name) else None
        return inner is not None and _function_kind(inner, names) == "bare"

    return decorator_kind(tails, lambda: _valued_returns(fn), bare, made)


def _off_callable(expr: cst.BaseExpression, names: ImportTable) -> bool:
    if isinstance(expr, cst.IfExp):
        return _off_callable(expr.body, names) and _off_callable(expr.orelse, names)
    return names.qualified_name(expr) in GRAD_OFF


def _off_object(expr: cst.BaseExpression, names: ImportTable) -> bool:
    if isinstance(expr, cst.IfExp):
        return _off_object(expr.body, names) and _off_object(expr.orelse, names)
    if not isinstance(expr, cst.Call) or not _off_callable(expr.func, names):
        return False
    args = expr.args
    if any(a.keyword is not None or a.star for a in args):
        return False
    return not args or (len(args) == 1 and isinstance(args[0].value, cst.Name) and args[0].value.value == "True")


def _applies_off(expr: cst.BaseExpression, param: str, names: ImportTable) -> bool:
    if isinstance(expr, cst.IfExp):
        return _applies_off(expr.body, param, names) and _applies_off(expr.orelse, param, names)
    return (
        isinstance(expr, cst.Call)
        and len(expr.args) == 1
        and expr.args[0].keyword is None
        and not expr.args[0].star
        and isinstance(expr.args[0].value, cst.Name)
        and expr.args[0].value.value == param
        and _off_object(expr.func, names)
    )


class _ParamUses(cst.CSTVisitor):
    """Each name of ``param`` in a wrapper's body: (the callee of a call,
    inside a grad-off ``with`` of the wrapper's own). A nested scope naming
    it counts as a use that is neither (vocabulary's wrapper_runs_off)."""

    # Module-level, not one class per call: closures must not capture the analysis.
    def __init__(self, param: str, names: ImportTable) -> None:
        super().__init__()
        self.param = param
        self.names = names
        self.off = False
        self.callees: set[int] = set()
        self.uses: list[tuple[bool, bool]] = []

    def visit_With(self, node: cst.With) -> bool:
        outer, inner = self.off, self.off
        for item in node.items:
            visit_fast(item.item, self)
            if _off_object(item.item, self.names):
                inner = True
            elif self.names.qualified_name(item.item.func if isinstance(item.item, cst.Call) else item.item) in GRAD_ON:
                inner = False
        self.off = inner
        visit_fast(node.body, self)
        self.off = outer
        return False

    def _nested(self, node: cst.CSTNode) -> bool:
        probe = _ParamUses(self.param, self.names)
        for child in node.children:
            visit_fast(child, probe)
        if probe.uses:
            self.uses.append((False, False))
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return self._nested(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return self._nested(node)

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return self._nested(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        visit_fast(node.value, self)  # ``obj.fn`` names an attribute, not the parameter
        return False

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self.callees.add(id(node.func))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.param:
            self.uses.append((id(node) in self.callees, self.off))


def _param_uses(wrapper: cst.FunctionDef, param: str, names: ImportTable) -> list[tuple[bool, bool]]:
    p = wrapper.params
    every = [*p.posonly_params, *p.params, *p.kwonly_params]
    for star in (p.star_arg, p.star_kwarg):
        if isinstance(star, cst.Param):
            every.append(star)
    if any(a.name.value == param for a in every):
        return [(False, False)]  # shadowed: the wrapper's own parameter
    visitor = _ParamUses(param, names)
    visit_fast(wrapper.body, visitor)
    return visitor.uses


def _valued_returns(fn: cst.FunctionDef) -> list[cst.BaseExpression] | None:
    """The values of ``fn``'s own returns; None when one is bare or it yields."""
    values, yields = own_returns(fn)
    if yields or any(v is None for v in values):
        return None
    return [v for v in values if v is not None]


def _tails(body) -> list[cst.BaseExpression] | None:  # type: ignore[no-untyped-def]
    """The values of the returns ending every path through ``body`` (a return
    last, or an ``if``/``elif``/``else`` whose branches all end so); None when
    a path may fall off its end or return nothing."""
    last = body[-1] if body else None
    if isinstance(last, cst.SimpleStatementLine):
        ret = last.body[-1]
        return [ret.value] if isinstance(ret, cst.Return) and ret.value is not None else None
    if not isinstance(last, cst.If) or last.orelse is None:
        return None
    inner = _tails(last.body.body if isinstance(last.body, cst.IndentedBlock) else ())
    if isinstance(last.orelse, cst.If):  # ``elif``
        other = _tails([last.orelse])
    else:
        other = _tails(last.orelse.body.body if isinstance(last.orelse.body, cst.IndentedBlock) else ())
    return None if inner is None or other is None else inner + other
