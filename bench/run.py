"""Speed benchmark: memlint against ruff and TorchFix on released PyTorch code.

    python bench/run.py                                   # timm and transformers, 3 runs: memlint, ruff
    python bench/run.py --corpus timm --runs 3 --tools memlint,ruff,torchfix
    python bench/run.py --corpus transformers --runs 1 --markdown --json out.json

The corpora are the timm and transformers wheels, downloaded from PyPI at run
time and unpacked into a scratch folder (see corpora.py). In one run the tools
take turns, round by round, on the same files:

- ``memlint-cold``: ``memlint check`` with an empty cache folder (it fills it);
- ``memlint-warm``: the same command again, every file unchanged (cache hits);
- ``memlint-nocache``: ``memlint check --no-cache`` (opt-in);
- ``memlint-nogate``: the same with the gate off (``MEMLINT_GATE=0``, opt-in);
- ``ruff``: ``ruff check --select ALL --no-cache``, every ruff rule, the
  speed a linter kept in pre-commit is compared with (ruff from memlint's
  virtual environment: requirements-dev.txt);
- ``torchfix``: the TorchFix command line, default rules, one job per core;
- ``flake8-torchfix``: ``flake8 --select TOR`` with TorchFix's plugin.

TorchFix lives in its own virtual environment (``--torchfix-venv``, created
with ``pip install torchfix flake8`` when missing), never in memlint's.

Before timing, the gate (memlint/gate/facts.py) is checked on each corpus:
how many files the pre-filter and the gate leave to libcst, and the findings
of ``memlint check --no-cache --output-format json`` with the gate on and off,
which must be identical (``--no-gate-check`` skips this).

Each measurement is wall time (median of the runs), CPU seconds of the whole
process tree, and peak memory: the largest sum of RSS over the process tree,
sampled every 50 ms (an upper bound: pages shared by forked workers count
once per process), and the largest single process.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpora import CORPORA, Corpus, fetch  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TOOLS = ("memlint-cold", "memlint-warm", "ruff")
OPTIONAL_TOOLS = ("memlint-nocache", "memlint-nogate", "torchfix", "flake8-torchfix")


@dataclass
class Measurement:
    wall: float
    cpu: float
    tree_rss_mb: float
    max_proc_rss_mb: float
    returncode: int


@dataclass
class Row:
    corpus: str
    tool: str
    files: int
    lines: int
    runs: list[Measurement] = field(default_factory=list)
    failed: str | None = None

    @property
    def median(self) -> float:
        return statistics.median(m.wall for m in self.runs)


# -- measuring one command ------------------------------------------------------


class TreeSampler(threading.Thread):
    """Samples the summed RSS of a process and all its descendants."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.peak = 0
        self._stop_event = threading.Event()
        self._page = os.sysconf("SC_PAGE_SIZE")

    def _tree(self) -> list[int]:
        pids, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            try:
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/children") as fh:
                        todo.extend(int(c) for c in fh.read().split())
            except OSError:
                continue
        return pids

    def _rss(self) -> int:
        total = 0
        for pid in self._tree():
            try:
                with open(f"/proc/{pid}/statm") as fh:
                    total += int(fh.read().split()[1]) * self._page
            except (OSError, IndexError, ValueError):
                continue
        return total

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.peak = max(self.peak, self._rss())
            self._stop_event.wait(self.interval)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


def measure(cmd: list[str], cwd: Path, timeout: float, env: dict | None = None) -> Measurement:
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, start_new_session=True
    )
    sampler = TreeSampler(proc.pid) if Path("/proc").is_dir() else None
    if sampler:
        sampler.start()
    timer = threading.Timer(timeout, lambda: _kill_group(proc.pid))
    timer.start()
    try:
        # wait4 gives the CPU time and max RSS of the child and everything it waited for.
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
        if sampler:
            sampler.stop()
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if proc.returncode < 0 or proc.returncode > 1:
        raise RuntimeError(f"{' '.join(cmd[:3])}… exited {proc.returncode}: {stderr[-2000:]}")
    maxrss_kb = usage.ru_maxrss  # kilobytes on Linux
    return Measurement(
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        tree_rss_mb=(sampler.peak if sampler else 0) / 2**20,
        max_proc_rss_mb=maxrss_kb / 1024,
        returncode=proc.returncode,
    )


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, 9)  # the group this run started (start_new_session)
    except OSError:
        pass


# -- the tools --------------------------------------------------------------------


