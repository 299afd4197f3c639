"""A lint leaves its objects to reference counting, not to the cyclic collector.

``memlint server`` lints on every change and keeps the last result; if the
analysis left reference cycles holding the libcst tree, every lint's tree
would be freed only by the collector, which walks it all first: measured
15-19 ms of a 105-120 ms lint of fixtures/server/train_classifier.py
(bench/history/server-latency.md). These tests lint with the collector off, drop the result,
and ask the collector what it finds: over every file of fixtures/,
tests/corpus, the rules' examples and bench/recall_real/files, no reference
cycle at all (but ast.literal_eval's, the standard library's), so no libcst
node either. Cycles without the tree count too: a visitor class made per
call, a nested function that calls itself or an object that refers to
itself is a cycle whatever it holds today. The same holds for the first
pass's walks of Python's ``ast`` tree (the module summary and the gate),
which the runner does with the collector paused per file.
"""

from __future__ import annotations

import gc
import types
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from memlint.analysis.facts import ModuleFacts
from memlint.gate.facts import GateFacts, enabled_by_gate
from memlint.lint.engine import ParseError, lint
from memlint.parse.guard import check_nesting, python_tree
from memlint.project.summary import summarise
from memlint.rule.registry import all_rules

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def garbage_made() -> Iterator[list]:
    """Collects the cycles made inside; the list holds what the collector
    found unreachable (kept for inspection instead of freed)."""
    was_on, flags = gc.isenabled(), gc.get_debug()
    gc.collect()
    gc.disable()
    found: list = []
    try:
        yield found
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        found.extend(gc.garbage)
    finally:
        gc.garbage.clear()
        gc.set_debug(flags)
        if was_on:
            gc.enable()


