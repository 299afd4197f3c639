"""Which loops may train (loops.LoopInfo.trains), read on Python's ``ast``
by line spans, for the loop rules' gate (analysis/gate_loops.py).

LoopInfo.trains holds when a backward or an optimizer step is called in the
loop (LoopAnalysis.visit_Call's ``backward_calls``/``step_calls``:
objects.is_backward_call, ``torch.autograd.grad`` included, and
is_optimizer_step), or when a function of this file that the loop calls
trains (``callees``, by callgraph.resolve: ``f()`` and ``self.f()``/
``cls.f()`` by the name written; LoopAnalysis.trains follows its callees in
turn). Read wider here, by the callee's last name and by lines: a loop may
train when a call named ``backward``, ``manual_backward``, ``grad`` or
``step`` starts on one of its lines, or a call that may resolve to a
function that may train (a function with such a call, or a call of another
such function, on its lines: nested functions and decorators count too).
"""

from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
from typing import Any

from memlint.gate.ast_names import ast_callee

GateFacts = Any  # analysis/gate.GateFacts (no import circle, tests/test_layout.py)

# is_backward_call's and is_optimizer_step's callees, by their last name.
_TRAINING_CALLS = frozenset({"backward", "manual_backward", "grad", "step"})


class TrainingLines:
    """``may_train(first, last)``: a loop on those lines may train."""

    __slots__ = ("_verbs", "_lines", "_names", "_trains")

    def __init__(self, facts: GateFacts) -> None:
        aliases = facts._aliases
        verbs: list[int] = []
        named: list[tuple[int, str]] = []  # calls callgraph may resolve: (line, name written)
        for call in facts._calls:
            func = call.func
            if ast_callee(func, aliases) in _TRAINING_CALLS:
                verbs.append(call.lineno)
            kind = type(func)
            if kind is ast.Name:
                named.append((call.lineno, func.id))
            elif kind is ast.Attribute and type(func.value) is ast.Name and func.value.id in ("self", "cls"):
                named.append((call.lineno, func.attr))
        verbs.sort()
        named.sort()
        self._verbs = verbs
        self._lines = [line for line, _ in named]
        self._names = [name for _, name in named]
        # Functions that may train, by name, closed over their calls.
        self._trains: set[str] = set()
        todo = []
        for fn in facts._functions:
            first = min(d.lineno for d in (fn, *fn.decorator_list))
            todo.append((fn.name, first, fn.end_lineno))
        changed = True
        while changed and todo:
            changed = False
            left = []
            for name, first, last in todo:
                if self.may_train(first, last):
                    self._trains.add(name)
                    changed = True
                else:
                    left.append((name, first, last))
            todo = left

    def may_train(self, first: int, last: int) -> bool:
        verbs = self._verbs
        k = bisect_left(verbs, first)
        if k < len(verbs) and verbs[k] <= last:
            return True
        trains = self._trains
        if not trains:
            return False
        lines, names = self._lines, self._names
        return any(names[i] in trains for i in range(bisect_left(lines, first), bisect_right(lines, last)))
