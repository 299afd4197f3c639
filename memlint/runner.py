"""Run check / fix / diff over many files, in parallel worker processes.

Workers receive paths and settings, and return plain data (findings without
libcst nodes), so nothing heavy crosses process boundaries.
"""

from __future__ import annotations

import difflib
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache

from memlint.engine import ParseError, lint
from memlint.fixer import detach, fix_text
from memlint.registry import select_rules
from memlint.rule import Finding
from memlint.source import SourceError, SourceFile, read_source, write_atomic

# Below this many files the cost of starting workers outweighs the gain.
PARALLEL_THRESHOLD = 16


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    root: str = "."
    mode: str = "check"  # check | fix | diff
    unsafe_fixes: bool = False
    with_edits: bool = False  # render fix edits (JSON/SARIF output)


@dataclass
class FileReport:
    path: str
    findings: list[Finding] = field(default_factory=list)
    fixed: list[Finding] = field(default_factory=list)  # fixes applied (or that --diff would apply)
    error: str | None = None
    diff: str = ""


@lru_cache(maxsize=64)
def _rules_for(settings: Settings, ignore_extra: tuple[str, ...]):
    return tuple(
        select_rules(
            list(settings.select) if settings.select is not None else None,
            list(settings.ignore) + list(ignore_extra),
            list(settings.extend_select),
        )
    )


def _per_file_ignored(path: str, settings: Settings) -> tuple[str, ...]:
    if not settings.per_file_ignores:
        return ()
    from pathlib import Path

    from memlint.discovery import is_excluded

    codes: list[str] = []
    for pattern, pattern_codes in settings.per_file_ignores:
        if is_excluded(path, [pattern], Path(settings.root)):
            codes.extend(pattern_codes)
    return tuple(sorted(set(codes)))


def process_file(path: str, settings: Settings) -> FileReport:
    report = FileReport(path=path)
    try:
        rules = _rules_for(settings, _per_file_ignored(path, settings))
        if path.endswith(".ipynb"):
            from memlint.notebook import process_notebook

            return process_notebook(path, settings, rules)
        source = read_source(path)
        if settings.mode == "check":
            findings, module = lint(source.text, path, rules)
            report.findings = detach(findings, module, settings.with_edits)
            return report
        result = fix_text(source.text, path, rules, unsafe=settings.unsafe_fixes)
        report.findings = detach(result.remaining, None, False)
        report.fixed = detach(result.applied, None, False)
        if result.changed:
            if settings.mode == "diff":
                report.diff = unified_diff(source, result.text)
            else:
                _write(source, result.text, settings)
    except (SourceError, ParseError) as exc:
        report.error = str(exc)
        report.findings, report.fixed = [], []
    except RecursionError:
        report.error = "file is nested too deeply to analyse"
    except Exception as exc:  # an internal error in one file must not stop the run
        report.error = f"internal error: {type(exc).__name__}: {exc}"
        report.findings, report.fixed = [], []
    return report


def _write(source: SourceFile, text: str, settings: Settings) -> None:
    if os.path.islink(source.path):
        target = os.path.realpath(source.path)
        root = os.path.realpath(settings.root)
        if os.path.commonpath([target, root]) != root:
            raise SourceError(f"symlink points outside the project ({target}); not written")
    write_atomic(source, text)


def unified_diff(source: SourceFile, new_text: str) -> str:
    old = source.text.splitlines(keepends=True)
    new = new_text.splitlines(keepends=True)
    lines = difflib.unified_diff(old, new, fromfile=f"a/{source.path}", tofile=f"b/{source.path}")
    out = []
    for line in lines:
        out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _process_chunk(paths: list[str], settings: Settings) -> list[FileReport]:
    return [process_file(p, settings) for p in paths]


def run(paths: list[str], settings: Settings, jobs: int | None = None) -> list[FileReport]:
    jobs = jobs or os.cpu_count() or 1
    if jobs <= 1 or len(paths) < PARALLEL_THRESHOLD:
        return [process_file(p, settings) for p in paths]
    # Chunks of a few files amortise inter-process traffic while keeping
    # workers busy until the end.
    size = max(1, min(32, len(paths) // (jobs * 4)))
    chunks = [paths[i : i + size] for i in range(0, len(paths), size)]
    reports: list[FileReport] = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for chunk_reports in pool.map(_process_chunk, chunks, [settings] * len(chunks)):
            reports.extend(chunk_reports)
    return reports
