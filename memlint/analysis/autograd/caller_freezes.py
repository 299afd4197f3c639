"""A module's function called only right after its caller froze the model.

MORAN's ``main.py`` runs ``val()`` from its training loop as
``for p in MORAN.parameters(): p.requires_grad = False; MORAN.eval();
acc = val(...)``, and thaws the parameters again after: every forward in
``val`` runs a frozen model on inputs without history, so no graph is built
(RULES.md, MEM201 traps: a frozen model). frozen.py's answer is
flow-insensitive (frozen and thawed in one scope: not frozen); this one reads
the order, at each call site only: among the statements before the call in
its own block (straight-line, not inside a nested block), the last one that
sets the model's ``requires_grad`` freezes it.

Only a function every call of which is seen (called in this module, not
handed out as a value, not called by other modules) is answered.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.attribute_names import spells_attribute
from memlint.analysis.scope.names import dotted_name
from memlint.parse.traversal import visit_fast


def _setting(stmt: cst.CSTNode, model: str) -> bool | None:
    """``stmt`` sets ``model``'s ``requires_grad``: False for a freeze, True
    for a thaw or any other value; None when it does not touch it."""
    if isinstance(stmt, cst.For):
        it = stmt.iter
        if not (
            isinstance(it, cst.Call)
            and isinstance(it.func, cst.Attribute)
            and it.func.attr.value == "parameters"
            and dotted_name(it.func.value) == model
            and isinstance(stmt.target, cst.Name)
        ):
            return _touches(stmt)
        values = _flag_values(stmt.body, stmt.target.value)
        if not values:
            return _touches(stmt)
        return False if values == {False} else True
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                call = small.value
                func = call.func
                if (
                    isinstance(func, cst.Attribute)
                    and func.attr.value == "requires_grad_"
                    and dotted_name(func.value) == model
                ):
                    arg = call.args[0].value if call.args else None
                    return not (isinstance(arg, cst.Name) and arg.value == "False")
    return _touches(stmt)


class _Flags(cst.CSTVisitor):
    def __init__(self, param: str) -> None:
        self.param = param
        self.values: set[bool | None] = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if dotted_name(t.target) == f"{self.param}.requires_grad":
                value = node.value
                self.values.add(
                    value.value == "True" if isinstance(value, cst.Name) and value.value in ("True", "False") else None
                )


def _flag_values(body: cst.CSTNode, param: str) -> set[bool | None]:
    visitor = _Flags(param)
    visit_fast(body, visitor)
    return visitor.values


# Attributes through which a statement may set some ``requires_grad``.
_MAY_SET = ("requires_grad", "requires_grad_", "parameters", "named_parameters")


def _touches(stmt: cst.CSTNode) -> bool | None:
    """A statement that may set some ``requires_grad`` in another way: unknown (True)."""
    return True if spells_attribute(stmt, _MAY_SET) else None


def frozen_before(call: cst.Call, model: str, parents) -> bool:
    """At ``call``, ``model`` was frozen by the last statement before it, in
    its own block, that sets its ``requires_grad``."""
    stmt: cst.CSTNode | None = call
    while stmt is not None and not isinstance(stmt, cst.BaseStatement):
        stmt = parents.get(stmt)
    block = parents.get(stmt) if stmt is not None else None
    body = getattr(block, "body", None)
    if stmt is None or not isinstance(body, (list, tuple)) or stmt not in body:
        return False
    for before in reversed(body[: body.index(stmt)]):
        setting = _setting(before, model)
        if setting is not None:
            return setting is False
    return False
