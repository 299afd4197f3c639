"""Names that hold the same module in a function.

``model_without_ddp = model.module`` or ``net = model``: a mode switch on one
name acts on the module another name reaches. The answer is flow-insensitive:
it only tells whether two names may share a module, so callers that find a
link stay silent rather than guess.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import dotted_name
from memlint.parse.traversal import visit_fast


def alias_pairs(scope: cst.CSTNode) -> frozenset[tuple[str, str]]:
    """``(name, dotted)`` for every ``name = dotted`` (a plain name or an
    attribute chain) in ``scope``, in both orders."""
    visitor = _Aliases()
    visit_fast(scope, visitor)
    return frozenset(visitor.pairs | {(b, a) for a, b in visitor.pairs})


def related(a: str, b: str, pairs: frozenset[tuple[str, str]]) -> bool:
    """``a`` and ``b`` may reach a shared module: one is a part of the other
    (``model.backbone``), or an alias links them (directly or through a
    part: ``m = model`` and ``m.head``)."""
    return _near(a, b) or any(_near(x, a) and _near(y, b) for x, y in pairs)


def _near(u: str, v: str) -> bool:
    return u == v or u.startswith(v + ".") or v.startswith(u + ".")


class _Aliases(cst.CSTVisitor):
    def __init__(self) -> None:
        self.pairs: set[tuple[str, str]] = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        source = dotted_name(node.value)
        if source is None:
            return
        for target in node.targets:
            name = dotted_name(target.target)
            if name is not None and name != source:
                self.pairs.add((name, source))
