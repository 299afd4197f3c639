"""Pause Python's cyclic garbage collector while one file is linted.

Python's ``ast`` parse, libcst's parse and the analysis allocate hundreds of
thousands of objects per file that stay alive until the file is done. The
cyclic collector counts every allocation and, as the young objects survive,
keeps walking them, and the whole heap on every full collection: measured on
timm 1.0.31 in one process, Python's ``ast`` parse takes 2.6-4.4 CPU s with
the collector on and 1.1-1.4 s with it off, libcst's parse 7.2 s and 5.8 s
(bench/history/speed-1-gate-sessions-2026-11-25.md). Pausing changes no result: objects
freed by reference counting are freed as before, and the cycles made while
paused are collected by the first collection after it (one file's worth).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off inside, back to its previous state after (nests)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
