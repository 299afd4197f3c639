"""``--add-noqa``: silence every current finding with a ``# noqa: MEMxxx``
comment, so a team can adopt memlint on an existing codebase and fix later.

The comment goes where :mod:`memlint.lint.noqa` will read it back: on the finding's
own line when a comment can end that line, otherwise on the last line of the
statement (a line that ends inside a string or with a backslash cannot take
one). A ``# noqa: …`` already on the statement gets the new codes merged in;
everything else on the line is kept.
"""

from __future__ import annotations

import bisect
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field

from memlint.lint.noqa import NOQA_RE

_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


@dataclass
class _Statement:
    first: int
    last: int
    noqa_line: int | None = None  # a line of the statement holding a noqa comment (with codes or bare)


@dataclass
class _Layout:
    statements: list[_Statement] = field(default_factory=list)
    no_comment: set[int] = field(default_factory=set)  # lines that cannot end with a comment
    comments: dict[int, tuple[int, str]] = field(default_factory=dict)  # line -> (column, text)


def physical_lines(text: str) -> list[str]:
    """The lines as the tokenizer counts them (``\\r``, ``\\n`` and ``\\r\\n``
    only; ``str.splitlines`` also splits at form feeds and other separators)."""
    return _LINE_RE.findall(text)


def _layout(lines: list[str]) -> _Layout:
    layout = _Layout()
    feed = iter(lines)
    first = 1
    depth = 0
    noqa_line = None
    for tok in tokenize.generate_tokens(lambda: next(feed, "")):
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth = max(depth - 1, 0)
        elif tok.type == tokenize.COMMENT:
            layout.comments[tok.start[0]] = (tok.start[1], tok.string)
            if NOQA_RE.search(tok.string):
                noqa_line = tok.start[0]
        elif tok.type == tokenize.STRING or getattr(tokenize, "FSTRING_MIDDLE", None) == tok.type:
            layout.no_comment.update(range(tok.start[0], tok.end[0]))
        if tok.type == tokenize.NL and depth:
            continue
        if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER):
            last = tok.start[0]
            layout.statements.append(_Statement(first, last, noqa_line))
            noqa_line = None
            first = tok.end[0] + 1 if tok.type != tokenize.ENDMARKER else last
    for number, line in enumerate(lines, 1):
        if line.rstrip("\r\n").endswith("\\") and number not in layout.comments:
            layout.no_comment.add(number)
    return layout


def _statement_of(line: int, statements: list[_Statement], firsts: list[int]) -> _Statement | None:
    i = bisect.bisect_right(firsts, line) - 1
    if i >= 0 and statements[i].first <= line <= statements[i].last:
        return statements[i]
    return None


def _merge_codes(comment: str, codes: Iterable[str]) -> str:
    match = NOQA_RE.search(comment)
    assert match is not None and match.group("codes")
    old = [c for c in re.split(r"[,\s]+", match.group("codes").strip()) if c]
    merged = list(dict.fromkeys(old + [c for c in sorted(codes) if c not in old]))
    return comment[: match.start()] + "# noqa: " + ", ".join(merged) + comment[match.end() :]


def add_noqa(text: str, findings: Iterable[tuple[int, str]]) -> tuple[str, int]:
    """``text`` with a noqa comment for each ``(line, code)``, and how many of
    them were placed. Lines without findings keep every byte."""
    lines = physical_lines(text)
    try:
        layout = _layout(lines)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return text, 0
    firsts = [s.first for s in layout.statements]
    wanted: dict[int, set[str]] = {}
    count = 0
    for line, code in findings:
        statement = _statement_of(line, layout.statements, firsts)
        if statement is None or not (1 <= line <= len(lines)):
            continue
        if statement.noqa_line is not None:
            target = statement.noqa_line
            if not NOQA_RE.search(layout.comments[target][1]).group("codes"):
                continue  # a bare noqa comment already silences every code
        elif line not in layout.no_comment:
            target = line
        else:
            target = statement.last
        wanted.setdefault(target, set()).add(code)
        count += 1
    for target, codes in wanted.items():
        lines[target - 1] = _with_codes(lines[target - 1], codes, layout.comments.get(target))
    return "".join(lines), count


def _with_codes(line: str, codes: set[str], comment: tuple[int, str] | None) -> str:
    body = line.rstrip("\r\n")
    ending = line[len(body) :]
    match = NOQA_RE.search(comment[1]) if comment is not None else None
    if comment is not None and match is not None and match.group("codes"):
        column, old = comment
        return body[:column] + _merge_codes(old, codes) + body[column + len(old) :] + ending
    content = body.rstrip()
    separator = "  " if content else ""
    return f"{content}{separator}# noqa: {', '.join(sorted(codes))}{ending}"
