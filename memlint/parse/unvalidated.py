"""Parse with libcst without its node validation, for text Python has parsed.

libcst validates every node it builds (``CSTNode.__post_init__`` calls
``_validate``): checks meant for trees built by hand, such as "a space must
follow ``while``". For a parse they find nothing new: the text is Python that
the ``ast`` parser has already accepted. They are not free, though: 10-18 %
of libcst's parse (bench/history/speed-2-session5-2026-11-26.md), the largest stage of a cold check. libcst
flags the same cost in a ``PERF`` comment in that very method. They also reject
some valid code (LibCST issue #1061: ``() if 0 else(lambda:())``), which
memlint would report as a file it cannot parse.

So memlint skips validation while libcst parses text that Python accepted,
and only then. Any parse of text Python rejected is validated, and so are the
nodes memlint's fixes build (in the language server a node built on another
thread during a parse may not be; every fixed text is parsed and compiled
again before it is written, fixer._check_fixed).
"""

from __future__ import annotations

import threading

import libcst as cst

_CSTNode = cst.CSTNode
_validating_post_init = _CSTNode.__post_init__
_lock = threading.Lock()
_depth = 0


def _skip(self: cst.CSTNode) -> None:
    return None


def parse_unvalidated(text: str) -> cst.Module:
    """``cst.parse_module(text)`` with node validation off during the call.

    The dataclasses' ``__init__`` looks ``__post_init__`` up on each call, so
    swapping it on the base class reaches every node class (none defines its
    own). A counter under a lock keeps it off while any thread is inside and
    restores it when the last one leaves (the language server lints on a
    worker thread)."""
    global _depth
    with _lock:
        _depth += 1
        _CSTNode.__post_init__ = _skip  # type: ignore[method-assign]
    try:
        return cst.parse_module(text)
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _CSTNode.__post_init__ = _validating_post_init  # type: ignore[method-assign]
