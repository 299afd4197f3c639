"""analysis/scope/namespace_attrs.py: ``ns.attr`` read in a function that
takes ``ns`` as a parameter, typed by what the module's other scopes store
under that spelling (ShuffleNet-Series' ``args.scheduler = scheduler``)."""

from __future__ import annotations

from test_analysis_objects import kind_at

from memlint.vocabulary.kinds import Kind

_READER = """
import torch

def run(model, ns):
    held = ns.a
    held.step()
"""


def test_an_attribute_the_caller_fills_with_an_optimizer_is_one():
    src = (
        _READER
        + """
def main(model, ns):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ns.a = opt
    run(model, ns)
"""
    )
    assert kind_at(src, "ns.a") is Kind.OPTIMIZER


def test_a_scheduler_stored_directly_is_one():
    src = (
        _READER
        + """
def main(model, ns, opt):
    ns.a = torch.optim.lr_scheduler.StepLR(opt, 10)
    run(model, ns)
"""
    )
    assert kind_at(src, "ns.a") is Kind.SCHEDULER


def test_stores_of_two_kinds_leave_it_unknown():
    src = (
        _READER
        + """
def main(model, ns, opt):
    ns.a = torch.optim.lr_scheduler.StepLR(opt, 10)
    run(model, ns)

def other(model, ns):
    ns.a = torch.optim.SGD(model.parameters(), lr=0.1)
    run(model, ns)
"""
    )
    assert kind_at(src, "ns.a") is None


def test_a_store_in_the_reader_itself_or_none_at_all_is_unknown():
    assert kind_at(_READER, "ns.a") is None
    src = """
import torch

def run(model, ns):
    held = ns.a
    ns.a = torch.optim.SGD(model.parameters(), lr=0.1)
    held.step()

def main(model, ns):
    ns.a = torch.optim.SGD(model.parameters(), lr=0.1)
    run(model, ns)
"""
    assert kind_at(src, "ns.a") is None


def test_self_attributes_are_not_namespaces():
    src = """
import torch

class T:
    def run(self):
        held = self.a
        held.step()

def main(t, model):
    t.a = torch.optim.SGD(model.parameters(), lr=0.1)
"""
    # ``self.a`` of a class that never sets it: not read from ``t.a``
    assert kind_at(src, "self.a") is not Kind.OPTIMIZER
