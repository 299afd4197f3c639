"""Where a statement stands in its block, without a scan per question.

API (through ``facts.blocks``):

- ``locate(stmt) -> (body, i) | None`` — the statements of the block holding
  ``stmt`` (an indented block or the module) and its index there.
- ``any_before(stmt, test)`` / ``any_after(stmt, test)`` — some earlier
  (later) statement of the same block passes ``test``, a function of the
  statement alone (``del`` or ``gc.collect()``, a ``break``): a function
  or a bound method, the same object for every question (the answers are
  memoised per block and test).

Rules ask such questions about many statements of one block ("a ``del``
before this ``empty_cache()``", "a ``break`` after this snapshot"); scanning
the block from its start each time is quadratic in its length. Here each block
is listed once, and each test is run once per statement of a block, however
many statements ask.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import libcst as cst

Test = Callable[[cst.CSTNode], bool]


def inside(node: cst.CSTNode, outer: cst.CSTNode, parents: Mapping) -> bool:
    """``node`` is ``outer`` or lies within it, by the parents map: no walk of ``outer``."""
    cur: cst.CSTNode | None = node
    while cur is not None:
        if cur is outer:
            return True
        cur = parents.get(cur)
    return False


class Blocks:
    def __init__(self, parents: Mapping) -> None:
        self._parents = parents
        self._positions: dict[int, tuple[cst.CSTNode, dict[int, int]]] = {}  # id(block) -> (block, id(stmt) -> i)
        self._passing: dict[tuple[int, Test], tuple[int, int]] = {}  # (block, test) -> (first, last) passing index

    def locate(self, stmt: cst.CSTNode) -> tuple[Sequence[cst.CSTNode], int] | None:
        block = self._parents.get(stmt)
        body = getattr(block, "body", None)
        if not isinstance(body, (tuple, list)):
            return None
        found = self._positions.get(id(block))
        if found is None or found[0] is not block:
            found = self._positions[id(block)] = (block, {id(s): i for i, s in enumerate(body)})
        i = found[1].get(id(stmt))
        if i is None or body[i] is not stmt:
            return None
        return body, i

    def any_before(self, stmt: cst.CSTNode, test: Test) -> bool:
        found = self._span(stmt, test)
        return found is not None and found[0] < found[2]

    def any_after(self, stmt: cst.CSTNode, test: Test) -> bool:
        found = self._span(stmt, test)
        return found is not None and found[1] > found[2]

    def _span(self, stmt: cst.CSTNode, test: Test) -> tuple[int, int, int] | None:
        """(first, last index in the block passing ``test``, index of ``stmt``)."""
        located = self.locate(stmt)
        if located is None:
            return None
        body, i = located
        key = (id(body), test)
        span = self._passing.get(key)
        if span is None:
            passing = [k for k, s in enumerate(body) if test(s)]
            span = self._passing[key] = (passing[0], passing[-1]) if passing else (len(body), -1)
        return span[0], span[1], i
