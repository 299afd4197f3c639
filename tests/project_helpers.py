"""Helpers for the project tests: write a small multi-module project, lint
one of its files in process with its project view read from disk."""

from __future__ import annotations

import textwrap
from pathlib import Path

from memlint.project.index import view_from_disk


def write_project(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def finding_lines(path: Path, code: str) -> list[int]:
    """Lines of ``code``'s findings in ``path``, its project read from disk."""
    from memlint.lint.engine import lint_text
    from memlint.rule.registry import all_rules

    found = lint_text(path.read_text(), str(path), all_rules(), project=lambda: view_from_disk(str(path)))
    return sorted(f.line for f in found if f.code == code)
