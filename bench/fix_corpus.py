"""Robustness on large real code: `memlint check --fix --unsafe-fixes` on copies.

    python bench/fix_corpus.py                         # timm and transformers
    python bench/fix_corpus.py --corpus timm --workdir /tmp/memlint-corpora
    python bench/fix_corpus.py --select MEM7 --json out.json

Each corpus is a released wheel from PyPI, downloaded and unpacked at run
time (corpora.py; never committed). The run lints a copy with the real
command, twice, and reports:

- files linted, and files reported as unreadable or unparsable (by reason);
- findings fixed, files fixed, findings left;
- files that no longer compile after the fix (must be 0);
- files that a second `--fix` changes (must be 0);
- internal errors (must be 0).

The exit status is 1 when any "must be 0" count is not.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpora import CORPORA, SPEED_CORPORA, fetch  # noqa: E402

ERROR_LINE = re.compile(r"^memlint: error: (?P<path>.+?): (?P<reason>.+)$")
REASONS = (
    "syntax error",
    "file is nested too deeply",
    "file is too large",
    "binary file",
    "not valid UTF-8",
    "bad encoding declaration",
    "cannot decode as",
    "internal error",
)


def memlint_command() -> list[str]:
    exe = Path(sys.executable).with_name("memlint")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "memlint"]


def snapshot(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(root.rglob("*.py"))}


def compiles(path: Path) -> bool:
    from memlint.read.source import SourceError, read_source

    try:
        text = read_source(str(path)).text
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, str(path), "exec", dont_inherit=True)
    except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def fix(root: Path, select: str, jobs: int | None) -> tuple[subprocess.CompletedProcess, float]:
    args = memlint_command() + ["check", "--fix", "--unsafe-fixes", "--no-cache", "--exit-zero", "--select", select]
    if jobs:
        args += ["-j", str(jobs)]
    start = time.perf_counter()
    proc = subprocess.run(args + [str(root)], capture_output=True, text=True)
    return proc, time.perf_counter() - start


def errors_by_reason(stderr: str) -> tuple[Counter, list[str]]:
    counts: Counter = Counter()
    internal = []
    for line in stderr.splitlines():
        m = ERROR_LINE.match(line)
        if not m:
            continue
        reason = next((r for r in REASONS if m.group("reason").startswith(r)), m.group("reason")[:40])
        counts[reason] += 1
        if reason == "internal error":
            internal.append(line)
    return counts, internal


def run_corpus(name: str, workdir: Path, select: str, jobs: int | None) -> dict:
    corpus = fetch(name, workdir)
    copy = workdir / "fix-copies" / name
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(corpus.root, copy, ignore=shutil.ignore_patterns(".complete"))

    from memlint.find.config import load_config
    from memlint.find.discovery import discover

    linted = len(list(discover([str(copy)], load_config(None, copy))))
    before = snapshot(copy)
    compiled_before = {p for p in before if compiles(p)}

    first, first_s = fix(copy, select, jobs)
    after = snapshot(copy)
    changed = [p for p in before if after.get(p) != before[p]]
    no_longer_compile = [str(p.relative_to(copy)) for p in changed if p in compiled_before and not compiles(p)]
    fixed = re.search(r"Fixed (\d+) finding", first.stdout)
    left = re.search(r"Found (\d+) finding", first.stdout)
    reasons, internal = errors_by_reason(first.stderr)

    second, second_s = fix(copy, select, jobs)
    again = snapshot(copy)
    changed_again = [str(p.relative_to(copy)) for p in after if again.get(p) != after[p]]
    _, internal_again = errors_by_reason(second.stderr)

    return {
        "corpus": corpus.requirement,
        "py_files": corpus.files,
        "lines": corpus.lines,
        "files_linted": linted,
        "files_reported": sum(reasons.values()),
        "reported_by_reason": dict(reasons),
        "findings_fixed": int(fixed.group(1)) if fixed else 0,
        "files_fixed": len(changed),
        "findings_left": int(left.group(1)) if left else 0,
        "no_longer_compile": no_longer_compile,
        "changed_by_second_fix": changed_again,
        "internal_errors": internal + internal_again,
        "exit_status": [first.returncode, second.returncode],
        "seconds": [round(first_s, 1), round(second_s, 1)],
    }


def markdown(results: list[dict], select: str) -> str:
    rows = [
        f"Rules: `--select {select}`, `check --fix --unsafe-fixes --no-cache`.",
        "",
        "| corpus | .py files | lines | files linted | reported (reason: files) | findings fixed | files fixed "
        "| findings left | no longer compile | changed by 2nd fix | internal errors | time 1st / 2nd |",
        "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        reasons = ", ".join(f"{k}: {v}" for k, v in sorted(r["reported_by_reason"].items())) or "none"
        rows.append(
            f"| {r['corpus']} | {r['py_files']:,} | {r['lines']:,} | {r['files_linted']:,} | {reasons} "
            f"| {r['findings_fixed']} | {r['files_fixed']} | {r['findings_left']} | {len(r['no_longer_compile'])} "
            f"| {len(r['changed_by_second_fix'])} | {len(r['internal_errors'])} "
            f"| {r['seconds'][0]} s / {r['seconds'][1]} s |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", choices=sorted(CORPORA), help="default: timm, transformers")
    parser.add_argument("--workdir", type=Path, help="download and copy here (kept); default: a temporary folder")
    parser.add_argument("--select", default="ALL", help="rules, as for memlint --select (default ALL)")
    parser.add_argument("-j", "--jobs", type=int, help="memlint worker processes (default: one per core)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)

    names = args.corpus or list(SPEED_CORPORA)
    with tempfile.TemporaryDirectory(prefix="memlint-fix-corpus-") as scratch:
        workdir = args.workdir or Path(scratch)
        workdir.mkdir(parents=True, exist_ok=True)
        results = [run_corpus(name, workdir, args.select, args.jobs) for name in names]

    print(markdown(results, args.select))
    for r in results:
        for key in ("no_longer_compile", "changed_by_second_fix", "internal_errors"):
            for item in r[key]:
                print(f"{r['corpus']}: {key}: {item}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    bad = any(r["no_longer_compile"] or r["changed_by_second_fix"] or r["internal_errors"] for r in results)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
