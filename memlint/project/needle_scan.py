"""Does a file's text hold any of the index's needles (index.needles_for)?

The index reads a module that has no training word only when it spells the
name of a function or class of the modules viewed (it may call into them).
On transformers that is thousands of names against every word-less file:
``any(n in data for n in needles)`` scans a file once per needle, ~10 ms a
file, most of the parent's index cost of a cold run.

The same answer from one pass over the file: a needle made only of ASCII
word characters (every name is) occurs in the text exactly when it occurs
inside one of the text's maximal runs of such characters, so it is enough
to look up, in a set, each run's substrings of the needles' lengths. Other
needles (a checkpoint file name holds a dot; a name may be non-ASCII) are
still looked for as substrings, one scan each.
"""

from __future__ import annotations

import re
from functools import lru_cache

_RUN = re.compile(rb"[A-Za-z0-9_]+")


@lru_cache(maxsize=8)
def _prepared(needles: tuple[bytes, ...]) -> tuple[frozenset[bytes], tuple[int, ...], tuple[bytes, ...]]:
    """The word needles as a set, their lengths (ascending), and the others."""
    words = frozenset(n for n in needles if n and _RUN.fullmatch(n))
    others = tuple(n for n in needles if n not in words)
    return words, tuple(sorted({len(n) for n in words})), others


def holds_needle(data: bytes, needles: tuple[bytes, ...]) -> bool:
    """``any(n in data for n in needles)``."""
    words, lengths, others = _prepared(needles)
    if any(n in data for n in others):
        return True
    if not words:
        return False
    for run in set(_RUN.findall(data)):
        if run in words:
            return True
        size = len(run)
        for length in lengths:
            if length >= size:
                break
            for start in range(size - length + 1):
                if run[start : start + length] in words:
                    return True
    return False
