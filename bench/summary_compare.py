"""Every module summary, this checkout's against another commit's, file by file.

    .venv/bin/python bench/summary_compare.py --old REV DIR_OR_FILE...

Exports ``memlint/`` as it was at ``REV`` (git archive) into a temporary
folder and, in one child process per side, writes the JSON of ``summarise``
and ``summarise_exports`` (project/summary.py) for every ``*.py`` file, in
the order ``json.dumps`` writes them (field order and list order are part of
what must not change). A speed change to the summary's walk or its helpers
must leave both byte-identical. Prints each file that differs (with the
first differing keys) and the totals; exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path


def _files(roots: list[str]) -> list[Path]:
    out: list[Path] = []
    for root in roots:
        path = Path(root)
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return out


def _dump(roots: list[str], out: str) -> None:
    """The child's side: one line per file, its path and both summaries' JSON."""
    from memlint.project.summary import summarise, summarise_exports

    spent = 0.0
    with open(out, "w", encoding="utf-8") as sink:
        for path in _files(roots):
            try:
                text = path.read_text(encoding="utf-8")
                tree = ast.parse(text)
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            start = time.process_time()
            full = json.dumps(summarise(tree).to_json())
            spent += time.process_time() - start
            exports = json.dumps(summarise_exports(text).to_json())
            sink.write(json.dumps([str(path), full, exports]) + "\n")
    print(f"summarise CPU {spent:.1f} s", file=sys.stderr)


def _run(source: str, roots: list[str], out: str) -> None:
    env = dict(os.environ, PYTHONPATH=source)
    subprocess.run([sys.executable, __file__, "--dump", out, *roots], env=env, check=True)


def _differing_keys(old: str, new: str) -> list[str]:
    a, b = json.loads(old), json.loads(new)
    return [k for k in a if a.get(k) != b.get(k)] or ["(order)"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--old", default="main")
    parser.add_argument("--dump")
    parser.add_argument("roots", nargs="+")
    args = parser.parse_args()
    if args.dump:
        _dump(args.roots, args.dump)
        return 0
    here = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "old.tar"
        subprocess.run(["git", "archive", "-o", str(archive), args.old, "memlint"], cwd=here, check=True)
        with tarfile.open(archive) as tar:
            tar.extractall(Path(tmp) / "old", filter="data")
        _run(str(Path(tmp) / "old"), args.roots, str(Path(tmp) / "old.jsonl"))
        _run(str(here), args.roots, str(Path(tmp) / "new.jsonl"))
        old_lines = Path(tmp, "old.jsonl").read_text(encoding="utf-8").splitlines()
        new_lines = Path(tmp, "new.jsonl").read_text(encoding="utf-8").splitlines()
    differ = 0
    for old_line, new_line in zip(old_lines, new_lines):
        if hashlib.sha1(old_line.encode()).digest() == hashlib.sha1(new_line.encode()).digest():
            continue
        differ += 1
        path, old_full, old_exports = json.loads(old_line)
        _, new_full, new_exports = json.loads(new_line)
        if old_full != new_full:
            print(f"{path}: summarise differs in {_differing_keys(old_full, new_full)}")
        if old_exports != new_exports:
            print(f"{path}: summarise_exports differs in {_differing_keys(old_exports, new_exports)}")
    if len(old_lines) != len(new_lines):
        print(f"file counts differ: {len(old_lines)} vs {len(new_lines)}")
        differ += 1
    print(f"{len(new_lines)} files, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
