"""MEM701 across modules: a plain class whose construction moves nothing,
though another method of it does (a trainer's ``cuda()``), called on a fresh
instance to load weights before that method runs; a project's copy of
DataParallel moving its module only under one device id; a weight-loading
method called between, which copies into the parameters where they are
(the seventeenth batch's CornerNet: project/cpu_construction.py,
project/single_device_moves.py, cpu_receivers.py, method_moves.py)."""

from __future__ import annotations

import ast
import textwrap

from project_helpers import finding_lines, write_project

from memlint.project.class_moves import class_moves_to_a_device
from memlint.project.cpu_construction import built_on_cpu
from memlint.project.cpu_receivers import cpu_only_users
from memlint.project.method_moves import method_moves
from memlint.project.summary import summarise_text

_PARALLEL = """
    import torch
    import torch.nn as nn

    class Parallel(nn.Module):
        def __init__(self, module, device_ids=None):
            super().__init__()
            self.module = module
            self.device_ids = device_ids or list(range(torch.cuda.device_count()))
            if len(self.device_ids) == 1:
                self.module.cuda(self.device_ids[0])

        def forward(self, x):
            return self.module(x)
"""

_FACTORY = """
    import torch
    import torch.nn as nn
    from parallel import Parallel

    class Factory(object):
        def __init__(self):
            self.model = nn.Linear(2, 2)
            self.net = Parallel(self.model)

        def cuda(self):
            self.model.cuda()

        def step(self, x):
            return self.net(x.cuda())

        def load_pretrained(self, path):
            with open(path, "rb") as f:
                self.model.load_state_dict(torch.load(f))

        def load_params(self, path):
            with open(path, "rb") as f:
                params = torch.load(f)
                self.model.load_state_dict(params)
"""

_TRAIN = """
    from factory import Factory

    def main(pretrained, snapshot):
        nnet = Factory()
        if pretrained is not None:
            nnet.load_pretrained(pretrained)
        if snapshot:
            nnet.load_params(snapshot)
        nnet.cuda()
"""

_TEST = """
    from factory import Factory

    def main(snapshot):
        nnet = Factory()
        nnet.load_params(snapshot)
        nnet.cuda()
"""


def _class(source: str) -> ast.ClassDef:
    tree = ast.parse(textwrap.dedent(source))
    return next(n for n in tree.body if isinstance(n, ast.ClassDef))


def _nodes(node: ast.AST) -> list[ast.AST]:
    return list(ast.walk(node))


def test_a_move_under_one_device_id_is_read_as_dataparallel():
    assert not class_moves_to_a_device(_class(_PARALLEL), {"torch": "torch", "nn": "torch.nn"})
    always = _PARALLEL.replace("if len(self.device_ids) == 1:", "if self.device_ids:")
    several = _PARALLEL.replace("== 1", "> 1")
    assert class_moves_to_a_device(_class(always), {"torch": "torch"})
    assert class_moves_to_a_device(_class(several), {"torch": "torch"})


def test_construction_alone_is_judged():
    factory = _class(_FACTORY)
    assert class_moves_to_a_device(factory, {"torch": "torch", "nn": "torch.nn"})
    assert built_on_cpu(factory, {"torch": "torch", "nn": "torch.nn"}, _nodes)
    # A move in ``__init__``, or in a method ``__init__`` calls on ``self``, is part of it.
    moving = _FACTORY.replace(
        "self.net = Parallel(self.model)", "self.setup()\n        def setup(self):\n            self.cuda()"
    )
    assert not built_on_cpu(_class(moving), {"torch": "torch", "nn": "torch.nn"}, _nodes)


def test_the_summary_lists_plain_classes_built_on_the_cpu():
    summary = summarise_text(textwrap.dedent(_FACTORY), always=True)
    assert summary is not None and summary.cpu_built == ["Factory"] and "Factory" not in summary.cpu_classes
    module = _FACTORY.replace("class Factory(object):", "class Factory(nn.Module):")
    summary = summarise_text(textwrap.dedent(module), always=True)
    assert summary is not None and summary.cpu_built == []


def test_a_load_in_place_leaves_the_method_still():
    still, moving = method_moves(ast.parse(textwrap.dedent(_FACTORY)))
    assert {"load_params", "load_pretrained"} <= set(still) and "cuda" in moving
    assigned = _FACTORY.replace("load_state_dict(params)", "load_state_dict(params, assign=True)")
    still, moving = method_moves(ast.parse(textwrap.dedent(assigned)))
    assert "load_params" in moving


def test_the_loading_methods_of_a_fresh_instance_moved_after(tmp_path):
    """Before, ``Factory`` was no CPU class (its ``cuda()`` and ``step``
    move, and ``Parallel`` moves under one device id), and ``load_params``
    in train.py follows ``load_pretrained``: both loads were reported."""
    write_project(tmp_path, {"parallel.py": _PARALLEL, "factory.py": _FACTORY, "train.py": _TRAIN, "test.py": _TEST})
    assert finding_lines(tmp_path / "factory.py", "MEM701") == []
    summary = summarise_text((tmp_path / "train.py").read_text(), always=True)
    assert summary is not None and "load_params=factory.Factory|load_pretrained" in summary.loading_cpu_uses


def test_a_construction_or_a_call_between_that_moves_keeps_the_findings(tmp_path):
    moving = _FACTORY.replace("self.net = Parallel(self.model)", "self.net = Parallel(self.model.cuda())")
    write_project(tmp_path / "a", {"parallel.py": _PARALLEL, "factory.py": moving, "train.py": _TRAIN})
    assert finding_lines(tmp_path / "a" / "factory.py", "MEM701") == [19, 23]
    # ``nnet.cuda()`` between the construction and the load (``load_pretrained``: called nowhere).
    early = _TEST.replace("nnet = Factory()\n", "nnet = Factory()\n        nnet.cuda()\n")
    write_project(tmp_path / "b", {"parallel.py": _PARALLEL, "factory.py": _FACTORY, "test.py": early})
    assert finding_lines(tmp_path / "b" / "factory.py", "MEM701") == [19, 23]


def test_cpu_only_users_asks_the_methods_between():
    users = lambda name: [("train.py", [f"{name}=f.Factory|load_pretrained"])]  # noqa: E731
    cpu = lambda spelled, other: spelled == "f.Factory"  # noqa: E731
    own = lambda spelled, other, name: False  # noqa: E731
    assert cpu_only_users(["load_params"], users, cpu, own, lambda m: m == "load_pretrained") == ["load_params"]
    assert cpu_only_users(["load_params"], users, cpu, own, lambda m: False) == []
    assert cpu_only_users(["load_params"], users, cpu, own) == []
