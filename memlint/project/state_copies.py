"""Project functions that copy a state dict they are handed into a model's
own state, entry by entry: ``load_state_dict`` spelled out.

RIDE's utils/util.py::

    def load_state_dict(model, state_dict, no_ignore=False):
        own_state = model.state_dict()
        for name, param in state_dict.items():
            if isinstance(param, torch.nn.Parameter):
                param = param.data
            own_state[name].copy_(param)

copies every tensor of ``state_dict`` into ``model``'s parameters where they
live, as ``model.load_state_dict(state_dict, strict=False)`` would: a
``torch.load`` without ``map_location`` handed to it is a second copy of the
weights on the GPU when ``model`` is there (MEM701, through the same
``state_params`` summary field as a helper calling ``load_state_dict``).

Read on Python's ``ast`` tree of one module-level function that calls
``.copy_(``. The loop must run over ``S.items()`` (or ``list(S.items())``),
``S`` a parameter the function never rebinds, and copy the loop's own value
(rebound at most to its ``.data``) into an entry of ``P.state_dict()``,
directly or through a name bound only to it, ``P`` another parameter the
function never rebinds, moves (``.cpu()``, ``.to(...)``) nor hands to a call:
anything else is not followed.
"""

from __future__ import annotations

import ast

from memlint.gate.ast_fields import children

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def copied_params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[tuple[str, str]]:
    """(state parameter, receiving parameter) per entry-wise copy of the one into the other's state."""
    args = fn.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    body = _own_nodes(fn.body)
    bound = _bound_names(body)
    kept = params - bound
    states = _state_names(body, kept)
    found: set[tuple[str, str]] = set()
    for node in body:
        if isinstance(node, ast.For) and not node.orelse:
            pair = _copy_loop(node, kept, states)
            if pair is not None:
                found.add(pair)
    # A receiver handed to a call or moved may not be the caller's model any more.
    return {(state, into) for state, into in found if not _handed_or_moved(body, into)}


def _own_nodes(body: list[ast.stmt]) -> list[ast.AST]:
    """Every node of ``body`` but those of nested scopes."""
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        found.append(node)
        stack.extend(children(node))
    return found


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension)):
        return [node.target]
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return [node.optional_vars]
    if isinstance(node, ast.NamedExpr):
        return [node.target]
    return []


def _bound_names(nodes: list[ast.AST]) -> set[str]:
    names: set[str] = set()
    for node in nodes:
        for target in _targets(node):
            names.update(sub.id for sub in ast.walk(target) if isinstance(sub, ast.Name))
        if isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def _state_of(expr: ast.expr, kept: set[str]) -> str:
    """``P`` of ``P.state_dict()`` with ``P`` a kept parameter, else ""."""
    if (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr == "state_dict"
        and not expr.args
        and not expr.keywords
        and isinstance(expr.func.value, ast.Name)
        and expr.func.value.id in kept
    ):
        return expr.func.value.id
    return ""


def _state_names(nodes: list[ast.AST], kept: set[str]) -> dict[str, str]:
    """Names bound only to ``P.state_dict()`` (``own_state = model.state_dict()``), each with ``P``."""
    seen: dict[str, str | None] = {}
    for node in nodes:
        for target in _targets(node):
            for sub in ast.walk(target):
                if not isinstance(sub, ast.Name):
                    continue
                owner = ""
                if isinstance(node, ast.Assign) and target is sub:
                    owner = _state_of(node.value, kept)
                if sub.id in seen and seen[sub.id] != owner:
                    seen[sub.id] = None
                else:
                    seen[sub.id] = owner or None
    return {name: owner for name, owner in seen.items() if owner}


def _items_of(it: ast.expr) -> str:
    """``S`` of ``S.items()`` or ``list(S.items())``, ``S`` a name."""
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "list" and len(it.args) == 1:
        it = it.args[0]
    if (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Attribute)
        and it.func.attr == "items"
        and not it.args
        and isinstance(it.func.value, ast.Name)
    ):
        return it.func.value.id
    return ""


def _copy_loop(loop: ast.For, kept: set[str], states: dict[str, str]) -> tuple[str, str] | None:
    target = loop.target
    if not (isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[1], ast.Name)):
        return None
    value = target.elts[1].id
    source = _items_of(loop.iter)
    if source not in kept:
        return None
    inner = _own_nodes(loop.body)
    for node in inner:
        for t in _targets(node):
            if any(isinstance(sub, ast.Name) and sub.id == value for sub in ast.walk(t)):
                if not (isinstance(node, ast.Assign) and _is_data_of(node.value, value)):
                    return None  # the value replaced by another: not followed
    for node in inner:
        into = _copied_into(node, value, kept, states)
        if into and into != source:
            return source, into
    return None


def _is_data_of(expr: ast.expr, name: str) -> bool:
    """``v.data``: the same tensor, where it is."""
    return (
        isinstance(expr, ast.Attribute)
        and expr.attr == "data"
        and isinstance(expr.value, ast.Name)
        and expr.value.id == name
    )


def _copied_into(node: ast.AST, value: str, kept: set[str], states: dict[str, str]) -> str:
    """``P`` for ``own[k].copy_(v)`` (``own`` bound to ``P.state_dict()``) or ``P.state_dict()[k].copy_(v)``."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "copy_"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == value
        and isinstance(node.func.value, ast.Subscript)
    ):
        return ""
    entry_of = node.func.value.value
    if isinstance(entry_of, ast.Name):
        return states.get(entry_of.id, "")
    return _state_of(entry_of, kept)


def _handed_or_moved(nodes: list[ast.AST], name: str) -> bool:
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        if any(isinstance(a, ast.Name) and a.id == name for a in (*node.args, *(k.value for k in node.keywords))):
            return True
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == name
            and func.attr in ("cpu", "to", "cuda")
        ):
            return True
    return False
