"""Editor latency of the flake8 plugin: median time per file.

An editor runs flake8 on one buffer at a time, so what matters is how long
the plugin adds to one file. This measures `Flake8Checker(...).run()` as
flake8 calls it (options parsed by flake8 itself, lines as flake8 reads them,
the per-file config lookup done afresh each time as in a new flake8 process)
on three generated files:

- a typical 300-line training script (dataset, model, train/eval loops, main);
- a 3,000-line module of the same kind of code;
- a 300-line module that never mentions torch (only the pre-filter runs).

The budget (issue 16) is relative: the plugin's time per file <= 2.5x
libcst's parse of the same file, timed here in the same process on the same
text; a file where no rule can fire costs a small fraction of a parse.

Run: .venv/bin/python bench/flake8_latency.py [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEADER = '''\
"""Training script."""
import argparse
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

'''

BLOCK = '''

class SyntheticDataset{i}(Dataset):
    """Random regression data."""

    def __init__(self, n, dim):
        self.x = torch.randn(n, dim)
        self.y = self.x.sum(dim=1, keepdim=True)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, idx):
        return self.x[idx], self.y[idx]


class Net{i}(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(dim, hidden),
            nn.BatchNorm1d(hidden),
            nn.ReLU(),
            nn.Dropout(0.1),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
        )
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        return self.head(self.body(x))


def train_one_epoch{i}(model, loader, optimizer, scheduler, device, log_every=50):
    model.train()
    total = 0.0
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        total += loss.item()
        if step % log_every == 0:
            print(f"step {{step}} loss {{loss.item():.4f}}")
    return total / max(1, len(loader))


@torch.no_grad()
def evaluate{i}(model, loader, device):
    model.eval()
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        total += F.mse_loss(model(x), y, reduction="sum").item()
        count += len(x)
    return total / max(1, count)


def save_checkpoint{i}(model, optimizer, epoch, path):
    torch.save({{"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}}, path)


def load_checkpoint{i}(model, optimizer, path):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["epoch"]
'''

MAIN = """

def parse_args():
    parser = argparse.ArgumentParser(description="train a small regressor")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--dim", type=int, default=16)
    parser.add_argument("--patience", type=int, default=3)
    parser.add_argument("--out", default="checkpoints")
    return parser.parse_args()


def main():
    args = parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_set = SyntheticDataset0(4096, args.dim)
    val_set = SyntheticDataset0(512, args.dim)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=args.batch_size)
    model = Net0(args.dim, args.hidden).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr, total_steps=args.epochs * len(train_loader)
    )
    os.makedirs(args.out, exist_ok=True)
    best, bad_epochs = math.inf, 0
    history = []
    for epoch in range(args.epochs):
        start = time.time()
        train_loss = train_one_epoch0(model, train_loader, optimizer, scheduler, device)
        val_loss = evaluate0(model, val_loader, device)
        history.append((train_loss, val_loss))
        print(f"epoch {epoch} train {train_loss:.4f} val {val_loss:.4f} ({time.time() - start:.1f}s)")
        if val_loss < best:
            best, bad_epochs = val_loss, 0
            save_checkpoint0(model, optimizer, epoch, os.path.join(args.out, "best.pt"))
        else:
            bad_epochs += 1
            if bad_epochs >= args.patience:
                print("early stop")
                break
        for x, _ in val_loader:
            torch.cuda.empty_cache()
    return history


if __name__ == "__main__":
    main()
