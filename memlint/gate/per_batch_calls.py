"""The functions a batch loop may call, through the file's own functions.

MEM101/MEM102 report a store outside any loop of its own function only
when LoopAnalysis.batch_loop_calling finds a batch loop calling that
function: a call callgraph resolves to it inside a batch loop, or inside
a function such a loop calls, followed through callers. The gate used to
accept any call of the function's name, anywhere in the file: on
transformers, a method called once from ``__init__``
(``self._convert_to_per_request_processors()``) sent files to libcst.

This is the same walk by name and line, never narrower than the rule's:
a call callgraph resolves is a bare ``f()`` (a function) or ``self.m()``/
``cls.m()`` (a method) spelling the callee's name; loop_of finds a loop
around a call only where the call lies in the loop's lines; and a caller
counted through its callers is a function whose lines hold the call (a
nested def's calls count for its outer function too: wider, never
narrower). ``spans``: the lines of every loop the gate may take for a
batch loop (a superset of LoopInfo.is_batch_loop, loops.loop_sites).
"""

from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

GateFacts = Any  # gate/facts.GateFacts, which imports this module (no import circle)


def per_batch_called(
    facts: GateFacts, spans: list[tuple[int, int]], functions: Iterable[tuple[str, bool, tuple[int, int] | None]]
) -> tuple[set[str], set[str]]:
    """(bare names, ``self.``/``cls.`` names) of the calls that may run once
    per iteration of a batch loop: in a loop of ``spans`` or in the lines of
    a function (name, is a method, lines) so called, to a fixed point.
    Each span is read once per name: linear in the calls, but for nesting."""
    calls: list[tuple[int, bool, str]] = []
    for call in facts._calls:
        func = call.func
        if type(func) is ast.Name:
            calls.append((call.lineno, False, func.id))
        elif type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id in ("self", "cls"):
            calls.append((call.lineno, True, func.attr))
    calls.sort()
    lines = [c[0] for c in calls]
    by_name: dict[tuple[str, bool], list[tuple[int, int]]] = {}
    for name, method, span in functions:
        if span is not None:
            by_name.setdefault((name, method), []).append(span)
    bare: set[str] = set()
    through_self: set[str] = set()
    todo = list(spans)
    while todo:
        first, last = todo.pop()
        for i in range(bisect_left(lines, first), bisect_right(lines, last)):
            _line, method, name = calls[i]
            found = through_self if method else bare
            if name not in found:
                found.add(name)
                todo.extend(by_name.get((name, method), ()))
    return bare, through_self
