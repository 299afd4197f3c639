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
    for node in walk(fn):
        if node is not fn and isinstance(
            node, (ast.Yield, ast.YieldFrom, ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        ):
            return False
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return False
        if isinstance(node, ast.Return):
            if node.value is None:
                return False
            returns.append(node.value)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values.setdefault(node.targets[0].id, []).append(node.value)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            filled.add(node.target.id)
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if isinstance(node.value, ast.Name):
                filled.add(node.value.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _FILLS:
            if isinstance(node.func.value, ast.Name):
                filled.add(node.func.value.id)
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
