"""Output formats. Each reporter turns file reports into text for stdout."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI imports this package before it needs the engine
    from memlint.run.results import FileReport

ERROR_CODES = frozenset(
    {
        "MEM101",
        "MEM102",
        "MEM103",
        "MEM104",
        "MEM201",
        "MEM301",
        "MEM302",
        "MEM303",
        "MEM304",
        "MEM401",
        "MEM402",
        "MEM503",
    }
)


def severity(code: str) -> str:
    """RULES.md "Defaults": leaks and broken training are errors, the rest warnings."""
    return "error" if code in ERROR_CODES else "warning"


def relative_path(path: str, root: str | None) -> str:
    """``path`` relative to the project root, with forward slashes (as CI
    systems match it against the checkout); absolute when outside it."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(os.path.abspath(root or os.getcwd())).as_posix()
    except ValueError:
        return absolute.as_posix()


def get_reporter(name: str) -> Callable[..., str]:
    if name == "json":
        from memlint.reporters.json_format import render
    elif name == "json-lines":
        from memlint.reporters.json_format import render_lines as render
    elif name == "gitlab":
        from memlint.reporters.gitlab import render
    elif name == "junit":
        from memlint.reporters.junit import render
    elif name == "rdjson":
        from memlint.reporters.rdjson import render
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
