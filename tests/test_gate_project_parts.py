"""The cards' project parts (issue 29, speed): what makes a file wait for
its project view in the first pass. MEM203 and MEM301/MEM303 read the view's
facts of the functions a module calls (callees, step sequences), and the
summary keeps no call under a head that never names a project module
(gate/project_calls.py); MEM301/MEM303 need a clearing written here or a
call handing something over; MEM201's typed-object path needs no import
(a parameter is typed by callers elsewhere) and its named-forward path the
batch evidence every other report needs. Each file settled without a view
has a near twin that still waits, and findings are those of the gate off."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

import memlint.lint.screen as screen
import memlint.run.runner as runner
from memlint.gate.cards import CARDS
from memlint.gate.facts import GateFacts
from memlint.gate.object_calls import may_evaluate_a_typed_object
from memlint.gate.project_calls import project_bound
from memlint.run.results import Settings


def facts(src: str) -> GateFacts:
    return GateFacts(ast.parse(textwrap.dedent(src)))


def _check(tmp_path: Path, files: dict[str, str], gate: bool, monkeypatch) -> list[tuple[str, int, str]]:
    monkeypatch.setattr(screen, "GATE", gate)
    (tmp_path / "pyproject.toml").write_text("")
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    paths = sorted(str(p) for p in tmp_path.glob("*.py"))
    reports = runner.run(paths, Settings(root=str(tmp_path)), jobs=1)
    return sorted((Path(r.path).name, f.line, f.code) for r in reports for f in r.findings)


# -- which imports may bring a project function ----------------------------------


def test_project_bound_leaves_out_heads_that_never_name_a_project_module():
    src = """\
    import math, os.path as osp, numpy as np, torch
    import utils, pkg.engine
    from torchvision import models
    from collections import deque
    from . import helpers
    from engine import evaluate as ev
    """
    assert project_bound(facts(src)) == (frozenset({"utils", "pkg", "helpers", "ev"}), False)
    assert project_bound(facts("from numpy import *\nfrom torch import *\n")) == (frozenset(), True)


# -- MEM203: a loop calling another module's function ----------------------------

# A loop that trains; no eval switch here: only a project function could switch.
MEM203_STDLIB = """\
import math
import numpy as np
def fit(model, loader, opt):
    for x in loader:
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
        print(math.sqrt(np.mean(x)))
"""


def test_mem203_a_loop_calling_only_stdlib_and_numpy_waits_for_nothing():
    assert not CARDS["MEM203"].gate(facts(MEM203_STDLIB))
    twin = MEM203_STDLIB.replace("import math\n", "import math\nfrom engine import validate\n").replace(
        "print(math", "validate(model)\n        print(math"
    )
    assert CARDS["MEM203"].gate(facts(twin))


_FIT = """\
import math
import torch
from engine import evaluate
def fit(model, loader, epochs, opt):
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        evaluate(model, loader)
        print(math.sqrt(epoch))
"""
_SWITCHES = """\
import torch
def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return [model(x) for x, _ in loader]
"""


def test_mem203_through_a_project_callee_is_the_same_with_the_gate_off(tmp_path, monkeypatch):
    assert CARDS["MEM203"].gate(facts(_FIT))
    files = {"train.py": _FIT, "engine.py": _SWITCHES}
    on = _check(tmp_path, files, True, monkeypatch)
    assert on == _check(tmp_path, files, False, monkeypatch)
    assert [code for _f, _l, code in on] == ["MEM203"]


# -- MEM301/MEM303: a step written in another module, read at the call -----------

# timm's optimizers: they read ``p.grad`` and never clear it.
READS_GRADS = """\
import math
import logging
import torch
from .utils import clip_value
logger = logging.getLogger(__name__)
class Opt(torch.optim.Optimizer):
    def step(self):
        for p in self.params:
            g = p.grad
            p.data.add_(g * math.sqrt(2), alpha=-clip_value())
