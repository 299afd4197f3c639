"""Code actions: a quick fix per finding, ``# noqa`` for a finding, and fix-all.

Edits are computed by the fixer on the text the findings were made on and
returned as offsets into that text; the protocol layer turns them into LSP
ranges. A quick fix is exactly one round of ``memlint check --fix`` for that
one finding (the import it needs included); fix-all is ``--fix`` itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memlint.fix.fixer import apply_edits, fix_allowed, fix_text, single_fix_edits, text_edit
from memlint.fix.minimal_edits import minimal_edits
from memlint.lint.add_noqa import add_noqa, physical_lines
from memlint.rule import Edit, Finding, Rule, Safety
from memlint.run.notebook import NotebookError, fixed_sources
from memlint.server.linting import LintResult, Program

if TYPE_CHECKING:
    from memlint.find.torch_floor import TorchRange

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
        actions.append(
            Action(f"{f.code}: {f.fix.title}{label}", QUICKFIX, tuple(edits), (f,), f.fix.safety is Safety.SAFE)
        )
    return actions


def noqa_actions(text: str, findings: Sequence[Finding]) -> list[Action]:
    actions = []
    for f in findings:
        edit = noqa_edit(text, f.line, f.code)
        if edit is not None:
            actions.append(Action(f"{f.code}: ignore with # noqa: {f.code}", QUICKFIX, (edit,), (f,)))
    return actions


def fix_all(
    result: LintResult, path: str, rules: Sequence[type[Rule]], torch: TorchRange | None = None
) -> Action | None:
    """Every safe fix, as ``memlint check --fix`` applies them."""
    if result.module is None or not any(fix_allowed(f, False) for f in result.findings):
        return None
    fixed = fix_text(result.text, path, rules, unsafe=False, torch=torch)
    if not fixed.changed:
        return None
    edits = tuple(minimal_edits(result.text, fixed.text))
    return Action("memlint: fix all safe findings", FIX_ALL, edits, tuple(fixed.applied))


@dataclass(frozen=True)
class CellAction:
    """An action on a notebook: edits per code cell (cell index -> offsets
    into that cell's text), computed on the joined program."""

    title: str
    kind: str
    edits: dict[int, Edit]
    findings: tuple[Finding, ...] = ()  # as reported in the cell the action was asked for
    preferred: bool = False


def cell_quick_fixes(program: Program, cell_index: int, findings: Sequence[Finding], unsafe: bool) -> list[CellAction]:
    """Quick fixes for findings of one cell: the fix applied to the joined
    program alone (with its import, which may land in another cell), then
    split back into the cells it changed, as ``check --fix`` writes them."""
    actions = []
    module = program.lint.module
    for f in findings:
        raw = program.origin(cell_index, f)
        if module is None or raw is None or not fix_allowed(raw, unsafe):
            continue
        edits = single_fix_edits(program.joined.text, module, raw)
        if edits is None:
            continue
        per_cell = _cell_edits(program, apply_edits(program.joined.text, edits))
        if not per_cell:
            continue
        assert raw.fix is not None
        label = " (unsafe fix: may change behaviour)" if raw.fix.safety is Safety.UNSAFE else ""
        actions.append(
            CellAction(f"{f.code}: {raw.fix.title}{label}", QUICKFIX, per_cell, (f,), raw.fix.safety is Safety.SAFE)
        )
    return actions


def cell_fix_all(
    program: Program, path: str, rules: Sequence[type[Rule]], torch: TorchRange | None = None
) -> CellAction | None:
    if program.lint.module is None or not any(fix_allowed(f, False) for f in program.lint.findings):
        return None
    fixed = fix_text(program.joined.text, path, rules, unsafe=False, torch=torch)
    per_cell = _cell_edits(program, fixed.text) if fixed.changed else None
    if not per_cell:
        return None
    return CellAction("memlint: fix all safe findings", FIX_ALL, per_cell)


def _cell_edits(program: Program, fixed: str) -> dict[int, Edit] | None:
    """Cell index -> the one edit of that cell's text, or None when the fix
    would cross a cell boundary or lose a magic (``check --fix`` refuses those
    too)."""
    try:
        sources = fixed_sources(program.cells, fixed)
    except NotebookError:
        return None
    old = {cell.index: cell.masked.original for cell in program.cells}
    return {index: text_edit(old[index], new) for index, new in sources.items()}


def noqa_edit(text: str, line: int, code: str) -> Edit | None:
    """The edit that silences ``code`` on ``line``: the comment goes where
    ``memlint check --add-noqa`` puts it (merged into a ``# noqa: …`` the
    statement already has), as one replacement of that physical line."""
    new_text, placed = add_noqa(text, [(line, code)])
    if not placed:
        return None
    start = 0
    for old, new in zip(physical_lines(text), physical_lines(new_text)):
        if old != new:
            return Edit(start, start + len(old.rstrip("\r\n")), new.rstrip("\r\n"))
        start += len(old)
    return None
