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


# A step's verbs as another module's loop reads them (``step_sequence``).
ZERO, BACKWARD, STEP = "zero_grad", "backward", "step"
# Calls that touch the gradients in a way the sequence cannot say.
_GRAD_WRITES = frozenset({"zero_", "fill_", "mul_", "copy_"})
_SCALER_PASS = frozenset({"update", "unscale_"})


def step_sequence(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, module_defs: set[str]
) -> tuple[tuple[str, str, int], ...]:
    """The training verbs of a module-level function, in the order each call
    runs them: ``(("zero_grad", "optimizer", 7), ("backward", "", 9),
    ("step", "optimizer", 10))``; the second field is the parameter the verb
    acts on (the caller maps it to what it hands over). () when the function
    does anything the caller could not read as one straight-line step: a verb
    under a branch, loop or ``try``, a ``return``/``raise``/``yield`` before
    its last statement, a verb on something that is not a parameter, a
    ``.grad`` write, a call of another function of its own module (it may
    clear or step too), a decorator. Read only for the few functions the
    summary walk saw backpropagate or step (summary.py): one more walk of
    those alone."""
    if fn.decorator_list or isinstance(fn, ast.AsyncFunctionDef):
        return ()
    args = fn.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    found: list[tuple[str, str, int]] = []
    body = _flatten_with(fn.body)
    for i, stmt in enumerate(body):
        last = i == len(body) - 1
        verbs = _verbs_in(stmt, params, module_defs, last)
        if verbs is None:
            return ()
        if verbs and not isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)):
            return ()  # under a branch, a loop or a ``try``: may not run every call
        found.extend(verbs)
    return tuple(found)


def _flatten_with(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of ``body`` with ``with`` blocks opened (they always run)."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.With):
            out.extend(_flatten_with(stmt.body))
        else:
            out.append(stmt)
    return out


def _verbs_in(stmt: ast.stmt, params: set[str], module_defs: set[str], last: bool) -> list[tuple[str, str, int]] | None:
    """The verbs of one statement in source order; None when the statement
    makes the function's sequence unknown."""
    verbs: list[tuple[int, int, str, str]] = []
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue  # its own scope: runs when called, if ever
        if isinstance(node, (ast.Yield, ast.YieldFrom)) or (isinstance(node, (ast.Return, ast.Raise)) and not last):
            return None  # a generator runs nothing when called; an early exit may skip a verb
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            if any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in targets):
                return None
        if isinstance(node, ast.Call):
            verb = _verb(node, params, module_defs)
            if verb is None:
                return None
            if verb:
                verbs.append((node.lineno, node.col_offset, *verb))
        stack.extend(ast.iter_child_nodes(node))
    verbs.sort()
    return [(kind, param, line) for line, _col, kind, param in verbs]


def _verb(call: ast.Call, params: set[str], module_defs: set[str]) -> tuple[str, str] | tuple[()] | None:
    """``(kind, parameter)`` for a verb, () for any other call, None for a
    call that makes the sequence unknown."""
    func = call.func
    if isinstance(func, ast.Name):
        return None if func.id in module_defs else ()
    if not isinstance(func, ast.Attribute):
        return ()
    attr, recv = func.attr, func.value
    head = recv.id if isinstance(recv, ast.Name) else None
    if attr in _GRAD_WRITES:
        return None if _touches_grad(recv) else ()
    if attr == "manual_backward" or (attr == "grad" and _dotted_tail(recv) == "autograd"):
        return None  # Lightning's, or gradients returned rather than accumulated
    if attr == "backward":
        if call.args and head not in params:
            return None  # ``engine.backward(loss)`` on an engine the caller does not hand over
        return (BACKWARD, "")
    if attr == "zero_grad":
        return (ZERO, head) if head in params else None
    if attr == "step":
        if head not in params or call.keywords:
            return None
        if not call.args:
            return (STEP, head)
        handed = call.args[0]
        if len(call.args) == 1 and isinstance(handed, ast.Name) and handed.id in params:
            return (STEP, handed.id)  # ``scaler.step(optimizer)``
        return None  # a closure (LBFGS) or an epoch
    if attr in _SCALER_PASS and head in params:
        return ()
    if head in module_defs and head is not None:
        return None
    return ()


def _touches_grad(recv: ast.expr) -> bool:
    """``p.grad.zero_()``, ``p.grad.data.fill_(0)``."""
    while isinstance(recv, ast.Attribute):
        if recv.attr == "grad":
            return True
        recv = recv.value
    return False


def _dotted_tail(expr: ast.expr) -> str:
    return expr.attr if isinstance(expr, ast.Attribute) else expr.id if isinstance(expr, ast.Name) else ""
