"""RetainedSites: does anything backpropagate again through a retained graph,
later in the iteration or after a helper that retains it returns?"""

import libcst as cst
import pytest
from analysis_helpers import facts_of, find

from memlint.analysis.autograd.retained_sites import RetainedSites


def _later(src: str, call: str) -> bool:
    facts = facts_of(src)
    node = find(facts.module, call, cst.Call)
    loops = facts.loops
    return RetainedSites(facts).later_backward(node, loops.scope_of(node), loops.loop_of(node))


LOOP = """
import torch
for x, y in loader:
    out = model(x)
    loss1 = crit(out, y)
    loss1.backward(retain_graph=True)
    {after}
"""


@pytest.mark.parametrize(
    "after, expected",
    [
        ("optimizer.step()", False),  # nothing backpropagates again
        ("crit(head(out), y).backward()", True),  # through the retained graph
        ("loss2 = crit(model(x + noise), y)\n    loss2.backward()", False),  # a fresh forward on the loop's data
    ],
)
def test_later_backward(after, expected):
    assert _later(LOOP.format(after=after), "loss1.backward(retain_graph=True)") is expected


def test_a_call_into_a_function_that_trains_is_a_later_backward():
    src = """
import torch
def train_step(m, x):
    m(x).sum().backward()
for x, y in loader:
    out = model(x)
    loss1 = crit(out, y)
    loss1.backward(retain_graph=True)
    train_step(model, x)
"""
    assert _later(src, "loss1.backward(retain_graph=True)")


def test_after_a_helper_call_every_later_backward_counts():
    # At a call site the helper's graph is not known here: even a backward on
    # a fresh forward may go through what was passed.
    src = """
import torch
def explain(model, x):
    out = model(x)
    out.sum().backward(retain_graph=True)
for x in loader:
    explain(net, x)
    net(x + 1).sum().backward()
"""
    assert _later(src, "explain(net, x)")


HELPER = """
import torch
def saliency(model, image):
    out = model(image)
    out[0, 0].backward(retain_graph=True)
    return image.grad.abs()
{caller}
"""


def _done(src: str, site: str) -> bool:
    facts = facts_of(src)
    call = find(facts.module, site, cst.Call)
    return RetainedSites(facts).done_after(call, _function(facts.module, "saliency"))


def _function(module: cst.Module, name: str) -> cst.FunctionDef:
    found = [n for n in module.body if isinstance(n, cst.FunctionDef) and n.name.value == name]
    assert found, name
    return found[0]


@pytest.mark.parametrize(
    "caller, expected",
    [
        # a path per iteration: each call gets data built anew
        ("for path in paths:\n    heat = saliency(net, load(path))\n    save(heat)", True),
        # the features passed carry history and are backpropagated afterwards
        (
            "for batch in loader:\n    feats = backbone(batch)\n    saliency(head, feats)\n    feats.sum().backward()",
            False,
        ),
        # the value passed is kept past the call
        ("img = load(p)\nsaliency(net, img)\nkeep(img)", False),
        # stored on an attribute: anything may reach it later
        ("saliency(net, self.img)", False),
    ],
)
def test_done_after(caller, expected):
    src = HELPER.format(caller=caller)
    site = [line.strip() for line in caller.splitlines() if "saliency(" in line][0]
    site = site.split("= ", 1)[-1]
    assert _done(src, site) is expected


def test_done_after_follows_values_from_the_callers_parameters():
    src = HELPER.format(
        caller="def explain(net, img):\n    return saliency(net, img)\n"
        "for path in paths:\n    save(explain(net, load(path)))"
    )
    assert _done(src, "saliency(net, img)")
    kept = src.replace("save(explain(net, load(path)))", "x = load(path)\n    save(explain(net, x))\n    keep(x)")
    assert not _done(kept, "saliency(net, img)")


def test_sites_lists_instance_calls_and_none_for_an_escaping_function():
    src = """
import torch
class CAM:
    def generate(self, image):
        out = self.model(image)
        out.sum().backward(retain_graph=True)
def run(net, img):
    cam = CAM(net)
    return cam.generate(img)
def saliency(model, image):
    return model(image)
hooks.append(saliency)
"""
    facts = facts_of(src)
    sites = RetainedSites(facts)
    generate = find(facts.module, "cam.generate(img)", cst.Call)
    method = next(n for n in facts.module.body if isinstance(n, cst.ClassDef)).body.body[0]
    assert sites.sites(method) == [generate]
    assert sites.sites(_function(facts.module, "saliency")) == []  # escapes: handed to a list


def test_may_hold_graph():
    src = """
import torch
def f(model, x):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    out = backbone(x)
    optimizer.step()
    return out, self.cache
"""
    facts = facts_of(src)
    fn = _function(facts.module, "f")
    sites = RetainedSites(facts)
    assert sites.may_hold_graph("out", fn)
    assert not sites.may_hold_graph("optimizer", fn)  # an optimizer, not a tensor
    assert not sites.may_hold_graph("backbone", fn)  # only ever called
    assert sites.may_hold_graph("self.cache", fn)  # an attribute: unknown, so it may


def test_helper_result():
    src = HELPER.format(caller="for path in paths:\n    heat = saliency(net, load(path))\n    save(heat)")
    facts = facts_of(src)
    fn = _function(facts.module, "saliency")
    sites = RetainedSites(facts)
    assert sites.helper_result("heat", facts.module, fn)
    returns_graph = src.replace("return image.grad.abs()", "return out")
    facts = facts_of(returns_graph)
    assert not RetainedSites(facts).helper_result("heat", facts.module, _function(facts.module, "saliency"))


def test_graph_built_in():
    facts = facts_of(LOOP.format(after="pass"))
    call = find(facts.module, "loss1.backward(retain_graph=True)", cst.Call)
    assert RetainedSites(facts).graph_built_in(call, facts.loops.loop_of(call))
    outside = """
import torch
x = torch.randn(3, requires_grad=True)
y = model(x)
for i in range(3):
    y[i].backward(retain_graph=True)
"""
    facts = facts_of(outside)
    call = find(facts.module, "y[i].backward(retain_graph=True)", cst.Call)
    assert not RetainedSites(facts).graph_built_in(call, facts.loops.loop_of(call))
