"""A text the engine analyses in place of a file's own, and the way back.

Two kinds of ``.py`` file Python (or IPython) reads but libcst does not:

- **notebook exports** that still hold IPython lines (``%matplotlib inline``,
  ``!pip install ...``, ``%%time``, ``obj?``): the lines are masked as in a
  notebook cell (memlint.read.notebook_magics), same length and place, so
  positions are the file's own and fixes never touch them;
- **indentation mixing tabs and spaces** that Python accepts (a tab advances
  to the next multiple of 8) but libcst's tokenizer refuses (it compares
  indentation as strings): leading tabs are expanded as Python's tokenizer
  reads them (memlint.read.tab_indent), columns are mapped back, and a fix
  is kept only where its result maps back byte for byte.

``restore`` turns the analysed text after fixing back into the file's text,
or says None when it cannot do so exactly; the fix is then not applied.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class TextView:
    text: str  # what is parsed, linted and fixed
    original: str  # the file's text
    note: str  # said once per file: how it was read
    restore: Callable[[str], str | None]  # fixed ``text`` -> the file's text, exactly, or None
    column: Callable[[int, int], int]  # (line, column in ``text``) -> column in ``original``
    why_unfixable: str = ""  # said when a fix is withheld because ``restore`` refused it


def same_column(line: int, column: int) -> int:
    return column
