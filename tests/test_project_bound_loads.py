"""A model's ``load_state_dict`` held in a name (analysis/training/bound_loads.py)
and a factory returning another factory's moved model (state_helpers.
returns_builder_result): SRFBN's ``SRSolver.load``, its model from
``networks.create_model`` -> ``define_net`` (``nn.DataParallel(net).cuda()``)."""

from __future__ import annotations

import textwrap

import libcst as cst
from project_helpers import finding_lines, write_project

from memlint.analysis.training.bound_loads import bound_load_receiver
from memlint.parse.traversal import visit_fast
from memlint.project.summary import summarise_text
from tests.analysis_helpers import facts_of


def _gpu_returns(text: str) -> dict[str, bool]:
    summary = summarise_text(textwrap.dedent(text), always=True)
    assert summary is not None
    return {f.name: f.gpu_return for f in summary.functions}


def test_a_factory_returning_a_moving_factorys_model_returns_it_moved():
    facts = _gpu_returns(
        """\
        import torch
        import torch.nn as nn
        def create_model(opt):
            if opt["mode"] == "sr":
                net = define_net(opt)
                return net
            raise NotImplementedError
        def define_net(opt):
            net = nn.Linear(3, 3)
            if torch.cuda.is_available():
                net = nn.DataParallel(net).cuda()
            return net
        def outer(opt):
            return create_model(opt)
        def moved_back(opt):
            net = define_net(opt)
            net.cpu()
            return net
        def other(opt):
            net = define_net(opt)
            return nn.Linear(3, 3)
        """
    )
    assert facts["define_net"] and facts["create_model"] and facts["outer"]
    assert not facts["moved_back"] and not facts["other"]


class _Calls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value.startswith("load"):
            self.found.append(node)


def _receivers(src: str) -> list[str | None]:
    facts = facts_of(src)
    calls = _Calls()
    visit_fast(facts.module, calls)
    out = []
    for call in calls.found:
        receiver = bound_load_receiver(call, facts.objects)
        out.append(None if receiver is None else cst.Module([]).code_for_node(receiver))
    return out


def test_a_name_bound_only_to_one_models_load_state_dict_loads_into_it():
    src = """
    def load(self, sd, a, b, other):
        load_func = self.model.load_state_dict if wrapped else self.model.module.load_state_dict
        load_func(sd)
        load_two = a.load_state_dict if wrapped else b.load_state_dict
        load_two(sd)
        load_any = a.load_state_dict if wrapped else other
        load_any(sd)
        load_copy = a.copy_
        load_copy(sd)
    """
    assert _receivers(src) == ["self.model", None, None, None]


def test_a_bound_load_into_a_model_another_modules_factory_moved_is_reported(tmp_path):
    write_project(
        tmp_path,
        {
            "setup.py": "",
            "networks/__init__.py": """\
                import torch
                import torch.nn as nn
                def create_model(opt):
                    net = define_net(opt)
                    return net
                def define_net(opt):
                    net = nn.Linear(3, 3)
                    if torch.cuda.is_available():
                        net = nn.DataParallel(net).cuda()
                    return net
            """,
            "solver.py": """\
                import torch
                import torch.nn as nn
                from networks import create_model
                class Solver:
                    def __init__(self, opt):
                        self.model = create_model(opt)
                    def load(self, path):
                        checkpoint = torch.load(path)
                        load_func = self.model.load_state_dict if isinstance(self.model, nn.DataParallel) \\
                            else self.model.module.load_state_dict
                        load_func(checkpoint)
            """,
        },
    )
    assert finding_lines(tmp_path / "solver.py", "MEM701") == [8]
