"""Jupyter notebooks: the code cells are linted as one module, findings name
their cell, and fixes rewrite only the sources of the cells they change.

The cells are joined in order, each followed by a marker statement of its own
(``__memlint_cell__ = 3``), so dataflow and imports reach across cells (a loop
in one cell, an accumulator or ``import torch`` in another) while every line
maps back to exactly one cell. The markers sit at column 0 between cells: a
fix never edits them, and after fixing the text splits back at them, which
keeps each fix inside its cell. IPython magics are masked first
(:mod:`memlint.read.notebook_magics`) and the JSON is edited in place
(:mod:`memlint.read.notebook_json`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from memlint.fix.covered_fixes import with_covering_fixes
from memlint.fix.fixer import detach, fix_text
from memlint.lint.add_noqa import add_noqa
from memlint.lint.engine import ParseError, lint, parse_module
from memlint.project.notebook_code import MARKER  # the join the project stage summarises
from memlint.read.notebook_json import replace_sources, split_source
from memlint.read.notebook_magics import MaskedCell, mask_cell, unmask
from memlint.read.source import SourceError, SourceFile, read_source, write_inside_tree
from memlint.rule import Edit, Finding, Rule
from memlint.run.results import FileReport, Settings, unified_diff

if TYPE_CHECKING:
    from memlint.project.view import ProjectView

T = TypeVar("T")


class NotebookError(SourceError):
    """The file is not a notebook memlint can read or write back."""


@dataclass(frozen=True)
class CodeCell:
    index: int  # 0-based position among all the notebook's cells
    masked: MaskedCell

    @property
    def number(self) -> int:
        """1-based, counting every cell (markdown too), as ruff does."""
        return self.index + 1


@dataclass(frozen=True)
class Notebook:
    source: SourceFile
    data: dict
    cells: tuple[CodeCell, ...]


@dataclass(frozen=True)
class Joined:
    text: str
    ranges: tuple[tuple[CodeCell, int, int], ...]  # cell, first line (1-based), line count

    def locate(self, line: int) -> tuple[CodeCell, int] | None:
        for cell, first, count in self.ranges:
            if first <= line < first + count:
                return cell, line - first + 1
        return None  # a marker line


def _cell_text(cell: dict) -> str | None:
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(s, str) for s in source):
        return "".join(source)
    return source if isinstance(source, str) else None


def _is_python(data: dict) -> bool:
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    kernel = meta.get("kernelspec") if isinstance(meta.get("kernelspec"), dict) else {}
    info = meta.get("language_info") if isinstance(meta.get("language_info"), dict) else {}
    language = kernel.get("language") or info.get("name")
    return language is None or str(language).lower() in ("python", "python3", "ipython")


def load_notebook(path: str) -> Notebook:
    source = read_source(path)
    try:
        data = json.loads(source.text)
    except json.JSONDecodeError as exc:
        raise NotebookError(
            f"not a notebook: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        if isinstance(data, dict) and "worksheets" in data:
            raise NotebookError(
                "nbformat 3 notebooks are not supported (convert with `jupyter nbconvert --to notebook`)"
            )
        raise NotebookError("not a notebook: no list of cells")
    cells = []
    if _is_python(data):
        for index, cell in enumerate(data["cells"]):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            text = _cell_text(cell)
            masked = mask_cell(text) if text is not None else None
            if masked is not None:
                cells.append(CodeCell(index, masked))
    return Notebook(source, data, tuple(cells))


def join(cells: Sequence[CodeCell], texts: Sequence[str] | None = None) -> Joined:
    parts: list[str] = []
    ranges = []
    line = 1
    for i, cell in enumerate(cells):
        body = texts[i] if texts is not None else cell.masked.text
        if body and not body.endswith("\n"):
            body += "\n"
        count = body.count("\n")
        parts.append(body)
        parts.append(MARKER.format(cell.number) + "\n")
        ranges.append((cell, line, count))
        line += count + 1
    return Joined("".join(parts), tuple(ranges))


def split(text: str, cells: Sequence[CodeCell]) -> list[str] | None:
    """The masked text of each cell in ``text`` (a fixed join), or None when
    the markers are not all there, in order."""
    segments: list[str] = []
    current: list[str] = []
    expected = iter(cells)
    cell = next(expected, None)
    for line in text.splitlines(keepends=True):
        if cell is not None and line.rstrip("\r\n") == MARKER.format(cell.number):
            body = "".join(current)
            if not cell.masked.text.endswith("\n") and body.endswith("\n"):
                body = body[:-1]
            segments.append(body)
            current = []
            cell = next(expected, None)
        else:
            current.append(line)
    if cell is not None or "".join(current).strip():
        return None
    return segments


def _edit_in_cell(edit: Edit, joined: Joined, cell: CodeCell) -> Edit | None:
    """The edit with cell lines, or None when it is not inside ``cell``."""
    if edit.start_pos is None or edit.end_pos is None:
        return edit
    first, count = next((f, c) for c_, f, c in joined.ranges if c_ is cell)
    start, end = joined.locate(edit.start_pos[0]), joined.locate(edit.end_pos[0])
    if start is None or start[0] is not cell:
        return None
    if end is not None and end[0] is cell:
        end_pos = (end[1], edit.end_pos[1])
    elif edit.end_pos == (first + count, 0):
        end_pos = (count + 1, 0)  # removing the cell's last line ends just past it
    else:
        return None
    return replace(edit, start_pos=(start[1], edit.start_pos[1]), end_pos=end_pos)


def to_cells(findings: Sequence[Finding], joined: Joined) -> list[Finding]:
    """Findings with lines counted within their cell and the cell named."""
    out = []
    for f in findings:
        where = joined.locate(f.line)
        if where is None:
            continue
        cell, line = where
        end = joined.locate(f.end_line)
        end_line, end_column = (end[1], f.end_column) if end and end[0] is cell else (line, f.column)
        fix = f.fix
        if fix is not None and fix.edits:
            edits = tuple(_edit_in_cell(e, joined, cell) for e in fix.edits)
            fix = replace(fix, edits=() if None in edits else edits)  # type: ignore[arg-type]
        out.append(replace(f, line=line, end_line=end_line, end_column=end_column, cell=cell.number, fix=fix))
    return out


def tolerating_broken_cells(
    cells: Sequence[CodeCell], action: Callable[[Sequence[CodeCell]], T]
) -> tuple[T, list[str]]:
    """Run ``action`` on the cells; when they do not parse together, leave the
    cells that do not parse on their own out, and name them."""
    try:
        return action(cells), []
    except ParseError:
        good, errors = [], []
        for cell in cells:
            try:
                parse_module(cell.masked.text)
                good.append(cell)
            except ParseError as exc:
                errors.append(f"cell {cell.number}: {exc}")
        if not errors:
            raise
        return action(good), errors


class _Deferred(Exception):
    """A rule reads the project: the check waits for the notebook's view."""


