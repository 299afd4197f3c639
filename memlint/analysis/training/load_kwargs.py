"""Keyword dicts splatted into a call that may leave one keyword out.

EDSR's ``Model.load``: ``kwargs = {'map_location': ...}`` when ``cpu``,
else ``kwargs = {}``, then ``torch.load(path, **kwargs)``: on the GPU path the
load has no ``map_location``. A ``**name`` counts only when the name is a
local of its scope (no parameter, ``global`` or ``nonlocal``), every binding
of it there is a plain assignment of a dict display with string keys (no
``**other`` inside), it is read only as a ``**`` argument (never mutated,
passed on or looked into), and some binding lacks the keyword; anything else
leaves it unknown.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from memlint.analysis.autograd.history import param_names
from memlint.parse.tree import tree_of


def splat_misses(call: cst.Call, keyword: str, facts: Any) -> bool:
    """Every ``**`` argument of ``call`` is a dict of this kind, some
    binding of one of them leaves ``keyword`` out, and none holds it on
    every path; no ``*`` argument and no ``keyword=`` beside them."""
    stars = [a for a in call.args if a.star == "**"]
    if not stars or any(a.star == "*" or (a.keyword is not None and a.keyword.value == keyword) for a in call.args):
        return False
    scope = facts.loops.scope_of(call)
    if scope is None:
        return False
    missing = False
    for arg in stars:
        verdict = _dict_name_misses(arg.value, keyword, scope, facts)
        if verdict is None:
            return False
        missing = missing or verdict
    return missing


def _dict_name_misses(value: cst.BaseExpression, keyword: str, scope: cst.CSTNode, facts: Any) -> bool | None:
    """Whether some binding of the ``**`` name ``value`` leaves ``keyword``
    out; None when the name is not a local bound only to dict displays."""
    if not isinstance(value, cst.Name):
        return None
    name = value.value
    if isinstance(scope, cst.FunctionDef) and (name in param_names(scope) or declared(scope, name)):
        return None
    bindings = facts.recurrent.bindings_in(scope).get(name, ())
    if not bindings:
        return None
    missing = False
    for b in bindings:
        if b.kind != "assign" or not isinstance(b.stmt, cst.Assign) or b.stmt.value is not b.value:
            return None
        if len(b.stmt.targets) != 1 or not isinstance(b.stmt.targets[0].target, cst.Name):
            return None
        keys = _display_keys(b.value)
        if keys is None:
            return None
        missing = missing or keyword not in keys
    parents = facts.calls.parents
    for read in facts.usage.reads(name, scope):
        parent = parents.get(read)
        if isinstance(parent, cst.AssignTarget):
            continue  # one of the bindings above
        if not (isinstance(parent, cst.Arg) and parent.value is read and parent.star == "**"):
            return None  # mutated, passed on or looked into
    return missing


def _display_keys(value: cst.BaseExpression) -> set[str] | None:
    """The string keys of a dict display; None for anything else."""
    if not isinstance(value, cst.Dict):
        return None
    keys: set[str] = set()
    for element in value.elements:
        if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
            return None
        keys.add(element.key.evaluated_value if isinstance(element.key.evaluated_value, str) else "")
    return keys


def declared(fn: cst.FunctionDef, name: str) -> bool:
    """``global name`` / ``nonlocal name`` anywhere in ``fn``'s body, not in
    a nested function or class (a statement: never in a lambda). Read off
    the module's TreeIndex while it is linted: MEM701 asks this of every
    load's ``map_location`` name, and a walk of ``children`` cost 13 % of a
    cold check of transformers, most functions holding no such statement."""
    located = tree_of(fn)
    if located is None:
        return _declared_by_walk(fn, name)
    index, start = located
    nodes, parent = index.nodes, index.parent
    for i in index.indices(start, _DECLARATIONS):
        if not any(n.name.value == name for n in nodes[i].names):  # type: ignore[attr-defined]
            continue
        up = parent[i]
        while up != start and not isinstance(nodes[up], _OWN_SCOPES):
            up = parent[up]
        if up == start:
            return True
    return False


_DECLARATIONS = (cst.Global, cst.Nonlocal)
_OWN_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def _declared_by_walk(fn: cst.FunctionDef, name: str) -> bool:
    """:func:`declared` outside a lint (no shared TreeIndex)."""
    stack: list[cst.CSTNode] = [fn.body]
    while stack:
        node = stack.pop()
        if isinstance(node, _DECLARATIONS) and any(n.name.value == name for n in node.names):
            return True
        if not isinstance(node, _OWN_SCOPES):
            stack.extend(node.children)
    return False
