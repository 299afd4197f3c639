"""analysis/training/containers.py: names that hold a dict or list of tensors, not a tensor."""

import libcst as cst
import pytest
from analysis_helpers import facts_of, find

from memlint.analysis.training.containers import holds_entries

SRC = """
import torch
def train(loader, module, model):
    for i, batch in enumerate(loader):
        output = module.training_step(batch, i)
        output["loss"].backward()
        logs = dict(loss=1.0)
        parts = [model(batch)]
        stats = compute(batch)
        stats.update(extra)
        out = model(batch)
        out.sum().backward()
        pred = out[0]
        pair = model(batch)
        pair[0].backward()
        keep(output, logs, parts, stats, out, pred, pair)
"""


@pytest.mark.parametrize(
    "name, expected",
    [
        ("output", True),
        ("logs", True),
        ("parts", True),
        ("stats", True),
        ("out", False),
        ("pred", False),
        ("pair", True),
    ],
)
def test_holds_entries(name, expected):
    facts = facts_of(SRC)
    call = find(facts.module, "keep(output, logs, parts, stats, out, pred, pair)", cst.Call)
    arg = next(a.value for a in call.args if facts.module.code_for_node(a.value) == name)
    scope = facts.loops.scope_of(call)
    assert holds_entries(arg, scope, facts.bindings) is expected
