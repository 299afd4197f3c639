"""facts.bindings: what was assigned to a name, by spelling."""

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from memlint.analysis.facts import ModuleFacts
from memlint.analysis.scope.bindings import parameters_owners, unwrap_pass_through


def facts_of(src: str) -> ModuleFacts:
    return ModuleFacts(MetadataWrapper(cst.parse_module(textwrap.dedent(src)), unsafe_skip_copy=True))


SRC = """
import torch
from torch.optim.lr_scheduler import StepLR, ReduceLROnPlateau
scheduler = StepLR(opt, 10)

def plateau():
    scheduler = ReduceLROnPlateau(opt)
    scheduler.step(loss)

def uses_module_level():
    scheduler.step()

class Trainer:
    def __init__(self):
        self.scheduler = None
        self.scheduler = torch.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=10)

a, b = make()
"""


def test_the_function_asking_wins_then_module_level():
    facts = facts_of(SRC)
    fns = {fn.name.value: fn for fn in facts.calls.functions}
    b = facts.bindings
    assert b.constructors("scheduler", fns["plateau"]) == {"torch.optim.lr_scheduler.ReduceLROnPlateau"}
    assert b.constructors("scheduler", fns["uses_module_level"]) == {"torch.optim.lr_scheduler.StepLR"}
    assert b.binds_in("scheduler", fns["plateau"]) and not b.binds_in("scheduler", fns["uses_module_level"])


def test_none_is_ignored_and_unknowns_make_it_unknown():
    b = facts_of(SRC).bindings
    assert b.constructors("self.scheduler") == {"torch.optim.lr_scheduler.OneCycleLR"}
    assert b.values("a") == [None] and b.constructors("a") is None
    assert b.constructors("missing") is None


def test_helpers():
    call = cst.parse_expression("Net().cuda().half()")
    inner = unwrap_pass_through(call)
    assert cst.Module([]).code_for_node(inner) == "Net()"
    opt = cst.parse_expression("optim.Adam(list(model.parameters()) + list(head.named_parameters()), lr=1)")
    assert [cst.Module([]).code_for_node(o) for o in parameters_owners(opt)] == ["model", "head"]
