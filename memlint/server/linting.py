"""Linting a document's text (or a notebook's cells) through the engine's one
entry point, so the server reports exactly what ``memlint check`` reports.

Two things differ from ``check`` on purpose, because an editor lints text in
the middle of being typed: a text that does not parse yields no findings and a
reason (the log says why), and an internal error in one rule costs only that
rule's findings: the others are found by linting rule by rule.
"""

from __future__ import annotations

import ast
import os
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from memlint.fix.covered_fixes import with_covering_fixes
from memlint.fix.fixer import detach
from memlint.lint.engine import ParseError, applicable_rules, lint, lint_module, parse_module
from memlint.read.notebook_magics import mask_cell
from memlint.rule import Finding, Rule
from memlint.run.notebook import CodeCell, Joined, join, to_cells, tolerating_broken_cells

if TYPE_CHECKING:
    from memlint.find.torch_floor import TorchRange
    from memlint.project.view import ProjectView


@dataclass
class LintResult:
    text: str
    findings: list[Finding] = field(default_factory=list)
    module: cst.Module | None = None  # what the findings' fix nodes belong to
    problem: str | None = None  # why there are no findings (the text does not parse)
    rule_errors: list[str] = field(default_factory=list)  # internal errors, with tracebacks


def workspace_view(path: str) -> ProjectView | None:
    """The document's project as saved on disk (project/index.py), for a
    lint outside the server's session (projects.py keeps the live one)."""
    if not path.endswith(".py") or not os.path.isfile(path):
        return None
    from memlint.project.index import view_from_disk

    return view_from_disk(path)


def lint_document(
    text: str,
    path: str,
    rules: Sequence[type[Rule]],
    torch: TorchRange | None = None,
    *,
    project: bool | Callable[[], ProjectView | None] = True,
    tree: ast.Module | None = None,
) -> LintResult:
    """``torch``: the torch releases the document's project accepts
    (migrations). ``project``: True for the project as saved on disk, or
    what gives the document's view (the server's live index, projects.py).
    ``tree``: the text's ``ast`` tree, when the caller has one."""
    source = (lambda: workspace_view(path)) if project is True else project or None
    try:
        findings, module = lint(text, path, rules, torch=torch, project=source, python_tree=tree)
        # A quick fix is what --fix writes for the finding (fix/covered_fixes.py).
        findings = with_covering_fixes(findings, module, path, rules, torch=torch, project=source)
    except ParseError as exc:
        return LintResult(text, problem=str(exc))
    except RecursionError:
        return LintResult(text, problem="the text is nested too deeply to analyse")
    except Exception:
        return _rule_by_rule(text, path, rules, traceback.format_exc(), torch)
    return LintResult(text, findings, module)


def _rule_by_rule(
    text: str, path: str, rules: Sequence[type[Rule]], first_error: str, torch: TorchRange | None = None
) -> LintResult:
    """Some rule raised: lint with each rule alone on the one parsed module and
    keep the findings of every rule that works."""
    try:
        module = parse_module(text)
    except ParseError as exc:  # not expected: the parse succeeded a moment ago
        return LintResult(text, problem=str(exc), rule_errors=[first_error])
    result = LintResult(text, module=module)
    for rule in applicable_rules(text, rules):
        try:
            result.findings += lint_module(module, text, path, [rule], torch=torch)
        except Exception:
            result.rule_errors.append(f"rule {rule.code} ({rule.name}) failed:\n{traceback.format_exc()}")
    if not result.rule_errors:  # the failure was outside any one rule
        result.rule_errors.append(first_error)
    result.findings.sort(key=lambda f: (f.line, f.column, f.code))
    return result


@dataclass
class Program:
    """The code cells joined into one program and its lint: a cell's quick fix
    is computed on the program, as ``check --fix`` fixes a notebook."""

    joined: Joined
    cells: tuple[CodeCell, ...]
    lint: LintResult
    # (cell index, line, column, code) of a finding in its cell -> the same
    # finding in the program, with its fix nodes
    origins: dict[tuple[int, int, int, str], Finding] = field(default_factory=dict)

    def origin(self, cell_index: int, f: Finding) -> Finding | None:
        return self.origins.get((cell_index, f.line, f.column, f.code))


@dataclass
class NotebookResult:
    """Findings per cell (keyed by the cell's index in the notebook), with lines
    and columns counted inside the cell, as ``check`` reports .ipynb files."""

    findings: dict[int, list[Finding]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    rule_errors: list[str] = field(default_factory=list)
    program: Program | None = None  # None when no cell parses


def lint_cells(
    cells: Sequence[tuple[int, str]], path: str, rules: Sequence[type[Rule]], torch: TorchRange | None = None
) -> NotebookResult:
    """``cells``: (index among all the notebook's cells, text) of each code cell."""
    code_cells = []
    for index, text in cells:
        masked = mask_cell(text)
        if masked is not None:  # a cell magic that makes the cell another language
            code_cells.append(CodeCell(index, masked))
    result = NotebookResult({c.index: [] for c in code_cells})

    def check(chosen: Sequence[CodeCell]) -> Program:
        joined = join(chosen)
        outcome = lint_document(joined.text, path, rules, torch, project=False)
        if outcome.problem is not None and not outcome.rule_errors:
            raise ParseError(outcome.problem)
        result.rule_errors += outcome.rule_errors
        return Program(joined, tuple(chosen), outcome)

    try:
        program, result.problems = tolerating_broken_cells(code_cells, check)
    except ParseError as exc:
        result.problems = [str(exc)]
        return result
    result.program = program
    for raw in program.lint.findings:
        for f in to_cells(detach([raw], program.lint.module, True), program.joined):
            assert f.cell is not None
            result.findings[f.cell - 1].append(f)
            program.origins[(f.cell - 1, f.line, f.column, f.code)] = raw
    return result
