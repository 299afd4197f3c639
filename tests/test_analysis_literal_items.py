"""A loop variable over a tuple or list display takes each element in turn
(analysis/scope/literal_items.py): MetaOptNet's ``[x.eval() for x in (a, b)]``."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.literal_items import literal_items
from memlint.parse.traversal import visit_fast
from tests.analysis_helpers import facts_of


class _Receivers(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("eval", "train"):
            self.found.append(node)


def _items(src: str) -> list[list[str] | None]:
    facts = facts_of(src)
    visitor = _Receivers()
    visit_fast(facts.module, visitor)
    out: list[list[str] | None] = []
    for call in visitor.found:
        recv = call.func.value  # type: ignore[attr-defined]
        items = literal_items(recv, facts.calls.parents) if isinstance(recv, cst.Name) else None
        out.append(None if items is None else [cst.Module([]).code_for_node(i) for i in items])
    return out


def test_a_comprehension_or_loop_over_a_display_takes_its_elements():
    src = """
    _, _ = [x.eval() for x in (net, self.head)]
    for m in [enc, dec]:
        m.train()
    """
    assert _items(src) == [["net", "self.head"], ["enc", "dec"]]


def test_any_other_iterable_or_another_name_is_unknown():
    src = """
    [x.eval() for x in models]
    [x.eval() for x in (net, *rest)]
    [y.eval() for x in (net, head)]
    net.eval()
    """
    assert _items(src)[:3] == [None, None, None]
    assert _items(src)[-1] is None
