"""Names a loop accumulates into (``loss += crit(out, y)``).

MEM201 asks it of an evaluation-looking loop: when what the loop sums up is
later backpropagated in the same function (RIFE's ``update()``, whose
``for i in range(3): loss_cons += self.epe(...)`` feeds ``loss_G.backward()``
on its training path), the loop builds the graph that backward reads: it is
part of a training step, whatever ``eval()`` a branch before it calls.
"""

from __future__ import annotations

import libcst as cst

from memlint.parse.traversal import OwnScopeVisitor, visit_fast


class _Accumulated(OwnScopeVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.names.add(node.target.value)


def accumulated_names(loop: cst.For | cst.While) -> set[str]:
    """The plain names ``loop``'s body augments (``x += ...``, ``x *= ...``)."""
    visitor = _Accumulated()
    visit_fast(loop.body, visitor)
    return visitor.names
