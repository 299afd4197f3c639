"""The targets a piece of code binds, in walk order, each unpacked (``a, (b,
*c) = ...`` gives a, b, c): ``x = ...``, ``x: T = ...``, ``for x in``, ``with
... as x``, ``except E as x``, ``import a as x``, and ``x += ...`` and ``(x :=
...)`` unless told not to. One walker for the rules that ask whether a block
binds a name again (MEM202: a model or a name it hangs from; MEM801: a
snapshot's name), so they agree on what a binding is."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import flat_targets
from memlint.parse.traversal import visit_fast


class _Targets(cst.CSTVisitor):
    # Module-level: a class defined per call costs more than the walk.
    def __init__(self, augmented: bool) -> None:
        super().__init__()
        self.augmented = augmented
        self.found: list[cst.BaseExpression] = []

    def _add(self, target: cst.BaseExpression) -> None:
        self.found.extend(flat_targets(target))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._add(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._add(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._add(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._add(node.name)  # type: ignore[arg-type]

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self.augmented:
            self._add(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        if self.augmented:
            self._add(node.target)


def bound_targets(node: cst.CSTNode, *, augmented: bool = True) -> list[cst.BaseExpression]:
    """Every single target ``node`` binds (names, attributes, subscripts);
    ``augmented=False`` leaves out ``x += ...`` and ``(x := ...)``."""
    walker = _Targets(augmented)
    visit_fast(node, walker)
    return walker.found
