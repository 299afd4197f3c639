"""How memlint's cost grows with the size of one file (issue 20).

    python bench/linear_growth.py                          # every shape, 1k..16k statements
    python bench/linear_growth.py --shapes function --sizes 4000,16000,40000
    python bench/linear_growth.py --markdown

Generates three shapes of file, each of N simple statements plus one training
loop and one evaluation loop (so that the analyses which only run on training
code run too):

- ``function``: one function body of N statements;
- ``module``:   a module-level script of N statements;
- ``class``:    classes of 50 methods of 16 statements each.

For every file it measures, each in a fresh process (so that one
measurement's memory does not carry into the next): libcst's parse alone, and
``memlint.lint.engine.lint`` with every rule (parse included), as wall time and
peak RSS (``ru_maxrss``) of the process, less the RSS of the process before
the file was read (interpreter and imports). The growth exponent between two
sizes is ``log(t2/t1) / log(n2/n1)``: 1.0 is linear, 2.0 quadratic.

The generators are also used by tests/test_linear_growth.py, which counts
work (statement visits) instead of timing it.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import resource
import subprocess
import sys
import time

HEADER = "import torch\nimport torch.nn.functional as F\n"

# One statement per line, in groups of sixteen; ``{i}`` is the line's index,
# ``{b}`` that of the group's first line (``v{b}``), ``{c}`` the second. Some
# are one-line compound statements (a loop, an ``if``, a ``with``), so that
# passes over blocks, loops and comprehensions grow with the file too.
_PATTERNS = (
    "v{i} = torch.randn(8, 8)",
    "w{i} = v{b} * 2 + 1",
    "print(w{c}.shape)",
    "total += v{b}.sum().item()",
    "cfg_{i} = {{'lr': 0.1, 'step': {i}}}",
    "u{i} = F.relu(w{c}) if flag else w{c}",
    "stack.enter_context(open('f{i}'))",
    "model.eval()",
    "if flag: names.append('n{i}')",
    "with torch.no_grad(): h{i} = model(v{b})",
    "for j in range(2): total += j",
    "s{i} = [x * 2 for x in names]",
    "v{b}.add_(1)",
    "x{i} = v{b}.to('cpu')",
    "best{i} = model.state_dict()",
    "model.train()",
)


def _statement(i: int) -> str:
    b = i - i % len(_PATTERNS)
    return _PATTERNS[i % len(_PATTERNS)].format(i=i, b=b, c=b + 1)


_TRAIN = """\
for batch in loader:
    optimizer.zero_grad()
    out = model(batch)
    loss = F.mse_loss(out, batch)
    loss.backward()
    optimizer.step()
    epoch_loss += loss
with torch.no_grad():
    for batch in val_loader:
        val = model(batch)
        val_loss += F.mse_loss(val, batch).item()
"""


def _lines(n: int) -> list[str]:
    lines = ["total = 0.0", "epoch_loss = 0.0", "val_loss = 0.0", "names = []", "flag = True"]
    lines += [_statement(i) for i in range(n)]
    return lines + _TRAIN.splitlines()


def function_body(n: int) -> str:
    body = "\n".join("    " + line for line in _lines(n))
    return HEADER + "\n\ndef train(model, loader, val_loader, optimizer, stack):\n" + body + "\n"


def module_script(n: int) -> str:
    setup = "import contextlib\nmodel = torch.nn.Linear(8, 8)\nloader = val_loader = []\n"
    setup += "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\nstack = contextlib.ExitStack()\n"
    return HEADER + setup + "\n".join(_lines(n)) + "\n"


def classes(n: int, methods: int = 50, per_method: int = 16) -> str:
    out = [HEADER]
    count = 0
    k = 0
    while count < n:
        out.append(f"\nclass Model{k}(torch.nn.Module):")
        for m in range(methods):
            if count >= n:
                break
            out.append(f"    def step{m}(self, model, stack, flag, names, total=0.0):")
            out += ["        " + _statement(i) for i in range(per_method)]
            out.append("        return total")
            count += per_method + 1
        k += 1
    out.append("\n\ndef train(model, loader, val_loader, optimizer, stack):")
    out += ["    " + line for line in _lines(0)]
    return "\n".join(out) + "\n"


SHAPES = {"function": function_body, "module": module_script, "class": classes}


# -- one measurement, in a child process --------------------------------------


def _child(shape: str, n: int, what: str) -> dict:
    import libcst as cst

    from memlint.lint.engine import lint
    from memlint.rule.registry import select_rules

    rules = select_rules(None, [], [])
    text = SHAPES[shape](n)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    cpu = time.process_time()
    if what == "parse":
        cst.parse_module(text)
        findings = None
    else:
        findings = len(lint(text, f"{shape}_{n}.py", rules)[0])
    result = {
        "wall": time.perf_counter() - start,
        "cpu": time.process_time() - cpu,
        "rss_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024,
        "findings": findings,
        "bytes": len(text.encode()),
    }
    return result


def measure(shape: str, n: int, what: str, timeout: float) -> dict | None:
    cmd = [sys.executable, __file__, "--child", shape, str(n), what]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(done.stdout)


def exponent(n1: int, t1: float, n2: int, t2: float) -> float:
    return math.log(t2 / t1) / math.log(n2 / n1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", default="function,module,class")
    parser.add_argument("--sizes", default="1000,2000,4000,8000,16000")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per measurement")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        shape, n, what = args.child
        print(json.dumps(_child(shape, int(n), what)))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    print(
        f"# {platform.machine()}, Python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    rows = []
    for shape in args.shapes.split(","):
        previous = None
        for n in sizes:
            parse = measure(shape, n, "parse", args.timeout)
            check = measure(shape, n, "lint", args.timeout)
            if parse is None or check is None:
                print(f"{shape:9} {n:>7,}: over {args.timeout:.0f} s")
                break
            row = {"shape": shape, "n": n, "parse": parse, "lint": check}
            row["exp"] = exponent(previous["n"], previous["lint"]["cpu"], n, check["cpu"]) if previous else None
            rows.append(row)
            previous = row
            _print(row, args.markdown)
    return 0


def _print(row: dict, markdown: bool) -> None:
    p, c = row["parse"], row["lint"]
    exp = f"{row['exp']:.2f}" if row["exp"] is not None else "–"
    cells = (
        row["shape"],
        f"{row['n']:,}",
        f"{p['bytes'] / 1e6:.2f} MB",
        f"{p['cpu']:.2f} s",
        f"{c['cpu']:.2f} s",
        f"{c['cpu'] / p['cpu']:.1f}×",
        exp,
        f"{p['rss_mb']:.0f} MB",
        f"{c['rss_mb']:.0f} MB",
        f"{c['rss_mb'] / max(p['rss_mb'], 1):.1f}×",
        str(c["findings"]),
    )
    if markdown:
        print("| " + " | ".join(cells) + " |")
    else:
        print("  ".join(f"{cell:>9}" for cell in cells))


if __name__ == "__main__":
    sys.exit(main())
