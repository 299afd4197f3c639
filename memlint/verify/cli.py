"""``memlint verify``: run a script and its fixed twin, and say whether the fix
held up. Importable without torch, so that ``--help`` always works.

Exit status: 0 when the fix held up (or there was nothing to fix), 1 when it
did not, 2 on usage errors (bad arguments, unreadable script, torch missing),
3 when memory was not measured (``--device cuda`` on a script whose tensors
never reached the GPU).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NOT_MEASURED = 0, 1, 2, 3


class UsageError(Exception):
    """A problem with the command line or its inputs; exit status 2."""


@dataclass
class Options:
    script: str
    fixed: str | None = None
    select: list[str] | None = None
    unsafe_fixes: bool = False
    steps: int = 50
    device: str = "auto"
    timeout: float = 600.0
    json: bool = False
    plot: str | None = None
    simulate: bool = False
    args: tuple[str, ...] = ()
    progress: bool = False
    # 0: a plain run; N >= 1: under torch.distributed.run, also N = 1, which a
    # script that calls init_process_group from torchrun's environment needs.
    nproc_per_node: int = 0
    launcher_args: tuple[str, ...] = ()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="memlint verify",
        usage=(
            "%(prog)s SCRIPT [--fixed FIXED] [--select CODES] [--unsafe-fixes] [--steps N]\n"
            "       [--device {auto,cpu,cuda}] [--timeout S] [--json] [--plot FILE.png] [--simulate]\n"
            "       [--nproc-per-node N [--launcher-arg ARG]...] [-- SCRIPT ARGS...]"
        ),
        description=(
            "Run SCRIPT and its fixed twin, each in a fresh process stopped after --steps "
            "training steps; compare memory (tensor bytes, autograd graph nodes, host heap) "
            "and results (losses, parameters, forward outputs)."
        ),
        epilog=(
            "The twin is the project's: the modules SCRIPT imports that `memlint check --fix` on its project "
            "would change are fixed too, in the twin's run only (the files are not touched). "
            "Arguments after `--` are passed to both scripts. SCRIPT may be a notebook (.ipynb): its code "
            "cells run in order as one script, IPython magics and shell escapes skipped (as `check` masks "
            "them). Both runs execute the script for real, from the current folder: the files it writes "
            "(checkpoints, logs) are written there, by both runs, possibly at the same time; run it on a "
            "copy when that matters. --simulate writes nothing for torch.save. Exit status: 0 fix held up, "
            "1 it did not (or the script failed in both runs), 2 usage error (or a notebook with nothing "
            "to run), 3 memory not measured (--device cuda, no CUDA allocation)."
        ),
    )
    p.add_argument("script", help="the training or evaluation script (or notebook) to verify")
    p.add_argument(
        "--fixed",
        metavar="FIXED",
        help="the fixed twin to compare with (default: memlint's own fix of the script and the project modules it imports)",
    )
    p.add_argument(
        "--select",
        metavar="CODES",
        action="append",
        help="rules whose fixes make the twin (comma-separated codes or prefixes)",
    )
    p.add_argument("--unsafe-fixes", action="store_true", help="also apply unsafe fixes to make the twin")
    p.add_argument("--steps", type=_positive_int, default=50, metavar="N", help="training steps per run (default: 50)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="where to measure (default: auto)")
    p.add_argument(
        "--timeout", type=_positive_float, default=600.0, metavar="S", help="seconds allowed per run (default: 600)"
    )
    p.add_argument("--json", action="store_true", help="write the outcome as JSON (schema 1) on stdout")
    p.add_argument("--plot", metavar="FILE.png", help="draw both memory timelines per meter (needs matplotlib)")
    p.add_argument(
        "--simulate",
        action="store_true",
        help="run under FakeTensorMode on a fake CPU device: growth and peak of models too large for this machine, no results",
    )
    p.add_argument(
        "--nproc-per-node",
        type=_positive_int,
        default=0,
        metavar="N",
        help="run each script under torch.distributed.run with N processes, as torchrun does; every rank is measured",
    )
    p.add_argument(
        "--launcher-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="one more torch.distributed.run flag, passed through (e.g. --launcher-arg=--max-restarts=0); repeatable",
    )
    return p


# Launcher flags memlint sets itself, or that would run something else than
# the measured bootstrap.
_OWN_LAUNCHER_FLAGS = (
    "--nproc-per-node",
    "--nproc_per_node",
    "--no-python",
    "--no_python",
    "-m",
    "--module",
    "--run-path",
    "--run_path",
)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


def parse_args(argv: list[str]) -> Options:
    """Raises SystemExit as argparse does (status 2 on errors, 0 for --help)."""
    if "--" in argv:
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1 :]
    else:
        script_args = []
    ns = build_parser().parse_args(argv)
    select = [c.strip() for entry in ns.select or [] for c in entry.split(",") if c.strip()] or None
    return Options(
        script=ns.script,
        fixed=ns.fixed,
        select=select,
        unsafe_fixes=ns.unsafe_fixes,
        steps=ns.steps,
        device=ns.device,
        timeout=ns.timeout,
        json=ns.json,
        plot=ns.plot,
        simulate=ns.simulate,
        args=tuple(script_args),
        nproc_per_node=ns.nproc_per_node,
        launcher_args=tuple(ns.launcher_arg),
    )


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        options = parse_args(argv)
    except SystemExit as exc:
        return EXIT_USAGE if exc.code not in (0, None) else EXIT_OK
    options.progress = sys.stderr.isatty()
    try:
        outcome = verify(options)
    except UsageError as exc:
        print(f"memlint verify: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # the runs were stopped on the way out
        print("memlint verify: interrupted", file=sys.stderr)
        return 130
    from memlint.verify import report

    if options.json:
        sys.stdout.write(report.render_json(outcome) + "\n")
    else:
        sys.stdout.write(report.render_human(outcome, color=sys.stdout.isatty() and "NO_COLOR" not in os.environ))
    if options.plot:
        from memlint.verify.plot import plot_outcome

        plot_outcome(outcome, options.plot)
        if not options.json:
            print(f"plot written to {options.plot}")
    if outcome.memory == "not-measured":
        return EXIT_NOT_MEASURED
    return EXIT_OK if outcome.ok else EXIT_FAILED


def verify(options: Options):
    """Check the inputs, make the twin, run both, decide. Raises UsageError."""
    from memlint import install_hint
    from memlint.lint.engine import ParseError
    from memlint.verify.outcome import Outcome, RankOutcome, RunSummary, decide
    from memlint.verify.project_twin import project_twin
    from memlint.verify.runner import RunSpec, run_all
    from memlint.verify.twin import explicit_twin, make_twin

    if importlib.util.find_spec("torch") is None:
        raise UsageError(f"memlint verify runs PyTorch scripts and needs torch: {install_hint('verify')}")
    if options.plot:
        if importlib.util.find_spec("matplotlib") is None:
            raise UsageError(f"--plot needs matplotlib: {install_hint('plot')}")
        if not options.plot.lower().endswith(".png"):
            raise UsageError("--plot writes a PNG file: give a name ending in .png")
        folder = os.path.dirname(os.path.abspath(options.plot))
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            raise UsageError(f"--plot: cannot write into {folder}")
    if options.select:
        from memlint.run.selection import known_prefix

        unknown = [c for c in options.select if not known_prefix(c)]
        if unknown:
            raise UsageError(f"--select: no rule matches {', '.join(unknown)}")
    if options.launcher_args and not options.nproc_per_node:
        raise UsageError("--launcher-arg needs --nproc-per-node")
    own = [a for a in options.launcher_args if a.split("=")[0] in _OWN_LAUNCHER_FLAGS]
    if own:
        raise UsageError(f"--launcher-arg: memlint sets {', '.join(own)} itself")
    if options.nproc_per_node and options.simulate:
        raise UsageError("--simulate runs one process: it cannot be combined with --nproc-per-node")
    if options.device == "cuda" and not options.simulate and not cuda_available():
        raise UsageError("--device cuda: no CUDA device is available to torch here")
    source, notebook = _read_script(options.script)
    fixed_notebook = None
    try:
        if options.fixed:
            fixed_source, fixed_notebook = _read_script(options.fixed)
            twin = explicit_twin(source, fixed_source, options.select)
        elif notebook is not None:
            twin = make_twin(source, options.select, options.unsafe_fixes)
        else:
            # The script's project, as `memlint check` reads it: the fixes of
            # the modules it imports too (project_twin.py).
            twin = project_twin(options.script, source.text, options.select, options.unsafe_fixes)
    except ParseError as exc:
        cells = " (its code cells, joined in order)" if notebook else ""
        raise UsageError(f"{options.script}{cells} does not parse, so it cannot run: {exc}") from None
    if notebook is not None:
        twin = notebook.locate(twin)

    script = os.path.abspath(options.script)
    script_dir = os.path.dirname(script)
    nothing_to_fix = options.fixed is None and twin.text == source.text and not twin.modules
    with tempfile.TemporaryDirectory(prefix="memlint-verify-") as tmp:
        work = Path(tmp)
        if notebook is not None:
            # The cells run as `python NOTEBOOK.py` would run them; imports
            # resolve beside the notebook (script_dir).
            (work / "original").mkdir()
            script = str(work / "original" / (Path(options.script).stem + ".py"))
            Path(script).write_text(source.text, encoding="utf-8")
        if options.fixed and fixed_notebook is not None:
            (work / "twin").mkdir()
            twin_path = str(work / "twin" / (Path(options.fixed).stem + ".py"))
            Path(twin_path).write_text(twin.text, encoding="utf-8")
        elif options.fixed:
            twin_path = os.path.abspath(options.fixed)
        else:
            # Same file name as the original, so `__file__`'s name and
            # tracebacks read the same.
            (work / "twin").mkdir()
            twin_path = str(work / "twin" / os.path.basename(script))
            Path(twin_path).write_bytes(source.encode(twin.text))
        overlay = _write_modules(twin.modules, work / "modules")
        common = dict(
            script_dir=script_dir,
            args=list(options.args),
            steps=options.steps,
            device=options.device,
            simulate=options.simulate,
            timeout=options.timeout,
            nproc_per_node=options.nproc_per_node,
            launcher_args=list(options.launcher_args),
        )
        specs = [RunSpec(label="original", script=script, **common)]
        if not nothing_to_fix:
            specs.append(RunSpec(label="fixed", script=twin_path, overlay=overlay, **common))
        raws = run_all(specs, work, parallel=_parallel(options), progress=options.progress)

    per_rank = [[RunSummary.from_raw(r) for r in ranks] for ranks in raws]
    runs = [ranks[0] for ranks in per_rank]
    outcome = Outcome(
        script=options.script,
        fixed_script=options.fixed,
        device="simulated-cpu" if options.simulate else options.device,
        steps_requested=options.steps,
        findings=twin.findings,
        original=runs[0],
        fixed=runs[1] if len(runs) > 1 else None,
        unfixed=twin.remaining,
        unfixed_reasons=twin.why_unfixed,
        left=twin.left,
        project_root=twin.root,
        fixed_modules=sorted(os.path.relpath(p, twin.root or script_dir).replace(os.sep, "/") for p in twin.modules),
    )
    if options.nproc_per_node:
        fixed_ranks = per_rank[1] if len(per_rank) > 1 else [None] * len(per_rank[0])
        outcome.ranks = [
            RankOutcome(rank=i, original=a, fixed=b) for i, (a, b) in enumerate(zip(per_rank[0], fixed_ranks))
        ]
    return decide(outcome, simulate=options.simulate)


def _write_modules(modules: dict[str, str], folder: Path) -> dict[str, str]:
    """Each fixed module's text in a file of its own, in the original's
    encoding: original path -> that file (the twin's import overlay)."""
    from memlint.read.source import read_source

    overlay: dict[str, str] = {}
    for i, (original, text) in enumerate(sorted(modules.items())):
        folder.mkdir(exist_ok=True)
        target = folder / f"{i}_{os.path.basename(original)}"
        target.write_bytes(read_source(original).encode(text))
        overlay[original] = str(target)
    return overlay


def _read_script(path: str):
    """(SourceFile, NotebookScript or None): a notebook's code cells joined
    into one script, as ``check`` reads them. Raises UsageError."""
    from memlint.read.source import SourceError, read_source
    from memlint.verify.notebook_script import NotebookNotRunnable, is_notebook, notebook_script

    try:
        if is_notebook(path):
            notebook = notebook_script(path)
            return notebook.source, notebook
        return read_source(path), None
    except (SourceError, NotebookNotRunnable) as exc:
        raise UsageError(f"{path}: {exc}") from None


def _parallel(options: Options) -> bool:
    # Two runs at once halve the wall time on a multi-core host. On a GPU
    # they would share its memory, so runs that may use one go one after the
    # other. So do distributed runs, which already use N processes each.
    if options.nproc_per_node:
        return False
    if options.device != "cpu" and not options.simulate and _gpu_possible():
        return False
    return (os.cpu_count() or 1) >= 2


def _gpu_possible() -> bool:
    """Cheap and conservative: False only when torch is a CPU-only build or
    no GPU device node exists."""
    if os.environ.get("CUDA_VISIBLE_DEVICES") == "":
        return False
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        return False
    try:
        version = (Path(spec.origin).parent / "version.py").read_text(encoding="utf-8")
    except OSError:
        return True
    import re

    if re.search(r"^cuda(?::[^=]*)?= None\s*$", version, re.M) and re.search(
        r"^hip(?::[^=]*)?= None\s*$", version, re.M
    ):
        return False
    return any(Path("/dev").glob("nvidia[0-9]*")) or Path("/dev/kfd").exists() or sys.platform != "linux"


_CUDA: bool | None = None


def cuda_available() -> bool:
    """Asked once, in a subprocess, and only for ``--device cuda``: importing
    torch in this process would cost seconds and initialise nothing we use."""
    global _CUDA
    if _CUDA is None:
        if not _gpu_possible():
            _CUDA = False
        else:
            import subprocess

            probe = subprocess.run(
                [sys.executable, "-c", "import torch; print(int(torch.cuda.is_available()))"],
                capture_output=True,
                text=True,
                timeout=300,
            )
            _CUDA = probe.stdout.strip() == "1"
    return _CUDA


if __name__ == "__main__":
    sys.exit(main())
