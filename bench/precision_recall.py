"""Precision and recall of the MEM1xx/MEM2xx rules over the labelled corpus.

    python bench/precision_recall.py [DIR ...]

A finding on a line labelled ``# expect: CODE`` is a true positive, any other
finding of a MEM1xx/MEM2xx code a false positive; a label with no finding
(``# expect:`` or ``# missed:``) is a false negative. Prints a table per rule
and per group ("accumulation" = MEM101+MEM102, "eval without no_grad" =
MEM201), and the false positives and negatives by file and line.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

from memlint.lint.engine import lint_text
from memlint.rule.registry import all_rules

ROOT = Path(__file__).resolve().parent.parent
RULES = [r for r in all_rules() if r.code.startswith(("MEM1", "MEM2"))]
CODES = {r.code for r in RULES}
LABEL = re.compile(r"#\s*(expect|missed):\s*(MEM\d{3}(?:\s*,\s*MEM\d{3})*)")
GROUPS = {"accumulation (MEM101+MEM102)": {"MEM101", "MEM102"}, "eval without no_grad (MEM201)": {"MEM201"}}


def labelled(text: str) -> set[tuple[int, str]]:
    out = set()
    for number, line in enumerate(text.splitlines(), 1):
        for m in LABEL.finditer(line):
            out.update((number, c.strip()) for c in m.group(2).split(",") if c.strip() in CODES)
    return out


def measure(files: list[Path]):
    tp, fp, fn = Counter(), Counter(), Counter()
    errors: list[str] = []
    for path in files:
        text = path.read_text()
        found = {(f.line, f.code) for f in lint_text(text, str(path), RULES)}
        want = labelled(text)
        for _, code in found & want:
            tp[code] += 1
        for line, code in sorted(found - want):
            fp[code] += 1
            errors.append(f"FP {code} {path.name}:{line}")
        for line, code in sorted(want - found):
            fn[code] += 1
            errors.append(f"FN {code} {path.name}:{line}")
    return tp, fp, fn, errors


def ratio(a: int, b: int) -> str:
    return f"{a / b:.3f}" if b else "  -  "


def main(argv: list[str]) -> int:
    dirs = [Path(a) for a in argv] or [ROOT / "tests" / "corpus"]
    files = sorted(p for d in dirs for p in (d.glob("*.py") if d.is_dir() else [d]))
    tp, fp, fn, errors = measure(files)
    print(f"{len(files)} files")
    print(f"{'rule':32} {'TP':>4} {'FP':>4} {'FN':>4} {'precision':>9} {'recall':>7}")
    rows = [(c, {c}) for c in sorted(CODES)] + list(GROUPS.items()) + [("all MEM1xx/MEM2xx", CODES)]
    for name, codes in rows:
        t, f, n = (sum(c[k] for k in codes) for c in (tp, fp, fn))
        print(f"{name:32} {t:4} {f:4} {n:4} {ratio(t, t + f):>9} {ratio(t, t + n):>7}")
    for line in errors:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