def ensure_torchfix(venv: Path) -> str | None:
    """None when TorchFix and flake8 are ready in ``venv``, else why not."""
    if (venv / "bin" / "torchfix").exists() and (venv / "bin" / "flake8").exists():
        return None
    print(f"creating {venv} with torchfix and flake8 …", file=sys.stderr)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "torchfix", "flake8"], check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        return f"cannot install torchfix: {exc}"
    return None


def snapshot(workdir: Path) -> Path:
    """A frozen copy of memlint (package and rules) to run from, so edits made
    to the working tree during a long benchmark do not change what is measured
    (nor invalidate the cache between the cold and the warm run)."""
    src = workdir / "memlint-src"
    shutil.rmtree(src, ignore_errors=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "memlint", src / "memlint", ignore=ignore)
    shutil.copytree(REPO / "rules", src / "memlint" / "rules", ignore=ignore)
    # Compiled once, as an installed package would be.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=False, env=env)
    return src


def command(tool: str, corpus: Corpus, cache_dir: Path, venv: Path) -> list[str]:
    if tool.startswith("memlint"):
        cmd = [sys.executable, "-m", "memlint", "check", "--exit-zero"]
        cmd += ["--no-cache"] if tool in ("memlint-nocache", "memlint-nogate") else ["--cache-dir", str(cache_dir)]
        return cmd + [str(corpus.root)]
    if tool == "ruff":
        return [
            str(Path(sys.executable).with_name("ruff")),
            "check",
            "--select",
            "ALL",
            "--no-cache",
            "--exit-zero",
            "--quiet",
            str(corpus.root),
        ]
    if tool == "torchfix":
        return [str(venv / "bin" / "torchfix"), str(corpus.root)]
    if tool == "flake8-torchfix":
        return [str(venv / "bin" / "flake8"), "--select=TOR", str(corpus.root)]
    raise SystemExit(f"unknown tool {tool}")


def units(tools: list[str]) -> list[list[str]]:
    """Turns of one round: cold and warm memlint stay together, in that order."""
    out: list[list[str]] = []
    memlint = [t for t in ("memlint-cold", "memlint-warm") if t in tools]
    if memlint:
        out.append(memlint)
    out.extend([t] for t in tools if t not in ("memlint-cold", "memlint-warm"))
    return out


def bench_corpus(
    corpus: Corpus, tools: list[str], runs: int, workdir: Path, venv: Path, timeout: float, src: Path
) -> list[Row]:
    rows = {t: Row(corpus.name, t, corpus.files, corpus.lines) for t in tools}
    cache_dir = workdir / f"cache-{corpus.name}"
    turns = units(tools)
    for n in range(runs):
        # Rotate who goes first each round so no tool always runs on a warmer page cache.
        for unit in turns[n % len(turns) :] + turns[: n % len(turns)]:
            for tool in unit:
                row = rows[tool]
                if row.failed:
                    continue
                if tool == "memlint-cold":
                    shutil.rmtree(cache_dir, ignore_errors=True)
                env = memlint_env(src) if tool.startswith("memlint") else dict(os.environ)
                if tool == "memlint-nogate":
                    env["MEMLINT_GATE"] = "0"
                try:
                    m = measure(command(tool, corpus, cache_dir, venv), cwd=workdir, timeout=timeout, env=env)
                except RuntimeError as exc:
                    row.failed = str(exc)
                    print(f"  {corpus.name} {tool}: FAILED {exc}", file=sys.stderr)
                    continue
                row.runs.append(m)
                print(
                    f"  {corpus.name:<12} {tool:<16} run {n + 1}/{runs}: {m.wall:8.2f} s wall "
                    f"{m.cpu:8.2f} s cpu {m.tree_rss_mb:7.0f} MB",
                    file=sys.stderr,
                    flush=True,
                )
    return list(rows.values())


