"""Which module summaries a cold tree check makes, and which its views read.

    .venv/bin/python bench/summary_reads.py DIR [--select CODES] [--fields]

The runner summarises, in its first pass, every file holding a training
word (and a word-less one the gate parsed: its needle summary); the project
index is then built from them for the files waiting for their view
(run/runner.py). This runs ``memlint check -j 1 --no-cache`` on ``DIR`` in
one process and compares the summaries made with those the views read
(``ProjectIndex.view_reads``: what the cache judges a later edit by,
project/states.py), and says what narrow.py's triage (a file checked alone)
would have summarised up front of the others. A lazy tree check is worth
building only where many summaries made are read by no view.
``--fields``: also which summary fields the index reads of the modules
that wait for no view (slower: every attribute read is counted).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import time
from collections import Counter, defaultdict
from pathlib import Path

from memlint.project import index as project_index
from memlint.project.narrow import EAGER, LAZY
from memlint.project.summary import ModuleSummary
from memlint.read.source import read_bytes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--select", default="ALL", help="rules (codes or prefixes; default ALL)")
    parser.add_argument("--fields", action="store_true", help="count the summary fields the index reads")
    args = parser.parse_args(argv)
    built: list[tuple[project_index.ProjectIndex | None, dict]] = []
    owners: dict[int, str] = {}  # id(summary) -> its file, while --fields counts reads
    fields: dict[str, set[str]] = defaultdict(set)
    build = project_index.build_index

    def recording(*a, **k):
        for path, summary in {
            **(k.get("known") or {}),
            **{p: s for p, (_, s) in (k.get("prepared") or {}).items()},
        }.items():
            if isinstance(summary, ModuleSummary):
                owners[id(summary)] = os.path.abspath(path)
        index = build(*a, **k)
        built.append((index, k))
        return index

    plain = ModuleSummary.__getattribute__

    def counted(self, name: str):
        owner = owners.get(id(self))
        if owner is not None and not name.startswith("__"):
            fields[owner].add(name)
        return plain(self, name)

    from memlint.frontends.cli import main as cli

    project_index.build_index = recording  # the runner imports it when it builds the views
    if args.fields:
        ModuleSummary.__getattribute__ = counted  # type: ignore[method-assign]
    start = time.process_time()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            cli(["check", "-j", "1", "--no-cache", "--select", args.select, str(args.folder)])
    finally:
        project_index.build_index = build
        ModuleSummary.__getattribute__ = plain  # type: ignore[method-assign]
    print(f"cold check, one process: {time.process_time() - start:.1f} CPU s (with this script's counting)")
    for index, kwargs in built:
        _report(index, kwargs, fields if args.fields else None)
    return 0


def _report(index, kwargs: dict, fields: dict[str, set[str]] | None) -> None:
    if index is None:
        return
    word = {os.path.abspath(p) for p, s in (kwargs.get("known") or {}).items() if s is not None}
    needle = {os.path.abspath(p) for p in (kwargs.get("prepared") or {})}
    viewed = {os.path.abspath(p) for p in kwargs.get("viewed") or ()}
    waiting = set(index.view_reads)
    read: set[str] = set().union(*index.view_reads.values()) if index.view_reads else set()
    made = word | needle
    others = made - waiting
    print(
        f"\nproject {index.root}: {len(index.summaries)} files, {len(waiting)} viewed ({len(viewed)} in the index's group)"
    )
    print(f"  summaries made in the first pass: {len(made)} ({len(word)} with a training word, {len(needle)} needle)")
    print(
        f"  read by some view: {len(made & read)} ({_share(made & read, made)}); of those waiting for no view: {len(others & read)} of {len(others)}"
    )
    print(f"  files any view read (word-less ones from disk too): {len(read)}")
    sizes = sorted(len(r) for r in index.view_reads.values())
    if sizes:
        print(f"  files read per view: median {sizes[len(sizes) // 2]}, max {sizes[-1]}")
    own = [index.summaries.get(p) for p in sorted(viewed)]
    own = [s for s in own if isinstance(s, ModuleSummary)]
    needles = project_index.needles_for(own)
    triage = project_index.triage_for(needles, own, sorted(viewed))
    verdicts: Counter[str] = Counter()
    for path in sorted(others):
        verdict, _ = triage.verdict(read_bytes(path) or b"", path)
        verdicts["up front" if verdict == EAGER else "when asked" if verdict == LAZY else "never"] += 1
    print(f"  narrow.py's triage of those {len(others)} ({len(needles)} needles): {dict(verdicts)}")
    if fields is not None:
        counts = Counter(f for p in others for f in fields.get(p, ()))
        print(
            f"  fields the index read of them (of {len(others)}): {', '.join(f'{f} {n}' for f, n in counts.most_common())}"
        )


def _share(part: set, whole: set) -> str:
    return f"{100 * len(part) / len(whole):.0f} %" if whole else "-"


if __name__ == "__main__":
    raise SystemExit(main())
