"""analysis/training/target_passes.py: a helper whose result the training
loop feeds to its loss, before the iteration's backward (self-label's
pseudo-labels), makes training targets; one whose result is printed, or
that runs after the backward, does not."""

from __future__ import annotations

import pytest
from analysis_helpers import facts_of

from memlint.analysis.training.target_passes import makes_training_targets

HELPER = """
import torch
import torch.nn as nn
model = nn.Linear(4, 4)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
def labels_of(model, loader):
    return torch.cat([model(x).argmax(1) for x, _ in loader])
def train(loader):
    for i, (x, index) in enumerate(loader):
{body}
"""

FEEDS = """\
        with torch.no_grad():
            targets = labels_of(model, loader)
        loss = criterion(model(x), targets[index])
        loss.backward()
        optimizer.step()
"""


def _helper(body: str, tail: str = "") -> bool:
    facts = facts_of(HELPER.format(body=body) + tail)
    fn = next(f for f in facts.calls.functions if f.name.value == "labels_of")
    return makes_training_targets(fn, facts.calls, facts.loops, facts.objects, facts.project)


def test_a_result_fed_to_the_loss_before_the_backward_makes_targets():
    assert _helper(FEEDS)


@pytest.mark.parametrize(
    "body, tail",
    [
        # a metric: printed, never a loss's input
        (FEEDS.replace("targets[index]", "index").replace("targets = labels_of", "acc = labels_of"), ""),
        # after the backward: the next iteration's loss may read it, not this one's
        (
            "        loss = criterion(model(x), index)\n        loss.backward()\n"
            "        targets = labels_of(model, loader)\n        print(criterion(model(x), targets))\n",
            "",
        ),
        # another call whose result is only printed
        (FEEDS, "print(labels_of(model, []))\n"),
        # handed around as a value: callers not seen
        (FEEDS, "HOOKS = [labels_of]\n"),
    ],
)
def test_other_uses_are_not_targets(body, tail):
    assert not _helper(body, tail)
