"""graph_origins: which assignments (and outside names) a graph runs through."""

import libcst as cst
import pytest
from analysis_helpers import facts_of, find

from memlint.analysis.autograd.graph_origins import graph_origins


def _origins(src: str, expr: str, index: int = 0):
    facts = facts_of(src)
    node = find(facts.module, expr, cst.BaseExpression, index)
    scope = facts.loops.scope_of(node)
    return graph_origins(node, scope, facts), facts.module


def _keys(src: str, expr: str, index: int = 0):
    found, _ = _origins(src, expr, index)
    return (found.keys(), found.outside) if found.complete else None


def test_rebinding_starts_a_new_graph():
    src = """
import torch
class Agent:
    def __init__(self):
        self.actor = Actor()
    def learn(self, state):
        s = torch.tensor(state)
        a, logp = self.actor.sample(s)
        loss1 = (logp - self.critic(s, a)).mean()
        a, logp = self.actor.sample(s)
        loss2 = (logp - self.critic(s, a)).mean()
        use(loss1, loss2)
"""
    first = _keys(src, "loss1", 1)
    second = _keys(src, "loss2", 1)
    assert first is not None and second is not None
    assert first[0] == {"a", "logp", "loss1"} and second[0] == {"a", "logp", "loss2"}
    found1, module = _origins(src, "loss1", 1)
    found2, _ = _origins(src, "loss2", 1)
    assert not (found1.bindings & found2.bindings)  # the same names, two different assignments
    assert found1.outside == set()  # ``s`` is a new leaf, ``self.actor`` a module


@pytest.mark.parametrize(
    "line, expected",
    [
        ("y = out.detach() * 2", set()),  # detach cuts: ``y`` holds no graph
        ("y = torch.zeros(3) + 1", set()),  # a factory makes a leaf
        ("y = out.view(-1)", {"out", "y"}),
        ("y = (out > 0).float()", set()),  # a comparison holds no graph
        ("y = torch.autograd.Variable(out, requires_grad=True) * 2", set()),  # the legacy constructor detaches
        ("y = torch.autograd.Variable(out).sum() + out", {"out", "y"}),  # ``out`` itself is still read
    ],
)
def test_cuts(line, expected):
    src = f"""
import torch
def f(model, x):
    out = model(x)
    {line}
    return y
"""
    found = _keys(src, "y", 1)
    assert found is not None and found[0] == expected


def test_parameters_and_attributes_are_outside():
    src = """
def f(self, fake):
    loss = self.D(fake).mean() + self.weight
    return loss
"""
    found = _keys(src, "loss", 1)
    assert found is not None and found[1] == {"fake", "self.weight"}


@pytest.mark.parametrize(
    "body",
    [
        "    out = model(x)\n    if flag:\n        out = model(x * 2)\n    loss = out.sum()",  # conditional
        "    out = model(x)\n    out += 1\n    loss = out.sum()",  # augmented
        "    outs = []\n    outs.append(model(x))\n    loss = outs[0].sum()",  # filled in place
        "    outs = [model(v) for v in x]\n    loss = outs[0].sum()",  # comprehension
        "    for v in x:\n        h = model(v, h)\n    loss = h.sum()",  # bound in a loop
    ],
)
def test_undecidable_is_incomplete(body):
    src = f"def f(model, x, h):\n{body}\n    return loss\n"
    found, _ = _origins(src, "loss", 1)
    assert not found.complete


def test_loop_carried_value_is_incomplete():
    src = """
def f(model, loader):
    h = None
    for x in loader:
        loss = model(x, h).sum()
        h = model(x)
        use(loss)
"""
    found, _ = _origins(src, "loss", 1)
    assert not found.complete


def test_batch_of_a_loader_holds_no_graph():
    src = """
def f(model, loader):
    for x, y in loader:
        loss = crit(model(x), y)
        use(loss)
"""
    found, _ = _origins(src, "loss", 1)
    assert found.complete and found.outside == set()
