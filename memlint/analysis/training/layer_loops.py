"""Loops over a model's layers inside one forward, not over data.

``for conv in self.convolutions: x = F.dropout(F.relu(conv(x)))`` in a
method named ``inference``: the loop runs the layers of one forward pass on
one input, each layer fed the previous one's output. Its iterations are no
evaluation steps (the evaluation loop, if any, is the caller's), so the loop
is given no role (MEM201 reports the loop that iterates data).
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import dotted_name
from memlint.parse.traversal import OwnCodeVisitor


def chains_layers(loop: cst.CSTNode, model_calls: list[cst.Call]) -> bool:
    """``loop`` is a ``for`` over layers whose every model call is a call of
    the loop variable (``conv(x)``) inside an assignment rebinding the name
    it is handed (``x = f(conv(x))``): one input threaded through the layers."""
    if not isinstance(loop, cst.For) or not isinstance(loop.target, cst.Name) or not model_calls:
        return False
    layer = loop.target.value
    chained = _chained_calls(loop.body, layer)
    return all(id(call) in chained for call in model_calls)


def _chained_calls(body: cst.BaseSuite, layer: str) -> set[int]:
    finder = _Chained(layer)
    body.visit(finder)
    return finder.found


class _Chained(OwnCodeVisitor):
    def __init__(self, layer: str) -> None:
        self.layer = layer
        self.found: set[int] = set()
        self._target: str | None = None

    def visit_Assign(self, node: cst.Assign) -> None:
        target = node.targets[0].target if len(node.targets) == 1 else None
        self._target = target.value if isinstance(target, cst.Name) else None

    def leave_Assign(self, original_node: cst.Assign) -> None:
        self._target = None

    def visit_Call(self, node: cst.Call) -> None:
        if self._target is None or dotted_name(node.func) != self.layer:
            return
        args = [a for a in node.args if a.keyword is None and not a.star]
        if args and isinstance(args[0].value, cst.Name) and args[0].value.value == self._target:
            self.found.add(id(node))
