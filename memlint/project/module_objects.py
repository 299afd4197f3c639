"""Module-level models a module builds on the CPU and never touches again.

pytorch-AdaIN's ``net.py`` holds ``vgg = nn.Sequential(...)`` at module
level; ``train.py`` writes ``vgg = net.vgg`` then
``vgg.load_state_dict(torch.load(args.vgg))`` before any move: the model
loaded into is on the CPU, so the load doubles nothing on a GPU (MEM701's
trap). The defining module decides it, read with ``ast``: the name is bound
once, at module level, to a ``torch.nn`` class or a class of the module
that moves nothing, and the module names it nowhere else (no move, no
rebinding, no ``global``, no hand-over). Anything else: not claimed.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Mapping

from memlint.gate.ast_fields import children

# Wrappers of another model, placed on a device by their own code.
_WRAPPERS = frozenset({"DataParallel", "DistributedDataParallel"})
_MOVES = frozenset({"to", "cuda", "to_empty", "xpu", "npu", "mps"})


def cpu_objects(tree: ast.Module, bindings: Mapping[str, str], cpu_classes: list[str]) -> list[str]:
    """The module-level names of ``tree`` holding a model built on the CPU
    and named nowhere else in the module."""
    candidates: dict[str, ast.Assign] = {}
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            continue
        value = stmt.value
        if isinstance(value, ast.Call) and _builds_on_cpu(value.func, bindings, cpu_classes):
            if _made_here(value, bindings, cpu_classes):
                candidates[stmt.targets[0].id] = stmt
    if not candidates:
        return []
    # One walk: how often each candidate's module-level binding is named
    # (its own assignment is one), and the names a ``global`` lets a
    # function rebind. A function's parameter or local of the same name
    # (``def __init__(self, decoder): self.decoder = decoder``) is another name.
    seen: Counter[str] = Counter()
    todo: list[tuple[ast.AST, frozenset[str]]] = [(tree, frozenset())]
    while todo:
        node, shadowed = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            shadowed = shadowed | _locals(node)
        elif isinstance(node, ast.Name) and node.id in candidates and node.id not in shadowed:
            seen[node.id] += 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                seen[name] += 2
        todo.extend((child, shadowed) for child in children(node))
    return sorted(name for name in candidates if seen[name] == 1)


def _locals(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> frozenset[str]:
    """The parameters of ``fn`` and the names its own body stores (a
    nested function's stores are its own; a ``global`` one is counted by
    the caller anyway)."""
    args = fn.args
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    names.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    if isinstance(fn, ast.Lambda):
        return frozenset(names)
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(children(node))
    return frozenset(names)


def _made_here(call: ast.Call, bindings: Mapping[str, str], cpu_classes: list[str]) -> bool:
    """The call's arguments name only imports and CPU classes (layers built
    in place: ``nn.Sequential(nn.Conv2d(3, 3, 1), nn.ReLU())``) and move
    nothing: no name of the module that may already be on a device."""
    for arg in (*call.args, *(k.value for k in call.keywords)):
        for node in ast.walk(arg):
            if isinstance(node, ast.Name) and node.id not in bindings and node.id not in cpu_classes:
                return False
            if isinstance(node, ast.Attribute) and node.attr in _MOVES:
                return False
    return True


def _builds_on_cpu(func: ast.expr, bindings: Mapping[str, str], cpu_classes: list[str]) -> bool:
    """``nn.Sequential`` / ``torch.nn.Linear`` (a class of ``torch.nn``, as
    imported here), or a class of this module whose code moves nothing."""
    if isinstance(func, ast.Name):
        if func.id in cpu_classes:
            return True
        qualified = bindings.get(func.id, "")
    else:
        parts: list[str] = []
        while isinstance(func, ast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, ast.Name) or func.id not in bindings:
            return False
        qualified = ".".join([bindings[func.id], *reversed(parts)])
    head, _, last = qualified.rpartition(".")
    return head == "torch.nn" and last[:1].isupper() and last not in _WRAPPERS
