"""JSON output compatible with ruff's ``--output-format json`` (1-based columns)."""

from __future__ import annotations

import json
import os

from memlint import rule_doc_url
from memlint.lint.finding import Finding
from memlint.run.results import FileReport


def _loc(line: int, column: int) -> dict[str, int]:
    return {"row": line, "column": column + 1}


def finding_to_dict(f: Finding) -> dict:
    fix = None
    if f.fix is not None:
        fix = {
            "applicability": f.fix.safety.value,
            "message": f.fix.title,
            "edits": [
                {
                    "content": e.content,
                    "location": _loc(*e.start_pos) if e.start_pos else None,
                    "end_location": _loc(*e.end_pos) if e.end_pos else None,
                }
                for e in f.fix.edits
            ],
        }
    return {
        "cell": f.cell,
        "code": f.code,
        "message": f.message,
        "filename": os.path.abspath(f.path),
        "location": _loc(f.line, f.column),
        "end_location": _loc(f.end_line, f.end_column),
        "noqa_row": f.line,
        "fix": fix,
        "url": rule_doc_url(f.code),
    }


def render(reports: list[FileReport], **_: object) -> str:
    items = [finding_to_dict(f) for r in reports for f in r.findings]
    return json.dumps(items, indent=2, ensure_ascii=False) + "\n"


def render_lines(reports: list[FileReport], **_: object) -> str:
    """JSON Lines: one finding per line, for streaming consumers."""
    return "".join(json.dumps(finding_to_dict(f), ensure_ascii=False) + "\n" for r in reports for f in r.findings)