"""


@pytest.mark.parametrize("code", ["MEM301", "MEM303"])
def test_mem301_mem303_a_grad_read_and_calls_handing_nothing_wait_for_nothing(code):
    assert not CARDS[code].gate(facts(READS_GRADS))
    handing = READS_GRADS.replace("clip_value()", "clip_value(p)")
    assert CARDS[code].gate(facts(handing))
    clearing = READS_GRADS.replace("g = p.grad", "p.grad = None")
    assert CARDS[code].gate(facts(clearing))


_TRAIN_STEP = """\
import torch
from engine import backward_step
def fit(model, loader, opt, accum):
    for i, x in enumerate(loader):
        loss = model(x).sum()
        backward_step(loss, opt)
        if i % accum == 0:
            opt.step()
"""
_ENGINE = """\
def backward_step(loss, opt):
    opt.zero_grad()
    loss.backward()
"""


def test_mem301_through_a_project_step_is_the_same_with_the_gate_off(tmp_path, monkeypatch):
    files = {"train.py": _TRAIN_STEP, "engine.py": _ENGINE}
    assert CARDS["MEM301"].gate(facts(_TRAIN_STEP)) and not CARDS["MEM301"].local_gate(facts(_TRAIN_STEP))
    on = _check(tmp_path, files, True, monkeypatch)
    assert on == _check(tmp_path, files, False, monkeypatch)
    assert ("train.py", 6, "MEM301") in on


# -- MEM201: a typed project object, a named forward -----------------------------

_AGENTS = """\
import torch
import torch.nn as nn
class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(3, 1)
    def forward(self, x):
        return self.l1(x)
class TD3:
    def __init__(self):
        self.actor = Actor().to("cuda")
    def select_action(self, state):
        return self.actor(torch.FloatTensor(state)).cpu().data.numpy()
"""
# No import but torch: the parameter is typed by main.py's call.
_EVALUATE = """\
import torch
def eval_policy(agent, env, episodes=10):
    total = 0.0
    for _ in range(episodes):
        state, done = env.reset(), False
        while not done:
            action = agent.select_action(state)
            state, reward, done = env.step(action)
            total += reward
    return total / episodes
"""
_MAIN = """\
import agents
from evaluate import eval_policy
if __name__ == "__main__":
    policy = agents.TD3()
    print(eval_policy(policy, None))
"""


def test_mem201_a_parameter_typed_elsewhere_needs_no_import(tmp_path, monkeypatch):
    assert CARDS["MEM201"].gate(facts(_EVALUATE)) and not CARDS["MEM201"].local_gate(facts(_EVALUATE))
    files = {"agents.py": _AGENTS, "evaluate.py": _EVALUATE, "main.py": _MAIN}
    on = _check(tmp_path, files, True, monkeypatch)
    assert on == _check(tmp_path, files, False, monkeypatch)
    assert ("evaluate.py", 4, "MEM201") in on


# transformers' modeling files: a loop over layers calling ``self.model.get_...``.
NAMED_FORWARD_NO_BATCH = """\
import torch
class Head(torch.nn.Module):
    def forward(self, hidden):
        for layer in self.layers:
            hidden = self.model.embed_tokens(hidden)
        return hidden
"""


def test_mem201_a_named_forward_without_batch_evidence_waits_for_nothing():
    assert not CARDS["MEM201"].gate(facts(NAMED_FORWARD_NO_BATCH))
    batches = NAMED_FORWARD_NO_BATCH.replace("for layer in self.layers", "for batch in loader")
    assert CARDS["MEM201"].gate(facts(batches))


# MEM201's typed-object path, call by call (gate/object_calls.py): a loop call
# whose receiver object_types may type, with its evidence of evaluation.
_LOOP_IN_EVAL = """\
import torch
from agents import make
class Runner:
    def evaluate(self, agent, texts):
        for sample in texts:
            {call}
