"""RetainedGraph: can a graph kept by retain_graph=True be backpropagated again?"""

import libcst as cst
import pytest
from analysis_helpers import facts_of, find

from memlint.analysis.autograd.retained_graph import RetainedGraph


def _fresh(src: str, first: str, later: str) -> bool:
    facts = facts_of(src)
    a, b = find(facts.module, first, cst.Call), find(facts.module, later, cst.Call)
    loop = facts.loops.loop_of(a)
    return RetainedGraph(facts).fresh(a, b, loop, facts.loops.scope_of(a))


LOOP = """
import torch
for x, y in loader:
    out = model(x)
    loss1 = crit(out, y)
    loss1.backward(retain_graph=True)
    {between}
    loss2.backward()
"""


@pytest.mark.parametrize(
    "between, expected",
    [
        ("loss2 = crit(model(x + noise), y)", True),  # a new forward on the same data
        ("loss2 = crit(head(out), y)", False),  # through the first graph's output
        ("feats = out * 2\n    loss2 = feats.sum()", False),  # derived from it
        ("self.cache = out\n    loss2 = crit(model(x), y)", False),  # stored where anything may reach it
    ],
)
def test_fresh(between, expected):
    assert _fresh(LOOP.format(between=between), "loss1.backward(retain_graph=True)", "loss2.backward()") is expected


def _dies(src: str) -> bool:
    facts = facts_of(src)
    call = find(facts.module, "out[0, k].backward(retain_graph=True)", cst.Call)
    return RetainedGraph(facts).dies_in(call, facts.loops.scope_of(call))


HELPER = """
import torch
def saliency(model, x, k):
    x = x.clone().requires_grad_(True)
    out = model(x)
    {before}
    out[0, k].backward(retain_graph=True)
    return {ret}
"""


@pytest.mark.parametrize(
    "before, ret, expected",
    [
        ("pass", "x.grad.abs()", True),
        ("pass", "x.grad, out", False),  # returned
        ("self.out = out", "x.grad", False),  # stored on an attribute
        ("keep(out)", "x.grad", False),  # handed to an unknown call
        ("probs = out.softmax(-1)\n    outs.append(probs)", "x.grad", False),  # into a container from outside
        ("pass", "out.sum()", False),  # history returned
    ],
)
def test_dies_in_function(before, ret, expected):
    assert _dies(HELPER.format(before=before, ret=ret)) is expected


def test_a_parameter_is_trusted_as_a_leaf_only_when_call_sites_or_its_grad_say_so():
    no_grad_read = """
import torch
def explain(model, x, k):
    out = model(x)
    out[0, k].backward(retain_graph=True)
    return k
"""
    assert not _dies(no_grad_read)
    with_history = """
import torch
def explain(model, x, k):
    out = model(x)
    out[0, k].backward(retain_graph=True)
    return x.grad
for batch in loader:
    feats = backbone(batch)
    explain(head, feats, 0)
"""
    assert not _dies(with_history)
    data = with_history.replace("explain(head, feats, 0)", "explain(head, batch, 0)")
    assert _dies(data)


def _apart(src: str, first: str, later: str) -> bool:
    facts = facts_of(src)
    a, b = find(facts.module, first, cst.Call), find(facts.module, later, cst.Call)
    return RetainedGraph(facts).apart(a, b, facts.loops.scope_of(a))


SAC = """
import torch
class Agent:
    def __init__(self):
        self.actor = Actor()
    def learn(self, batch):
        s = torch.tensor(batch)
        a, logp = self.actor.sample(s)
        loss1 = (logp - self.critic(s, a)).mean()
        loss1.backward(retain_graph=True)
        {between}
        loss2 = (logp - self.critic(s, a)).mean()
        loss2.backward()
"""


@pytest.mark.parametrize(
    "between, expected",
    [
        ("a, logp = self.actor.sample(s)", True),  # resampled: a new graph
        ("pass", False),  # the same sample: one graph, two backwards
        ("if flag:\n            a, logp = self.actor.sample(s)", False),  # resampled on some paths only
        ("a, logp = self.actor.sample(s)\n        self.keep = loss1", False),  # stored on self
        ("a, logp = self.actor.sample(s)\n        self.buf.append(loss1)", False),  # stored in a container
    ],
)
def test_apart(between, expected):
    src = SAC.format(between=between)
    assert _apart(src, "loss1.backward(retain_graph=True)", "loss2.backward()") is expected