def memlint_env(src: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
    env.pop("MEMLINT_GATE", None)
    return env


@dataclass
class GateCheck:
    corpus: str
    files: int
    past_prefilter: int  # files the token pre-filter hands on
    past_gate: int  # of those, files the gate leaves to libcst
    findings_on: int
    findings_off: int
    identical: bool


def gate_check(corpus: Corpus, src: Path, timeout: float) -> GateCheck:
    """Files gated out, and the findings of one no-cache run with the gate on
    and one with it off (compared in full: path, place, code, message, fix)."""
    counter = (
        "import json, pathlib, sys\n"
        "from memlint.lint.engine import applicable_rules, rules_to_run\n"
        "from memlint.rule.registry import select_rules\n"
        "rules = select_rules(); pre = gated = n = 0\n"
        "for p in sorted(pathlib.Path(sys.argv[1]).rglob('*.py')):\n"
        "    n += 1; t = p.read_text(encoding='utf-8', errors='replace')\n"
        "    if applicable_rules(t, rules):\n"
        "        pre += 1; gated += bool(rules_to_run(t, rules)[0])\n"
        "print(json.dumps([n, pre, gated]))\n"
    )
    env = memlint_env(src)
    n, pre, gated = json.loads(
        subprocess.run(
            [sys.executable, "-c", counter, str(corpus.root)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=timeout,
        ).stdout
    )
    found = []
    for on in ("1", "0"):
        env["MEMLINT_GATE"] = on
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "memlint",
                "check",
                "--no-cache",
                "--exit-zero",
                "--output-format",
                "json",
                str(corpus.root),
            ],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=timeout,
        ).stdout
        found.append(json.loads(out))
    key = lambda f: json.dumps(f, sort_keys=True)  # noqa: E731
    on, off = (sorted(map(key, f)) for f in found)
    check = GateCheck(corpus.name, n, pre, gated, len(on), len(off), on == off)
    print(
        f"  {corpus.name:<12} gate: {pre} of {n} files past the pre-filter, {gated} past the gate; "
        f"findings gate on {len(on)}, off {len(off)}, identical: {on == off}",
        file=sys.stderr,
        flush=True,
    )
    return check


def gate_table(checks: list[GateCheck], markdown: bool) -> str:
    header = [
        "corpus",
        "files",
        "past pre-filter",
        "parsed by libcst (past the gate)",
        "gated out",
        "findings gate on",
        "findings gate off",
        "identical",
    ]
    lines = [
        [
            c.corpus,
            str(c.files),
            str(c.past_prefilter),
            str(c.past_gate),
            str(c.past_prefilter - c.past_gate),
            str(c.findings_on),
            str(c.findings_off),
            "yes" if c.identical else "NO",
        ]
        for c in checks
    ]
    if markdown:
        return "\n".join(
            ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            + ["| " + " | ".join(cells) + " |" for cells in lines]
        )
    return "\n".join("  ".join(cells) for cells in [header] + lines)


# -- reporting ----------------------------------------------------------------------


def machine() -> dict:
    info = {
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        mem = Path("/proc/meminfo").read_text().split("\n")[0].split()[1]
        info["memory_gb"] = round(int(mem) / 2**20, 1)
    except OSError:
        pass
    try:
        from importlib.metadata import version

        import memlint

        info["memlint"] = memlint.__version__
        info["libcst"] = version("libcst")
    except Exception:
        pass
    try:
        git = ["git", "-C", str(REPO)]
        commit = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(
            git + ["status", "--porcelain", "--", "memlint", "rules"], capture_output=True, text=True
        )
        info["commit"] = commit + ("+uncommitted changes" if dirty.stdout.strip() else "")
    except OSError:
        pass
    return info


def table(rows: list[Row], markdown: bool, reference: str | None = None) -> str:
    """``reference``: the tool every ratio is taken against: "× vs" is how
    many times the reference's time each tool takes (memlint ÷ ruff)."""
    reference = reference or ("ruff" if any(r.tool == "ruff" for r in rows) else "torchfix")
    header = [
        "corpus",
        "tool",
        "files",
        "lines",
        "runs",
        "median s",
        "min–max s",
        "files/s",
        "CPU s",
        "peak RSS MB (tree)",
        "max proc RSS MB",
        f"time ÷ {reference}",
        "CPU ÷ " + reference,
    ]
    lines = []
    for corpus in dict.fromkeys(r.corpus for r in rows):
        group = [r for r in rows if r.corpus == corpus]
        ref = next((r for r in group if r.tool == reference and r.runs), None)
        for r in group:
            if not r.runs:
                lines.append(
                    [
                        r.corpus,
                        r.tool,
                        str(r.files),
                        f"{r.lines:,}",
                        "0",
                        "—",
                        "—",
                        "—",
                        "—",
                        "—",
                        "—",
                        (r.failed or "not run")[:40],
                        "",
                    ]
                )
                continue
            walls = [m.wall for m in r.runs]
            med = r.median
            cpu = statistics.median(m.cpu for m in r.runs)
            ref_cpu = statistics.median(m.cpu for m in ref.runs) if ref else 0
            ratio = f"{med / ref.median:.2f}×" if ref else "—"
            cpu_ratio = f"{cpu / ref_cpu:.2f}×" if ref and ref_cpu > 0 else "—"
            lines.append(
                [
                    r.corpus,
                    r.tool,
                    str(r.files),
                    f"{r.lines:,}",
                    str(len(r.runs)),
                    f"{med:.2f}",
                    f"{min(walls):.2f}–{max(walls):.2f}",
                    f"{r.files / med:.0f}",
                    f"{cpu:.1f}",
                    f"{max(m.tree_rss_mb for m in r.runs):.0f}",
                    f"{max(m.max_proc_rss_mb for m in r.runs):.0f}",
                    ratio,
                    cpu_ratio,
                ]
            )
        cold = next((r for r in group if r.tool == "memlint-cold" and r.runs), None)
        warm = next((r for r in group if r.tool == "memlint-warm" and r.runs), None)
        if cold and warm:
            lines.append(
                [
                    corpus,
                    "warm / cold",
                    "",
                    "",
                    "",
                    f"{100 * warm.median / cold.median:.1f} %",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                ]
            )
    if markdown:
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(cells) + " |" for cells in lines]
        return "\n".join(out)
    widths = [max(len(h), *(len(c[i]) for c in lines)) if lines else len(h) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*header)] + [fmt.format(*cells) for cells in lines])


