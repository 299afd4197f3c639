"""The analysis budget per file: one pathological file cannot hang a run.

Every analysis is meant to be linear in the size of the file
(bench/linear_growth.py), but a file no one foresaw must not freeze an
editor or a CI job. The engine analyses each file inside ``file_budget``;
the walks that every analysis and rule go through (traversal, the history
walk) call ``tick()``, which raises ``BudgetExceeded`` once the file's
analysis has used more than its budget of CPU time. The caller (CLI, flake8
plugin, a language server) reports the file as not checked and goes on.

The budget is CPU time of the thread doing the analysis, not wall time, so
that a loaded machine does not turn a normal file into an error: 60 seconds
by default (a 40,000-statement function takes a few seconds on a laptop),
``MEMLINT_ANALYSIS_BUDGET=<seconds>`` to change it, ``0`` for none.

``ticks()`` counts the calls to ``tick()``: a measure of work that does not
depend on the machine (tests/test_linear_growth.py reads it).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

DEFAULT_SECONDS = 60.0
ENV_VAR = "MEMLINT_ANALYSIS_BUDGET"
_CHECK_EVERY = 256  # ticks between two reads of the clock


class BudgetExceeded(Exception):
    """The analysis of ``path`` ran over the budget; ``reason`` says so
    without the path (for reports that print the path themselves)."""

    def __init__(self, path: str, seconds: float) -> None:
        self.path = path
        self.reason = (
            f"not checked: the analysis ran over its budget of {seconds:g} s of CPU time per file "
            f"(set {ENV_VAR} to change it)"
        )
        super().__init__(f"{path}: {self.reason}")


def budget_seconds() -> float | None:
    """The budget from the environment; None when it is off."""
    raw = os.environ.get(ENV_VAR, "").strip()
    if not raw:
        return DEFAULT_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        return DEFAULT_SECONDS
    return seconds if seconds > 0 else None


class _State(threading.local):
    deadline: float | None = None
    path: str = ""
    seconds: float = 0.0


_state = _State()
_ticks = 0


@contextmanager
def file_budget(path: str, seconds: float | None = None) -> Iterator[None]:
    """Analyse ``path`` within ``seconds`` of CPU time (default: the
    environment's budget). Nested budgets keep the tighter deadline."""
    if seconds is None:
        seconds = budget_seconds()
    outer = (_state.deadline, _state.path, _state.seconds)
    if seconds is not None:
        deadline = time.thread_time() + seconds
        if outer[0] is None or deadline < outer[0]:
            _state.deadline, _state.path, _state.seconds = deadline, path, seconds
    try:
        yield
    finally:
        _state.deadline, _state.path, _state.seconds = outer


def tick() -> None:
    """One unit of analysis work; raises BudgetExceeded past the deadline."""
    global _ticks
    _ticks += 1
    if _ticks % _CHECK_EVERY == 0:
        deadline = _state.deadline
        if deadline is not None and time.thread_time() > deadline:
            raise BudgetExceeded(_state.path, _state.seconds)


def ticks() -> int:
    return _ticks
