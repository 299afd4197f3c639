"""Loops over a literal list of settings (issue 29, ffjord's approx_error_1d.py).

``tols = [1e-1, 1e-2, 1e-3]`` then ``for tol in tols:`` (or ``for lr in
(0.1, 0.01):``) runs one experiment per setting: a handful of iterations
fixed in the source, each of which may run whole evaluations. Whatever it
rebuilds per iteration is rebuilt per setting, not per batch. Only a display
of literal numbers and strings counts (a negative number too), named
directly or through a name every binding of which in its scope is one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

_WRAPPERS = frozenset({"enumerate", "tqdm", "list", "tuple", "sorted", "reversed"})


def _constant(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    return isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString))


def _settings_display(expr: cst.BaseExpression | None) -> bool:
    """``[1e-1, 1e-2]``, ``("adam", "sgd")``: a non-empty display of literals."""
    if not isinstance(expr, (cst.List, cst.Tuple)) or not expr.elements:
        return False
    return all(isinstance(el, cst.Element) and _constant(el.value) for el in expr.elements)


def sweeps_settings(loop: cst.For | cst.While, values: Callable[[str], Sequence[cst.BaseExpression | None]]) -> bool:
    """``loop`` is a ``for`` over a literal list of settings, written there
    or bound to a name (``values(name)``: the expressions the loop's scope
    binds to it; None for a binding that is not an expression)."""
    if not isinstance(loop, cst.For):
        return False
    it = loop.iter
    while isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value in _WRAPPERS and it.args:
        it = it.args[0].value
    if isinstance(it, cst.Name):
        bound = values(it.value)
        return bool(bound) and all(_settings_display(v) for v in bound)
    return _settings_display(it)
