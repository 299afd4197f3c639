"""Local gates sharpened so that files with no finding never reach libcst
(issue 29, point 6): MEM101/MEM102's stores in a function only a batch loop
may carry (gate/per_batch_calls.py), MEM802's scheduler step in a loop
(gate/sched_steps.py), MEM201's scope sites and the model calls under a
``with torch.no_grad():`` (gate/off_blocks.py). Each shape is one a real
file sent to libcst for nothing; each is rejected now, its near twin that
may hold a finding still passes, and findings are the same with the gate on
and off (tests/test_gate.py proves it over every example and the corpus)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from memlint.gate.cards import CARDS
from memlint.gate.facts import GateFacts
from memlint.lint import screen
from memlint.lint.engine import lint
from memlint.rule.registry import all_rules

RULES = list(all_rules())


def facts(src: str) -> GateFacts:
    return GateFacts(ast.parse(textwrap.dedent(src)))


def _same_with_and_without_gate(monkeypatch, src: str) -> None:
    text = textwrap.dedent(src)
    runs = []
    for gate in (False, True):
        monkeypatch.setattr(screen, "GATE", gate)
        runs.append([(f.code, f.line, f.message) for f in lint(text, "example.py", RULES)[0]])
    assert runs[0] == runs[1]


# transformers' cb_logits_processors: a store in a method called once, from ``__init__``.
STORE_CALLED_ONCE = """\
import torch
class Processors:
    def __init__(self, procs):
        self.items = {}
        self._convert(procs)
    def _convert(self, procs):
        for i, p in enumerate(procs):
            self.items[i] = p(torch.ones(1))
    def run(self, loader):
        for batch in loader:
            out = batch * 2
"""


def test_mem102_store_in_a_method_no_batch_loop_calls_is_not_read():
    assert not CARDS["MEM102"].gate(facts(STORE_CALLED_ONCE))


@pytest.mark.parametrize(
    "call",
    [
        "self._convert(batch)",  # called by the batch loop itself
        "self.helper(batch)",  # through a method the batch loop calls
    ],
)
def test_mem102_store_in_a_method_a_batch_loop_may_call_is_read(call):
    src = STORE_CALLED_ONCE.replace("out = batch * 2", call)
    src += "    def helper(self, batch):\n        self._convert(batch)\n"
    assert CARDS["MEM102"].gate(facts(src))


def test_mem102_store_through_a_caller_still_reports(monkeypatch):
    src = """\
    import torch
    class Trainer:
        def __init__(self, model):
            self.model, self.outputs = model, []
        def keep(self, x):
            self.outputs.append(self.model(x))
        def fit(self, loader):
            for x, y in loader:
                self.keep(x)
    """
    assert CARDS["MEM102"].gate(facts(src))
    _same_with_and_without_gate(monkeypatch, src)
    _same_with_and_without_gate(monkeypatch, STORE_CALLED_ONCE)


# timm's scheduler classes, transformers' processors: ``step`` with arguments, or outside any loop.
STEPS_OUTSIDE_A_LOOP = """\
import torch
def fit(model, loader, optimizer, scheduler, epochs):
    for epoch in range(epochs):
        for x in loader:
            optimizer.step(lambda: model(x))
        scheduler.step(epoch)
    scheduler.step()
"""


def test_mem802_needs_a_step_with_no_argument_in_a_loop(monkeypatch):
    assert not CARDS["MEM802"].local_gate(facts(STEPS_OUTSIDE_A_LOOP))
    assert not CARDS["MEM802"].gate(facts(STEPS_OUTSIDE_A_LOOP))
    before = STEPS_OUTSIDE_A_LOOP.replace("scheduler.step(epoch)", "scheduler.step()")
    assert CARDS["MEM802"].gate(facts(before))
    for src in (STEPS_OUTSIDE_A_LOOP, before):
        _same_with_and_without_gate(monkeypatch, src)


# The rule's function shape (s18-miss14): the scheduler stepped first in the
# function, the optimizer's step after it in a callee or on the next line.
@pytest.mark.parametrize(
    "after",
    [
        "    train_epoch(model, loader, optimizer)\n",
        "    optimizer.step()\n",
        "    for x in loader:\n        fit(x, optimizer)\n",
    ],
)
def test_mem802_step_first_in_a_function_passes(monkeypatch, after):
    src = "import torch\ndef train_one_epoch(model, loader, optimizer, scheduler):\n    scheduler.step()\n" + after
    assert CARDS["MEM802"].local_gate(facts(src))
    _same_with_and_without_gate(monkeypatch, src)


# timm's HybridEmbed._init_backbone: one forward under no_grad to read the output size.
FORWARD_UNDER_NO_GRAD = """\
import torch
class Embed(torch.nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        with torch.no_grad():
            self.backbone.eval()
            o = self.backbone(torch.zeros(1, 3, 224, 224))
        self.dim = o.shape[1]
"""


@pytest.mark.parametrize(
    "change",
    [
        ("with torch.no_grad():", "if backbone:"),  # no mode set: the forward keeps a graph
        ("import torch", "import torch\ntorch = None"),  # the ``with`` may not be torch's
        ("o = self.backbone", "with torch.enable_grad():\n                o = self.backbone"),
    ],
)
def test_mem201_forward_under_no_grad_is_no_evaluation_with_grad(monkeypatch, change):
    assert not CARDS["MEM201"].local_gate(facts(FORWARD_UNDER_NO_GRAD))
    near = FORWARD_UNDER_NO_GRAD.replace(*change)
    assert CARDS["MEM201"].local_gate(facts(near))
    for src in (FORWARD_UNDER_NO_GRAD, near):
        _same_with_and_without_gate(monkeypatch, src)
