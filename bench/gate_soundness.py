"""Is every gate necessary on a real corpus? Runs, in one process, each file's
rules that the gate skips (memlint/gate/facts.py) with the gate off: any
finding they produce is a file the gate would wrongly skip.

    .venv/bin/python bench/gate_soundness.py DIR [DIR ...] [--select ALL]

Prints, per folder: files, files past the pre-filter, files the gate hands to
libcst, rule runs skipped, and every finding a skipped rule would have made
(there must be none).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memlint.lint import screen
from memlint.lint.engine import ParseError, applicable_rules, lint, rules_to_run
from memlint.rule.registry import select_rules


def check(folder: Path, rules) -> int:
    files = sorted(folder.rglob("*.py"))
    past_prefilter = past_gate = skipped_runs = 0
    wrong: list[str] = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        before = applicable_rules(text, rules)
        if not before:
            continue
        past_prefilter += 1
        screen.GATE = True
        after, _ = rules_to_run(text, rules)
        past_gate += bool(after)
        skipped = [r for r in before if r not in after]
        skipped_runs += len(skipped)
        if not skipped:
            continue
        screen.GATE = False
        try:
            found, _ = lint(text, str(path), skipped)
        except ParseError:
            continue
        finally:
            screen.GATE = True
        wrong += [f"{path}:{f.line}:{f.column}: {f.code} (skipped by the gate)" for f in found]
    print(
        f"{folder}: {len(files)} files, {past_prefilter} past the pre-filter, {past_gate} past the gate, "
        f"{skipped_runs} rule runs skipped, {len(wrong)} findings the gate would lose"
    )
    for line in wrong:
        print("  " + line)
    return len(wrong)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--select", default="ALL", help="rules (codes or prefixes; default every rule)")
    args = parser.parse_args(argv)
    rules = select_rules(args.select.split(","))
    return 1 if sum(check(f, rules) for f in args.folders) else 0


if __name__ == "__main__":
    sys.exit(main())
