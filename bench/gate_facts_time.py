"""CPU time of the gate's facts alone, per stage, in one process.

    .venv/bin/python bench/gate_facts_time.py DIR [--every N]

For each file past the token pre-filter (default rules): Python's ``ast``
parse, ``GateFacts(tree)`` (the main walk) and ``enabled_by_gate`` (the
lazy facts the rules ask). CPU seconds, with the cyclic collector paused per
file as the engine does.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from memlint.gate.facts import GateFacts, enabled_by_gate
from memlint.lint.engine import applicable_rules, python_tree
from memlint.parse.collector import collector_paused
from memlint.rule.registry import select_rules


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--every", type=int, default=1, help="time every Nth file only")
    args = parser.parse_args(argv)
    rules = select_rules(None)
    files = sorted(args.folder.rglob("*.py"))[:: args.every]
    stages: Counter[str] = Counter()
    passed = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        if not applicable_rules(text, rules):
            continue
        with collector_paused():
            t0 = time.process_time()
            tree = python_tree(text)
            t1 = time.process_time()
            if tree is None:
                continue
            passed += 1
            facts = GateFacts(tree)
            t2 = time.process_time()
            enabled_by_gate(rules, facts)
            t3 = time.process_time()
            del facts, tree
            t4 = time.process_time()
        stages["ast parse"] += t1 - t0
        stages["GateFacts()"] += t2 - t1
        stages["enabled_by_gate"] += t3 - t2
        stages["free tree"] += t4 - t3
    print(f"{args.folder}: {len(files)} files, {passed} timed")
    print("CPU s: " + ", ".join(f"{k} {v:.2f}" for k, v in stages.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
