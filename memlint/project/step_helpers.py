"""Functions that step the optimizer they are handed and nothing else.

``def optimizer_step(optimizer): optimizer.step()`` in ``utils.py``, called
from ``train.py``'s loop as ``utils.optimizer_step(opt)``: the loop's step is
that call, and whether the loop clears the gradients (MEM304), clears them
between its backward and that step (MEM303), or every iteration of an
accumulation (MEM301) is decided in ``train.py``. Read on Python's ``ast``
tree for the module summary (``FunctionFacts.stepped``).

Precision first (a wrapper that may clear the gradients itself makes the
step unknown): only a function whose every statement at the top of its body
is a plain ``param.step()`` of one of its parameters (or a scaler's
``scaler.step(param)``, ``scaler.update()``, ``scaler.unscale_(param)``, the
scaler a parameter too), a gradient clip, a docstring or ``pass``, with nothing else anywhere in it (no other call, no
branch, no loop, no ``.grad`` write).
"""

from __future__ import annotations

import ast

_CLIPS = frozenset({"clip_grad_norm_", "clip_grad_value_", "clip_grad_norm"})
# Calls a clip's arguments may hold (``clip_grad_norm_(model.parameters(), 1.0)``).
_ARGUMENT_CALLS = frozenset({"parameters"})


def stepped_parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[tuple[str, ...], int]:
    """``(("optimizer",), line of the first step)`` for a function that only
    steps the parameters named, else ``((), 0)``."""
    args = fn.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    if fn.decorator_list or isinstance(fn, ast.AsyncFunctionDef):
        return (), 0
    stepped: list[str] = []
    line = 0
    for i, stmt in enumerate(fn.body):
        if isinstance(stmt, ast.Pass) or (
            i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        ):
            continue
        if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
            return (), 0
        call = stmt.value
        func = call.func
        optimizer = _stepped(call, params)
        if optimizer is not None:
            if optimizer and optimizer not in stepped:
                stepped.append(optimizer)
            line = line or (stmt.lineno if optimizer else 0)
            continue
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name not in _CLIPS or not _plain_arguments(call):
            return (), 0
    return tuple(stepped), line


def _stepped(call: ast.Call, params: set[str]) -> str | None:
    """The parameter ``call`` steps: ``opt`` for ``opt.step()`` and
    ``scaler.step(opt)``; "" for a scaler's ``update()``/``unscale_(opt)``
    (part of the step, steps nothing); None for anything else."""
    func = call.func
    if call.keywords or not (
        isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in params
    ):
        return None
    handed = [a.id for a in call.args if isinstance(a, ast.Name) and a.id in params]
    if len(handed) != len(call.args):
        return None
    if func.attr == "step":
        if not call.args:
            return func.value.id
        return handed[0] if len(handed) == 1 else None
    if (func.attr == "update" and not call.args) or (func.attr == "unscale_" and len(handed) == 1):
        return ""
    return None


def _plain_arguments(call: ast.Call) -> bool:
    """No call in the arguments but ``x.parameters()``."""
    for arg in (*call.args, *(k.value for k in call.keywords)):
        for sub in ast.walk(arg):
            if isinstance(sub, ast.Call) and not (
                isinstance(sub.func, ast.Attribute) and sub.func.attr in _ARGUMENT_CALLS
            ):
                return False
    return True
