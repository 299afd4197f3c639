"""Starting the measured processes: one fresh interpreter per script, a
controlled environment, a timeout, and a progress line on a terminal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import memlint

# The package root, so that the child imports this very memlint even from a
# source checkout that is not installed.
_ROOT = str(Path(memlint.__file__).resolve().parent.parent)
_POSIX = os.name == "posix"
_LAUNCH = "import sys; sys.path.insert(0, sys.argv[2]); from memlint.verify.bootstrap import main; main(sys.argv[1])"


@dataclass
class RunSpec:
    label: str  # "original" | "fixed"
    script: str  # the file to run
    script_dir: str  # where its imports resolve (the original's folder)
    args: list[str] = field(default_factory=list)
    steps: int = 50
    device: str = "auto"
    simulate: bool = False
    timeout: float = 600.0
    # >= 1: run under torch.distributed.run (as torchrun does), one measured
    # process per rank; launcher_args pass through to the launcher. 0: plain.
    nproc_per_node: int = 0
    launcher_args: list[str] = field(default_factory=list)
    # A project twin's modules the fix changed: original path -> the file
    # holding its fixed text, imported in their place (overlay.py).
    overlay: dict[str, str] = field(default_factory=dict)

    @property
    def distributed(self) -> bool:
        return self.nproc_per_node > 0


# Launcher flags that choose the rendezvous: given any of them, memlint does
# not add --standalone (a private rendezvous on a free local port).
RENDEZVOUS_FLAGS = (
    "--standalone",
    "--rdzv-backend",
    "--rdzv_backend",
    "--rdzv-endpoint",
    "--rdzv_endpoint",
    "--master-port",
    "--master_port",
    "--master-addr",
    "--master_addr",
)


def command(spec: RunSpec, config_path: Path, workdir: Path) -> list[str]:
    """The measured process's command line: the bootstrap, or the launcher
    running the bootstrap once per rank."""
    if not spec.distributed:
        return [sys.executable, "-c", _LAUNCH, str(config_path), _ROOT]
    launch = workdir / "memlint_verify_rank.py"
    if not launch.exists():
        launch.write_text(
            f"import sys\nsys.path.insert(0, {_ROOT!r})\nfrom memlint.verify.bootstrap import main\nmain(sys.argv[1])\n",
            encoding="utf-8",
        )
    cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={spec.nproc_per_node}"]
    if not any(a.split("=")[0] in RENDEZVOUS_FLAGS for a in spec.launcher_args):
        cmd.append("--standalone")
    return cmd + list(spec.launcher_args) + [str(launch), str(config_path)]


def child_env(spec: RunSpec, workdir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        PYTHONHASHSEED="0",
        # cuBLAS is deterministic only with a fixed workspace.
        CUBLAS_WORKSPACE_CONFIG=":4096:8",
        # Each run compiles from scratch: no cache shared with the other run
        # or with the user's own.
        TORCHINDUCTOR_CACHE_DIR=str(workdir / f"inductor-{spec.label}"),
        TRITON_CACHE_DIR=str(workdir / f"triton-{spec.label}"),
    )
    if spec.device == "cpu" or spec.simulate:
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


class _Child:
    def __init__(self, spec: RunSpec, workdir: Path) -> None:
        self.spec = spec
        self.output = workdir / f"{spec.label}.json"
        self.progress = workdir / f"{spec.label}.progress"
        self.stdout = workdir / f"{spec.label}.stdout"
        self.stderr = workdir / f"{spec.label}.stderr"
        config = {
            "script": spec.script,
            "script_dir": spec.script_dir,
            "args": spec.args,
            "steps": spec.steps,
            "device": spec.device,
            "simulate": spec.simulate,
            "output": str(self.output),
            "progress": str(self.progress),
            "memlint_root": _ROOT,
            "launch_dir": str(workdir),
            "distributed": spec.distributed,
            "overlay": spec.overlay,
        }
        config_path = workdir / f"{spec.label}.config.json"
        config_path.write_text(json.dumps(config), encoding="utf-8")
        self.started = time.monotonic()
        with open(self.stdout, "wb") as out, open(self.stderr, "wb") as err:
            self.proc = subprocess.Popen(
                command(spec, config_path, workdir),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=child_env(spec, workdir),
                start_new_session=_POSIX,  # a timeout kills the script's workers too
            )
        self.timed_out = False

    def poll(self) -> bool:
        if self.proc.poll() is not None:
            return True
        if time.monotonic() - self.started > self.spec.timeout:
            self.timed_out = True
            self.kill()
            self.proc.wait()
            return True
        return False

    def kill(self) -> None:
        try:
            if _POSIX and self.spec.distributed:
                # The launcher starts each rank in a session of its own: ask
                # it to stop them (SIGTERM) before killing what is left.
                os.killpg(self.proc.pid, signal.SIGTERM)
                try:
                    self.proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    pass
            if _POSIX:
                os.killpg(self.proc.pid, signal.SIGKILL)
            else:  # pragma: no cover - Windows has no process groups to signal
                self.proc.kill()
        except (ProcessLookupError, PermissionError):
            pass

    def step(self) -> int:
        try:
            return int(self.progress.read_bytes().strip() or 0)
        except (OSError, ValueError):
            return 0

    def result(self) -> list[dict]:
        """The measurements, one dict per rank (one for a plain run)."""
        wall = time.monotonic() - self.started
        if self.timed_out:
            failure = _failure(f"timed out after {self.spec.timeout:g} s (--timeout)", self, wall)
            return [failure] * max(1, self.spec.nproc_per_node)
        if not self.spec.distributed:
            return [self._read(self.output, wall)]
        return [self._read(Path(f"{self.output}.rank{r}"), wall) for r in range(self.spec.nproc_per_node)]

    def _read(self, path: Path, wall: float) -> dict:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            code = self.proc.returncode
            why = f"killed by signal {-code}" if code and code < 0 else f"exited with status {code}"
            what = "the launcher" if self.spec.distributed else "the measured process"
            failure = _failure(f"{what} {why} before writing its measurements", self, wall)
            failure["exit_status"] = code if code and code > 0 else None
            return failure
        data.setdefault("wall_s", wall)
        data["stderr_tail"] = _tail(self.stderr)
        return data


def _failure(message: str, child: _Child, wall: float) -> dict:
    return {"status": "error", "error": message, "traceback": None, "wall_s": wall, "stderr_tail": _tail(child.stderr)}


def _tail(path: Path, lines: int = 20) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def run_all(specs: list[RunSpec], workdir: Path, parallel: bool, progress: bool) -> list[list[dict]]:
    """Run each spec in its own process (two at once when ``parallel``) and
    return the children's measurements in the order given, one per rank."""
    results: dict[str, list[dict]] = {}
    pending = list(specs)
    running: list[_Child] = []
    show = _Progress(progress)
    try:
        while pending or running:
            while pending and (not running or parallel):
                running.append(_Child(pending.pop(0), workdir))
            for child in [c for c in running if c.poll()]:
                running.remove(child)
                results[child.spec.label] = child.result()
            show.update(running)
            if running:
                time.sleep(0.05)
    finally:
        for child in running:  # interrupted: leave nothing behind
            child.kill()
        show.clear()
    return [results[s.label] for s in specs]


class _Progress:
    """``running original: step 12/50 (3.1 s)`` on stderr, only on a terminal."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._last = 0.0
        self._shown = False

    def update(self, running: list[_Child]) -> None:
        now = time.monotonic()
        if not self.enabled or not running or now - self._last < 0.1:
            return
        self._last = now
        parts = [f"{c.spec.label} step {c.step()}/{c.spec.steps} ({now - c.started:.1f} s)" for c in running]
        sys.stderr.write("\r\033[Kmemlint verify: running " + ", ".join(parts))
        sys.stderr.flush()
        self._shown = True

    def clear(self) -> None:
        if self._shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
