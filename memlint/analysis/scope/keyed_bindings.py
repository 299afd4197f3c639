"""What a module stores under one constant key: ``state['scheduler'] =
lr_scheduler.StepLR(...)`` (prototypical-networks' ``on_start`` hook).

``facts.bindings`` keys names and attributes only; a rule that reads an
object named by its key (training_verbs.keyed_kind) asks here what the
module assigns to that very spelling, anywhere in it, when it needs the
object's class. Read on demand, one walk per spelling asked.
"""

from __future__ import annotations

import libcst as cst

from memlint.parse.traversal import visit_fast


def keyed_values(module: cst.Module, spelled: str) -> list[cst.BaseExpression]:
    """The values the module assigns to ``spelled`` (``state['scheduler']``,
    as the code writes it), in any scope."""
    visitor = _Stores(module, spelled)
    visit_fast(module, visitor)
    return visitor.found


class _Stores(cst.CSTVisitor):
    def __init__(self, module: cst.Module, spelled: str) -> None:
        super().__init__()
        self.module = module
        self.spelled = spelled
        self.found: list[cst.BaseExpression] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Subscript) and self.module.code_for_node(target.target) == self.spelled:
                self.found.append(node.value)
