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


def stores_a_method_result(facts: GateFacts) -> bool:
    """Some scope binds a name to ``<name>.<method>(...)`` (alone or
    unpacked; the receiver neither ``self`` nor an imported name) and some
    scope stores that name in a container (``xs.append(n)``, ``d[k] = n``,
    ``xs += [n]``), read from what the gate's walk already gathered (its
    assignments, calls and ``+= [..]``). Scopes are not matched: a walk of
    its own to match them cost ~3 CPU s on transformers for ~35 files of
    2,860 spared a wait, and a necessary condition needs no more. Asked
    once per file (the card's gate and its project part both ask)."""
    if facts._method_store is None:
        facts._method_store = _bound_and_stored(facts)
    return facts._method_store


def _bound_and_stored(facts: GateFacts) -> bool:
    imported = facts._aliases
    bound: set[str] = set()
    stored: set[str] = set()
    for node in facts._assigns:
        if _method_call(node.value, imported):
            for target in node.targets:
                bound.update(n.id for n in ast.walk(target) if type(n) is ast.Name)
        elif any(type(t) is ast.Subscript for t in node.targets):
            stored |= _names(node.value)
    if not bound:
        return False
    for aug in facts._list_aug_assigns:
        stored |= _names(aug.value)
    for call in facts._calls:
        func = call.func
        if type(func) is ast.Attribute and func.attr in ADDERS:
            for arg in (*call.args, *(k.value for k in call.keywords)):
                stored |= _names(arg)
    return not bound.isdisjoint(stored)


def _method_call(value: ast.AST, imported: dict[str, str]) -> bool:
    """``model.train_step(...)``: a method of a plain name's object."""
    if type(value) is not ast.Call or type(value.func) is not ast.Attribute:  # type: ignore[attr-defined]
        return False
    receiver = value.func.value  # type: ignore[attr-defined]
    return type(receiver) is ast.Name and receiver.id != "self" and receiver.id not in imported


def _names(value: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(value) if type(n) is ast.Name}
