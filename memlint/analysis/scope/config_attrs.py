"""Attributes of a class that hold plain numbers.

``self.sigma = sigma`` in ``__init__(self, size=11, sigma=1.5)``: a setting,
not a tensor, so arithmetic on it carries no autograd history. An attribute
counts only when every assignment to it in the class is a number literal or
an ``__init__`` parameter whose default is one (``nn.Parameter`` sigmas are
assigned from calls and never count).
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import flat_targets
from memlint.parse.traversal import visit_fast


def plain_number_attributes(cls: cst.ClassDef) -> frozenset[str]:
    """Names ``x`` of ``self.x`` that only ever hold plain numbers."""
    init = next(
        (s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"),
        None,
    )
    numeric_params = set()
    if init is not None:
        for param in (*init.params.params, *init.params.kwonly_params):
            if param.default is not None and _number(param.default):
                numeric_params.add(param.name.value)
    visitor = _SelfAssignments()
    visit_fast(cls, visitor)
    plain = set()
    for attr, values in visitor.values.items():
        if all(
            v is not None and (_number(v) or (isinstance(v, cst.Name) and v.value in numeric_params)) for v in values
        ):
            plain.add(attr)
    return frozenset(plain)


def _number(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.UnaryOperation):
        expr = expr.expression
    return isinstance(expr, (cst.Integer, cst.Float))


class _SelfAssignments(cst.CSTVisitor):
    """Every value assigned to ``self.<attr>``; None when it cannot be paired
    (augmented assignment, unpacking of a call)."""

    def __init__(self) -> None:
        self.values: dict[str, list[cst.BaseExpression | None]] = {}

    def _add(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            self.values.setdefault(target.attr.value, []).append(value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            target = t.target
            if isinstance(target, (cst.Tuple, cst.List)) and isinstance(node.value, (cst.Tuple, cst.List)):
                if len(target.elements) == len(node.value.elements):
                    for el, val in zip(target.elements, node.value.elements):
                        self._add(el.value, val.value)
                    continue
            if isinstance(target, (cst.Tuple, cst.List)):
                for el in flat_targets(target):
                    self._add(el, None)
            else:
                self._add(target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._add(node.target, None)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._add(node.target, node.value)
