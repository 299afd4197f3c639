"""A function's own ``return`` statements: the one collector the analyses
share (grad-off decorators, frozen-module helpers), nested functions,
classes and lambdas left out, since their returns are their own."""

from __future__ import annotations

import libcst as cst

from memlint.parse.traversal import OwnScopeVisitor, visit_fast


class _OwnReturns(OwnScopeVisitor):
    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self) -> None:
        super().__init__()
        self.values: list[cst.BaseExpression | None] = []
        self.yields = False

    def visit_Return(self, node: cst.Return) -> None:
        self.values.append(node.value)

    def visit_Yield(self, node: cst.Yield) -> None:
        self.yields = True


def own_returns(fn: cst.FunctionDef) -> tuple[list[cst.BaseExpression | None], bool]:
    """The values of ``fn``'s own returns (None for a bare ``return``), and
    whether its own body yields."""
    visitor = _OwnReturns()
    visit_fast(fn.body, visitor)
    return visitor.values, visitor.yields