def test_built_here():
    facts = facts_of(SAC.format(between="a, logp = self.actor.sample(s)"))
    call = find(facts.module, "loss1.backward(retain_graph=True)", cst.Call)
    fn = facts.loops.scope_of(call)
    assert RetainedGraph(facts).built_here(call, fn)
    facts = facts_of(
        SAC.format(between="a, logp = self.actor.sample(s)")
        .replace("(self, batch)", "(self, batch, s0)")
        .replace("torch.tensor(batch)", "s0 * 2")
    )
    call = find(facts.module, "loss1.backward(retain_graph=True)", cst.Call)
    assert not RetainedGraph(facts).built_here(
        call, facts.loops.scope_of(call)
    )  # a parameter may hold the caller's graph


GUIDED = """
import numpy as np
class GuidedBackprop:
    def __init__(self, model):
        self.model = model
    def forward(self, x):
        {forward}
    def __call__(self, image, target=None):
        image = image.requires_grad_(True)
        output = self.forward(image)
        if target is None:
            target = np.argmax(output.cpu().data.numpy())
        output[0, target].backward(retain_graph=True)
        {after}
"""


@pytest.mark.parametrize(
    "forward, after, expected",
    [
        ("return self.model(x)", "output = image.grad.numpy()\n        print(output[0])", True),
        # the helper keeps what it computed: later code may reach the graph
        (
            "self.out = self.model(x)\n        return self.out",
            "output = image.grad.numpy()\n        print(output[0])",
            False,
        ),
        # replaced on some paths only: the graph's output may be what is stored
        ("return self.model(x)", "if flag:\n            output = image.grad.numpy()\n        self.keep(output)", False),
        # not replaced at all
        ("return self.model(x)", "self.keep(output)", False),
    ],
)
def test_dies_in_follows_rebinding_and_helpers(forward, after, expected):
    facts = facts_of(GUIDED.format(forward=forward, after=after))
    call = find(facts.module, "output[0, target].backward(retain_graph=True)", cst.Call)
    assert RetainedGraph(facts).dies_in(call, facts.loops.scope_of(call)) is expected


TWO_MODELS = """
import torch
def train(model_a, model_b, loader, criterion_a, criterion_b, meter, log):
    for x, y in loader:
        out = model_a(x)[1]
        loss1 = criterion_a(out, model_b(x).detach())
        loss1.backward(retain_graph=True)
        {between}
        out = model_a(x)[0]
        loss2 = criterion_b(out, y)
        loss2.backward()
        {after}
"""


@pytest.mark.parametrize(
    "between, after, expected",
    [
        ("pass", "log(out, y)", True),  # read after ``out`` is bound anew: the second graph's value
        ("log(out, y)", "pass", False),  # the first graph's value handed to an unknown call
        ("pass", "meter.update(loss1.data)", True),  # ``.data`` holds no graph
        ("pass", "meter.update(loss1)", False),  # the loss itself: the meter may keep it
        ("pass", 'print("{loss1}".format(loss1=meter))', True),  # a keyword's name is no read
        ("if y is None:\n            log(out, y)", "pass", False),  # the first value handed on, on one path
    ],
)
def test_apart_reads_after_rebinding_and_cut_reads(between, after, expected):
    src = TWO_MODELS.format(between=between, after=after)
    assert _apart(src, "loss1.backward(retain_graph=True)", "loss2.backward()") is expected


@pytest.mark.parametrize("guard, expected", [("if True:", True), ("if flag:", False)])
def test_apart_counts_only_a_rebinding_on_every_path(guard, expected):
    body = "out = model_a(x)[0]" if guard == "if True:" else guard + "\n            out = model_a(x)[0]"
    src = f"""
import torch
def train(model_a, model_b, loader, criterion_a, criterion_b, log, flag):
    for x, y in loader:
        out = model_a(x)[1]
        loss1 = criterion_a(out, model_b(x).detach())
        loss1.backward(retain_graph=True)
        {body}
        loss2 = criterion_b(model_a(x)[0], y)
        loss2.backward()
        log(out, y)
"""
    assert _apart(src, "loss1.backward(retain_graph=True)", "loss2.backward()") is expected
