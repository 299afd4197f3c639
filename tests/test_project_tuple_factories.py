"""project/tuple_factories.py: a project factory returning a tuple of typed
objects, read element by element (SFSegNets' ``optim, scheduler =
optimizer.get_optimizer(args, net)``): the unpacked scheduler is a library
one, so MEM802 reads its ``step()`` before the callee that steps the
optimizer; an element some return leaves untyped stays unknown."""

from __future__ import annotations

import ast
import textwrap

from project_helpers import finding_lines, write_project

from memlint.project.summary import summarise_text
from memlint.project.tuple_factories import element_types, split_element

_FACTORY = """\
    from torch import optim
    class Warmup:
        def __init__(self, optimizer):
            self.optimizer = optimizer
        def step(self):
            for group in self.optimizer.param_groups:
                group["lr"] = 0.1
    def get_optimizer(args, net):
        optimizer = optim.SGD(net.parameters(), lr=args.lr)
        if args.poly:
            scheduler = optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lambda e: 0.9**e)
        else:
            scheduler = optim.lr_scheduler.StepLR(optimizer, 10)
        return optimizer, scheduler
    def get_warmup(args, net):
        optimizer = optim.SGD(net.parameters(), lr=args.lr)
        return optimizer, Warmup(optimizer)
    def get_unknown(args, net):
        optimizer = optim.SGD(net.parameters(), lr=args.lr)
        if args.poly:
            return optimizer, optim.lr_scheduler.StepLR(optimizer, 10)
        return optimizer, args.scheduler
"""

_TRAIN = """\
    import torch
    import factory
    def train(loader, net, optim):
        for x, y in loader:
            optim.zero_grad()
            loss = torch.nn.functional.cross_entropy(net(x), y)
            loss.backward()
            optim.step()
    def library(args, net, loader):
        optim, scheduler = factory.get_optimizer(args, net)
        for epoch in range(args.epochs):
            scheduler.step()
            train(loader, net, optim)
    def warmup(args, net, loader):
        optim, scheduler = factory.get_warmup(args, net)
        for epoch in range(args.epochs):
            scheduler.step()
            train(loader, net, optim)
    def unknown(args, net, loader):
        optim, scheduler = factory.get_unknown(args, net)
        for epoch in range(args.epochs):
            scheduler.step()
            train(loader, net, optim)
    def after(args, net, loader):
        optim, scheduler = factory.get_optimizer(args, net)
        for epoch in range(args.epochs):
            train(loader, net, optim)
            scheduler.step()
"""


def test_the_summary_records_each_typed_element_as_a_factory():
    summary = summarise_text(textwrap.dedent(_FACTORY), always=True)
    assert summary is not None and summary.objects is not None
    returns = dict(summary.objects.returns)
    assert returns["get_optimizer#0"] == ("torch.optim.SGD",)
    assert returns["get_optimizer#1"] == ("torch.optim.lr_scheduler.LambdaLR", "torch.optim.lr_scheduler.StepLR")
    assert returns["get_warmup#1"] == (":Warmup",)
    assert "get_unknown#1" not in returns  # one return's element is a parameter's attribute
    assert returns["get_unknown#0"] == ("torch.optim.SGD",)
    assert "get_optimizer" not in returns  # the tuple itself is no typed object


def test_element_types_need_tuple_displays_of_one_length():
    def types(node):
        return (ast.unparse(node),)

    def returns(*texts):
        return [ast.parse(t, mode="eval").body for t in texts]

    assert element_types(returns("(a, b)", "(c, d)"), types) == {0: ("a", "c"), 1: ("b", "d")}
    assert element_types(returns("(a, b)", "(c, d, e)"), types) == {}
    assert element_types(returns("(a, *b)"), types) == {}
    assert element_types(returns("(a, b)", "x"), types) == {}
    assert split_element("factory.get_optimizer#1") == ("factory.get_optimizer", "#1")
    assert split_element("torch.optim.SGD") == ("torch.optim.SGD", "")


def test_mem802_reads_the_unpacked_library_scheduler_and_nothing_else(tmp_path):
    write_project(tmp_path, {"setup.py": "", "factory.py": _FACTORY, "train.py": _TRAIN})
    assert finding_lines(tmp_path / "train.py", "MEM802") == [12]
