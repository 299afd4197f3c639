"""Applying fixes: node replacements -> text edits -> fixed point.

Each fix is rendered on its own into one text edit (the span where the
regenerated module differs from the original), so fixes compose like ruff's
edits: non-overlapping edits are applied together, the result must parse, then
the text is linted again, up to ``MAX_ROUNDS`` times.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Sequence

import libcst as cst

from memlint.analysis.names import ImportTable
from memlint.engine import ParseError, applicable_rules, lint_module, parse_module
from memlint.noqa import file_is_exempt
from memlint.rule import Edit, Finding, Fix, Rule, Safety

MAX_ROUNDS = 10


@dataclass
class FixResult:
    text: str
    applied: list[Finding] = field(default_factory=list)
    remaining: list[Finding] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.applied)


class _Replacer(cst.CSTTransformer):
    def __init__(self, fix: Fix) -> None:
        super().__init__()
        self._map = {id(old): new for old, new in fix.replacements}

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        new = self._map.get(id(original_node))
        return updated_node if new is None else new


def render_fix(module: cst.Module, fix: Fix) -> str:
    return module.visit(_Replacer(fix)).code


def text_edit(old: str, new: str) -> Edit:
    """The single span where ``new`` differs from ``old``."""
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    return Edit(start, end_old, new[start:end_new])


def fix_allowed(finding: Finding, unsafe: bool) -> bool:
    if finding.fix is None:
        return False
    return finding.fix.safety is Safety.SAFE or (unsafe and finding.fix.safety is Safety.UNSAFE)


def _overlaps(a: Edit, b: Edit) -> bool:
    if a.start == a.end == b.start == b.end:
        return True
    return a.start < b.end and b.start < a.end or (a.start == b.start)


def add_imports(text: str, modules: Sequence[str]) -> str:
    """Add ``import X`` for each module the text does not bind under its own name."""
    if not modules:
        return text
    module = parse_module(text)
    table = ImportTable(module)
    missing = [m for m in dict.fromkeys(modules) if table.bindings.get(m.split(".")[0]) != m.split(".")[0]]
    if not missing:
        return text
    body = list(module.body)
    index = 0
    for i, stmt in enumerate(body):
        if _is_docstring(stmt) and i == 0:
            index = 1
        elif isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
        ):
            index = i + 1
        else:
            break
    new = [cst.parse_statement(f"import {m}{module.default_newline}", config=module.config_for_parsing) for m in missing]
    if index < len(body) and index > 0 and not _is_import(body[index - 1]):
        # after a docstring, keep a blank line between it and the import
        new[0] = new[0].with_changes(leading_lines=[cst.EmptyLine()])
    return module.with_changes(body=body[:index] + new + body[index:]).code


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_import(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and any(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
    )


def fix_text(
    text: str, path: str, rules: Sequence[type[Rule]], *, unsafe: bool = False
) -> FixResult:
    """Apply every allowed fix until none is left (or MAX_ROUNDS).

    Raises ParseError when the input itself does not parse. A fix whose result
    would not parse is dropped, and its finding stays in ``remaining``.
    """
    result = FixResult(text=text)
    if file_is_exempt(text):
        return result
    rejected: set[tuple[str, int, int]] = set()
    for _ in range(MAX_ROUNDS):
        active = applicable_rules(result.text, rules)
        if not active:
            result.remaining = []
            return result
        module = parse_module(result.text)
        findings = lint_module(module, result.text, path, active)
        result.remaining = findings
        candidates = [
            f for f in findings if fix_allowed(f, unsafe) and (f.code, f.line, f.column) not in rejected
        ]
        if not candidates:
            return result
        chosen: list[tuple[Edit, Finding]] = []
        source = module.code
        for finding in candidates:
            try:
                edit = text_edit(source, render_fix(module, finding.fix))  # type: ignore[arg-type]
            except Exception:
                rejected.add((finding.code, finding.line, finding.column))
                continue
            if edit.start == edit.end and not edit.content:
                rejected.add((finding.code, finding.line, finding.column))
                continue
            if any(_overlaps(edit, other) for other, _ in chosen):
                continue  # next round
            chosen.append((edit, finding))
        if not chosen:
            return result
        new_text = _apply(source, [e for e, _ in chosen])
        imports = [m for _, f in chosen for m in f.fix.imports]  # type: ignore[union-attr]
        try:
            new_text = add_imports(new_text, imports)
            parse_module(new_text)
        except ParseError:
            # Try the fixes one at a time next round; a fix that breaks code
            # on its own is rejected for good.
            if len(chosen) == 1:
                f = chosen[0][1]
                rejected.add((f.code, f.line, f.column))
                continue
            edit, f = chosen[0]
            try:
                new_text = add_imports(_apply(source, [edit]), f.fix.imports)  # type: ignore[union-attr]
                parse_module(new_text)
            except ParseError:
                rejected.add((f.code, f.line, f.column))
                continue
            chosen = chosen[:1]
        result.text = new_text
        result.applied.extend(f for _, f in chosen)
    # Bounded: report what is left after the last round.
    active = applicable_rules(result.text, rules)
    result.remaining = lint_module(parse_module(result.text), result.text, path, active) if active else []
    return result


def _apply(text: str, edits: Sequence[Edit]) -> str:
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.content + text[edit.end :]
    return text


def offset_to_position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    start = text.rfind("\n", 0, offset) + 1
    return line, offset - start


def detach(findings: Sequence[Finding], module: cst.Module | None, with_edits: bool) -> list[Finding]:
    """Findings without node references (picklable), optionally with each fix
    rendered to its text edit against ``module``."""
    out = []
    for f in findings:
        if f.fix is None:
            out.append(f)
            continue
        edits: tuple[Edit, ...] = ()
        if with_edits and module is not None:
            try:
                code = module.code
                e = text_edit(code, render_fix(module, f.fix))
                edits = (replace(e, start_pos=offset_to_position(code, e.start), end_pos=offset_to_position(code, e.end)),)
            except Exception:
                edits = ()
        fix = Fix(title=f.fix.title, replacements=(), safety=f.fix.safety, imports=f.fix.imports, edits=edits)
        out.append(replace(f, fix=fix))
    return out
