"""Where a cold check's CPU time goes, per stage and per file, in one process.

    .venv/bin/python bench/stage_profile.py DIR [--select CODES] [--top N]

Stages: the token pre-filter, Python's ``ast`` parse, the project stage's
module summary (memlint/project/summary.py, on every file holding a training
word, as the runner makes it) and its JSON for the cache, the gate's facts
(memlint/gate/facts.py), libcst's parse and the rules' analysis, for the
files past the gate. Also: how many files each rule keeps past the gate, and
how many it keeps alone (the rules whose conditions are worth sharpening),
and the files that cost the most. CPU seconds (``time.process_time``),
with the cyclic collector paused per file as the engine does.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from memlint.gate.facts import GateFacts, enabled_by_gate
from memlint.lint.engine import ParseError, applicable_rules, lint_module, parse_module, python_tree
from memlint.parse.collector import collector_paused
from memlint.project.summary import summarise, worth_summarising
from memlint.rule.registry import select_rules


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--select", help="rules (codes or prefixes; default: the default rules)")
    parser.add_argument("--top", type=int, default=15, help="costliest files to list")
    args = parser.parse_args(argv)
    rules = select_rules(args.select.split(",") if args.select else None)
    files = sorted(args.folder.rglob("*.py"))
    stages: Counter[str] = Counter()
    keeps: Counter[str] = Counter()
    alone: Counter[str] = Counter()
    costly: list[tuple[float, str, str]] = []
    passed = kept = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        with collector_paused():  # as the engine lints a file
            t0 = time.process_time()
            active = applicable_rules(text, rules)
            t1 = time.process_time()
            stages["pre-filter"] += t1 - t0
            worth = worth_summarising(text)
            if not active and not worth:
                continue
            tree = python_tree(text)
            t2 = time.process_time()
            stages["ast parse"] += t2 - t1
            if tree is None:
                continue
            if worth:  # the runner summarises every such file, past the gate or not
                summary = summarise(tree)
                t3 = time.process_time()
                stages["summary"] += t3 - t2
                json.dumps(summary.to_json(), separators=(",", ":"))
                t2 = time.process_time()
                stages["summary json"] += t2 - t3
            if not active:
                continue
            passed += 1
            run = enabled_by_gate(active, GateFacts(tree))
            t3 = time.process_time()
            stages["gate facts"] += t3 - t2
            if not run:
                continue
            kept += 1
            keeps.update(r.code for r in run)
            if len(run) == 1:
                alone[run[0].code] += 1
            try:
                module = parse_module(text, tree)
                t4 = time.process_time()
                stages["libcst parse"] += t4 - t3
                lint_module(module, text, str(path), run)
            except ParseError:
                continue
            t5 = time.process_time()
            stages["analysis"] += t5 - t4
            costly.append((t5 - t3, str(path.relative_to(args.folder)), ",".join(r.code for r in run)))
    print(f"{args.folder}: {len(files)} files, {passed} past the pre-filter, {kept} past the gate")
    print(
        "CPU s by stage: "
        + ", ".join(f"{k} {v:.2f}" for k, v in stages.items())
        + f"; total {sum(stages.values()):.2f}"
    )
    print("files kept past the gate, by rule: " + ", ".join(f"{c} {n}" for c, n in keeps.most_common()))
    print("kept by that rule alone: " + ", ".join(f"{c} {n}" for c, n in alone.most_common()))
    for cost, name, codes in sorted(costly, reverse=True)[: args.top]:
        print(f"  {cost:6.2f} s  {name}  ({codes})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
