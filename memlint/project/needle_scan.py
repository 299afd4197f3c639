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

Attribute needles (``.config)``, ``.G.eval(``: index.attribute_needles)
are a dot, a word and a tail that starts with a character no word holds:
thousands of them on transformers, one substring scan each made this test
the parent's largest index cost. Such a needle occurs exactly where the
text has a dot followed by a maximal run equal to its word (the tail ends
the run), so only the needles whose word the text so spells are scanned.
"""

from __future__ import annotations

import re
from functools import lru_cache

_RUN = re.compile(rb"[A-Za-z0-9_]+")
# A dot and the maximal word run after it (the dot cannot be part of a run).
_DOTTED = re.compile(rb"\.([A-Za-z0-9_]+)")
# A dot, a word, then a tail whose first character ends the word.
_ATTRIBUTE = re.compile(rb"\.([A-Za-z0-9_]+)[^A-Za-z0-9_]", re.DOTALL)

Prepared = tuple[frozenset[bytes], tuple[int, ...], tuple[bytes, ...], dict[bytes, tuple[bytes, ...]]]


@lru_cache(maxsize=8)
def _prepared(needles: tuple[bytes, ...]) -> Prepared:
    """The word needles as a set, their lengths (ascending), the others, and
    the attribute needles among the others by their word."""
    words = frozenset(n for n in needles if n and _RUN.fullmatch(n))
    others = []
    attributes: dict[bytes, list[bytes]] = {}
    for n in needles:
        if n in words:
            continue
        attribute = _ATTRIBUTE.match(n)
        if attribute is not None:
            attributes.setdefault(attribute.group(1), []).append(n)
        else:
            others.append(n)
    by_word = {word: tuple(found) for word, found in attributes.items()}
    return words, tuple(sorted({len(n) for n in words})), tuple(others), by_word


def holds_needle(data: bytes, needles: tuple[bytes, ...]) -> bool:
    """``any(n in data for n in needles)``."""
    words, lengths, others, attributes = _prepared(needles)
    if any(n in data for n in others):
        return True
    if attributes:
        for word in set(_DOTTED.findall(data)).intersection(attributes):
            if any(n in data for n in attributes[word]):
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
