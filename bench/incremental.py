"""Incremental re-lint on a large project: one changed file costs about that file.

    .venv/bin/python bench/incremental.py [--workdir DIR] [--runs 3] [--cold-runs 1] [--markdown]

The project: transformers and timm (the pinned wheels of corpora.py, unpacked
at run time, never committed) in one folder with a ``pyproject.toml``, plus a
two-module training project of our own (``demo/``: ``train.py`` calls
``utils.evaluate`` inside its epoch loop): over 3,000 files, one project
root, so every view is built from the whole index. Measured with the command
line (``memlint check``, default rules, one worker per core), wall and CPU
seconds of the process tree:

- cold: the whole project, empty cache (it fills it; ``--cold-runs``);
- warm: the whole project again, nothing changed;
- alone: the file linted by itself (issue 29's "that file alone"): a copy
  in an empty temporary folder, checked there with an empty cache;
- one edit: that file changed (a comment appended), the whole project
  re-checked with the warm cache; the target is at most 2x ``alone``.
  Alone and edit runs alternate (load drifts alike for both);
- cold in the project: the file checked where it is with an empty cache
  (pre-commit's first run, CI without a cache): its view reads the
  project from disk (project/narrow.py);
- which files each re-check lints again, for an edit of a file no other
  module reads, and for an edit of ``demo/train.py`` that changes what
  ``demo/utils.py``'s view says (the call now runs under ``no_grad``): only
  that file and its dependant are linted again.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpora import fetch  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
EDITED = ("transformers/models/bert/modeling_bert.py", "timm/models/resnet.py")

UTILS = """import torch


def evaluate(model, loader):
    model.eval()
    total = 0.0
    for x, y in loader:
        total += model(x).sum().item()
    return total
"""

TRAIN = """import torch

from utils import evaluate


def main(model, loader, opt, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        print(evaluate(model, loader))
"""

# Run in a child process: the CLI, with process_file counted (in every
# worker: the wrapper is in place before the pool forks).
CHILD = """
import os, sys
import memlint.run.runner as runner
real = runner.process_file
log = os.environ["INCREMENTAL_LOG"]
def counting(path, settings, *view):
    report = real(path, settings, *view)
    if not report.deferred:
        with open(log, "a") as fh:
            fh.write(path + "\\n")
    return report
runner.process_file = counting
from memlint.frontends.cli import main
sys.exit(main(sys.argv[1:]))
"""


def build(workdir: Path) -> Path:
    project = workdir / "project"
    if project.exists():
        shutil.rmtree(project)
    project.mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "incremental-bench"\n')
    for name in ("transformers", "timm"):
        corpus = fetch(name, workdir)
        shutil.copytree(corpus.root / name, project / name)
    demo = project / "demo"
    demo.mkdir()
    (demo / "utils.py").write_text(UTILS)
    (demo / "train.py").write_text(TRAIN)
    return project


def check(target: Path, cache: Path, log: Path) -> tuple[float, float, list[str]]:
    """Wall and CPU seconds of ``memlint check`` and the files it linted
    (bytecode written, as a user's run: compiling memlint is not timed)."""
    log.write_text("")
    env = dict(os.environ, INCREMENTAL_LOG=str(log))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    cmd = [sys.executable, "-c", CHILD, "check", "--exit-zero", "--quiet", "--cache-dir", str(cache), str(target)]
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, sorted(set(log.read_text().split()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: a new temporary one, removed after)")
    parser.add_argument("--runs", type=int, default=3, help="runs per measurement (the median is reported)")
    parser.add_argument("--cold-runs", type=int, default=1, help="runs of the whole project's cold check")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="memlint-incremental-"))).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "linted.txt"
    rows: list[tuple[str, list[tuple[float, float]], str]] = []
    try:
        project = build(workdir)
        files = sum(1 for _ in project.rglob("*.py"))
        print(f"project: {files} files, load {os.getloadavg()[0]:.1f}", file=sys.stderr)
        cache = workdir / "cache"
        cold = []
        for _ in range(args.cold_runs):
            shutil.rmtree(cache, ignore_errors=True)
            wall, cpu, linted = check(project, cache, log)
            cold.append((wall, cpu))
        rows.append(("cold, whole project", cold, f"{len(linted)} files linted"))
        warm = [check(project, cache, log) for _ in range(args.runs)]
        rows.append(("warm, nothing changed", [(w, c) for w, c, _ in warm], f"{len(warm[-1][2])} files linted"))
        scratch = workdir / "cache-alone"
        for rel in EDITED:
            path = project / rel
            original = path.read_text()
            alone, edits = [], []
            for i in range(args.runs):
                lone = workdir / "alone"
                shutil.rmtree(lone, ignore_errors=True)
                lone.mkdir()
                (lone / path.name).write_text(original)
                shutil.rmtree(scratch, ignore_errors=True)
                wall, cpu, _ = check(lone / path.name, scratch, log)
                alone.append((wall, cpu))
                path.write_text(original + f"# edit {i}\n")
                wall, cpu, linted = check(project, cache, log)
                edits.append((wall, cpu))
            path.write_text(original)
            rows.append((f"alone: {rel}", alone, "a copy in an empty folder, empty cache"))
            rel_linted = [os.path.relpath(p, project) for p in linted]
            ratio = statistics.median(c for _, c in edits) / statistics.median(c for _, c in alone)
            rows.append((f"one edit: {rel}", edits, f"{ratio:.2f}x alone; linted again: {', '.join(rel_linted)}"))
            cold_here = []
            for _ in range(args.runs):
                shutil.rmtree(scratch, ignore_errors=True)
                wall, cpu, _ = check(path, scratch, log)
                cold_here.append((wall, cpu))
            rows.append((f"cold in the project: {rel}", cold_here, "empty cache, its view read from disk"))
            check(project, cache, log)  # back to the warm state
        train = project / "demo" / "train.py"
        train.write_text(
            TRAIN.replace(
                "        print(evaluate(model, loader))\n",
                "        with torch.no_grad():\n            print(evaluate(model, loader))\n",
            )
        )
        wall, cpu, linted = check(project, cache, log)
        rel_linted = [os.path.relpath(p, project) for p in linted]
        rows.append(("caller edit: demo/train.py", [(wall, cpu)], f"linted again: {', '.join(rel_linted)}"))
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    print(table(rows, args.markdown))
    print(json.dumps({"load_after": round(os.getloadavg()[0], 2)}))
    return 0


def table(rows: list[tuple[str, list[tuple[float, float]], str]], markdown: bool) -> str:
    lines = []
    if markdown:
        lines += ["| measurement | median wall s | median CPU s | note |", "| --- | ---: | ---: | --- |"]
    for name, runs, note in rows:
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        if markdown:
            lines.append(f"| {name} | {wall:.2f} | {cpu:.2f} | {note} |")
        else:
            lines.append(f"{name:45s} wall {wall:7.2f} s  CPU {cpu:7.2f} s  {note}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
