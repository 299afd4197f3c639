"""How much the verify meters slow a training loop down (CPU, one thread).

Runs a few loops in-process under four set-ups and prints CPU seconds per step
(process time, so that other processes on a shared machine count less) and
the ratio to the bare loop:

- bare: no probe;
- hooks: the probe's step and forward hooks, results recorded, no meter;
- hooks+graph+heap: plus the graph-node walk and mallinfo2 at each step;
- tracker: plus the TorchDispatchMode storage tracker (CPU verify's tensor
  meter before 2026-11-25; still --simulate's and, under --device auto on a
  CUDA machine, the CPU side's);
- full (CPU verify): plus the allocator-event meter (AllocatorBytes), CPU
  verify's tensor meter now.

Usage: python bench/verify_overhead.py [--steps N] [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
from torch import nn  # noqa: E402

from memlint.verify import meters  # noqa: E402
from memlint.verify.probe import Probe  # noqa: E402


class NullBytes:
    paused = False

    def sample(self):
        return 0, 0, None

    def reset_peak(self):
        pass


def mlp():
    model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
    return model, lambda: (torch.randn(128, 512), torch.randint(0, 10, (128,)))


def cnn():
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1),
        nn.BatchNorm2d(64),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64 * 8 * 8, 10),
    )
    return model, lambda: (torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,)))


def transformer():
    layer = nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=256, batch_first=True)
    body = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    model = nn.Sequential(body, nn.Flatten(), nn.Linear(128 * 32, 10))
    return model, lambda: (torch.randn(16, 32, 128), torch.randint(0, 10, (16,)))


def tiny():
    # Thousands of tiny ops per step: the tracker's worst case.
    model = nn.Sequential(*[nn.Linear(8, 8) for _ in range(200)])
    return model, lambda: (torch.randn(4, 8), torch.randint(0, 8, (4,)))


def run(workload, setup: str, steps: int) -> float:
    torch.manual_seed(0)
    model, batch = workload()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    crit = nn.CrossEntropyLoss()
    data = [batch() for _ in range(8)]
    probe = tracker = None
    if setup != "bare":
        tracker = (
            meters.AllocatorBytes()
            if setup == "full"
            else meters.StorageBytesMode()
            if setup == "tracker"
            else NullBytes()
        )
        own = meters.own_file_matcher(__file__, os.path.dirname(os.path.abspath(__file__)))
        graph = meters.GraphNodes(own) if setup != "hooks" else None
        heap = meters.HeapBytes() if setup != "hooks" else None
        probe = Probe(steps=10**9, tensor_meter=tracker, graph_meter=graph, heap_meter=heap, digest=True)
        probe.install()

    def loop(n):
        for i in range(n):
            x, y = data[i % len(data)]
            opt.zero_grad()
            loss = crit(model(x), y)
            loss.backward()
            opt.step()

    try:
        if setup in ("full", "tracker"):
            with tracker:
                loop(3)
                t0 = time.process_time()
                loop(steps)
                return (time.process_time() - t0) / steps
        loop(3)
        t0 = time.process_time()
        loop(steps)
        return (time.process_time() - t0) / steps
    finally:
        if probe is not None:
            probe.uninstall()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", help="comma-separated loops (mlp,cnn,transformer,tiny-ops)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    setups = ("bare", "hooks", "hooks+graph+heap", "tracker", "full")
    loops = (("mlp", mlp), ("cnn", cnn), ("transformer", transformer), ("tiny-ops", tiny))
    if args.only:
        loops = tuple(lw for lw in loops if lw[0] in args.only.split(","))
    print(
        f"torch {torch.__version__}, 1 thread, {args.steps} steps, CPU time per step, "
        f"median of {args.repeat} (best in brackets)"
    )
    print(f"{'loop':<12}" + "".join(f"{s:>26}" for s in setups))
    for name, workload in loops:
        # Interleave set-ups so that load from other processes hits all alike.
        times = {s: [] for s in setups}
        for _ in range(args.repeat):
            for s in setups:
                times[s].append(run(workload, s, args.steps))
        med = {s: statistics.median(v) for s, v in times.items()}
        # The fastest repeat too: what the code costs with the least
        # interference from anything else running on the machine.
        best = {s: min(v) for s, v in times.items()}
        cells = [f"{med['bare'] * 1e3:.2f} ms"] + [
            f"{med[s] * 1e3:.2f} ms x{med[s] / med['bare']:.2f} (x{best[s] / best['bare']:.2f})" for s in setups[1:]
        ]
        print(f"{name:<12}" + "".join(f"{c:>26}" for c in cells))


if __name__ == "__main__":
    main()
