"""Whether this Python compiles a text (no code runs): what a parse alone lets
through, ``return`` outside a function, a misplaced ``from __future__``,
names used before their ``global``. The tab reader (tab_indent.py) keeps a
rewrite only if it compiles as the original did; the fixer writes no fix
that stops a compiling file from compiling."""

from __future__ import annotations

import warnings


def compiles(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<memlint>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return True