"""

PLAIN_BLOCK = '''

class Record{i}:
    """A parsed line of a log file."""

    def __init__(self, fields):
        self.fields = list(fields)

    def key(self):
        return tuple(f.lower() for f in self.fields[:2])


def parse_log{i}(lines, sep=","):
    records = []
    for number, line in enumerate(lines):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split(sep)]
        if len(parts) < 3:
            raise ValueError("line %d: expected 3 fields, got %d" % (number, len(parts)))
        records.append(Record{i}(parts))
    return records


def summarise{i}(records):
    counts = {{}}
    for record in records:
        counts[record.key()] = counts.get(record.key(), 0) + 1
    width = max((len(str(k)) for k in counts), default=0)
    return "\\n".join(f"{{str(k):<{{width}}}} {{v}}" for k, v in sorted(counts.items()))
'''


def training_script(target_lines: int) -> str:
    text, i = HEADER, 0
    while text.count("\n") + MAIN.count("\n") < target_lines:
        text += BLOCK.format(i=i)
        i += 1
    return text + MAIN


def plain_module(target_lines: int) -> str:
    text, i = '"""Log utilities."""\nimport re\n', 0
    while text.count("\n") < target_lines:
        text += PLAIN_BLOCK.format(i=i)
        i += 1
    return text


def measure(path: Path, repeat: int) -> dict:
    from memlint.frontends import flake8_plugin
    from memlint.frontends.flake8_plugin import Flake8Checker
    from memlint.lint.engine import applicable_rules

    with open(path, encoding="utf-8") as fh:
        lines = fh.readlines()
    tree = ast.parse("".join(lines))
    times, cpu, findings = [], [], []
    for _ in range(repeat):
        flake8_plugin._config_for_folder.cache_clear()  # a new flake8 process per save
        start, start_cpu = time.perf_counter(), time.process_time()
        findings = list(Flake8Checker(tree, lines, str(path)).run())
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    active = applicable_rules("".join(lines), Flake8Checker.rules or ())
    cpu_start = time.process_time()
    parse = parse_times("".join(lines), repeat)
    parse_cpu = (time.process_time() - cpu_start) / repeat
    return {
        "lines": len(lines),
        "median_ms": round(statistics.median(times) * 1000, 2),
        "p90_ms": round(sorted(times)[int(0.9 * (len(times) - 1))] * 1000, 2),
        "min_ms": round(min(times) * 1000, 2),
        # CPU time of this process: less disturbed by other load on the machine
        "median_cpu_ms": round(statistics.median(cpu) * 1000, 2),
        "libcst_parse_median_ms": round(statistics.median(parse) * 1000, 2),
        "ratio_to_parse": round(statistics.median(times) / statistics.median(parse), 2),
        # CPU against CPU: what survives other load on a shared machine
        "cpu_ratio_to_parse": round(statistics.mean(cpu) / parse_cpu, 2),
        "findings": sorted({f[2].split()[0] for f in findings}),
        "rules_past_prefilter": len(active),
    }


def parse_times(text: str, repeat: int) -> list[float]:
    """libcst's parse of the text alone: the unit the budget is counted in."""
    import libcst as cst

    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        cst.parse_module(text)
        times.append(time.perf_counter() - start)
    return times


def flake8_process_ms(path: Path, repeat: int) -> float:
    """A whole `flake8` run on the file, as an editor pays it (startup included)."""
    exe = str(Path(sys.executable).with_name("flake8"))
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([exe, "--isolated", "-j1", str(path)], capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1000, 1)


def import_ms() -> float:
    code = "import time; t = time.perf_counter(); import memlint.frontends.flake8_plugin as p; p.all_rules(); print(time.perf_counter() - t)"
    runs = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
        for _ in range(5)
    ]
    return round(statistics.median(runs) * 1000, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--no-process", action="store_true", help="skip timing whole flake8 runs")
    args = parser.parse_args()

    from flake8.options.parse_args import parse_args

    parse_args(["--isolated"])  # flake8's own option handling calls Flake8Checker.parse_options
    with tempfile.TemporaryDirectory() as tmp:
        files = {
            "training script, 300 lines": training_script(300),
            "module, 3000 lines": training_script(3000),
            "no torch, 300 lines": plain_module(300),
        }
        results = {}
        for name, text in files.items():
            path = Path(tmp) / (name.split(",")[0].replace(" ", "_") + ".py")
            path.write_text(text, encoding="utf-8")
            measure(path, 2)  # warm caches (imports, rule classes)
            results[name] = measure(path, args.repeat)
            results[name]["flake8_process_ms"] = None if args.no_process else flake8_process_ms(path, 5)
        summary = {
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
            "plugin_import_ms": import_ms(),
            "files": results,
        }
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(
        f"{summary['machine']}; importing the plugin and its rules: {summary['plugin_import_ms']} ms (once per flake8 process)"
    )
    print(
        f"{'file':<30} {'lines':>6} {'median ms':>10} {'cpu ms':>8} {'p90 ms':>8} {'parse ms':>9} {'x parse':>8} {'cpu x':>6}"
        f" {'rules run':>9} {'flake8 run ms':>13}  findings"
    )
    for name, r in results.items():
        print(
            f"{name:<30} {r['lines']:>6} {r['median_ms']:>10} {r['median_cpu_ms']:>8} {r['p90_ms']:>8}"
            f" {r['libcst_parse_median_ms']:>9} {r['ratio_to_parse']:>8} {r['cpu_ratio_to_parse']:>6} {r['rules_past_prefilter']:>9}"
            f" {r['flake8_process_ms'] or '-':>13}  {' '.join(r['findings']) or '-'}"
        )
    print("budget: <= 2.5x libcst's parse per file (issue 16)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
