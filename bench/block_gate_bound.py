"""What top-level-block gating could save at most: of the files past the gate,
the bytes libcst would still parse if it skipped the top-level functions and
classes that no enabled rule's gate condition holds in.

    .venv/bin/python bench/block_gate_bound.py DIR

A block is gated alone, with the module's other statements (imports,
assignments) beside it. "independent" keeps only the blocks whose own gate
holds: a bound that assumes no block's facts change another's findings,
which is not true (the call graph, base classes and globals carry facts
across blocks). "closed over names" also keeps every block that defines a
name a kept block mentions, or mentions a name a kept block defines (a def,
a class, its methods, a module-level global), to a fixpoint: what a sound
version would at least have to keep; "+ attributes" counts attribute names
too (``self.helper()`` resolved to a method of a base class).
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

from memlint.gate.facts import GateFacts, enabled_by_gate
from memlint.lint.engine import applicable_rules
from memlint.rule.registry import select_rules

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def mentioned(node: ast.AST, attributes: bool) -> set[str]:
    return {
        n.id if isinstance(n, ast.Name) else n.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Name) or (attributes and isinstance(n, ast.Attribute))
    }


def closed(kept: list[bool], defines: list[set[str]], mentions: list[set[str]]) -> list[bool]:
    kept = list(kept)
    changed = True
    while changed:
        changed = False
        for i, k in enumerate(kept):
            if not k and any(
                kept[j] and (defines[i] & mentions[j] or defines[j] & mentions[i]) for j in range(len(kept))
            ):
                kept[i] = changed = True
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    folder = parser.parse_args().folder
    rules = select_rules(None)
    totals = dict.fromkeys(("past the gate", "independent", "closed over names", "+ attributes"), 0)
    files = 0
    for path in sorted(folder.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        candidates = applicable_rules(text, rules)
        try:
            tree = ast.parse(text) if candidates else None
        except (SyntaxError, ValueError, RecursionError):
            continue
        enabled = enabled_by_gate(candidates, GateFacts(tree)) if tree else []
        if not enabled:
            continue
        files += 1
        lines = text.splitlines(keepends=True)
        size = len(text.encode())
        module_level = [s for s in tree.body if not isinstance(s, DEFS)]
        blocks = [s for s in tree.body if isinstance(s, DEFS)]
        sizes = [
            sum(len(line.encode()) for line in lines[(b.decorator_list or [b])[0].lineno - 1 : b.end_lineno])
            for b in blocks
        ]
        own = [
            bool(enabled_by_gate(enabled, GateFacts(ast.Module(body=[*module_level, b], type_ignores=[]))))
            for b in blocks
        ]
        globals_ = {
            n.id for s in module_level for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        totals["past the gate"] += size
        totals["independent"] += size - sum(s for s, k in zip(sizes, own) if not k)
        for label, attributes in (("closed over names", False), ("+ attributes", True)):
            mentions = [mentioned(b, attributes) for b in blocks]
            defines = [
                {
                    b.name,
                    *(s.name for s in getattr(b, "body", []) if isinstance(b, ast.ClassDef) and isinstance(s, DEFS)),
                }
                | (m & globals_)
                for b, m in zip(blocks, mentions)
            ]
            kept = closed(own, defines, mentions)
            totals[label] += size - sum(s for s, k in zip(sizes, kept) if not k)
    print(f"{folder}: {files} files past the gate")
    for label, n in totals.items():
        print(f"  {label:>18}: {n / 1e6:5.1f} MB to libcst")


if __name__ == "__main__":
    main()
