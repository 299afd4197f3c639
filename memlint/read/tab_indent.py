"""Indentation that mixes tabs and spaces, read as Python reads it.

Python's tokenizer advances a tab to the next multiple of 8 (and checks that
the result does not depend on the tab size), so ``    `` then ``\\t    `` is a
deeper block. libcst compares indentation as strings and refuses it. The
file is analysed through a copy whose leading tabs are expanded to the spaces
Python counts; a line's columns shift by what its expansion added.

Fixing happens on the expanded copy. ``restore`` brings a fixed copy back:
lines the fix left alone are the file's own again, byte for byte; a line it
wrote takes, for its indentation, the file's own spelling of the same width
where the file has one. The result is accepted only when expanding it gives
the fixed copy exactly and Python still compiles it (no TabError), so a fix
never changes what Python reads beyond what the fix itself changed.
"""

from __future__ import annotations

import difflib
import io
import tokenize
import warnings

from memlint.read.compiles import compiles
from memlint.read.text_view import TextView

TAB_SIZE = 8  # Python's, fixed


def python_width(indent: str) -> int:
    """The column Python's tokenizer reaches after ``indent``."""
    column = 0
    for char in indent:
        if char == "\t":
            column = (column // TAB_SIZE + 1) * TAB_SIZE
        elif char == "\f":
            column = 0
        else:
            column += 1
    return column


def _leading(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t\f"))]


def _string_lines(text: str) -> set[int]:
    """1-based numbers of lines that begin inside a string (their leading
    whitespace is the string's content, not indentation)."""
    inside: set[int] = set()
    kinds = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1), getattr(tokenize, "TSTRING_MIDDLE", -1)}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for token in tokenize.generate_tokens(io.StringIO(text).readline):
                if token.type in kinds and token.end[0] > token.start[0]:
                    inside.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return inside
    return inside


def expand(text: str) -> tuple[str, list[tuple[str, str]]]:
    """The text with each line's leading tabs expanded, and per line (original
    indentation, expanded indentation), equal where nothing changed."""
    in_string = _string_lines(text) if "\t" in text else set()
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    indents: list[tuple[str, str]] = []
    for number, line in enumerate(lines, 1):
        indent = _leading(line)
        if "\t" in indent and number not in in_string and line.strip():
            wide = " " * python_width(indent)
            out.append(wide + line[len(indent) :])
            indents.append((indent, wide))
        else:
            out.append(line)
            indents.append((indent, indent))
    return "".join(out), indents


def has_tab_indent(text: str) -> bool:
    return any("\t" in _leading(line) for line in text.splitlines())


def expanded_view(text: str) -> TextView | None:
    """The file read through its expanded copy; None when it has no tab in
    its indentation (nothing to expand)."""
    if not has_tab_indent(text):
        return None
    expanded, indents = expand(text)
    if expanded == text:
        return None
    original_lines = text.splitlines(keepends=True)
    expanded_lines = expanded.splitlines(keepends=True)
    compiled = compiles(text)
    # The file's own spelling of each width (the first one met), for lines a fix writes.
    spelling: dict[int, str] = {}
    for indent, wide in indents:
        if indent != wide:
            spelling.setdefault(len(wide), indent)

    def column(line: int, col: int) -> int:
        if not 1 <= line <= len(indents):
            return col
        indent, wide = indents[line - 1]
        if col >= len(wide):
            return col - len(wide) + len(indent)
        for i in range(len(indent) + 1):  # inside the indentation: where Python reaches col
            if python_width(indent[:i]) >= col:
                return i
        return len(indent)

    def respell(line: str, local: dict[int, str]) -> str:
        indent = _leading(line)
        if indent and set(indent) == {" "}:
            own = local.get(len(indent)) or spelling.get(len(indent))
            if own is not None:
                return own + line[len(indent) :]
        return line

    def restore(fixed: str) -> str | None:
        fixed_lines = fixed.splitlines(keepends=True)
        out: list[str] = []
        matcher = difflib.SequenceMatcher(None, expanded_lines, fixed_lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                out.extend(original_lines[i1:i2])
                continue
            # The lines the fix replaced (or, for an insertion, the ones
            # around it) spell their widths as the fix's lines should.
            local: dict[int, str] = {}
            for k in [*range(i1, i2), i1 - 1, i2]:
                if not 0 <= k < len(indents):
                    continue
                local.setdefault(len(indents[k][1]), indents[k][0])
            out.extend(respell(line, local) for line in fixed_lines[j1:j2])
        restored = "".join(out)
        for candidate in (restored, _unspelled(fixed_lines, matcher, original_lines)):
            if expand(candidate)[0] == fixed and (not compiled or compiles(candidate)):
                return candidate
        return None

    return TextView(
        text=expanded,
        original=text,
        note="indentation mixes tabs and spaces: analysed with tabs expanded as Python reads them "
        "(positions are the file's own)",
        restore=restore,
        column=column,
        why_unfixable="its result cannot be written back with the file's own tabs byte for byte",
    )


def _unspelled(fixed_lines: list[str], matcher: difflib.SequenceMatcher, original_lines: list[str]) -> str:
    """The restored text with the fix's own lines left as the fix wrote them."""
    out: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        out.extend(original_lines[i1:i2] if tag == "equal" else fixed_lines[j1:j2])
    return "".join(out)
