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
    """``global name`` / ``nonlocal name`` anywhere in ``fn``'s body."""
    stack: list[cst.CSTNode] = [fn.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Global, cst.Nonlocal)) and any(n.name.value == name for n in node.names):
            return True
        if not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(node.children)
    return False
