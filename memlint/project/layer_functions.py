"""Module-level helpers that return plain lists of fresh layers (MEM701's
builders across modules): SSD's ``vgg(cfg, 3)`` fills a local list with
``nn.Conv2d``/``nn.ReLU`` and returns it, ``multibox(vgg, extras, cfg)``
hands its two lists back beside two lists of its own, and the builder passes
them to a class that moves nothing (``SSD(phase, base_, extras_, head_)``).

A layer function moves nothing (one of ``cpu_functions``), has no nested
scope, ``yield`` or ``global``, and every ``return`` gives local lists that
it only fills with fresh torch.nn layers (layer_lists.py, ``returned``),
parameters it never fills, or tuple/list literals of those. What such a call
returns holds only fresh CPU layers and its arguments; cpu_builders.py
checks those arguments at each call as it checks a class's.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from memlint.gate.ast_fields import nodes
from memlint.project.layer_lists import Walk, list_values

_FILLS = frozenset({"append", "extend", "insert"})
# A layer function holds none of these but itself, and no ``global``/``nonlocal``.
_DECLARES = frozenset({ast.Global, ast.Nonlocal})
_NOT_LAYER_FUNCTION = _DECLARES | {
    ast.Yield,
    ast.YieldFrom,
    ast.Lambda,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
}
_STORE_OR_DEL = frozenset({ast.Store, ast.Del})


def layer_functions(
    candidates: list[ast.FunctionDef],
    layer: Callable[[ast.expr, dict[str, list[ast.expr]], dict[str, int]], bool],
    walk: Walk = nodes,
) -> set[str]:
    """The names of the candidates that are layer functions; ``layer(value,
    values, stores)`` says a value put in a list is a fresh torch.nn layer
    (directly, or through a local name bound only to one). ``walk``: each
    candidate's nodes (the summary's NodeLists: cpu_builders reads them again)."""
    return {fn.name for fn in candidates if _returns_layers(fn, layer, walk)}


def _returns_layers(
    fn: ast.FunctionDef,
    layer: Callable[[ast.expr, dict[str, list[ast.expr]], dict[str, int]], bool],
    walk: Walk = nodes,
) -> bool:
    returns: list[ast.expr] = []
    stores: dict[str, int] = {}
    values: dict[str, list[ast.expr]] = {}
    filled: set[str] = set()  # names grown in place: never a parameter handed back as it came
    # Runs on every node of every builder candidate: the classes tested by
    # identity, the most common (names, calls) first.
    name_, call_, store_ = ast.Name, ast.Call, ast.Store
    for node in walk(fn):
        kind = node.__class__
        if kind is name_:
            if node.ctx.__class__ is store_:  # type: ignore[attr-defined]
                stores[node.id] = stores.get(node.id, 0) + 1  # type: ignore[attr-defined]
        elif kind is call_:
            func = node.func  # type: ignore[attr-defined]
            if func.__class__ is ast.Attribute and func.attr in _FILLS and func.value.__class__ is name_:
                filled.add(func.value.id)
        elif kind in _NOT_LAYER_FUNCTION:
            if node is not fn or kind in _DECLARES:
                return False
        elif kind is ast.Return:
            if node.value is None:  # type: ignore[attr-defined]
                return False
            returns.append(node.value)  # type: ignore[attr-defined]
        elif kind is ast.Assign:
            if len(node.targets) == 1 and node.targets[0].__class__ is name_:  # type: ignore[attr-defined]
                values.setdefault(node.targets[0].id, []).append(node.value)  # type: ignore[attr-defined]
        elif kind is ast.AugAssign:
            if node.target.__class__ is name_:  # type: ignore[attr-defined]
                filled.add(node.target.id)  # type: ignore[attr-defined]
        elif kind is ast.Subscript or kind is ast.Attribute:
            if node.ctx.__class__ in _STORE_OR_DEL and node.value.__class__ is name_:  # type: ignore[attr-defined]
                filled.add(node.value.id)  # type: ignore[attr-defined]
    if not returns:
        return False
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    lists: dict[str, bool] = {}
    todo = list(returns)
    while todo:
        value = todo.pop()
        if isinstance(value, (ast.Tuple, ast.List)):
            todo.extend(value.elts)
        elif not isinstance(value, ast.Name):
            return False
        elif value.id in params:
            # Handed back as it came (the call's argument decides), unless
            # rebound or grown here.
            if value.id in stores or value.id in filled:
                return False
        elif value.id not in lists:
            given = list_values(fn, value.id, returned=True, walk=walk) if value.id in stores else None
            lists[value.id] = given is not None and all(layer(v, values, stores) for v in given)
            if not lists[value.id]:
                return False
    return True
