"""training/freed_steps: a time step of one batch whose backward frees the stored value's graph."""

import libcst as cst
import pytest
from analysis_helpers import facts_of

from memlint.analysis.training.freed_steps import counts_positions, freed_in_step

CRITIC = """
import torch as th
def train_critic(critic, opt, batch, rewards, actions, bs):
    q_vals = th.zeros(bs, rewards.size(1), 4)
    for t in reversed(range(rewards.size(1))):
        q_t = critic(batch, t)
        q_vals[:, t] = q_t.view(bs, 4)
        q_taken = th.gather(q_t, dim=1, index=actions[:, t]).squeeze(1)
        loss = ((q_taken - rewards[:, t]) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return q_vals
"""


def _freed(src: str) -> bool:
    facts = facts_of(src)
    fn = facts.module.body[1]
    loop = fn.body.body[1]
    store = loop.body.body[1].body[0]
    assert isinstance(loop, cst.For) and isinstance(store, cst.Assign)
    return freed_in_step(store, store.value, loop, fn, facts.bindings, facts.calls, facts.objects.is_model_call)


def test_the_backward_of_the_same_step_frees_the_stored_graph():
    assert _freed(CRITIC)


@pytest.mark.parametrize(
    "change",
    [
        ("reversed(range(rewards.size(1)))", "reversed(range(len(loader)))"),  # may count batches
        ("loss.backward()", "loss.backward(retain_graph=True)"),
        ("q_taken = th.gather(q_t,", "q_taken = th.gather(critic(batch, t + 1),"),  # another forward's graph
        ("        opt.zero_grad()\n", "        if t > 3:\n            continue\n"),  # may skip the backward
        ("q_t.view(bs, 4)", "q_t.view(bs, 4) * rewards[:, t]"),  # a product whose backward saves q_t
    ],
)
def test_a_graph_the_step_may_not_free_is_not_taken_as_freed(change):
    src = CRITIC.replace(*change)
    assert src != CRITIC
    assert not _freed(src)


def test_counts_positions_of_a_tensor_only():
    def counts(text: str) -> bool:
        return counts_positions(cst.parse_expression(text))

    assert counts("range(x.size(1))") and counts("reversed(range(1, x.shape[0] - 1))")
    assert not counts("range(n)") and not counts("range(len(loader))") and not counts("range(f(x.size(0)))")
