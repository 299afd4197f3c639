"""GitHub Actions workflow commands (``::error file=…::message``)."""

from __future__ import annotations

from memlint.lint.finding import Finding
from memlint.read.notebook_json import source_line_numbers
from memlint.reporters import severity
from memlint.run.results import FileReport


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _notebook_lines(path: str) -> dict[int, list[int]]:
    try:
        with open(path, encoding="utf-8") as fh:
            return source_line_numbers(fh.read())
    except (OSError, ValueError, IndexError):
        return {}


def _where(f: Finding, notebooks: dict[str, dict[int, list[int]]]) -> tuple[tuple[str, object], ...]:
    """The position GitHub shows the annotation at. A notebook's finding is
    counted within its cell; GitHub shows the .ipynb file's own lines, so it
    points at the line of the JSON that holds the cell's source line (the
    message names the cell and line)."""
    if f.cell is None:
        return (("line", f.line), ("col", f.column + 1), ("endLine", f.end_line), ("endColumn", f.end_column + 1))
    if f.path not in notebooks:
        notebooks[f.path] = _notebook_lines(f.path)
    lines = notebooks[f.path].get(f.cell - 1)
    if not lines:
        return ()  # the file-level annotation, rather than a wrong line
    start = lines[min(f.line, len(lines)) - 1]
    end = lines[min(max(f.end_line, f.line), len(lines)) - 1]
    return (("line", start), ("endLine", end))


def render(reports: list[FileReport], **_: object) -> str:
    lines = []
    notebooks: dict[str, dict[int, list[int]]] = {}
    for report in reports:
        for f in report.findings:
            props = ",".join(
                f"{k}={escape_property(str(v))}"
                for k, v in (("file", f.path), *_where(f, notebooks), ("title", f"memlint ({f.code})"))
            )
            where = f"cell {f.cell}, line {f.line}: " if f.cell is not None else ""
            lines.append(f"::{severity(f.code)} {props}::{escape_data(f'{where}{f.code} {f.message}')}")
    return "\n".join(lines) + ("\n" if lines else "")
