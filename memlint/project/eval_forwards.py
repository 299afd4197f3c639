"""Models whose ``forward`` in eval mode returns only what it computed with grad off.

SECOND's ``VoxelNet.forward`` ends ``if self.training: return
self.loss(...)`` ``else: with torch.no_grad(): res = self.predict(...)``
``return res``: called after ``net.eval()``, what it returns carries no
history, so ``detections += net(example)`` in an evaluation loop keeps no
graph alive (MEM101). ``eval_off_forward`` holds when every ``return`` the
method may reach with ``self.training`` false (the ``else`` of ``if
self.training:``, the body of ``if not self.training:``, and every return
outside such tests) gives ``None``, a call made inside a grad-off ``with``
(``no_grad``, ``inference_mode``), or a name
every binding of which in the method is such a call (or a tuple, list or
dict of those). A name bound any other way (a parameter, a loop target, a
value computed with grad on) gives no proof. The call runs with grad off,
so its result is a fresh tensor (the same trust as a decorated ``forward``).

Read on Python's ``ast`` by object_types.py for classes whose ``forward``
turns grad off somewhere (``off_inside``); the caller's eval mode is the
linted module's question (analysis/autograd/history.py).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from memlint.project.off_forwards import receivers_whose_forward

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _training_test(test: ast.AST, this: str) -> bool | None:
    """True for ``self.training``, False for ``not self.training``, None otherwise."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _training_test(test.operand, this)
        return None if inner is None else not inner
    if isinstance(test, ast.Attribute) and test.attr == "training":
        return isinstance(test.value, ast.Name) and test.value.id == this or None
    return None


def eval_off_forward(fn: ast.FunctionDef | ast.AsyncFunctionDef, is_off: Callable[[ast.AST], bool]) -> bool:
    """See the module's docstring; ``is_off(expr)``: a ``with`` item's
    context turns grad off."""
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    if not positional or fn.decorator_list:
        return False
    this = positional[0].arg
    returns: list[tuple[ast.Return, bool]] = []  # (return, inside a grad-off with)
    off_calls: dict[str, int] = {}  # name -> its bindings to a call inside a grad-off with
    stores: dict[str, int] = {}
    todo: list[tuple[ast.AST, bool]] = [(s, False) for s in fn.body]
    while todo:
        node, off = todo.pop()
        if isinstance(node, _NESTED):
            continue
        if isinstance(node, ast.If):
            mode = _training_test(node.test, this)
            todo.append((node.test, off))
            # The branch taken in train mode is never run after ``.eval()``.
            if mode is not True:
                todo.extend((s, off) for s in node.body)
            if mode is not False:
                todo.extend((s, off) for s in node.orelse)
            continue
        if isinstance(node, (ast.With, ast.AsyncWith)):
            inner = off or any(is_off(item.context_expr) for item in node.items)
            for item in node.items:
                todo.append((item, off))
            todo.extend((s, inner) for s in node.body)
            continue
        if isinstance(node, ast.Return):
            returns.append((node, off))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif (
            off
            and isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
        ):
            off_calls[node.targets[0].id] = off_calls.get(node.targets[0].id, 0) + 1
        todo.extend((child, off) for child in ast.iter_child_nodes(node))
    if not returns:
        return False
    params = {a.arg for a in (*positional, *args.kwonlyargs, args.vararg, args.kwarg) if a}
    fresh = {n for n, k in off_calls.items() if k == stores.get(n) and n not in params}
    return all(_no_history(r.value, off, fresh) for r, off in returns)


def works_before_eval_branch(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A statement of ``fn``'s own body, before its first ``if
    self.training:`` test, calls a method or attribute of ``self`` (SECOND's
    ``preds_dict = self.network_forward(...)``): that work runs with the
    caller's grad mode in eval mode too, so an ``eval_off`` forward still
    builds a graph per call (MEM201 keeps its finding; only MEM101's
    returned history is proved absent)."""
    positional = [*fn.args.posonlyargs, *fn.args.args]
    if not positional:
        return False
    this = positional[0].arg
    for stmt in fn.body:
        if isinstance(stmt, ast.If) and _training_test(stmt.test, this) is not None:
            return False
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)) and any(
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name)
            and n.func.value.id == this
            for n in ast.walk(stmt)
        ):
            return True
    return False


def _no_history(value: ast.AST | None, off: bool, fresh: set[str]) -> bool:
    if value is None or isinstance(value, ast.Constant) and value.value is None:
        return True
    if isinstance(value, ast.Name):
        return value.id in fresh
    if isinstance(value, ast.Call):
        return off
    if isinstance(value, (ast.Tuple, ast.List)):
        return all(_no_history(e, off, fresh) for e in value.elts)
    if isinstance(value, ast.Dict):
        return all(_no_history(v, off, fresh) for v in value.values)
    return False


def eval_off_receivers(typed: Any, path: str) -> tuple[tuple[str, str], ...]:
    """The view's ``eval_off``: (scope, name) of each receiver or bound name
    in ``path`` whose every type is a project class whose ``forward`` (its
    own, or the first project base's that defines one) is ``eval_off``.
    ``typed``: typed_objects.TypedObjects."""
    return receivers_whose_forward(typed, path, lambda objects: objects.eval_off)
