"""Methods that hand back what their forward computed from their arguments.

``train_dice = criterion._show_dice(preds, masks)`` in a training loop keeps
the dice's graph when ``WeightedDiceBCE._show_dice`` (another module) ends in
``return 1.0 - self.dice_loss(inputs, targets)``: the module attribute's
forward, run with grad on (object_types ``forwards``), on the method's own
``inputs``. Whatever the attribute holds, its output carries the history of
an input that carries it, so the caller's value carries history when the
argument it passes there does (history.py reads it at the call).

Summary side (``returned_params``, from ``ast``): every ``return`` of the
method is arithmetic around a call of that attribute (``self.X(...)`` or
``self.X.forward(...)``), directly or through a local name bound once to
such a value, and the call is handed some parameters of the method as they
came in (never rebound in the method: ``inputs[inputs >= 0.5] = 1`` writes
into the same tensor). The fact is those parameters, each with its position
(``-1`` for a keyword-only one). View side (``returned_receivers``): the
``object_forwards`` receivers whose every class has the fact for that
method, with the parameters all of them name.
"""

from __future__ import annotations

import ast
from typing import Any

from memlint.project.binding_counts import binding_counts

# Arithmetic that keeps an operand's history (a floor division, a modulo or
# a comparison gives a value autograd cannot differentiate).
_KEEPING_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.MatMult)
_MAX_NAME_HOPS = 4


def returned_params(fn: ast.FunctionDef | ast.AsyncFunctionDef, attr: str, params: tuple[str, ...]) -> tuple:
    """((position, parameter), ...) of the parameters ``fn``'s every return
    hands, unchanged, to ``self.<attr>``'s forward; () when any return does
    otherwise. ``params``: the method's parameters, ``self`` dropped."""
    own = list(_own_nodes(fn))
    counts = binding_counts(own)
    # Rebound, or detached in place (``x.detach_()``, ``x.requires_grad_(False)``).
    rebound = set(counts) | {
        n.func.value.id
        for n in own
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in ("detach_", "requires_grad_")
        and isinstance(n.func.value, ast.Name)
    }
    # A local name bound exactly once, by a plain assignment: ``d = self.loss(x)``.
    single: dict[str, ast.AST] = {
        node.targets[0].id: node.value
        for node in own
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and counts[node.targets[0].id] == 1
    }
    returns = [n for n in own if isinstance(n, ast.Return)]
    if not returns or any(r.value is None for r in returns):
        return ()
    kept: set[str] | None = None
    for ret in returns:
        passed: set[str] = set()
        for call in _forward_calls(ret.value, attr, single):  # type: ignore[arg-type]
            passed |= {
                v.id
                for v in (*call.args, *(k.value for k in call.keywords))
                if isinstance(v, ast.Name) and v.id in params and v.id not in rebound
            }
        kept = passed if kept is None else kept & passed
        if not kept:
            return ()
    positional = len(params) - _kwonly_count(fn)
    return tuple((i if i < positional else -1, p) for i, p in enumerate(params) if p in (kept or ()))


def _kwonly_count(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    return len(fn.args.kwonlyargs)


def _own_nodes(fn: ast.FunctionDef | ast.AsyncFunctionDef):
    """The nodes of ``fn``'s own code: not those of a nested function,
    class or lambda (their returns are not ``fn``'s)."""
    stack: list[ast.AST] = list(reversed(fn.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _forward_calls(value: ast.AST, attr: str, single: dict[str, Any]) -> list[ast.Call]:
    """The calls of ``self.<attr>`` whose result ``value`` is, looking
    through arithmetic that keeps history and names bound once."""
    out: list[ast.Call] = []
    stack: list[tuple[ast.AST, int]] = [(value, 0)]
    while stack:
        node, hops = stack.pop()
        if isinstance(node, ast.BinOp) and isinstance(node.op, _KEEPING_OPS):
            stack += [(node.left, hops), (node.right, hops)]
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            stack.append((node.operand, hops))
        elif isinstance(node, ast.Name) and single.get(node.id) is not None and hops < _MAX_NAME_HOPS:
            stack.append((single[node.id], hops + 1))
        elif isinstance(node, ast.Call) and _calls_attr(node.func, attr):
            out.append(node)
    return out


def _calls_attr(func: ast.AST, attr: str) -> bool:
    """``self.<attr>`` or ``self.<attr>.forward``."""
    if isinstance(func, ast.Attribute) and func.attr == "forward":
        func = func.value
    return (
        isinstance(func, ast.Attribute)
        and func.attr == attr
        and isinstance(func.value, ast.Name)
        and func.value.id == "self"
    )


def returned_receivers(typed: Any, path: str, object_forwards: tuple) -> tuple:
    """The view's ``object_returns``: (scope, receiver, method, ((position,
    parameter), ...)) for each ``object_forwards`` entry of ``path`` whose
    receiver's every class defines ``method`` with the fact; the parameters
    all of them name (by position and name alike)."""
    out = []
    for scope, receiver, method, _message in object_forwards:
        types = typed.receiver_types(path, scope, receiver)
        if not types:
            continue
        common: set | None = None
        for typ in types:
            found = _fact(typed, typ, method)
            common = found if common is None else common & found
            if not common:
                break
        if common:
            out.append((scope, receiver, method, tuple(sorted(common))))
    return tuple(out)


def _fact(typed: Any, typ: str, method: str) -> set:
    if "\0" not in typ:
        return set()
    path, cls = typ.split("\0")
    objects = typed.objects(path)
    if objects is None:
        return set()
    name = f"{cls}.{method}"
    return next((set(p) for m, p in objects.returned if m == name), set())
