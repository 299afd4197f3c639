"""Module-level decorators of the project's own that run a function with grad off.

yolov5's ``@smart_inference_mode()`` (utils/torch_utils.py) is a factory
returning ``lambda fn: (torch.inference_mode if new else torch.no_grad)()(fn)``:
the function it decorates runs with grad off on every torch, yet nothing in
the decorated module spells ``no_grad``. Per module, the names whose use as
a decorator surely turns grad off, and how they are written:

- ``"bare"``: ``@name`` — ``name = torch.no_grad()``, or ``def name(fn)``
  whose every return is a grad-off context applied to ``fn``
  (``torch.no_grad()(fn)``; either branch of a version test counts), or a
  nested wrapper that calls ``fn`` only inside a grad-off ``with`` (GwcNet's
  ``make_nograd_func``, vocabulary's wrapper_runs_off);
- ``"called"``: ``@name(...)`` — a factory whose every return is a grad-off
  context (``return torch.inference_mode()``) or a function of its own of
  the ``"bare"`` kind.

A function that may return anything else (``fn`` itself when a flag is off),
falls off its end, or yields is not listed: unknown, and unknown stays
silent. The analysis reads the same shapes on libcst
(analysis/autograd/off_decorators.py); both take their verdict from
vocabulary/off_decorators.py. This list travels in the summary.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from memlint.gate.ast_fields import children
from memlint.vocabulary.off_decorators import GRAD_OFF, GRAD_ON, decorator_kind, wrapper_runs_off

Qualify = Callable[[ast.expr], "str | None"]


def off_decorators(tree: ast.Module, bindings: dict[str, str]) -> dict[str, str]:
    """Module-level name -> ``"bare"`` or ``"called"`` (see the module doc)."""

    def qualify(expr: ast.expr) -> str | None:
        parts: list[str] = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name):
            return None
        head = bindings.get(expr.id)
        if head is None:
            return None
        return ".".join([head, *reversed(parts)])

    out: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and _off_object(stmt.value, qualify):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = "bare"
        elif isinstance(stmt, ast.FunctionDef):
            kind = function_kind(stmt, qualify)
            if kind:
                out[stmt.name] = kind
    return out


def function_kind(fn: ast.FunctionDef, qualify: Qualify) -> str:
    tails = _tails(fn.body)
    if not tails:  # most functions stop here, before any walk
        return ""
    params = fn.args.posonlyargs + fn.args.args
    first = params[0].arg if params else None
    nested = {s.name: s for s in fn.body if isinstance(s, ast.FunctionDef)}

    def bare(r: ast.expr) -> bool:
        if first is None:
            return False
        inner = nested.get(r.id) if isinstance(r, ast.Name) else None
        if inner is not None:
            return wrapper_runs_off(_param_uses(inner, first, qualify))
        return _applies_off(r, first, qualify)

    def made(r: ast.expr) -> bool:
        if _off_object(r, qualify):
            return True
        if isinstance(r, ast.Lambda):  # ``return lambda fn: torch.no_grad()(fn)``
            args = r.args.posonlyargs + r.args.args
            return bool(args) and _applies_off(r.body, args[0].arg, qualify)
        inner = nested.get(r.id) if isinstance(r, ast.Name) else None
        return inner is not None and function_kind(inner, qualify) == "bare"

    return decorator_kind(tails, lambda: _own_returns(fn), bare, made)


def _off_callable(expr: ast.expr, qualify: Qualify) -> bool:
    """``torch.no_grad``, ``torch.inference_mode``, or a conditional of them."""
    if isinstance(expr, ast.IfExp):
        return _off_callable(expr.body, qualify) and _off_callable(expr.orelse, qualify)
    return qualify(expr) in GRAD_OFF


def _off_object(expr: ast.expr, qualify: Qualify) -> bool:
    """A grad-off context object: ``torch.no_grad()``, ``torch.inference_mode()``
    (or ``(True)``), or a conditional of them."""
    if isinstance(expr, ast.IfExp):
        return _off_object(expr.body, qualify) and _off_object(expr.orelse, qualify)
    if not isinstance(expr, ast.Call) or expr.keywords or not _off_callable(expr.func, qualify):
        return False
    return not expr.args or (
        len(expr.args) == 1 and isinstance(expr.args[0], ast.Constant) and expr.args[0].value is True
    )


def _applies_off(expr: ast.expr, param: str, qualify: Qualify) -> bool:
    """``<grad-off context>(param)``, or a conditional of such applications."""
    if isinstance(expr, ast.IfExp):
        return _applies_off(expr.body, param, qualify) and _applies_off(expr.orelse, param, qualify)
    return (
        isinstance(expr, ast.Call)
        and not expr.keywords
        and len(expr.args) == 1
        and isinstance(expr.args[0], ast.Name)
        and expr.args[0].id == param
        and _off_object(expr.func, qualify)
    )


def _param_uses(wrapper: ast.FunctionDef, param: str, qualify: Qualify) -> list[tuple[bool, bool]]:
    """Each name of ``param`` in ``wrapper``'s body: (the callee of a call,
    inside a grad-off ``with`` of its own); a nested scope naming it, or the
    wrapper's parameters shadowing it, count as a use that is neither."""
    args = wrapper.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    if any(a is not None and a.arg == param for a in every):
        return [(False, False)]
    uses: list[tuple[bool, bool]] = []
    callees: set[int] = set()
    stack: list[tuple[ast.AST, bool]] = [(s, False) for s in wrapper.body]
    while stack:
        node, off = stack.pop()
        if isinstance(node, (ast.With, ast.AsyncWith)):
            inner = off
            for item in node.items:
                stack.append((item.context_expr, off))
                if _off_object(item.context_expr, qualify):
                    inner = True
                elif _turns_on(item.context_expr, qualify):
                    inner = False
            stack.extend((s, inner) for s in node.body)
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            if any(isinstance(n, ast.Name) and n.id == param for n in ast.walk(node)):
                uses.append((False, False))
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            callees.add(id(node.func))
        if isinstance(node, ast.Name) and node.id == param:
            uses.append((id(node) in callees and isinstance(node.ctx, ast.Load), off))
        stack.extend((child, off) for child in children(node))
    return uses


def _turns_on(expr: ast.expr, qualify: Qualify) -> bool:
    func = expr.func if isinstance(expr, ast.Call) else expr
    return qualify(func) in GRAD_ON


def _own_returns(fn: ast.FunctionDef) -> list[ast.expr] | None:
    """The values of ``fn``'s own returns; None when one returns nothing or it yields."""
    out: list[ast.expr] = []
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            if node.value is None:
                return None
            out.append(node.value)
        elif isinstance(node, (ast.Yield, ast.YieldFrom)):
            return None
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(children(node))
    return out


def _tails(body: list[ast.stmt]) -> list[ast.expr] | None:
    """The values of the returns that end every path through ``body`` (a
    return last, or an ``if`` whose branches both end so); None when a path
    may fall off its end or return nothing."""
    last = body[-1] if body else None
    if isinstance(last, ast.Return):
        return None if last.value is None else [last.value]
    if not isinstance(last, ast.If):
        return None
    inner, other = _tails(last.body), _tails(last.orelse)
    return None if inner is None or other is None else inner + other
