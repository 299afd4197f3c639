"""The CUDA tier's figures: memlint verify on each script of
fixtures/verify/cuda/ (and a CPU-only script under --device auto and cuda),
printed as a Markdown table for bench/README.md.

Usage: python bench/verify_cuda.py [--device cuda|cpu|auto] [--steps N] [--out FILE.md]

On a GPU, ``--device cuda`` gives the tier's figures: peak before/after (the
whole run and the tail), growth per step, wall time of each run against the
same script run bare (``python SCRIPT``), and the card. ``--device cpu`` runs
the same scripts on the CPU (how they were checked where no GPU was lent).
Run ``pytest -m cuda`` for the tier's assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERIFY = ROOT / "fixtures" / "verify"
CASES = [
    ("validation leak (MEM201)", VERIFY / "cuda" / "validation_leak.py", None),
    ("training-total leak (MEM101)", VERIFY / "cuda" / "training_total.py", None),
    ("predict after training, tail (MEM201+MEM102)", VERIFY / "cuda" / "tail_predict.py", None),
    ("AMP, total leak (MEM101)", VERIFY / "cuda" / "amp_training.py", None),
    ("clean training", VERIFY / "cuda" / "clean_training.py", None),
    ("project, fixed in lib/engine.py (MEM201+MEM101)", VERIFY / "cuda" / "project" / "train.py", None),
    ("CPU-only script, --device auto", VERIFY / "mem101_epoch_loss.py", "auto"),
    ("CPU-only script, --device cuda", VERIFY / "mem101_epoch_loss.py", "cuda"),
]


def mib(n):
    return "-" if n is None else f"{n / 2**20:.1f} MiB"


def per_step(n):
    return "-" if n is None else f"{n / 1024:+.1f} KiB"


def bare_seconds(script: Path, device: str) -> float:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    started = time.perf_counter()
    subprocess.run([sys.executable, str(script)], env=env, cwd=script.parent, capture_output=True, check=True)
    return time.perf_counter() - started


def card() -> str:
    probe = "import torch; print(torch.cuda.get_device_name() if torch.cuda.is_available() else 'no CUDA device', torch.__version__)"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", choices=("cuda", "cpu", "auto"), default="cuda")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    lines = [
        f"memlint verify CUDA tier, {time.strftime('%Y-%m-%d')}, {card()}, --device {a.device} --steps {a.steps}",
        "",
        "| script | exit | verdict | tensor meter | peak before → after | tail peak before → after | growth/step before → after | graph nodes/step before → after | wall verify (orig) / bare |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, script, device in CASES:
        device = device or a.device
        cmd = [
            sys.executable,
            "-m",
            "memlint",
            "verify",
            str(script),
            "--device",
            device,
            "--steps",
            str(a.steps),
            "--json",
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        try:
            data = json.loads(proc.stdout)
        except ValueError:
            lines.append(
                f"| {name} | {proc.returncode} | {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else 'no output'} | | | | | | |"
            )
            continue
        o, f = data["original"], data["fixed"] or {}
        meter = "tensor_bytes"
        if (
            data["verdict"]["meters"].get("tensor_bytes", {}).get("status") == "not-measured"
            and "cpu_tensor_bytes" in o["meters"]
        ):
            meter = "cpu_tensor_bytes"
        om, fm = o["meters"].get(meter, {}), (f.get("meters") or {}).get(meter, {})
        tail = lambda m: ((m.get("segments") or {}).get("tail") or {}).get("peak")  # noqa: E731
        verdict = f"{data['verdict']['memory']}, {data['verdict']['results']}" if data["fixed"] else "nothing to fix"
        bare = bare_seconds(script, "cpu" if device == "cpu" else "auto")
        lines.append(
            f"| {name} | {proc.returncode} | {verdict} | {meter} ({data['verdict']['meters'].get(meter, {}).get('status', '-')}) "
            f"| {mib(om.get('peak'))} → {mib(fm.get('peak'))} | {mib(tail(om))} → {mib(tail(fm))} "
            f"| {per_step(om.get('growth_per_step'))} → {per_step(fm.get('growth_per_step'))} "
            f"| {o['graph_nodes_growth_per_step'] or 0:+.1f} → {(f.get('graph_nodes_growth_per_step') or 0):+.1f} "
            f"| {o['wall_seconds']:.1f} s / {bare:.1f} s |"
        )
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if a.out:
        a.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
