"""Methods that hand back the very loss they backpropagated.

``loss_train, preds, labels = model.train_step(*batch)`` in a training loop
keeps each batch's graph in ``l_loss_tr.append(loss_train)`` when
``GraphSAINT.train_step`` (another module) ends in ``loss.backward()`` ...
``return loss, self.predict(preds), labels``: a tensor ``backward()`` ran on
carries autograd history (a tensor without it makes ``backward()`` raise),
so the caller's element carries it too, whatever the receiver's forward is.

Summary side (``backward_returned``, from ``ast``): a bare ``<name>.backward(...)``
statement of the method's own body (not inside an ``if``, a loop or a
``with``: it runs on every call) on a local name bound once, never detached
in place, and every ``return`` after it that hands back that name, alone or
at the same places of a tuple of one length. View side
(``backward_receivers``): the typed receivers that are plain names
(typed_objects.py; never ``self.x``, gate/method_stores.py) whose every
class has the fact for the method called, with the places all of them name.
"""

from __future__ import annotations

import ast
from typing import Any

from memlint.project.binding_counts import binding_counts

# ``x.detach_()`` and ``x.requires_grad_(False)`` end the name's history in place.
_IN_PLACE_DETACH = frozenset({"detach_", "requires_grad_"})


def backward_returned(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, tuple[int, ...]] | None:
    """(length, places) when ``fn``'s every return hands back a name it
    backpropagated: length 0 for the name alone (places ``(0,)``), else the
    length of the returned tuple and the places holding such a name; None
    otherwise."""
    backwarded = {
        stmt.value.func.value.id: stmt.lineno
        for stmt in fn.body
        if isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and stmt.value.func.attr == "backward"
        and isinstance(stmt.value.func.value, ast.Name)
    }
    if not backwarded:
        return None
    own = list(_own_nodes(fn))
    counts = binding_counts(own, parts=True)
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    for n in own:
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in _IN_PLACE_DETACH
            and isinstance(n.func.value, ast.Name)
        ):
            backwarded.pop(n.func.value.id, None)
    backwarded = {k: ln for k, ln in backwarded.items() if counts.get(k) == 1 and k not in params}
    returns = [n for n in own if isinstance(n, ast.Return)]
    if not backwarded or not returns:
        return None
    length: int | None = None
    places: set[int] | None = None
    for ret in returns:
        value = ret.value
        if isinstance(value, ast.Name):
            shape, found = 0, {0} if backwarded.get(value.id, ret.lineno) < ret.lineno else set()
        elif isinstance(value, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in value.elts):
            shape = len(value.elts)
            found = {
                i
                for i, e in enumerate(value.elts)
                if isinstance(e, ast.Name) and backwarded.get(e.id, ret.lineno) < ret.lineno
            }
        else:
            return None
        if length is not None and shape != length:
            return None
        length = shape
        places = found if places is None else places & found
        if not places:
            return None
    return (length or 0, tuple(sorted(places or ())))


def _own_nodes(fn: ast.FunctionDef | ast.AsyncFunctionDef):
    """The nodes of ``fn``'s own code, not those of a nested function,
    class or lambda (their returns and bindings are not ``fn``'s)."""
    stack: list[ast.AST] = list(reversed(fn.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def backward_receivers(typed: Any, path: str) -> tuple:
    """The view's ``object_backwards``: (scope, receiver, method, length,
    places) for each typed receiver of ``path`` whose every class defines
    ``method`` with the fact, of one length; the places all of them name."""
    objects = typed.objects(path)
    if objects is None or not objects.receivers:
        return ()
    out = []
    seen: dict[tuple[str, str], Any] = {}
    for scope, receiver, method in objects.receivers:
        if "." in receiver:
            continue  # a plain name only: the gate's part reads no other (gate/method_stores.py)
        key = (scope, receiver)
        if key not in seen:
            seen[key] = typed.receiver_types(path, scope, receiver)
        types = seen[key]
        if not types:
            continue
        facts = [_fact(typed, t, method) for t in types]
        if any(f is None for f in facts) or len({f[0] for f in facts}) != 1:  # type: ignore[index]
            continue
        common = set.intersection(*(set(f[1]) for f in facts))  # type: ignore[index]
        if common:
            out.append((scope, receiver, method, facts[0][0], tuple(sorted(common))))  # type: ignore[index]
    return tuple(out)


def _fact(typed: Any, typ: str, method: str) -> tuple[int, tuple[int, ...]] | None:
    if "\0" not in typ:
        return None  # an installed class: its methods are not read
    path, cls = typ.split("\0")
    objects = typed.objects(path)
    if objects is None:
        return None
    name = f"{cls}.{method}"
    return next(((n, p) for m, n, p in objects.backwards if m == name), None)
