"""analysis/training/containers.py: names that hold a dict or list of tensors, not a tensor."""

import libcst as cst
import pytest
from analysis_helpers import facts_of, find

from memlint.analysis.training.containers import holds_entries, overwrites_one_slot

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


SLOTS = """
import torch
KEY = "d"
def outer(loader, model, key, names):
    STEP = 0
    def train(history):
        local = "g"
        for i, x in enumerate(loader):
            out = model(x)
            logs["loss"] = out
            logs[KEY] = out
            logs[local] = out
            logs["a"]["b"] = out
            logs[-1] = out
            logs[("a", 1)] = out
            logs[f"plain"] = out
            logs["p" "q"] = out
            logs[i] = out
            logs[f"{i}"] = out
            logs[key] = out
            logs[STEP] = out
            logs[x.name] = out
            logs[names[i]] = out
            logs["a"][i] = out
            logs["h"] = logs["h"] + [out]
            logs["c"] = torch.cat((logs["c"], out))
            logs[:] = [out]
            for name in names:
                logs[name] = out
    return train
"""


@pytest.mark.parametrize(
    "target, expected",
    [
        ('logs["loss"]', True),
        ("logs[KEY]", True),
        ("logs[local]", True),
        ('logs["a"]["b"]', True),
        ("logs[-1]", True),
        ('logs[("a", 1)]', True),
        ('logs[f"plain"]', True),
        ('logs["p" "q"]', True),
        ("logs[i]", False),  # a loop target
        ('logs[f"{i}"]', False),  # a formatted field
        ("logs[key]", False),  # a parameter: each call may pass another key
        ("logs[STEP]", True),  # bound once, in the enclosing function, to a literal
        ("logs[x.name]", False),
        ("logs[names[i]]", False),
        ('logs["a"][i]', False),
        ('logs["h"]', False),  # the value reads the container: the slot grows
        ('logs["c"]', False),
        ("logs[:]", False),
        ("logs[name]", False),  # an inner loop's target
    ],
)
def test_overwrites_one_slot(target, expected):
    facts = facts_of(SLOTS)
    stmt = next(a for a in _assigns(facts.module) if facts.module.code_for_node(a.targets[0].target) == target)
    scope = facts.loops.scope_of(stmt)
    found = overwrites_one_slot(stmt.targets[0].target, stmt.value, scope, facts.bindings, facts.calls.owner)
    assert found is expected


def _assigns(module: cst.Module) -> list[cst.Assign]:
    found = []

    class V(cst.CSTVisitor):
        def visit_Assign(self, node):
            found.append(node)

    module.visit(V())
    return found
