"""The values of a local name whose every binding is a plain assignment.

deep-person-reid's ``map_location = None if torch.cuda.is_available() else
'cpu'`` and EDSR's ``kwargs = {}`` / ``kwargs = {'map_location': ...}``: a
fact about the name is a fact about each value assigned to it, but only when
those assignments are all there is. So a name counts only when it is a local
of its scope (not a parameter, not ``global`` or ``nonlocal``: another caller
or function may set it) and every binding of it there is ``name = value``
with one plain target: a tuple target, an augmented or annotated assignment,
a chained ``a = name = value``, a loop target or ``with ... as`` binds it in
a way the value alone does not tell.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from memlint.analysis.autograd.history import param_names
from memlint.parse.tree import tree_of


def plain_values(local: cst.Name, scope: cst.CSTNode, facts: Any) -> list[cst.BaseExpression] | None:
    """The value of every binding of ``local`` in ``scope`` when it is a
    local there and each binding is a plain assignment; None otherwise, a
    name with no binding there included."""
    name = local.value
    if isinstance(scope, cst.FunctionDef) and (name in param_names(scope) or declared(scope, name)):
        return None
    bindings = facts.recurrent.bindings_in(scope).get(name, ())
    values: list[cst.BaseExpression] = []
    for b in bindings:
        if b.kind != "assign" or not isinstance(b.stmt, cst.Assign) or b.stmt.value is not b.value:
            return None
        if len(b.stmt.targets) != 1 or not isinstance(b.stmt.targets[0].target, cst.Name):
            return None
        values.append(b.value)
    return values or None


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
