"""Precision and recall of the MEM3xx, MEM4xx, MEM502-MEM507, MEM703 and
MEM801-MEM803 rules over labelled files.

    python bench/precision_recall_rules_3_to_8.py [DIR_OR_FILE ...]

Defaults to the development corpus files of these rules (``tests/corpus/``
``opt_*``, ``inplace_*``, ``amp_*``, ``hygiene_*``). A finding on a line
labelled ``# expect: CODE`` is a true positive, any other finding of these
codes a false positive, a label (``expect`` or ``missed``) without a finding a
false negative. MEM403 (opt-in) is measured too.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

from memlint.lint.engine import lint_text
from memlint.rule.registry import all_rules

ROOT = Path(__file__).resolve().parent.parent
CODES = {
    "MEM301",
    "MEM302",
    "MEM303",
    "MEM304",
    "MEM401",
    "MEM402",
    "MEM403",
    "MEM502",
    "MEM503",
    "MEM504",
    "MEM505",
    "MEM506",
    "MEM507",
    "MEM703",
    "MEM801",
    "MEM802",
    "MEM803",
}
RULES = [r for r in all_rules() if r.code in CODES]
LABEL = re.compile(r"#\s*(?:expect|missed):\s*(MEM\d{3}(?:\s*,\s*MEM\d{3})*)")


def labelled(text: str) -> set[tuple[int, str]]:
    out = set()
    for number, line in enumerate(text.splitlines(), 1):
        for m in LABEL.finditer(line):
            out.update((number, c.strip()) for c in m.group(1).split(",") if c.strip() in CODES)
    return out


def main(argv: list[str]) -> int:
    if argv:
        files = sorted(p for a in map(Path, argv) for p in (a.rglob("*.py") if a.is_dir() else [a]))
    else:
        files = sorted(
            p
            for pre in ("opt_", "inplace_", "amp_", "hygiene_")
            for p in (ROOT / "tests" / "corpus").glob(f"{pre}*.py")
        )
    tp, fp, fn = Counter(), Counter(), Counter()
    errors = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        found = {(f.line, f.code) for f in lint_text(text, str(path), RULES)}
        want = labelled(text)
        for _, code in found & want:
            tp[code] += 1
        for line, code in sorted(found - want):
            fp[code] += 1
            errors.append(f"FP {code} {path}:{line}")
        for line, code in sorted(want - found):
            fn[code] += 1
            errors.append(f"FN {code} {path}:{line}")
    print(f"{len(files)} files")
    print(f"{'rule':8} {'TP':>4} {'FP':>4} {'FN':>4} {'precision':>9} {'recall':>7}")
    for code in sorted(CODES) + ["all"]:
        keys = CODES if code == "all" else {code}
        t, f, n = (sum(c[k] for k in keys) for c in (tp, fp, fn))
        p = f"{t / (t + f):.3f}" if t + f else "  -  "
        r = f"{t / (t + n):.3f}" if t + n else "  -  "
        print(f"{code:8} {t:4} {f:4} {n:4} {p:>9} {r:>7}")
    print("\n".join(errors))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
