"""Output formats. Each reporter turns file reports into text for stdout."""

from __future__ import annotations

from typing import Callable

from memlint.runner import FileReport

ERROR_CODES = frozenset(
    {"MEM101", "MEM102", "MEM103", "MEM104", "MEM201", "MEM301", "MEM302", "MEM303", "MEM304",
     "MEM401", "MEM402", "MEM503"}
)


def severity(code: str) -> str:
    """RULES.md "Defaults": leaks and broken training are errors, the rest warnings."""
    return "error" if code in ERROR_CODES else "warning"


def get_reporter(name: str) -> Callable[..., str]:
    if name == "json":
        from memlint.reporters.json_format import render
    elif name == "sarif":
        from memlint.reporters.sarif import render
    elif name == "github":
        from memlint.reporters.github import render
    elif name == "concise":
        from memlint.reporters.text import render_concise as render
    else:
        from memlint.reporters.text import render
    return render


def all_findings(reports: list[FileReport]):
    for report in reports:
        yield from report.findings
