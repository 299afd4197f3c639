"""reviewdog's diagnostic format (``reviewdog -f=rdjson``): findings with
their fixes as suggestions, so reviewdog can post them as review comments
with a one-click change. Columns are 1-based and count UTF-8 bytes, as the
format says; memlint's own columns count characters, so they are converted
with the file's text."""

from __future__ import annotations

import json

from memlint import rule_doc_url
from memlint.lint.finding import Safety
from memlint.reporters import relative_path, severity
from memlint.run.results import FileReport


def _lines(path: str) -> list[str] | None:
    if path.endswith(".ipynb"):
        return None  # cell lines are not file lines; columns stay as characters
    try:
        from memlint.read.source import read_source

        return read_source(path).text.splitlines()
    except Exception:
        return None


def _position(lines: list[str] | None, line: int, column: int) -> dict[str, int]:
    if lines is not None and 1 <= line <= len(lines):
        column = len(lines[line - 1][:column].encode("utf-8"))
    return {"line": line, "column": column + 1}


def render(reports: list[FileReport], root: str | None = None, unsafe_fixes: bool = False, **_: object) -> str:
    diagnostics = []
    for report in reports:
        if not report.findings:
            continue
        path = relative_path(report.path, root)
        lines = _lines(report.path)
        for f in report.findings:
            where = f"cell {f.cell}: " if f.cell is not None else ""
            diagnostic = {
                "message": f"{where}{f.message}",
                "location": {
                    "path": path,
                    "range": {
                        "start": _position(lines, f.line, f.column),
                        "end": _position(lines, f.end_line, f.end_column),
                    },
                },
                "severity": severity(f.code).upper(),
                "code": {"value": f.code, "url": rule_doc_url(f.code)},
            }
            allowed = f.fix is not None and (
                f.fix.safety is Safety.SAFE or (unsafe_fixes and f.fix.safety is Safety.UNSAFE)
            )
            edits = f.fix.edits if allowed and f.cell is None else ()  # type: ignore[union-attr]
            suggestions = [
                {
                    "range": {"start": _position(lines, *e.start_pos), "end": _position(lines, *e.end_pos)},
                    "text": e.content,
                }
                for e in edits
                if e.start_pos and e.end_pos
            ]
            if suggestions:
                diagnostic["suggestions"] = suggestions
            diagnostics.append(diagnostic)
    result = {"source": {"name": "memlint"}, "diagnostics": diagnostics}
    return json.dumps(result, indent=2, ensure_ascii=False) + "\n"