def _texts(group: str) -> list[tuple[str, str]]:
    """(path, text) of every file a group lints (a rule's example: its code,
    kind and index, then ``::example.py``)."""
    if group == "rule examples":
        return [
            (f"{rule.code}-{kind}-{i}::example.py", ex.source)
            for rule in all_rules()
            for kind, examples in (("invalid", rule.invalid), ("valid", rule.valid))
            for i, ex in enumerate(examples)
        ]
    base = ROOT / group
    if not base.is_dir():
        pytest.skip(f"{group} is not here (git-ignored)")
    files = sorted(p for p in base.rglob("*.py") if p.is_file())
    return [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8", errors="replace")) for p in files]


def _lint(path: str, text: str) -> None:
    try:
        lint(text, path.rpartition("::")[2], all_rules())
    except ParseError:
        pass  # the server meets such text mid-typing: it must not leave a cycle either


def _cycles(garbage: list) -> list[list]:
    """The reference cycles among ``garbage``: its strongly connected
    components of more than one object, or of one that refers to itself
    (what the cycles hold but are not part of is left out)."""
    index = {id(o): i for i, o in enumerate(garbage)}
    edges = [[index[id(r)] for r in gc.get_referents(o) if id(r) in index] for o in garbage]
    order: list[int] = []  # Tarjan's algorithm, iterative
    low, number, on_stack, stack, found = {}, {}, set(), [], []
    for root in range(len(garbage)):
        if root in number:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                number[v] = low[v] = len(order)
                order.append(v)
                stack.append(v)
                on_stack.add(v)
            for j in range(i, len(edges[v])):
                w = edges[v][j]
                if w not in number:
                    work.append((v, j + 1))
                    work.append((w, 0))
                    break
                if w in on_stack:
                    low[v] = min(low[v], number[w])
            else:
                if low[v] == number[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(garbage[w])
                        if w == v:
                            break
                    if len(component) > 1 or v in edges[v]:
                        found.append(component)
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[v])
    return found


def _literal_eval_made(cycle: list) -> bool:
    # ast.literal_eval (CPython 3.11, 3.12) defines helpers per call that call
    # one another; libcst's SimpleString.evaluated_value calls it, and so
    # does ast.dump its _format (the summary's _is_tracker). Not ours to
    # break, and they hold no tree.
    return any(
        isinstance(o, types.FunctionType)
        and o.__module__ == "ast"
        and o.__qualname__.startswith(("literal_eval.", "dump."))
        for o in cycle
    )


def _left_cycles(texts: list[tuple[str, str]]) -> tuple[list[list], int]:
    """The cycles the lints of ``texts`` leave (ast.literal_eval's aside), and
    how many libcst nodes the collector would have to free."""
    with garbage_made() as garbage:
        for path, text in texts:
            _lint(path, text)
    nodes = sum(isinstance(o, cst.CSTNode) for o in garbage)
    return [c for c in _cycles(garbage) if not _literal_eval_made(c)], nodes


def _describe(cycle: list) -> str:
    kinds = Counter(getattr(o, "__qualname__", None) or type(o).__qualname__ for o in cycle)
    return ", ".join(f"{n} x {k}" if n > 1 else k for k, n in kinds.most_common(6))


@pytest.mark.parametrize("group", ["fixtures", "tests/corpus", "rule examples", "bench/recall_real/files"])
def test_no_lint_leaves_a_reference_cycle(group: str) -> None:
    texts = _texts(group)
    _lint(*texts[0])  # first use: imports and caches
    cycles, nodes = _left_cycles(texts)
    if cycles or nodes:
        # Name the files (one lint each, only when it fails; the first ten).
        report = []
        for path, text in texts:
            one, held = _left_cycles([(path, text)])
            if one or held:
                report.append(f"{path}: {len(one)} cycles ({_describe(one[0]) if one else ''}), {held} libcst nodes")
                if len(report) == 10:
                    break
        pytest.fail(
            f"{len(cycles)} reference cycles, {nodes} libcst nodes left to the collector:\n" + "\n".join(report)
        )


def _summarise_and_gate(texts: list[tuple[str, str]]) -> None:
    """What ``memlint check``'s first pass does with each file's ``ast`` tree
    (runner._check_with_project): its module summary, then the gate."""
    rules = all_rules()
    for _path, text in texts:
        tree = python_tree(text)
        if tree is not None:
            summarise(tree)
            enabled_by_gate(rules, GateFacts(tree))


@pytest.mark.parametrize("group", ["fixtures", "tests/corpus", "rule examples", "bench/recall_real/files"])
def test_no_summary_or_gate_walk_leaves_a_reference_cycle(group: str) -> None:
    # A summary's cycle holds the file's whole ast tree: the collection after
    # each file (the runner pauses the collector per file) walked it all.
    texts = _texts(group)
    _summarise_and_gate(texts[:1])  # first use: imports and caches
    with garbage_made() as garbage:
        _summarise_and_gate(texts)
    cycles = [c for c in _cycles(garbage) if not _literal_eval_made(c)]
    assert not cycles, f"{len(cycles)} reference cycles: " + "; ".join(_describe(c) for c in cycles[:5])


def test_a_checked_file_leaves_no_tree_behind(tmp_path: Path) -> None:
    # The one-file caches of the gate and the nesting guard let go of the
    # file's tree before the collector is back on (runner._check_and_store).
    from memlint.gate import facts
    from memlint.parse import guard
    from memlint.run.results import Settings
    from memlint.run.runner import _check_and_store

    script = tmp_path / "train.py"
    script.write_text("import torch\nfor x in loader:\n    loss = model(x)\n    loss.backward()\n    total += loss\n")
    report = _check_and_store(str(script), Settings(), None)
    assert report.summary is not None  # the file was parsed, summarised and screened
    assert facts._LAST is None and guard._last is None


def test_the_cycle_finder_finds_a_visitor_class_defined_per_call() -> None:
    # What the rules did before their visitors were module-level classes.
    def names_in(expr: cst.BaseExpression) -> list[str]:
        found: list[str] = []

        class _V(cst.CSTVisitor):
            def visit_Name(self, node: cst.Name) -> None:
                found.append(node.value)

        expr.visit(_V())
        return found

    with garbage_made() as garbage:
        assert names_in(cst.parse_expression("a + b")) == ["a", "b"]
    cycles = _cycles(garbage)
    assert any(any(getattr(o, "__name__", None) == "_V" for o in c) for c in cycles)
    assert _cycles([[]]) == []  # a lone object that refers to nothing
    loop: list = []
    loop.append(loop)
    assert _cycles([loop]) == [[loop]]


def test_release_drops_the_analyses_and_they_are_recomputed_on_demand() -> None:
    facts = ModuleFacts(MetadataWrapper(cst.parse_module("import torch\nx = torch.zeros(1)\n"), unsafe_skip_copy=True))
    first = facts.history
    assert facts.names is first.names
    facts.release()
    # The project view and the caller's ast tree are input, not analyses.
    assert set(vars(facts)) == {"wrapper", "module", "project", "python_tree"}
    assert facts.history is not first  # asked again: built again, on the same tree
    assert facts.module is facts.wrapper.module


def test_a_python_syntax_error_comes_back_without_its_traceback() -> None:
    # Its traceback would hold the caller's frame, which holds the error:
    # a cycle keeping the caller's tree alive.
    error = check_nesting("s = '\\N{nope}'\n")
    assert isinstance(error, SyntaxError)
    assert error.__traceback__ is None
