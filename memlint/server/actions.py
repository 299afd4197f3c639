"""Code actions: a quick fix per finding, ``# noqa`` for a finding, and fix-all.

Edits are computed by the fixer on the text the findings were made on and
returned as offsets into that text; the protocol layer turns them into LSP
ranges. A quick fix is exactly one round of ``memlint check --fix`` for that
one finding (the import it needs included); fix-all is ``--fix`` itself.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import Sequence

from memlint.fixer import fix_allowed, fix_text, single_fix_edits, text_edit
from memlint.noqa import NOQA_RE
from memlint.rule import Edit, Finding, Rule, Safety
from memlint.server.linting import LintResult

QUICKFIX = "quickfix"
FIX_ALL = "source.fixAll.memlint"


@dataclass(frozen=True)
class Action:
    title: str
    kind: str
    edits: tuple[Edit, ...]  # offsets into the linted text
    findings: tuple[Finding, ...] = ()
    preferred: bool = False


def wanted(kind: str, only: Sequence[str] | None) -> bool:
    """LSP's filter: a requested kind matches itself and its sub-kinds."""
    return not only or any(kind == k or kind.startswith(k + ".") for k in only)


def quick_fixes(result: LintResult, findings: Sequence[Finding], unsafe: bool) -> list[Action]:
    actions = []
    for f in findings:
        if result.module is None or not fix_allowed(f, unsafe):
            continue
        edits = single_fix_edits(result.text, result.module, f)
        if edits is None:
            continue
        assert f.fix is not None
        label = " (unsafe fix: may change behaviour)" if f.fix.safety is Safety.UNSAFE else ""
        actions.append(Action(f"{f.code}: {f.fix.title}{label}", QUICKFIX, tuple(edits), (f,), f.fix.safety is Safety.SAFE))
    return actions


def noqa_actions(text: str, findings: Sequence[Finding]) -> list[Action]:
    actions = []
    for f in findings:
        edit = noqa_edit(text, f.line, f.code)
        if edit is not None:
            actions.append(Action(f"{f.code}: ignore with # noqa: {f.code}", QUICKFIX, (edit,), (f,)))
    return actions


def fix_all(result: LintResult, path: str, rules: Sequence[type[Rule]]) -> Action | None:
    """Every safe fix, as ``memlint check --fix`` applies them."""
    if result.module is None or not any(fix_allowed(f, False) for f in result.findings):
        return None
    fixed = fix_text(result.text, path, rules, unsafe=False)
    if not fixed.changed:
        return None
    return Action("memlint: fix all safe findings", FIX_ALL, (text_edit(result.text, fixed.text),), tuple(fixed.applied))


def noqa_edit(text: str, line: int, code: str) -> Edit | None:
    """The edit that adds ``code`` to the noqa comment of the statement on
    ``line`` (a noqa on a statement's last line covers all its lines),
    merging into a ``# noqa: ...`` already there."""
    row, comment = _statement_end(text, line)
    lines = text.splitlines(keepends=True)
    if not 1 <= row <= len(lines):
        return None
    start = sum(len(s) for s in lines[: row - 1])
    physical = lines[row - 1]
    body = physical.rstrip("\r\n")
    if comment is not None:
        at = body.rfind(comment)
        match = NOQA_RE.search(comment)
        if at >= 0 and match is not None:
            if not match.group("codes"):
                return None  # a bare noqa already silences everything
            end = start + at + match.end("codes")
            return Edit(end, end, f", {code}")
    end = start + len(body)
    return Edit(end, end, f"  # noqa: {code}")


def _statement_end(text: str, line: int) -> tuple[int, str | None]:
    """The physical line that ends the logical line holding ``line``, and the
    comment on it (None if none)."""
    first = None
    comment: tuple[int, str] | None = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                comment = (tok.start[0], tok.string)
                continue
            if tok.type in (tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING):
                continue
            if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                row = tok.start[0]
                if first is not None and first <= line <= row:
                    return row, comment[1] if comment and comment[0] == row else None
                first = None
                continue
            if first is None:
                first = tok.start[0]
    except (tokenize.TokenError, SyntaxError):
        pass
    return line, _trailing_comment(text, line)


def _trailing_comment(text: str, line: int) -> str | None:
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return None
    m = re.search(r"#.*$", lines[line - 1])
    return m.group(0) if m else None
