"""Which cards make a tree check's files wait for their project view?

    .venv/bin/python bench/waiting_files.py DIR [DIR ...] [--select ALL] [--list CODE]

A cold ``memlint check`` screens every file in its first pass (the token
pre-filter, then each rule's card on Python's ``ast`` tree: gate/cards.py);
a file on which a card that reads the project passes, or a star import with
any card passed, waits for its view (run/runner.py _check_with_project):
the project's index is built and the file settled in the second pass. This
runs the same screening in one process and prints, per card: the files it
makes wait, those that wait for it alone (no other card reading the project
passed, no star import), and, of both, those where only the card's project
part passed (its ``local_gate`` fails: the view may drop it). ``--list CODE``
prints the files that wait for that card alone.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from memlint.gate.facts import facts_of
from memlint.lint.screen import screen
from memlint.run.results import Settings
from memlint.run.runner import cards_for


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--select", help="rule codes or prefixes, comma-separated (default: memlint's defaults)")
    parser.add_argument("--list", metavar="CODE", help="print the files that wait for this card alone")
    args = parser.parse_args(argv)
    select = tuple(args.select.split(",")) if args.select else None
    cards = cards_for(Settings(select=select), ())
    waits: Counter[str] = Counter()
    alone: Counter[str] = Counter()
    project_only: Counter[str] = Counter()
    project_only_alone: Counter[str] = Counter()
    listed: list[str] = []
    total = waiting = 0
    start = time.process_time()
    for path in sorted(p for d in args.dirs for p in d.rglob("*.py")):
        text = path.read_bytes().decode("utf-8", "replace")
        total += 1
        passed, tree = screen(text, cards)
        readers = [c for c in passed if c.reads_project]
        star = "import *" in text and bool(passed)
        if not (readers or star):
            continue
        waiting += 1
        facts = facts_of(tree) if tree is not None else None
        misses = {c.code for c in readers if c.local_gate is not None and facts is not None and not c.local_gate(facts)}
        for card in readers:
            waits[card.code] += 1
            project_only[card.code] += card.code in misses
        if len(readers) == 1 and not star:
            code = readers[0].code
            alone[code] += 1
            project_only_alone[code] += code in misses
            if code == args.list:
                listed.append(str(path))
    print(f"{total} files, {waiting} wait for their view (screening {time.process_time() - start:.1f} CPU s)")
    print(f"{'card':8} {'wait':>6} {'alone':>6} {'project part only':>18} {'of them alone':>14}")
    for code, n in waits.most_common():
        print(f"{code:8} {n:6} {alone[code]:6} {project_only[code]:18} {project_only_alone[code]:14}")
    print("\n".join(listed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
