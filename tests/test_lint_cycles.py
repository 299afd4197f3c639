"""A lint leaves its objects to reference counting, not to the cyclic collector.

``memlint server`` lints on every change and keeps the last result; if the
analysis left reference cycles holding the libcst tree, every lint's tree
would be freed only by the collector, which walks it all first: measured
15-19 ms of a 105-120 ms lint of fixtures/server/train_classifier.py
(bench/README.md). These tests lint with the collector off, drop the result,
and ask the collector what it finds.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from memlint.analysis.facts import ModuleFacts
from memlint.lint.engine import lint
from memlint.parse.guard import check_nesting
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


@pytest.mark.parametrize(
    "path",
    [
        "fixtures/server/train_classifier.py",  # the editor benchmark's script
        "tests/corpus/char_rnn_classification.py",  # recurrent state, bindings per scope
        "tests/corpus/lstm_language_model_buggy.py",
        "tests/corpus/gradcam_evaluation.py",  # backward proofs, instance calls
        "tests/corpus/grad_accumulation.py",  # training verbs, jumps
        "tests/corpus/epoch_metrics.py",  # history terms (MEM102)
    ],
)
def test_a_lint_leaves_no_tree_in_reference_cycles(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    with garbage_made() as garbage:
        findings, module = lint(text, path, all_rules())
        del findings, module
    nodes = [o for o in garbage if isinstance(o, cst.CSTNode)]
    assert nodes == [], f"{len(nodes)} libcst nodes freed only by the cyclic collector"
    # What is left is small and tree-free (classes and closures made by
    # libcst and the standard library, ast.literal_eval's among them).
    assert len(garbage) < 1000


def test_release_drops_the_analyses_and_they_are_recomputed_on_demand() -> None:
    facts = ModuleFacts(MetadataWrapper(cst.parse_module("import torch\nx = torch.zeros(1)\n"), unsafe_skip_copy=True))
    first = facts.history
    assert facts.names is first.names
    facts.release()
    assert set(vars(facts)) == {"wrapper", "module"}
    assert facts.history is not first  # asked again: built again, on the same tree
    assert facts.module is facts.wrapper.module


def test_a_python_syntax_error_comes_back_without_its_traceback() -> None:
    # Its traceback would hold the caller's frame, which holds the error:
    # a cycle keeping the caller's tree alive.
    error = check_nesting("s = '\\N{nope}'\n")
    assert isinstance(error, SyntaxError)
    assert error.__traceback__ is None
