"""Human output: ruff-like lines with a source excerpt, and the concise form."""

from __future__ import annotations

import os

from memlint.lint.finding import Finding, Safety
from memlint.reporters.style import BOLD, CYAN, RED, Painter
from memlint.run.results import FileReport


def _marker(f: Finding, unsafe_fixes: bool) -> str:
    if f.fix is None:
        return ""
    if f.fix.safety is Safety.SAFE or (unsafe_fixes and f.fix.safety is Safety.UNSAFE):
        return "[*] "
    return ""


def _headline(f: Finding, unsafe_fixes: bool, paint: Painter) -> str:
    cell = f"cell {f.cell}:" if f.cell is not None else ""
    where = f"{paint(f.path, BOLD)}:{cell}{f.line}:{f.column + 1}"
    return f"{where}: {paint(f.code, BOLD, RED)} {paint(_marker(f, unsafe_fixes), CYAN)}{f.message}"


def render_concise(reports: list[FileReport], unsafe_fixes: bool = False, color: bool = False, **_: object) -> str:
    paint = Painter(color)
    lines = [_headline(f, unsafe_fixes, paint) for r in reports for f in r.findings]
    return "\n".join(lines) + ("\n" if lines else "")


def _source_lines(report: FileReport) -> list[str] | dict[int, list[str]] | None:
    """The file's lines, or for a notebook each code cell's lines by cell number."""
    if not os.path.isfile(report.path):
        return None
    try:
        if report.path.endswith(".ipynb"):
            from memlint.run.notebook import cell_sources

            return {n: text.splitlines() for n, text in cell_sources(report.path).items()}
        from memlint.read.source import read_source

        return read_source(report.path).text.splitlines()
    except Exception:
        return None


def _excerpt(f: Finding, lines: list[str] | None, paint: Painter) -> list[str]:
    if not lines or not (1 <= f.line <= len(lines)):
        return []
    text = lines[f.line - 1].expandtabs(1)
    width = len(str(f.line))
    end = f.end_column if f.end_line == f.line else len(text)
    carets = "^" * max(1, end - f.column)
    pad = " " * width
    bar = paint("|", CYAN)
    return [
        f" {pad} {bar}",
        f" {paint(str(f.line), CYAN)} {bar} {text}",
        f" {pad} {bar} {' ' * f.column}{paint(carets, RED, BOLD)}",
    ]


def render(reports: list[FileReport], unsafe_fixes: bool = False, color: bool = False, **_: object) -> str:
    paint = Painter(color)
    out: list[str] = []
    for report in reports:
        if not report.findings:
            continue
        lines = _source_lines(report)
        for f in report.findings:
            out.append(_headline(f, unsafe_fixes, paint))
            out.extend(_excerpt(f, lines.get(f.cell) if isinstance(lines, dict) else lines, paint))
            if f.fix is not None:
                kind = "safe fix" if f.fix.safety is Safety.SAFE else "unsafe fix"
                out.append(f"  {paint('=', CYAN)} {paint(kind, CYAN)}: {f.fix.title}")
            out.append("")
    return "\n".join(out) + ("\n" if out else "")
