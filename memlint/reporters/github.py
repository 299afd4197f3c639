"""GitHub Actions workflow commands (``::error file=…::message``)."""

from __future__ import annotations

from memlint.reporters import severity
from memlint.run.results import FileReport


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(reports: list[FileReport], **_: object) -> str:
    lines = []
    for report in reports:
        for f in report.findings:
            props = ",".join(
                f"{k}={escape_property(str(v))}"
                for k, v in (
                    ("file", f.path),
                    ("line", f.line),
                    ("col", f.column + 1),
                    ("endLine", f.end_line),
                    ("endColumn", f.end_column + 1),
                    ("title", f"memlint ({f.code})"),
                )
            )
            where = f"cell {f.cell}, " if f.cell is not None else ""
            lines.append(f"::{severity(f.code)} {props}::{escape_data(f'{where}{f.code} {f.message}')}")
    return "\n".join(lines) + ("\n" if lines else "")