def process_notebook(
    path: str, settings: Settings, rules: Sequence[type[Rule]], view: ProjectView | str | None = None
) -> FileReport:
    """``view``: in check mode, the notebook's project view, None for none,
    or ``"defer"`` (the runner's first pass): the report then carries the
    notebook's summary and, when a rule reads the project, is ``deferred``
    (runner.process_file). Fix and diff read the project from disk."""
    from memlint.project.index import view_from_disk
    from memlint.project.notebook_code import notebook_code
    from memlint.project.summary import summarise_text

    torch = settings.torch_for(path)
    report = FileReport(path=path)
    notebook = load_notebook(path)
    report.digest = notebook.source.digest
    if settings.mode == "add-noqa":
        errors = _add_noqa(notebook, settings, rules, report)
    elif settings.mode == "check":
        # A notebook is a module of its project (project/notebook_code.py).
        report.summary = summarise_text(notebook_code(notebook.source.text))
        used: list[ProjectView | None] = []

        def project() -> ProjectView | None:
            if isinstance(view, str):
                raise _Deferred
            used.append(view)
            return view

        def check(cells: Sequence[CodeCell]) -> list[Finding]:
            joined = join(cells)
            findings, module = lint(joined.text, path, rules, torch=torch, project=project)
            findings = with_covering_fixes(findings, module, path, rules, torch=torch, project=project)
            return to_cells(detach(findings, module, settings.with_edits), joined)

        try:
            report.findings, errors = tolerating_broken_cells(notebook.cells, check)
        except _Deferred:
            report.deferred = True
            return report
        if used and used[0] is not None:
            report.project = used[0].digest()
    else:

        def from_disk() -> ProjectView | None:
            return view_from_disk(path)

        def fix(cells: Sequence[CodeCell]) -> tuple[Sequence[CodeCell], object, Joined]:
            joined = join(cells)
            result = fix_text(joined.text, path, rules, unsafe=settings.unsafe_fixes, torch=torch, project=from_disk)
            return cells, result, joined

        (cells, result, joined), errors = tolerating_broken_cells(notebook.cells, fix)
        _apply(notebook, list(cells), result, joined, settings, report)
    report.error = "; ".join(errors) or None
    return report


