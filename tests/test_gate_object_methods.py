"""MEM802's project part in the first pass (issue 29, speed): a file waits for
its view for MEM802's project path only when it holds a call that path may
read (gate/sched_steps.py object_method_in_a_loop): a bare ``trainer.m()``
with no argument, on a name or an attribute of one, in a loop or in a
function where a statement follows it. Any loop and any project import used
to be enough: on transformers 616 files waited for their view for that
alone, and none held such a call in a loop."""

from __future__ import annotations

import ast
import os
import textwrap
from pathlib import Path

import pytest

import memlint.project.index as index_module
import memlint.run.runner as runner
from memlint.gate.cards import CARDS
from memlint.gate.facts import GateFacts
from memlint.lint import screen
from memlint.run.results import Settings

MEM802 = CARDS["MEM802"]


def facts(src: str) -> GateFacts:
    return GateFacts(ast.parse(textwrap.dedent(src)))


# A model file: a loop over layers and a relative import, no call MEM802 may read.
LAYERS = """\
import torch
from .configuration import Config


class Encoder(torch.nn.Module):
    def forward(self, hidden):
        for layer in self.layers:
            hidden = layer(hidden)
        return hidden
"""

# MUNIT's train.py: a method of a project trainer that steps its schedulers.
TRAINER_LOOP = """\
import torch
from trainer import Trainer

trainer = Trainer(net)
for x in loader:
    trainer.update_learning_rate()
    trainer.update(x)
"""

# The method at the top of an epoch function, the loop after it.
TRAINER_FIRST = """\
import torch
from trainer import Trainer


def train_epoch(trainer, loader):
    trainer.update_learning_rate()
    for x in loader:
        trainer.update(x)
"""


def test_a_loop_and_a_project_import_no_longer_pass():
    g = facts(LAYERS)
    assert g.loops and g.project_imports
    assert not g.object_method_in_a_loop
    assert not MEM802.gate(g)


@pytest.mark.parametrize("src", [TRAINER_LOOP, TRAINER_FIRST, TRAINER_LOOP.replace("trainer.", "self.trainer.")])
def test_a_bare_method_call_in_or_before_a_loop_still_passes(src):
    g = facts(src)
    assert g.object_method_in_a_loop
    assert MEM802.gate(g)
    assert not MEM802.local_gate(g)  # settled by the view (project_matters)


@pytest.mark.parametrize(
    "call",
    [
        "trainer.update_learning_rate(epoch)",  # an argument: _scheduler_methods skips it
        "trainer.update_learning_rate(epoch=epoch)",
        "lr = trainer.update_learning_rate()",  # not a statement of its own
        "self.a.trainer.update_learning_rate()",  # a receiver object_types never types
        "make_trainer().update_learning_rate()",
    ],
)
def test_calls_the_project_path_never_reads_do_not_pass(call):
    src = TRAINER_LOOP.replace("trainer.update_learning_rate()", call)
    assert not facts(src).object_method_in_a_loop
    assert not MEM802.gate(facts(src))


def test_a_bare_call_last_in_its_function_outside_a_loop_does_not_pass():
    src = LAYERS + "\n    def reset(self):\n        self.cache.clear()\n"
    assert not facts(src).object_method_in_a_loop
    assert not MEM802.gate(facts(src))


def test_a_step_of_a_typed_object_still_passes_without_a_scheduler_name():
    # ``self.lr_policy`` typed by the constructor's call sites: the step path.
    src = LAYERS.replace("hidden = layer(hidden)", "self.policy.step()")
    assert MEM802.gate(facts(src))


TRAINER = """\
import torch
from torch.optim import lr_scheduler


class Trainer(torch.nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.opt = torch.optim.Adam(net.parameters())
        self.sched = lr_scheduler.StepLR(self.opt, step_size=10)

    def update(self, x):
        self.opt.zero_grad()
        self.net(x).mean().backward()
        self.opt.step()

    def update_learning_rate(self):
        self.sched.step()
"""


def _project(tmp_path: Path, train: str) -> list[str]:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "configuration.py").write_text("class Config:\n    pass\n")
    (tmp_path / "pkg" / "encoder.py").write_text(LAYERS)
    (tmp_path / "trainer.py").write_text(TRAINER)
    (tmp_path / "train.py").write_text(train)
    return sorted(str(p) for p in tmp_path.rglob("*.py"))


def _run(monkeypatch, files: list[str], root: Path, gate: bool = True) -> tuple[list, list[str]]:
    built: list[str] = []
    real = index_module.build_index

    def counting(r, *args, **kwargs):
        built.append(r)
        return real(r, *args, **kwargs)

    monkeypatch.setattr(index_module, "build_index", counting)
    monkeypatch.setattr(screen, "GATE", gate)
    reports = runner.run(files, Settings(root=str(root)), jobs=1)
    return sorted((os.path.relpath(r.path, root), f.line, f.code) for r in reports for f in r.findings), built


def test_a_model_package_whose_loops_call_no_method_builds_no_view(monkeypatch, tmp_path):
    # encoder.py waited for its view (a loop, a project import) and settled with none.
    _project(tmp_path, TRAINER_LOOP)
    files = sorted(str(p) for p in (tmp_path / "pkg").glob("*.py"))
    findings, built = _run(monkeypatch, files, tmp_path)
    assert built == []
    assert findings == _run(monkeypatch, files, tmp_path, gate=False)[0]


def test_the_trainer_method_stepping_schedulers_is_still_reported(monkeypatch, tmp_path):
    files = _project(tmp_path, TRAINER_LOOP)
    findings, built = _run(monkeypatch, files, tmp_path)
    assert built
    assert ("train.py", 6, "MEM802") in findings
    assert findings == _run(monkeypatch, files, tmp_path, gate=False)[0]
