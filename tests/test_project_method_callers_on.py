"""MEM201 names the callers of a method too (issue 29, Graph-WaveNet and
MTGNN: ``engine = trainer(...)`` then ``engine.eval(x, y)`` per batch in
train.py): summary.method_grads records the grad mode around each call on
an instance of an imported class, the view keeps those made with grad on
(ProjectView.method_callers_on), and the finding says where they are."""

from __future__ import annotations

import json
import textwrap

from project_helpers import write_project

from memlint.project.index import view_from_disk
from memlint.project.summary import ModuleSummary, summarise_text

_ENGINE = """\
    import torch


    class trainer():
        def __init__(self, model):
            self.model = model
            self.optimizer = torch.optim.Adam(model.parameters())

        def train(self, x, y):
            self.model.train()
            self.optimizer.zero_grad()
            loss = (self.model(x) - y).abs().mean()
            loss.backward()
            self.optimizer.step()
            return loss.item()

        def eval(self, x, y):
            self.model.eval()
            output = self.model(x)
            loss = (output - y).abs().mean()
            return loss.item()
"""

_TRAIN = """\
    import torch
    from engine import trainer


    def main(model, train_loader, val_loader):
        engine = trainer(model)
        for x, y in train_loader:
            engine.train(x, y)
        for x, y in val_loader:
            engine.eval(x, y)
        with torch.no_grad():
            engine.eval(x, y)


    main(None, [], [])
"""


def _messages(path) -> list[tuple[int, str]]:
    from memlint.lint.engine import lint_text
    from memlint.rule.registry import all_rules

    found = lint_text(path.read_text(), str(path), all_rules(), project=lambda: view_from_disk(str(path)))
    return [(f.line, f.message) for f in found if f.code == "MEM201"]


def test_summary_records_the_grad_mode_of_each_method_call():
    summary = summarise_text(textwrap.dedent(_TRAIN))
    assert summary is not None
    assert summary.method_calls == [
        ("engine.trainer.train", 8),
        ("engine.trainer.eval", 10),
        ("engine.trainer.eval", 12),
    ]
    assert summary.method_grads == ["on", "on", "off"]
    assert ModuleSummary.from_json(json.loads(json.dumps(summary.to_json()))) == summary


def test_the_view_keeps_the_calls_made_with_grad_on(tmp_path):
    write_project(tmp_path, {"engine.py": _ENGINE, "train.py": _TRAIN})
    view = view_from_disk(str(tmp_path / "engine.py"))
    assert view.method_callers_of("trainer.eval") == ("train.py:10", "train.py:12")
    assert view.method_callers_on_of("trainer.eval") == ("train.py:10",)
    assert view.method_callers_on_of("trainer.train") == ("train.py:8",)


def test_the_finding_names_the_callers_that_run_the_method_with_grad_on(tmp_path):
    write_project(
        tmp_path,
        {
            "engine.py": _ENGINE,
            "train.py": _TRAIN.replace("        with torch.no_grad():\n            engine.eval(x, y)\n", ""),
        },
    )
    [(line, message)] = _messages(tmp_path / "engine.py")
    assert line == 17
    assert message.endswith("(called with autograd on from train.py:10)")


def test_a_module_level_instance_is_a_caller_too(tmp_path):
    train = """\
    from engine import trainer

    engine = trainer(None)
    for x, y in []:
        engine.eval(x, y)
"""
    write_project(tmp_path, {"engine.py": _ENGINE, "train.py": train})
    view = view_from_disk(str(tmp_path / "engine.py"))
    assert view.method_callers_on_of("trainer.eval") == ("train.py:5",)


def test_a_name_bound_to_a_function_s_result_names_no_class_method(tmp_path):
    train = """\
    from engine import make

    engine = make(None)
    engine.eval(1, 2)
"""
    engine = _ENGINE + "\n\n    def make(model):\n        return trainer(model)\n"
    write_project(tmp_path, {"engine.py": engine, "train.py": train})
    view = view_from_disk(str(tmp_path / "engine.py"))
    assert view.method_callers_on_of("trainer.eval") == ()
