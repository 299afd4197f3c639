"""Whether a tree spells some attribute by one of a few names.

A cheap, flow-insensitive screen before a finer reading: MEM701 asks whether
a module calls ``self.load_checkpoint()`` at all, caller_freezes.py whether a
statement may touch ``requires_grad`` some other way (``.parameters()``),
MEM201 whether a function registers forward hooks. Only the attribute's own
name is read, never what it is taken from.
"""

from __future__ import annotations

from collections.abc import Collection

import libcst as cst

from memlint.parse.traversal import visit_fast


def spells_attribute(node: cst.CSTNode, names: Collection[str]) -> bool:
    """Some ``x.name`` in ``node``'s tree has its name in ``names``."""
    visitor = _AttributeNamed(names)
    visit_fast(node, visitor)
    return visitor.found


class _AttributeNamed(cst.CSTVisitor):
    def __init__(self, names: Collection[str]) -> None:
        self.names = names
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        # Once found, the rest of the walk has nothing left to tell.
        self.found = self.found or node.attr.value in self.names
        return not self.found
