"""Module-level functions that build a model on the CPU (MEM701's builders
across modules): ``def alexnet(pretrained=False, **kwargs): model =
AlexNet(**kwargs); ...; return model`` in vision/nn/alexnet.py, called as
``net = alexnet(True)`` from a script.

A builder here moves nothing (it is one of ``cpu_functions``: no device move,
no call of a module function that moves), and every ``return`` gives a class
of the same module that moves nothing (``cpu_classes``), called with no
``device=``/``device_map=``, either directly or through a local name bound
only so. ``**kwargs`` is accepted when the class's ``__init__`` takes no
device and takes no ``**kwargs`` itself or never reads it. As analysis/training/state_loads.py's
``_built_on_cpu`` for a builder of the module being linted, on Python's
``ast`` (the project summary's tree).
"""

from __future__ import annotations

import ast
from collections.abc import Collection

from memlint.vocabulary.kinds import guess_kind_from_name

_DEVICE_WORDS = frozenset({"device", "device_map"})
# Calls in an argument that return no model (``AlexNet(num_classes=len(names))``).
_PLAIN_CALLS = frozenset({"len", "int", "float", "str", "bool", "tuple", "list", "dict", "min", "max", "sum"})


def cpu_builders(tree: ast.Module, cpu_classes: Collection[str], cpu_functions: Collection[str]) -> list[str]:
    inits: dict[str, ast.FunctionDef | None] = {}
    counts: dict[str, int] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            counts[stmt.name] = counts.get(stmt.name, 0) + 1
        if isinstance(stmt, ast.ClassDef):
            inits[stmt.name] = next(
                (s for s in stmt.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
            )
    classes = {name for name in cpu_classes if counts.get(name) == 1 and name in inits}
    candidates = [
        stmt
        for stmt in tree.body
        if isinstance(stmt, ast.FunctionDef) and stmt.name in cpu_functions and counts.get(stmt.name) == 1
    ]
    found: list[str] = []
    changed = True
    while changed:  # a builder returning another builder's model (``return mobilenetv2_T_w(6, 0.5, n)``)
        changed = False
        for stmt in candidates:
            if stmt.name not in found and _builds_on_cpu(stmt, classes | set(found), inits):
                found.append(stmt.name)
                changed = True
    return [stmt.name for stmt in candidates if stmt.name in found]


def _builds_on_cpu(fn: ast.FunctionDef, classes: set[str], inits: dict[str, ast.FunctionDef | None]) -> bool:
    returns: list[ast.expr | None] = []
    stores: dict[str, int] = {}
    values: dict[str, list[ast.expr]] = {}
    for node in ast.walk(fn):
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
            if node is not fn:
                return False  # a generator, or a nested scope whose returns are not the builder's
        elif isinstance(node, ast.Return):
            returns.append(node.value)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values.setdefault(node.targets[0].id, []).append(node.value)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            return False
    if not returns:
        return False
    for value in returns:
        if isinstance(value, ast.Name):
            bound = values.get(value.id, [])
            if not bound or len(bound) != stores.get(value.id, 0):
                return False
            if not all(_built(v, classes, inits) for v in bound):
                return False
        elif value is None or not _built(value, classes, inits):
            return False
    return True


def _built(value: ast.expr, classes: set[str], inits: dict[str, ast.FunctionDef | None]) -> bool:
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name) or value.func.id not in classes:
        return False
    if any(k.arg in _DEVICE_WORDS for k in value.keywords):
        return False
    if not all(map(_no_model, (*value.args, *(k.value for k in value.keywords)))):
        return False  # ``Wrapper(net)`` wraps a model that may be on a device
    if any(isinstance(a, ast.Starred) for a in value.args) or any(k.arg is None for k in value.keywords):
        init = inits.get(value.func.id)
        if init is None or not _swallowed(init, init.args.kwarg) or not _swallowed(init, init.args.vararg):
            return False
        params = (*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs)
        if any(p.arg in _DEVICE_WORDS for p in params):
            return False
    return True


def _swallowed(init: ast.FunctionDef, star: ast.arg | None) -> bool:
    """``init``'s ``**kwargs`` (or ``*args``) is absent or never read:
    HRNet's ``def __init__(self, cfg, **kwargs)`` takes what its builder
    passes on and drops it, so no ``device=`` can reach a layer."""
    if star is None:
        return True
    return not any(isinstance(n, ast.Name) and n.id == star.arg for n in ast.walk(init))


def _no_model(arg: ast.expr) -> bool:
    """``arg`` is no model: no name guessed to be one (``net``, ``self.model``), no call but of a builtin."""
    for node in ast.walk(arg):
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in _PLAIN_CALLS):
            return False
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if name is not None and guess_kind_from_name(name) is not None:
            return False
    return True
