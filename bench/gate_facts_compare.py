"""Every fact of GateFacts, this checkout's against another commit's, file by file.

    .venv/bin/python bench/gate_facts_compare.py --old REV [--every N] [--examples] DIR_OR_FILE...

Loads every module of memlint/gate/ as it was at ``REV`` (git show; facts.py,
loops.py and ast_names.py for a REV before the gate had a package) next to
the current ones, builds both on the same Python tree of
every ``*.py`` file, and compares every public attribute, every property
(the lazy ones included: loop_sites field by field, grad_on_writes as facts
of its own), the private state other modules read (the import aliases,
classes, the kept calls, assignments, bindings and imports, as multisets of
nodes: their order is not a fact), and which rules enabled_by_gate keeps
(every rule). ``--examples``: every rule's embedded examples and their fixed
texts too. Prints each difference and the totals; exits 1 on any.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import subprocess
import sys
import tempfile
import types
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

from memlint.gate import facts as new_gate
from memlint.gate.ast_names import ast_tokens
from memlint.gate.loops import LoopSites
from memlint.rule.registry import all_rules

_NODE_LISTS = ("_calls", "_assigns", "_imports")
# Caches of the lazy properties: compared through the properties themselves.
_CACHES = (
    "_builds_module",
    "_saved_in_place",
    "_grad_on_writes",
    "_loop_without_grad",
    "_best_snapshot",
    "_loop_sites",
    "_off_loop_scopes",  # off_loop_scopes() and loop_may_run_without_grad read it
    "_off_loop_scopes_read",
    # What ModelReach reads, gathered by the main walk since s17-speed10:
    # compared through _model_reach, built for both facts (main).
    "_rebound",
    "_bases",
    "_self_bound",
    "_step_hooks",  # step_hooks and batch_evidence, read once since s25-speedgate3
    "_batch_evidence",
)


def _load_package(rev: str) -> types.ModuleType | None:
    """Every module of REV's memlint/gate/ as the package ``_old_gate_pkg``
    (its own imports of memlint.gate rewritten to it), so a change to any
    of them (eval.py, seeds.py, ast_fields.py...), not only to facts.py and
    loops.py, is compared; None where REV has no memlint/gate/."""
    listed = subprocess.run(["git", "ls-tree", "--name-only", f"{rev}:memlint/gate"], capture_output=True, text=True)
    if listed.returncode != 0:
        return None
    folder = Path(tempfile.mkdtemp(prefix="gate_facts_compare_"))
    package = folder / "_old_gate_pkg"
    package.mkdir()
    for name in listed.stdout.split():
        if name.endswith(".py"):
            text = subprocess.run(
                ["git", "show", f"{rev}:memlint/gate/{name}"], capture_output=True, text=True, check=True
            ).stdout
            text = text.replace("from memlint.gate import", "from _old_gate_pkg import")
            (package / name).write_text(text.replace("memlint.gate.", "_old_gate_pkg."), encoding="utf-8")
    sys.path.insert(0, str(folder))
    old = importlib.import_module("_old_gate_pkg.facts")
    sys.modules["_old_ast_names"] = importlib.import_module("_old_gate_pkg.ast_names")
    return old


def _load(rev: str) -> types.ModuleType:
    whole = _load_package(rev)
    if whole is not None:
        return whole

    # Before issue 32's move the gate lived in memlint/analysis/ (gate.py,
    # gate_loops.py, ast_names.py): read whichever layout REV has.
    def source(path: str, old_path: str) -> str:
        for candidate in (path, old_path):
            shown = subprocess.run(["git", "show", f"{rev}:{candidate}"], capture_output=True, text=True)
            if shown.returncode == 0:
                return shown.stdout
        raise SystemExit(f"{rev} has neither {path} nor {old_path}")

    def imports_old(text: str) -> str:
        for spelling in ("memlint.gate.ast_names", "memlint.analysis.ast_names"):
            text = text.replace(f"from {spelling} import", "from _old_ast_names import")
        for spelling in ("memlint.gate.loops", "memlint.analysis.gate_loops"):
            text = text.replace(f"from {spelling} import", "from _old_gate_loops import")
        return text

    names = types.ModuleType("_old_ast_names")
    text = source("memlint/gate/ast_names.py", "memlint/analysis/ast_names.py")
    exec(compile(text, "old ast_names.py", "exec"), names.__dict__)
    sys.modules["_old_ast_names"] = names
    loops = types.ModuleType("_old_gate_loops")
    text = imports_old(source("memlint/gate/loops.py", "memlint/analysis/gate_loops.py"))
    exec(compile(text, "old gate/loops.py", "exec"), loops.__dict__)
    sys.modules["_old_gate_loops"] = loops
    text = imports_old(source("memlint/gate/facts.py", "memlint/analysis/gate.py"))
    old = types.ModuleType("_old_gate")
    sys.modules["_old_gate"] = old
    exec(compile(text, "old gate/facts.py", "exec"), old.__dict__)
    return old


def _value(v: Any) -> Any:
    if type(v).__name__ == "LoopSites":
        return {k: getattr(v, k) for k in LoopSites.__slots__}
    if type(v).__name__.endswith("ModelReach"):  # MEM201/MEM202's reading of model calls: what it holds
        return {k: x for k, x in vars(v).items() if k not in ("_functions", "_by_name")}
    return v


def _facts(f: Any, cls: type, depth: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    props = sorted(n for n, v in vars(cls).items() if isinstance(v, property))
    for name in props:
        value = getattr(f, name)
        if name == "grad_on_writes":
            out[name] = "self" if value is f else (_facts(value, cls, depth + 1) if depth == 0 else "facts")
        else:
            out[name] = _value(value)
    for name, value in vars(f).items():
        if name in _CACHES or name == "_tree":
            continue
        if name in _NODE_LISTS:
            out[name] = Counter(id(n) for n in value)
        elif name == "_bindings":
            out[name] = Counter((id(t), id(v)) for t, v in value)
        else:
            out[name] = _value(value)
    return out


def _kept(rules: list[Any], facts: Any, unreadable: set[str]) -> list[str]:
    """The codes the old facts keep, under today's ``gate =`` lines. A line
    that asks a fact the old GateFacts lacks (a condition added since) is
    left out of this comparison, and its code added to ``unreadable``."""
    kept = []
    for rule in rules:
        if rule.code in unreadable:
            continue
        try:
            if rule.gate is None or rule.gate(facts):
                kept.append(rule.code)
        except AttributeError:
            unreadable.add(rule.code)
    return [code for code in kept if code not in unreadable]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="the commit whose gate/facts.py is the reference")
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--examples", action="store_true", help="the rules' examples and fixed texts too")
    parser.add_argument("--every", type=int, default=1, help="compare every Nth file only")
    args = parser.parse_args(argv)
    old = _load(args.old)
    rules = all_rules()
    files = [f for p in args.paths for f in (sorted(p.rglob("*.py")) if p.is_dir() else [p])][:: args.every]
    texts: list[tuple[object, str]] = []
    if args.examples:
        for rule in rules:
            for kind, examples in (("invalid", rule.invalid), ("valid", rule.valid)):
                for i, ex in enumerate(examples):
                    texts.append((f"{rule.code}-{kind}-{i}", ex.source))
                    if getattr(ex, "fixed", None):
                        texts.append((f"{rule.code}-{kind}-{i}-fixed", ex.fixed))
    compared = differ = 0
    unreadable: set[str] = set()
    for path, text in [*texts, *((f, None) for f in files)]:
        if text is None:
            text = path.read_text(encoding="utf-8", errors="replace")  # type: ignore[attr-defined]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        a, b = old.GateFacts(tree), new_gate.GateFacts(tree)
        for module, facts in ((old, a), (new_gate, b)):
            reach = getattr(module, "ModelReach", None)
            if reach is not None:  # what it holds is compared in every file, asked or not
                reach.of(facts)
        fa, fb = _facts(a, old.GateFacts), _facts(b, new_gate.GateFacts)
        ra = _kept(rules, a, unreadable)
        rb = [r.code for r in new_gate.enabled_by_gate(rules, b)]
        if unreadable:  # rules whose gate asks a fact REV does not have: compared by their facts only
            rb = [code for code in rb if code not in unreadable]
        compared += 1
        names = sys.modules["_old_ast_names"]
        if any(names.ast_tokens(s) != ast_tokens(s) for s in ast.walk(tree) if isinstance(s, (ast.stmt, ast.expr))):
            fa["ast_tokens"] = "differ"
        bad = sorted(k for k in fa.keys() | fb.keys() if fa.get(k, "<missing>") != fb.get(k, "<missing>"))
        if ra != rb:
            bad.append("enabled_by_gate")
        if bad:
            differ += 1
            print(f"{path}: {', '.join(bad)}")
    print(f"{compared} files compared ({len(files) + len(texts)} found), {differ} differ")
    if unreadable:
        print(
            f"not compared by enabled_by_gate (their gate reads a fact {args.old} lacks): {', '.join(sorted(unreadable))}"
        )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
