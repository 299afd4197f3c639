"""When a module's own function, used as a decorator, surely runs what it
wraps with grad off: the decision both readers of the shapes make, on
Python's ``ast`` (project/off_decorators.py, for the summary other modules
read) and on libcst (analysis/autograd/off_decorators.py, for the module
itself). The readers differ in how they see a tree; the verdict is this one,
so the two cannot drift apart on which shapes count."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

# The callables whose call is a grad-off context (``torch.no_grad()``), by qualified name.
GRAD_OFF = frozenset(
    {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"}
)

# Contexts that may turn grad back on inside a grad-off block around a wrapped call.
GRAD_ON = frozenset({"torch.enable_grad", "torch.set_grad_enabled", "torch.autograd.enable_grad"})

Expr = TypeVar("Expr")


def wrapper_runs_off(uses: Sequence[tuple[bool, bool]]) -> bool:
    """A nested ``def wrapper(*a, **k)`` returned by ``def deco(func)`` runs
    ``func`` with grad off (GwcNet's ``make_nograd_func``: ``with
    torch.no_grad(): ret = func(*a, **k)``): it names ``func`` at least once,
    and every name of it is the callee of a call (``is_call``) inside a
    grad-off ``with`` of the wrapper's own, with nothing turning grad back on
    between (``off``). ``func`` handed on, stored, rebound or named in a
    nested function is unknown: not one."""
    return bool(uses) and all(is_call and off for is_call, off in uses)


def decorator_kind(
    tails: Sequence[Expr] | None,
    own_returns: Callable[[], Sequence[Expr] | None],
    bare: Callable[[Expr], bool],
    made: Callable[[Expr], bool],
) -> str:
    """``"bare"`` when every return applies a grad-off context to the wrapped
    function or is a nested wrapper that runs it with grad off
    (wrapper_runs_off) (``@name``), ``"called"`` when every return is a grad-off context
    or a function of that kind (``@name(...)``), else ``""``.

    ``tails``: the values of the returns ending every path (None or empty when
    a path may fall off its end); ``own_returns``: every return's value, None
    when one is bare or the function yields, asked only once the tails agree
    (most functions stop before that walk)."""
    if not tails:
        return ""
    kind, test = ("bare", bare) if all(bare(r) for r in tails) else ("called", made)
    if kind == "called" and not all(made(r) for r in tails):
        return ""
    returns = own_returns()  # every other return agrees, and nothing yields
    return kind if returns and all(test(r) for r in returns) else ""
