"""CPU time of the gate's facts alone, per stage, in one process.

    .venv/bin/python bench/gate_facts_time.py DIR [--every N] [--cards]

For each file past the token pre-filter (default rules): Python's ``ast``
parse, ``GateFacts(tree)`` (the main walk) and ``enabled_by_gate`` (the
lazy facts the rules ask). CPU seconds, with the cyclic collector paused per
file as the engine does. ``--cards``: per card, the CPU of its gate (a lazy
fact several cards read is paid by the first to ask, in code order), how
many files ask it and pass it, and per property of GateFacts the CPU of
its reads (inclusive: a fact read inside another counts in both) and how
many reads computed something (``loop_sites`` and ``evaluates_with_grad``:
the first read per file; the others: every read).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from memlint.gate.facts import GateFacts, enabled_by_gate
from memlint.lint.engine import applicable_rules, python_tree
from memlint.parse.collector import collector_paused
from memlint.rule.registry import select_rules


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--every", type=int, default=1, help="time every Nth file only")
    parser.add_argument("--cards", action="store_true", help="per card and per lazy fact (see above)")
    args = parser.parse_args(argv)
    if args.cards:
        return _per_card(args.folder, args.every)
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


def _per_card(folder: Path, every: int) -> int:
    from memlint.gate import facts as gate_facts
    from memlint.gate.cards import CARDS

    fact_time: Counter[str] = Counter()
    fact_reads: Counter[str] = Counter()
    for name, prop in list(vars(gate_facts.GateFacts).items()):
        cache = {"evaluates_with_grad": "_evaluates_with_grad", "loop_sites": "_loop_sites"}.get(name)
        if isinstance(prop, property) and name not in ("bare_calls", "backward", "trains", "grad_off"):
            setattr(gate_facts.GateFacts, name, property(_timed(prop.fget, name, fact_time, fact_reads, cache)))
    cards = [c for c in CARDS.values() if c.default_enabled and c.gate is not None]
    spent: Counter[str] = Counter()
    asked: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    walk = 0.0
    for path in sorted(folder.rglob("*.py"))[::every]:
        text = path.read_text(encoding="utf-8", errors="replace")
        active = applicable_rules(text, cards)
        if not active:
            continue
        with collector_paused():
            tree = python_tree(text)
            if tree is None:
                continue
            t0 = time.process_time()
            facts = gate_facts.GateFacts(tree)
            walk += time.process_time() - t0
            for card in active:
                t1 = time.process_time()
                ok = card.gate(facts)  # type: ignore[misc]
                spent[card.code] += time.process_time() - t1
                asked[card.code] += 1
                passed[card.code] += bool(ok)
    print(f"{folder}: GateFacts() {walk:.2f}, cards {sum(spent.values()):.2f} CPU s")
    for code, cpu in spent.most_common():
        print(f"  {code} {cpu:.3f} s, asked by {asked[code]} files, passed {passed[code]}")
    top = fact_time.most_common(12)
    print("facts, inclusive CPU s (reads): " + ", ".join(f"{n} {t:.3f} ({fact_reads[n]})" for n, t in top))
    return 0


def _timed(get: Any, name: str, spent: Counter[str], reads: Counter[str], cache: str | None) -> Any:
    """``get`` timed on its computing reads: a cached fact (its cache still
    unset) or any read of an uncached one."""

    def read(facts: Any) -> Any:
        if cache is not None and getattr(facts, cache) is not None:
            return get(facts)
        t = time.process_time()
        try:
            return get(facts)
        finally:
            spent[name] += time.process_time() - t
            reads[name] += 1

    return read


if __name__ == "__main__":
    sys.exit(main())
