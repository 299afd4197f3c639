"""Editing a notebook's JSON text in place: only the ``source`` values of the
changed cells are replaced, in the file's own style, so outputs, metadata,
other cells, key order, indentation and the trailing newline stay byte for
byte what they were."""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable
from json.decoder import scanstring

_WS = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")

Span = tuple[int, int]


class _Scanner:
    """Finds where values lie in JSON text that ``json.loads`` accepted."""

    def __init__(self, text: str) -> None:
        self.text = text

    def ws(self, pos: int) -> int:
        return _WS.match(self.text, pos).end()  # type: ignore[union-attr]

    def value(self, pos: int) -> int:
        c = self.text[pos]
        if c == '"':
            return scanstring(self.text, pos + 1)[1]
        if c == "{":
            return self.object(pos, lambda key, start: self.value(start))
        if c == "[":
            return self.array(pos, lambda index, start: self.value(start))
        m = _SCALAR.match(self.text, pos)
        if m is None:
            raise ValueError(f"unexpected character at offset {pos}")
        return m.end()

    def object(self, pos: int, member: Callable[[str, int], int]) -> int:
        pos = self.ws(pos + 1)
        if self.text[pos] == "}":
            return pos + 1
        while True:
            key, pos = scanstring(self.text, pos + 1)
            pos = self.ws(self.ws(pos) + 1)  # past the colon
            pos = self.ws(member(key, pos))
            if self.text[pos] == "}":
                return pos + 1
            pos = self.ws(pos + 1)  # past the comma

    def array(self, pos: int, item: Callable[[int, int], int]) -> int:
        pos = self.ws(pos + 1)
        if self.text[pos] == "]":
            return pos + 1
        index = 0
        while True:
            pos = self.ws(item(index, pos))
            index += 1
            if self.text[pos] == "]":
                return pos + 1
            pos = self.ws(pos + 1)


def source_spans(text: str) -> dict[int, Span]:
    """0-based cell index -> (start, end) of that cell's ``source`` value."""
    scanner = _Scanner(text)
    spans: dict[int, Span] = {}

    def cell(index: int, start: int) -> int:
        if text[start] != "{":
            return scanner.value(start)

        def member(key: str, begin: int) -> int:
            end = scanner.value(begin)
            if key == "source":
                spans[index] = (begin, end)
            return end

        return scanner.object(start, member)

    def top(key: str, start: int) -> int:
        if key == "cells" and text[start] == "[":
            return scanner.array(start, cell)
        return scanner.value(start)

    start = scanner.ws(0)
    if text[start] == "{":
        scanner.object(start, top)
    return spans


def split_source(text: str) -> list[str]:
    """nbformat's list form: one string per line, each keeping its newline."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def _style(text: str) -> tuple[str | None, bool]:
    """(indent unit, or None when the file is on one line; ensure_ascii)."""
    m = re.match(r"\s*\{\r?\n([ \t]+)\S", text)
    return (m.group(1) if m else None), text.isascii()


def render_source(new: str, old_value: object, span_text: str, line_indent: str, file_text: str) -> str:
    """``new`` as a JSON value that looks like the one it replaces."""
    unit, ascii_only = _style(file_text)

    def dump(s: str) -> str:
        return json.dumps(s, ensure_ascii=ascii_only)

    if isinstance(old_value, str):
        return dump(new)
    items = [dump(line) for line in split_source(new)]
    if not items:
        return "[]"
    opening = re.match(r"\[(\s*)", span_text).group(1)  # type: ignore[union-attr]
    closing = re.search(r"(\s*)\]$", span_text).group(1)  # type: ignore[union-attr]
    if old_value:  # the old list shows the layout
        if len(old_value) > 1:  # type: ignore[arg-type]
            first_end = scanstring(span_text, len(opening) + 2)[1]
            sep = re.match(r"\s*,\s*", span_text[first_end:]).group(0)  # type: ignore[union-attr]
        else:
            sep = "," + opening if "\n" in opening else ", "
        return "[" + opening + sep.join(items) + closing + "]"
    if unit is None:
        return "[" + ", ".join(items) + "]"
    newline = "\r\n" if "\r\n" in file_text else "\n"
    inner = newline + line_indent + unit
    return "[" + inner + ("," + inner).join(items) + newline + line_indent + "]"


def replace_sources(text: str, new_sources: dict[int, str], cells: list[dict]) -> str:
    """``text`` with the ``source`` of each cell in ``new_sources`` (0-based
    index -> new source text) replaced, and nothing else changed."""
    spans = source_spans(text)
    missing = set(new_sources) - set(spans)
    if missing:
        raise ValueError(f"no source found for cell {min(missing) + 1}")
    out = text
    for index in sorted(new_sources, key=lambda i: spans[i][0], reverse=True):
        start, end = spans[index]
        line_start = text.rfind("\n", 0, start) + 1
        line_indent = re.match(r"[ \t]*", text[line_start:start]).group(0)  # type: ignore[union-attr]
        value = render_source(new_sources[index], cells[index].get("source"), text[start:end], line_indent, text)
        out = out[:start] + value + out[end:]
    return out


def source_line_numbers(text: str) -> dict[int, list[int]]:
    """0-based cell index -> for each line of the cell's source, the line of
    the file (1-based) that shows it: nbformat's list form keeps each source
    line in a string of its own, usually on a line of its own; a source kept
    as one string shows all its lines on the string's line."""
    newlines = [i for i, c in enumerate(text) if c == "\n"]

    def line_at(offset: int) -> int:
        return bisect.bisect_left(newlines, offset) + 1

    scanner = _Scanner(text)
    out: dict[int, list[int]] = {}
    for index, (start, _end) in source_spans(text).items():
        if text[start] != "[":
            out[index] = [line_at(start)]
            continue
        lines: list[int] = []
        at_line_start = True

        def item(_: int, begin: int) -> int:
            nonlocal at_line_start
            if text[begin] != '"':
                return scanner.value(begin)
            value, end = scanstring(text, begin + 1)
            for piece in value.splitlines(keepends=True):
                if at_line_start:
                    lines.append(line_at(begin))
                at_line_start = piece.endswith(("\n", "\r"))
            return end

        scanner.array(start, item)
        out[index] = lines or [line_at(start)]
    return out