def _add_noqa(notebook: Notebook, settings: Settings, rules: Sequence[type[Rule]], report: FileReport) -> list[str]:
    path = notebook.source.path

    def silence(cells: Sequence[CodeCell]) -> tuple[Sequence[CodeCell], Joined, list[Finding]]:
        joined = join(cells)
        return cells, joined, lint(joined.text, path, rules)[0]

    (cells, joined, findings), errors = tolerating_broken_cells(notebook.cells, silence)
    text, report.noqa_added = add_noqa(joined.text, [(f.line, f.code) for f in findings])
    if report.noqa_added:
        _write_cells(notebook, list(cells), text, settings, report)
    if report.noqa_added < len(findings):
        report.findings = to_cells(detach(lint(text, path, rules)[0], None, False), joined)
    return errors


def _apply(
    notebook: Notebook, cells: list[CodeCell], result, joined: Joined, settings: Settings, report: FileReport
) -> None:
    # Applied fixes were found in successive rounds; the first round's layout
    # places them well enough for --show-fixes.
    report.fixed = to_cells(detach(result.applied, None, False), joined)
    report.moot = result.moot
    if not result.changed:
        report.findings = to_cells(detach(result.remaining, None, False), joined)
        return
    segments = split(result.text, cells)
    if segments is None:
        raise NotebookError("a fix crossed a cell boundary; notebook not written")
    report.findings = to_cells(detach(result.remaining, None, False), join(cells, segments))
    _write_cells(notebook, cells, result.text, settings, report, segments)


def _write_cells(
    notebook: Notebook,
    cells: list[CodeCell],
    text: str,
    settings: Settings,
    report: FileReport,
    segments: list[str] | None = None,
) -> None:
    """Write the notebook back with each cell's part of ``text`` (a changed join)."""
    new_text = _rewrite(notebook, fixed_sources(cells, text, segments))
    if settings.mode == "diff":
        report.diff = unified_diff(notebook.source, new_text)
    else:
        write_inside_tree(notebook.source, new_text, settings.root)


def fixed_sources(cells: Sequence[CodeCell], text: str, segments: list[str] | None = None) -> dict[int, str]:
    """Cell index -> new source (magics restored) of each cell whose part of
    ``text``, a changed join of ``cells``, differs from what it was. Raises
    NotebookError when an edit crossed a cell boundary or a magic cannot be
    put back."""
    segments = segments if segments is not None else split(text, cells)
    if segments is None:
        raise NotebookError("an edit crossed a cell boundary; notebook not written")
    new_sources: dict[int, str] = {}
    for cell, segment in zip(cells, segments):
        if segment == cell.masked.text:
            continue
        restored = unmask(cell.masked, segment)
        if restored is None:
            raise NotebookError(
                f"cell {cell.number}: cannot put the IPython magics back after fixing; notebook not written"
            )
        new_sources[cell.index] = restored
    return new_sources


def _rewrite(notebook: Notebook, new_sources: dict[int, str]) -> str:
    cells = notebook.data["cells"]
    try:
        text = replace_sources(notebook.source.text, new_sources, cells)
        written = json.loads(text)
    except (ValueError, IndexError) as exc:
        raise NotebookError(f"cannot rewrite the notebook's JSON ({exc}); not written") from None
    # What was written must read back as the old notebook with new sources.
    expected = json.loads(notebook.source.text)
    for index, text_ in new_sources.items():
        old = cells[index].get("source")
        expected["cells"][index]["source"] = split_source(text_) if isinstance(old, list) else text_
    if written != expected:
        raise NotebookError("rewriting the notebook's JSON changed more than cell sources; not written")
    return text


def cell_sources(path: str) -> dict[int, str]:
    """Cell number -> source of every code cell (for excerpts in reports)."""
    try:
        notebook = load_notebook(path)
    except SourceError:
        return {}
    return {cell.number: cell.masked.original for cell in notebook.cells}
