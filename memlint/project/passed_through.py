"""Module-level functions that hand back the object they are given.

pix2pix's ``init_net(net, init_type, gpu_ids)`` initialises a network's
weights, maybe wraps it in ``DataParallel``, and returns it: ``define_G``'s
``return init_net(netG, ...)`` is whatever ``netG`` is. object_types.py reads
a call of such a function as the type of the argument it passes for that
parameter (summary side, spellings only).

A function qualifies when its last statement returns a positional parameter,
every ``return`` returns that parameter, and every other binding of it in
the function rebinds it to itself, moved or wrapped (``net =
torch.nn.DataParallel(net, gpu_ids)``, ``net = net.to(device)``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from memlint.gate.ast_names import ast_dotted


def passthroughs(tree: ast.Module, keeps: Callable[[ast.AST, str], bool]) -> dict[str, tuple[int, str]]:
    """name -> (position, parameter) of the module's functions returning a
    parameter as it came in; ``keeps(value, name)``: ``value`` is ``name``
    moved or wrapped (object_types' reading of a rebinding)."""
    out: dict[str, tuple[int, str]] = {}
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef) or not fn.body or fn.decorator_list:
            continue
        last = fn.body[-1]
        if not (isinstance(last, ast.Return) and isinstance(last.value, ast.Name)):
            continue
        params = [p.arg for p in fn.args.posonlyargs + fn.args.args]
        name = last.value.id
        if name not in params or _rebound_otherwise(fn, name, keeps):
            continue
        out[fn.name] = (params.index(name), name)
    return out


def _rebound_otherwise(fn: ast.FunctionDef, name: str, keeps: Callable[[ast.AST, str], bool]) -> bool:
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            if isinstance(node, ast.Lambda):
                continue
            if any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in ast.walk(node)):
                return True
            continue
        if isinstance(node, ast.Return) and not (isinstance(node.value, ast.Name) and node.value.id == name):
            return True
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
                    if not (isinstance(target, ast.Name) and keeps(node.value, name)):
                        return True
        elif isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            if not _assigned_name(fn, node):
                return True
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return True
        todo.extend(ast.iter_child_nodes(node))
    return False


def _assigned_name(fn: ast.FunctionDef, target: ast.Name) -> bool:
    """``target`` is the whole target of an ``=`` (already judged above)."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and any(t is target for t in node.targets):
            return True
    return False


def wraps_itself(value: ast.AST, name: str, wrappers: frozenset[str], same: frozenset[str]) -> bool:
    """``DataParallel(name, ...)``, ``name.to(d)``, ``name.cuda()``, chained."""
    for _ in range(8):
        if isinstance(value, ast.Name):
            return value.id == name
        if not isinstance(value, ast.Call):
            return False
        func = value.func
        if isinstance(func, ast.Attribute) and func.attr in same:
            value = func.value
            continue
        if (ast_dotted(func) or "").rpartition(".")[2] in wrappers and value.args:
            value = value.args[0]
            continue
        return False
    return False
