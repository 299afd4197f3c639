"""Decorators defined in this module that run the function they wrap with grad off.

The libcst reader of project/off_decorators.py's shapes (same kinds; the
verdict is vocabulary/off_decorators.py's, shared by both):
``name = torch.no_grad()`` and ``def name(fn): return torch.no_grad()(fn)``
are ``"bare"`` (``@name``); a factory whose every return is a grad-off
context or such a function of its own (yolov5's ``smart_inference_mode``,
``(torch.inference_mode if new else torch.no_grad)()(fn)``) is ``"called"``
(``@name(...)``). A function that may return anything else, fall off its
end or yield is not one: unknown, silent.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import ImportTable
from memlint.analysis.scope.own_returns import own_returns
from memlint.vocabulary.off_decorators import GRAD_OFF, decorator_kind


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
        return first is not None and _applies_off(r, first, names)

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
