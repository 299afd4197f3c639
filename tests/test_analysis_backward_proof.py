"""facts.history with backward_proof: a backward call proves its operand carries history."""

import libcst as cst
import pytest
from analysis_helpers import facts_of, find

from memlint.analysis.autograd.history import H


def value(src: str, text: str, index: int = 0):
    facts = facts_of(src)
    return facts.history.value(find(facts.module, text, cst.BaseExpression, index))


LOOP = """
import torch
from helpers import compute_loss
for batch in loader:
    loss = {producer}
    before = loss
    {backward}
    after = loss
"""


@pytest.mark.parametrize(
    "producer",
    ["compute_loss(model, batch)", "model.training_step(batch)", "self.compute_loss(batch)", "crit.forward(out, y)"],
)
@pytest.mark.parametrize(
    "backward",
    [
        "loss.backward()",
        "scaler.scale(loss).backward()",
        "accelerator.backward(loss)",
        "torch.autograd.backward(loss)",
        "self.manual_backward(loss)",
    ],
)
def test_a_backward_proves_the_binding_it_reads(producer, backward):
    src = LOOP.format(producer=producer, backward=backward)
    facts = facts_of(src)
    stmt_before = find(facts.module, "before = loss", cst.Assign)
    stmt_after = find(facts.module, "after = loss", cst.Assign)
    for stmt in (stmt_before, stmt_after):
        v = facts.history.value(stmt.value)
        assert v.h is H.YES
        assert v.scalar  # no gradient argument: a single number


def test_without_a_backward_the_producer_stays_unknown():
    src = LOOP.format(producer="compute_loss(model, batch)", backward="log(loss)")
    facts = facts_of(src)
    assert facts.history.value(find(facts.module, "before = loss", cst.Assign).value).h is H.MAYBE


def test_a_gradient_argument_means_not_a_single_number():
    src = LOOP.format(producer="compute_loss(model, batch)", backward="loss.backward(torch.ones_like(loss))")
    facts = facts_of(src)
    v = facts.history.value(find(facts.module, "before = loss", cst.Assign).value)
    assert v.h is H.YES and not v.scalar


def test_tuple_unpacking_is_proven_for_the_backpropagated_name_only():
    src = """
import torch
for batch in loader:
    loss, logs = step(batch)
    keep(loss, logs)
    loss.backward()
"""
    facts = facts_of(src)
    call = find(facts.module, "keep(loss, logs)", cst.Call)
    assert facts.history.value(call.args[0].value).h is H.YES
    assert facts.history.value(call.args[1].value).h is H.MAYBE


@pytest.mark.parametrize(
    "between",
    [
        "if flag:\n        loss = other(batch)",  # a conditional rebinding
        "loss += reg",  # augmented: the backward reads another value
        "for loss in parts:\n        pass",
        "with ctx() as loss:\n        pass",
    ],
)
def test_a_binding_that_may_not_reach_the_backward_is_not_proven(between):
    src = f"""
import torch
for batch in loader:
    loss = step(batch)
    before = loss
    {between}
    loss.backward()
"""
    facts = facts_of(src)
    assert facts.history.value(find(facts.module, "before = loss", cst.Assign).value).h is H.MAYBE


def test_a_loop_rebinding_after_the_backward_blocks_the_proof_of_the_outer_binding():
    src = """
import torch
loss = step(batch)
before = loss
for i in range(3):
    loss.backward()
    loss = other()
"""
    facts = facts_of(src)
    assert facts.history.value(find(facts.module, "before = loss", cst.Assign).value).h is H.MAYBE


def test_the_backward_in_another_function_proves_nothing_here():
    src = """
import torch
def bp(loss):
    loss.backward()
def train():
    for batch in loader:
        loss = step(batch)
        before = loss
"""
    facts = facts_of(src)
    assert facts.history.value(find(facts.module, "before = loss", cst.Assign).value).h is H.MAYBE


def test_a_number_stays_a_number():
    src = """
import torch
for batch in loader:
    loss = step(batch).item()
    before = loss
    loss.backward()
"""
    facts = facts_of(src)
    assert facts.history.value(find(facts.module, "before = loss", cst.Assign).value).h is H.NO


def test_not_proven_under_no_grad():
    src = """
import torch
for batch in loader:
    with torch.no_grad():
        loss = step(batch)
        before = loss
    loss.backward()
"""
    facts = facts_of(src)
    assert facts.history.value(find(facts.module, "before = loss", cst.Assign).value).h is not H.YES


LIGHTNING = """
import pytorch_lightning as pl
class Lit(pl.LightningModule):
    {extra}
    def training_step(self, batch, batch_idx):
        loss = self.net.compute_loss(batch)
        before = loss
        return {ret}
"""


@pytest.mark.parametrize("ret", ["loss", '{"loss": loss, "log": logs}'])
def test_lightning_backpropagates_what_training_step_returns(ret):
    facts = facts_of(LIGHTNING.format(extra="pass", ret=ret))
    v = facts.history.value(find(facts.module, "before = loss", cst.Assign).value)
    assert v.h is H.YES and v.scalar


@pytest.mark.parametrize(
    "src",
    [
        LIGHTNING.format(
            extra="automatic_optimization = property(lambda self: self.automatic_optimization)", ret="loss"
        ),
        LIGHTNING.format(extra="pass", ret='{"out": loss}'),
        LIGHTNING.replace("pl.LightningModule", "Base").format(extra="pass", ret="loss"),
    ],
    ids=["manual-optimization", "not-the-loss-key", "not-lightning"],
)
def test_no_proof_without_lightnings_automatic_backward(src):
    facts = facts_of(src)
    assert facts.history.value(find(facts.module, "before = loss", cst.Assign).value).h is H.MAYBE


@pytest.mark.parametrize(
    "backward", ['loss["total"].backward()', "loss[0].backward()", 'scaler.scale(loss["total"]).backward()']
)
def test_a_backward_on_one_entry_proves_the_container_not_a_number(backward):
    src = LOOP.format(producer="compute_loss(model, batch)", backward=backward)
    facts = facts_of(src)
    for text in ("before = loss", "after = loss"):
        v = facts.history.value(find(facts.module, text, cst.Assign).value)
        assert v.h is H.YES
        assert not v.scalar  # a dict or list of losses: no `.item()`


@pytest.mark.parametrize("backward", ["loss[i].backward()", "loss[k].backward()", "self[0].backward()"])
def test_a_backward_on_an_entry_picked_at_run_time_proves_nothing_here(backward):
    src = LOOP.format(producer="compute_loss(model, batch)", backward=backward)
    facts = facts_of(src)
    assert facts.history.value(find(facts.module, "before = loss", cst.Assign).value).h is H.MAYBE


@pytest.mark.parametrize("other", ["loss.reset()", "loss.eval_batch(out, y)", "print(loss.get_loss())"])
def test_an_object_with_a_method_no_tensor_has_is_not_proven(other):
    src = f"""
import torch
def step(self, out, y):
    loss = self.loss
    before = loss
    {other}
    loss.backward()
"""
    facts = facts_of(src)
    assert facts.history.value(find(facts.module, "before = loss", cst.Assign).value).h is not H.YES


def test_tensor_methods_keep_the_proof():
    src = """
import torch
def step(self, batch):
    loss = self.compute(batch)
    before = loss
    print(loss.mean().item(), loss.detach().cpu())
    loss.backward()
"""
    facts = facts_of(src)
    assert facts.history.value(find(facts.module, "before = loss", cst.Assign).value).h is H.YES