"""


@pytest.mark.parametrize(
    "call, waits",
    [
        ("sample.count('x')", False),  # a loop target: never a typed name
        ("self.decoder(sample)", False),  # the object itself
        ("self.a.b.act(sample)", False),  # no such receiver kept
        ("agent.act(sample)", True),  # a parameter: typed by call sites
        ("self.agent.act(sample)", True),  # typed through the class
        ("policy = make()\n            policy.act(sample)", True),  # a name bound by ``=``
        ("act = self.agent.act\n            act(sample)", True),  # a bound-method alias
    ],
)
def test_mem201_typed_object_path_needs_a_receiver_object_types_may_type(call, waits):
    assert may_evaluate_a_typed_object(facts(_LOOP_IN_EVAL.replace("{call}", call))) is waits


# MEM201's project paths settled apart (Card.project_parts): a loop over layers
# asks a project object to ``predict`` (its typed-object path), and the view
# knows ``correct`` as a named forward, a path that needs batch evidence the
# file lacks. transformers' Gemma3n decoder layer, in small.
_ALTUP = """\
import torch.nn as nn
class AltUp(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(2, 2)
    def predict(self, x):
        return x.argmax(-1)
    def correct(self, x):
        return self.proj(x)
"""
_DECODER = """\
import torch.nn as nn
from layers import AltUp
class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.altup = AltUp()
        self.blocks = nn.ModuleList([nn.Linear(2, 2) for _ in range(2)])
    def forward(self, x):
        for block in self.blocks:
            x = block(x) + self.altup.predict(x)
        return self.altup.correct(x)
"""


def _parsed_again(monkeypatch) -> list[str]:
    parsed: list[str] = []
    real = runner._check_settled

    def counted(text, path, *args, **kwargs):
        parsed.append(Path(path).name)
        return real(text, path, *args, **kwargs)

    monkeypatch.setattr(runner, "_check_settled", counted)
    return parsed


def test_mem201_a_view_holding_only_another_paths_facts_settles_the_file(tmp_path, monkeypatch):
    from memlint.gate import project_gate
    from memlint.gate.cards import _may_evaluate_a_project_object, _may_run_a_named_forward

    decoder = facts(_DECODER)
    assert _may_evaluate_a_project_object(decoder) and not _may_run_a_named_forward(decoder)
    assert not CARDS["MEM201"].local_gate(decoder)
    files = {"layers.py": _ALTUP, "model.py": _DECODER}
    parsed = _parsed_again(monkeypatch)
    on = _check(tmp_path, files, True, monkeypatch)
    assert "model.py" not in parsed  # no object forward: a named forward alone is no reason
    assert on == _check(tmp_path, files, False, monkeypatch)
    monkeypatch.setattr(project_gate, "ENABLED", False)
    parsed.clear()
    assert on == _check(tmp_path, files, True, monkeypatch)
    assert "model.py" in parsed  # without the paths apart, the named forward kept it


def test_mem201_the_one_file_check_settles_the_same_paths(tmp_path):
    """engine.with_project (a file checked alone, flake8, the server) drops
    the rule where the tree check's settle does."""
    from memlint.gate.project_gate import held_parts, parts_matter
    from memlint.project.view import ProjectView

    card = CARDS["MEM201"]
    held = held_parts(card, facts(_DECODER))
    assert held == frozenset({0})
    named_only = ProjectView(root="", path="model.py", forward_methods=("correct",))
    assert card.project_matters(named_only) and not parts_matter(card, held, named_only)
    assert parts_matter(card, None, named_only)  # a card's whole project part, as before
    typed = ProjectView(root="", path="model.py", object_forwards=(("Decoder.forward", "self.altup", "predict", "m"),))
    assert parts_matter(card, held, typed)  # the typed-object path the file may take
    batches = facts(_DECODER.replace("for block in self.blocks", "for batch in loader"))
    assert held_parts(card, batches) == frozenset({0, 1}) and parts_matter(card, frozenset({0, 1}), named_only)
