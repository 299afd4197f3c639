"""CPU time (user+sys) of a whole training script, run bare and as memlint
verify's measured process: the overhead a user pays, start-up included.

Writes the three realistic loops of verify_overhead.py (mlp, cnn, transformer)
as standalone scripts of --steps optimizer steps, then runs each, alternating:

- bare: ``python SCRIPT`` (one OpenMP thread, as verify's runs have);
- verify: the bootstrap memlint verify starts, with ``--steps`` one above the
  script's own, so that it runs to its end (tail measured) and does exactly
  the bare run's work;
- verify (TREE): the same with another checkout's memlint (``--before TREE``,
  e.g. ``git archive 87c397b | tar -x -C /tmp/before``), for before/after.

CPU time is the child's own (``os.wait4``); wall time is printed beside it.

Usage: python bench/verify_process_cpu.py [--steps N] [--repeat R] [--before TREE] [--only mlp,cnn]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memlint.verify import runner  # noqa: E402

HEAD = """import torch
from torch import nn

torch.manual_seed(0)
"""
MODELS = {
    "mlp": """model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
batch = lambda: (torch.randn(128, 512), torch.randint(0, 10, (128,)))
""",
    "cnn": """model = nn.Sequential(
    nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(64 * 8 * 8, 10),
)
batch = lambda: (torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,)))
""",
    "transformer": """layer = nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=256, batch_first=True)
body = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
model = nn.Sequential(body, nn.Flatten(), nn.Linear(128 * 32, 10))
batch = lambda: (torch.randn(16, 32, 128), torch.randint(0, 10, (16,)))
""",
}
LOOP = """opt = torch.optim.Adam(model.parameters(), lr=1e-3)
crit = nn.CrossEntropyLoss()
data = [batch() for _ in range(8)]
for step in range({steps}):
    x, y = data[step % len(data)]
    opt.zero_grad()
    loss = crit(model(x), y)
    loss.backward()
    opt.step()
print(float(loss))
"""


def measure(cmd: list[str], env: dict, cwd: Path) -> tuple[float, float]:
    """(user+sys CPU seconds of the child, wall seconds)."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} exited with {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, time.perf_counter() - started


def verify_cmd(root: Path, script: Path, steps: int, work: Path, label: str) -> list[str]:
    config = {
        "script": str(script),
        "script_dir": str(script.parent),
        "args": [],
        "steps": steps + 1,
        "device": "cpu",
        "simulate": False,
        "output": str(work / f"{label}.json"),
        "progress": None,
        "memlint_root": str(root),
        "launch_dir": str(work),
        "distributed": False,
    }
    path = work / f"{label}.config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return [sys.executable, "-c", runner._LAUNCH, str(path), str(root)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--before", help="another checkout's root, measured as 'verify (before)'")
    ap.add_argument("--only", help="comma-separated loops (mlp,cnn,transformer)")
    args = ap.parse_args()
    names = args.only.split(",") if args.only else list(MODELS)
    setups = ["bare", "verify"] + (["before"] if args.before else [])
    with tempfile.TemporaryDirectory(prefix="memlint-overhead-") as tmp:
        work = Path(tmp)
        env = runner.child_env(runner.RunSpec(label="original", script="", script_dir="", device="cpu"), work)
        print(f"{args.steps} steps per script, CPU time (user+sys) of the process, median of {args.repeat}")
        print(f"{'loop':<12}" + "".join(f"{s:>30}" for s in setups))
        for name in names:
            script = work / f"{name}.py"
            script.write_text(HEAD + MODELS[name] + LOOP.format(steps=args.steps), encoding="utf-8")
            cmds = {
                "bare": [sys.executable, str(script)],
                "verify": verify_cmd(ROOT, script, args.steps, work, f"{name}-verify"),
            }
            if args.before:
                cmds["before"] = verify_cmd(Path(args.before).resolve(), script, args.steps, work, f"{name}-before")
            cpu: dict = {s: [] for s in setups}
            wall: dict = {s: [] for s in setups}
            for _ in range(args.repeat):
                for s in setups:  # alternating, so that other load hits all alike
                    c, w = measure(cmds[s], env, work)
                    cpu[s].append(c)
                    wall[s].append(w)
            base_cpu, base_wall = statistics.median(cpu["bare"]), statistics.median(wall["bare"])
            cells = []
            for s in setups:
                c, w = statistics.median(cpu[s]), statistics.median(wall[s])
                cells.append(f"{c:.2f}s x{c / base_cpu:.2f} (wall x{w / base_wall:.2f})")
            print(f"{name:<12}" + "".join(f"{c:>30}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
