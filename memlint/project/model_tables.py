"""Module-level tables of model classes or builders (MEM701 across modules):
``model_dict = {'resnet8': resnet8, 'vgg13': vgg13}`` in models/__init__.py,
used as ``model_dict[name](num_classes=n)`` by a script.

A table here is a dict literal bound once at module level, whose every value
is a plain name, and that nothing in the module writes into (``t[k] = v``,
``t.update(...)``) or binds again. The index judges each value (a class or
builder of the project that moves nothing); the summary only lists them.
Read on Python's ``ast`` tree of the project summary.
"""

from __future__ import annotations

import ast

from memlint.gate.ast_fields import STATEMENT_BLOCKS, nodes

_WRITES = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__"})
_CPU_LIBRARIES = frozenset({"torch", "torchvision"})
_DEFINES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


def model_tables(tree: ast.Module) -> dict[str, list[str]]:
    candidates: dict[str, list[str]] = {}
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Dict)
            and stmt.value.values
            and None not in stmt.value.keys
            and all(isinstance(v, ast.Name) for v in stmt.value.values)
        ):
            name = stmt.targets[0].id
            values = [v.id for v in stmt.value.values]  # type: ignore[attr-defined]
            candidates[name] = [] if name in candidates else sorted(set(values))  # bound twice: dropped below
    candidates = {n: v for n, v in candidates.items() if v}
    if not candidates:
        return {}
    # Only a module with a candidate pays for this walk.
    bound: dict[str, int] = {}
    # Every node of the module: the classes tested by identity.
    name_, load_ = ast.Name, ast.Load
    for node in nodes(tree):
        kind = node.__class__
        if kind is name_:
            if node.ctx.__class__ is not load_ and node.id in candidates:  # type: ignore[attr-defined]
                bound[node.id] = bound.get(node.id, 0) + 1  # type: ignore[attr-defined]
        elif kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            if func.__class__ is ast.Attribute and func.attr in _WRITES and func.value.__class__ is name_:
                bound[func.value.id] = 2
        elif kind is ast.Subscript:
            if node.ctx.__class__ is not load_ and node.value.__class__ is name_:  # type: ignore[attr-defined]
                bound[node.value.id] = 2  # type: ignore[attr-defined]
        elif kind is ast.Global or kind is ast.Nonlocal:
            for name in node.names:  # type: ignore[attr-defined]
                bound[name] = 2
        elif kind in _DEFINES and node.name in candidates:  # type: ignore[attr-defined]
            bound[node.name] = 2  # type: ignore[attr-defined]
    return {n: v for n, v in sorted(candidates.items()) if bound.get(n, 0) == 1}


def builds_only_on_cpu(tree: ast.Module, cpu_classes: list[str]) -> bool:
    """Every class ``getattr(module, name)`` can give is built on the CPU
    (dlwpt's ``getattr(p2ch14.model, cli_args.cls_model)()``): the module
    defines at least one class, every class it defines moves nothing, and it
    imports no name spelled as a class (``from x import Net``) but from torch
    or torchvision (whose constructors build on the CPU: self-critical's
    ``from torchvision.models.resnet import Bottleneck``)."""
    classes = [s.name for s in tree.body if isinstance(s, ast.ClassDef)]
    if not classes or not set(classes) <= set(cpu_classes):
        return False
    for node in _statements(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] not in _CPU_LIBRARIES:
            if any((a.asname or a.name)[:1].isupper() or a.name == "*" for a in node.names):
                return False
    return True


def _statements(tree: ast.Module) -> list[ast.AST]:
    """Every statement of ``tree`` (an import is one), nested ones included,
    without entering an expression: a tenth of the tree's nodes."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        out.append(node)
        for name in STATEMENT_BLOCKS:
            block = getattr(node, name, None)
            if block.__class__ is list:
                todo.extend(block)  # type: ignore[arg-type]
    return out
