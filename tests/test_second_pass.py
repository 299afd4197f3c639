"""The runner's second pass (run/second_pass.py): a file that waits for its
project's view is parsed with ``ast``, summarised and screened once, in the
first pass; a file its view rules out is not read again at all; the
findings are those of a run that screened it again."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import memlint.run.runner as runner
from memlint.gate import facts as gate_facts
from memlint.project import summary as summary_module
from memlint.run.cache import FindingsCache
from memlint.run.results import Settings

# MEM203's gate lets the loop through for what ``engine.evaluate`` may do.
TRAIN = textwrap.dedent(
    """
    import torch
    from engine import evaluate

    def fit(model, loader, epochs, opt):
        for epoch in range(epochs):
            for x, y in loader:
                opt.zero_grad()
                model(x).sum().backward()
                opt.step()
            evaluate(model, loader)
    """
)
# The callee switches the model to eval and never back: MEM203 reports the loop.
SWITCHES = textwrap.dedent(
    """
    import torch

    def evaluate(model, loader):
        model.eval()
        with torch.no_grad():
            return [model(x) for x, _ in loader]
    """
)
# The callee switches nothing: the view rules MEM203 out before libcst.
QUIET = textwrap.dedent(
    """
    def evaluate(model, loader):
        return len(loader)
    """
)


# Only MEM203's gate passes this loop, for what ``evaluate`` may do.
LOOP_ONLY = textwrap.dedent(
    """
    import torch
    from engine import evaluate

    def fit(model, loader, epochs):
        for epoch in range(epochs):
            evaluate(model, loader)
    """
)


def _project(tmp_path: Path, engine: str, train: str = TRAIN) -> list[str]:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(train)
    (tmp_path / "engine.py").write_text(engine)
    return sorted(str(p) for p in tmp_path.glob("*.py"))


def _counting(monkeypatch, module, name: str) -> list:
    calls: list = []
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def _defines(tree, name: str) -> bool:
    return any(getattr(node, "name", None) == name for node in tree.body)


@pytest.mark.parametrize("engine", [SWITCHES, QUIET])
def test_a_waiting_file_is_summarised_and_screened_once(tmp_path, monkeypatch, engine):
    files = _project(tmp_path, engine)
    walks: list = []
    real_init = gate_facts.GateFacts.__init__

    def counting(self, tree):
        walks.append(tree)
        real_init(self, tree)

    monkeypatch.setattr(gate_facts.GateFacts, "__init__", counting)
    summaries = _counting(monkeypatch, summary_module, "summarise")
    reports = runner.run(files, Settings(root=str(tmp_path)), jobs=1)
    train = reports[files.index(str(tmp_path / "train.py"))]
    assert not train.deferred and train.project is not None and train.summary is not None
    assert [f.code for f in train.findings] == (["MEM203"] if engine is SWITCHES else [])
    assert len([t for t in summaries if _defines(t, "fit")]) == 1  # not made again in the second pass
    assert len([t for t in walks if _defines(t, "fit")]) == 1  # the gate's facts of train.py: once


def test_a_file_the_view_rules_out_is_not_read_again(tmp_path, monkeypatch):
    files = _project(tmp_path, QUIET, LOOP_ONLY)
    processed = _counting(monkeypatch, runner, "process_file")
    cache = FindingsCache(str(tmp_path / ".cache"), fingerprint="test")
    reports = runner.run(files, Settings(root=str(tmp_path)), jobs=1, cache=cache)
    assert sorted(processed) == files  # the first pass only
    train = reports[files.index(str(tmp_path / "train.py"))]
    assert train.findings == [] and train.project is not None and train.project_state is not None
    # Stored as a worker stores it: the next run serves it from the cache.
    processed.clear()
    again = runner.run(files, Settings(root=str(tmp_path)), jobs=1, cache=cache)
    assert processed == [] and [r.findings for r in again] == [r.findings for r in reports]
    assert again[files.index(str(tmp_path / "train.py"))].summary_json is not None


def test_a_file_changed_between_the_passes_is_screened_again(tmp_path, monkeypatch):
    files = _project(tmp_path, SWITCHES)
    train = tmp_path / "train.py"
    real = runner._views

    def edit_then_view(*args, **kwargs):
        train.write_text(TRAIN.replace("evaluate(model, loader)\n", "evaluate(model, loader)\n        model.train()\n"))
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "_views", edit_then_view)
    reports = runner.run(files, Settings(root=str(tmp_path)), jobs=1)
    assert reports[files.index(str(train))].findings == []  # the new text: the loop switches back


def test_a_star_import_is_screened_again_with_its_view(tmp_path):
    # With names arriving through ``*``, the engine reruns every pre-filtered
    # rule ungated: the first pass's screening is not carried over.
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(TRAIN.replace("from engine import evaluate", "from engine import *"))
    (tmp_path / "engine.py").write_text(SWITCHES)
    files = sorted(str(p) for p in tmp_path.glob("*.py"))
    reports = runner.run(files, Settings(root=str(tmp_path)), jobs=1)
    first = reports[files.index(str(tmp_path / "train.py"))]
    assert first.screened is None and [f.code for f in first.findings] == ["MEM203"]


# A class in every statement that holds statements, in ``ast.walk``'s order.
CLASSES_EVERYWHERE = textwrap.dedent(
    """
    class A:
        class Inner:
            pass
    def f():
        class InF:
            pass
        return lambda: [x for x in range(3)]
    try:
        class InTry:
            pass
    except ValueError:
        class InHandler:
            pass
    else:
        class InElse:
            pass
    finally:
        class InFinally:
            pass
    match command:
        case [x]:
            class InCase:
                pass
    if flag:
        class InIf:
            pass
    else:
        for i in range(2):
            while True:
                with ctx():
                    class Deep:
                        pass
    """
)


def test_the_tracker_search_finds_classes_without_walking_the_module(monkeypatch):
    import ast

    from memlint.project import trackers

    tree = ast.parse(CLASSES_EVERYWHERE)
    expected = [n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    assert [n.name for n in trackers.class_defs(tree)] == expected
    walked: list = []
    real = ast.walk

    def recording(node):
        walked.append(node)
        return real(node)

    monkeypatch.setattr(trackers.ast, "walk", recording)
    trackers.tensor_trackers(tree)
    assert tree not in walked  # every expression of the module is not read to find its classes


def test_a_move_in_init_needs_no_read_of_what_the_methods_keep(monkeypatch):
    # class_moves_to_a_device (every summarised class with a move): a move in
    # ``__init__`` decides alone; the other methods are walked for what they
    # keep into ``self`` only when a move elsewhere asks.
    import ast

    from memlint.project import class_moves

    source = textwrap.dedent(
        """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2).cuda()

            def reset(self):
                self.h = None

            def forward(self, x):
                return self.fc(x)

        class Helper:
            def state(self):
                return nn.Linear(2, 2).cuda()

            def keep(self):
                self.s = self.state()
        """
    )
    net, helper = (n for n in ast.parse(source).body if isinstance(n, ast.ClassDef))
    read: list[str] = []
    real = class_moves._stores_and_self_calls

    def recording(method, *rest):
        read.append(method.name)
        return real(method, *rest)

    monkeypatch.setattr(class_moves, "_stores_and_self_calls", recording)
    assert class_moves.class_moves_to_a_device(net, {})
    assert read == []
    assert class_moves.class_moves_to_a_device(helper, {"torch": "torch"})  # kept through self.state()
    assert sorted(read) == ["keep", "state"]
