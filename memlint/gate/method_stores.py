"""MEM102's path through a method another module defines: a function
stores a name it bound from a method call (``loss, preds =
model.train_step(x)``, then ``losses.append(loss)``). Whether the method
hands back a loss it backpropagated is the project's to say
(project/backward_returns.py, read for a receiver that is a plain name); the
file alone says only that such a store exists, so the card's project part
lets a file through on it and the view settles it."""

from __future__ import annotations

import ast
from typing import Any

from memlint.gate.loops import ADDERS

GateFacts = Any  # gate.facts.GateFacts (no import circle)

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def stores_a_method_result(facts: GateFacts) -> bool:
    """Some scope binds a name to ``<name>.<method>(...)`` (alone or
    unpacked; the receiver neither ``self`` nor an imported name) and
    stores that name in a container (``xs.append(n)``, ``d[k] = n``,
    ``xs += [n]``). One walk of the tree."""
    imported = facts._aliases
    bound: dict[int, set[str]] = {}
    stored: dict[int, set[str]] = {}
    stack: list[tuple[ast.AST, int]] = [(facts._tree, 0)]
    while stack:
        node, scope = stack.pop()
        kind = type(node)
        if kind is ast.Assign:
            value = node.value  # type: ignore[attr-defined]
            if _method_call(value, imported):
                names = bound.setdefault(scope, set())
                for target in node.targets:  # type: ignore[attr-defined]
                    names.update(n.id for n in ast.walk(target) if type(n) is ast.Name)
            elif any(type(t) is ast.Subscript for t in node.targets):  # type: ignore[attr-defined]
                stored.setdefault(scope, set()).update(_names(value))
        elif kind is ast.AugAssign and type(node.value) in (ast.List, ast.Tuple):  # type: ignore[attr-defined]
            stored.setdefault(scope, set()).update(_names(node.value))  # type: ignore[attr-defined]
        elif kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            if type(func) is ast.Attribute and func.attr in ADDERS:
                for arg in (*node.args, *(k.value for k in node.keywords)):  # type: ignore[attr-defined]
                    stored.setdefault(scope, set()).update(_names(arg))
        inner = id(node) if kind in _SCOPES else scope
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return any(names & stored.get(scope, set()) for scope, names in bound.items())


def _method_call(value: ast.AST, imported: dict[str, str]) -> bool:
    """``model.train_step(...)``: a method of a plain name's object."""
    if type(value) is not ast.Call or type(value.func) is not ast.Attribute:  # type: ignore[attr-defined]
        return False
    receiver = value.func.value  # type: ignore[attr-defined]
    return type(receiver) is ast.Name and receiver.id != "self" and receiver.id not in imported


def _names(value: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(value) if type(n) is ast.Name}