def render(paths: list[Path], markdown: bool) -> int:
    rows: list[Row] = []
    checks: list[GateCheck] = []
    for path in paths:
        data = json.loads(path.read_text())
        checks += [GateCheck(**c) for c in data.get("gate", [])]
        for r in data["rows"]:
            runs = [Measurement(**m) for m in r.pop("runs")]
            rows.append(Row(**r, runs=runs))
        print(f"{path.name}: {', '.join(f'{k}={v}' for k, v in data['machine'].items())}")
    print(table(rows, markdown))
    if checks:
        print()
        print(gate_table(checks, markdown))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="timm,transformers", help=f"comma-separated: {', '.join(CORPORA)}")
    parser.add_argument(
        "--pin", action="append", default=[], metavar="NAME=VERSION", help="another release of a corpus"
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per tool (the median is reported)")
    parser.add_argument(
        "--tools",
        default=",".join(TOOLS),
        help=f"comma-separated: {', '.join(TOOLS + OPTIONAL_TOOLS)}; 'memlint' means memlint-cold,memlint-warm",
    )
    parser.add_argument("--torchfix-venv", default=os.environ.get("TORCHFIX_VENV", "/tmp/torchfix-venv"), type=Path)
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: a new temporary one, removed after)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds before one run is killed")
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown")
    parser.add_argument("--json", type=Path, help="write every measurement here")
    parser.add_argument(
        "--render", type=Path, nargs="+", metavar="JSON", help="print the table of earlier --json files"
    )
    parser.add_argument("--no-gate-check", action="store_true", help="skip the gate on/off comparison")
    args = parser.parse_args(argv)
    if args.render:
        return render(args.render, args.markdown)

    tools: list[str] = []
    for t in args.tools.split(","):
        t = t.strip()
        tools.extend(["memlint-cold", "memlint-warm"] if t == "memlint" else [t] if t else [])
    unknown = [t for t in tools if t not in TOOLS + OPTIONAL_TOOLS]
    if unknown:
        parser.error(f"unknown tools: {', '.join(unknown)}")
    pins = dict(p.split("=", 1) for p in args.pin)

    # Absolute: the tools run with the scratch folder as their working directory.
    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="memlint-bench-"))).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    info = machine()
    print(f"machine: {json.dumps(info)}", file=sys.stderr)
    rows: list[Row] = []
    checks: list[GateCheck] = []
    try:
        if any(t in ("torchfix", "flake8-torchfix") for t in tools):
            why = ensure_torchfix(args.torchfix_venv)
            if why:
                print(f"{why}; benchmarking memlint alone", file=sys.stderr)
                tools = [t for t in tools if t.startswith("memlint")]
        src = snapshot(workdir)
        load_before = os.getloadavg()
        for name in [c.strip() for c in args.corpus.split(",") if c.strip()]:
            requirement = f"{name}=={pins[name]}" if name in pins else None
            corpus = fetch(name, workdir, requirement)
            print(f"{corpus.requirement}: {corpus.files} files, {corpus.lines:,} lines", file=sys.stderr)
            if not args.no_gate_check:
                checks.append(gate_check(corpus, src, args.timeout))
            rows += bench_corpus(corpus, tools, args.runs, workdir, args.torchfix_venv, args.timeout, src)
        load_after = os.getloadavg()
    finally:
        if not args.keep and not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    info["load_average_before_after"] = [round(load_before[0], 2), round(load_after[0], 2)]
    print(table(rows, args.markdown))
    if checks:
        print()
        print(gate_table(checks, args.markdown))
    print(f"\nmachine: {', '.join(f'{k}={v}' for k, v in info.items())}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {"machine": info, "rows": [asdict(r) for r in rows], "gate": [asdict(c) for c in checks]}, indent=1
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
