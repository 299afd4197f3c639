"""IPython syntax in notebook cells: magics (``%``, ``%%``), shell escapes
(``!``) and help (``obj?``) are masked before parsing and restored after fixing.

A masked line keeps its length and its place: the magic becomes ``...`` (or
``0`` when shorter than three characters) padded with spaces, so positions of
everything else stay those of the cell, and the lines are never edited.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from memlint.read.text_view import TextView, same_column

# Cell magics whose body is Python that runs: the body is linted, the magic
# line masked. Any other cell magic (%%bash, %%writefile, %%html…) makes the
# cell something else, and it is skipped.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "memit", "debug"})

_CELL_MAGIC = re.compile(r"%%(\w*)")
_LINE_MAGIC = re.compile(
    r"""(?P<indent>[ \t]*)(?:
        (?P<escape>[%!])                              # %magic, !cmd, %%magic
      | (?P<assign>[\w.][\w., \t]*=[ \t]*)[%!]       # x = %magic, a, b = !cmd
      | \?{1,2}[\w.]+[ \t]*$                           # ?obj, ??obj
      | [\w.]+\?{1,2}[ \t]*$                           # obj?, obj??
    )""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class MaskedCell:
    text: str
    original: str
    masked_lines: tuple[int, ...]  # 0-based indices of lines that were masked
    script: bool = False  # masked as a .py export (mask_script), not as a cell

    @property
    def has_masks(self) -> bool:
        return bool(self.masked_lines)


def _split(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _placeholder(body: str) -> str:
    """Same length as ``body`` (without its newline)."""
    stem = "..." if len(body) >= 3 else "0"
    return stem + " " * (len(body) - len(stem)) if body else ""


def _newline(line: str) -> tuple[str, str]:
    stripped = line.rstrip("\r\n")
    return stripped, line[len(stripped) :]


class _Lexer:
    """Just enough of Python's tokenizer to know whether a line starts a new
    statement: open brackets, open strings and backslash continuations."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote: str | None = None  # the open string's delimiter
        self.continued = False

    @property
    def at_statement_start(self) -> bool:
        return not self.depth and self.quote is None and not self.continued

    def feed(self, line: str) -> None:
        body, _ = _newline(line)
        self.continued = False
        i, n = 0, len(body)
        while i < n:
            c = body[i]
            if self.quote is not None:
                if c == "\\":
                    i += 2
                    continue
                if body.startswith(self.quote, i):
                    i += len(self.quote)
                    self.quote = None
                    continue
                i += 1
                continue
            if c == "#":
                break
            if c in "\"'":
                self.quote = c * 3 if body.startswith(c * 3, i) else c
                i += len(self.quote)
                continue
            if c in "([{":
                self.depth += 1
            elif c in ")]}":
                self.depth = max(0, self.depth - 1)
            elif c == "\\" and i == n - 1:
                self.continued = True
            i += 1
        if self.quote is not None and len(self.quote) == 1 and not body.endswith("\\"):
            self.quote = None  # unterminated: the parser will say so


def cell_magic(text: str) -> str | None:
    """The name of the cell magic on the cell's first non-blank line, if any."""
    for line in text.splitlines():
        if line.strip():
            m = _CELL_MAGIC.match(line)
            return m.group(1) if m else None
    return None


def mask_script(text: str) -> MaskedCell:
    """A ``.py`` file exported from a notebook, as plain Python: its IPython
    lines masked wherever a statement may start. A cell magic there
    (``%%time`` between two cells' code) is masked like a line magic: the
    code below it is Python that runs (a non-Python one, ``%%bash``, leaves a
    body that does not parse, and the file is reported as before)."""
    return _mask(text, None, script=True)


def mask_cell(text: str) -> MaskedCell | None:
    """The cell as plain Python, or None when a cell magic makes it something
    other than Python."""
    magic = cell_magic(text)
    if magic is not None and magic not in PYTHON_CELL_MAGICS:
        return None
    return _mask(text, magic)


def _mask(text: str, magic: str | None, script: bool = False) -> MaskedCell:
    lines = _split(text)
    masked: list[int] = []
    lexer = _Lexer()
    in_magic = False  # a magic continued onto the next line with a backslash
    seen_code = False
    for index, line in enumerate(lines):
        body, end = _newline(line)
        if in_magic:
            lines[index] = " " * len(body) + end
            masked.append(index)
            in_magic = body.endswith("\\")
            continue
        if magic is not None and not seen_code and body.strip():
            seen_code = True
            lines[index] = _placeholder(body) + end  # the %%time line
            masked.append(index)
            continue
        seen_code = seen_code or bool(body.strip())
        m = _LINE_MAGIC.match(body) if lexer.at_statement_start else None
        if m is not None:  # none of these can start a Python statement
            keep = len(m.group("indent")) + len(m.group("assign") or "")
            lines[index] = body[:keep] + _placeholder(body[keep:]) + end
            masked.append(index)
            in_magic = body.endswith("\\")
            continue
        lexer.feed(line)
    return MaskedCell(text="".join(lines), original=text, masked_lines=tuple(masked), script=script)


def unmask(cell: MaskedCell, fixed: str) -> str | None:
    """Put the magics back into ``fixed`` (the masked text after fixing).

    Fixes never edit a masked line, so each one is found unchanged, in order,
    among the fixed lines. None when that is not so; the cell is then left
    as it was.
    """
    if not cell.has_masks:
        return fixed
    old, new = _split(cell.text), _split(fixed)
    originals = _split(cell.original)
    where: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, _ in matcher.get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                where[i1 + k] = j1 + k
    if any(index not in where for index in cell.masked_lines):
        return None
    for index in cell.masked_lines:
        new[where[index]] = originals[index]
    restored = "".join(new)
    again = mask_script(restored) if cell.script else mask_cell(restored)
    return restored if again is not None and again.text == fixed else None


def masked_view(text: str) -> TextView | None:
    """A ``.py`` export read with its IPython lines masked; None without any.
    Masked lines keep their length and place: columns are the file's own."""
    masked = mask_script(text)
    if not masked.has_masks:
        return None
    return TextView(
        text=masked.text,
        original=text,
        note=f"{len(masked.masked_lines)} IPython line{'s' if len(masked.masked_lines) != 1 else ''} "
        "(magics, shell escapes, help) masked for analysis and kept as they are",
        restore=lambda fixed: unmask(masked, fixed),
        column=same_column,
        why_unfixable="it would edit an IPython line",
    )
