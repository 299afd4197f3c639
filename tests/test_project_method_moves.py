"""MEM701: a model on the CPU stays there through a project method whose
code provably moves nothing (psa's ``param_groups = model.
get_parameter_groups()`` between building the model and loading into it,
project/method_moves.py); a method that may move it, or one the project
does not define, still ends "on the CPU"."""

from __future__ import annotations

import ast
import textwrap

from project_helpers import finding_lines, write_project

from memlint.project.method_moves import called_methods, method_moves

_NET = """
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3)
            self.head = nn.Conv2d(8, 2, 1)

        def get_parameter_groups(self):
            groups = ([], [])
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    groups[0].append(m.weight)
                    if m.bias is not None:
                        groups[1].append(m.bias)
            return groups
"""

_TRAIN = """
    import importlib
    import torch

    def main(args):
        model = getattr(importlib.import_module(args.network), "Net")()
        param_groups = model.get_parameter_groups()
        optimizer = torch.optim.SGD([{"params": param_groups[0]}, {"params": param_groups[1]}], lr=0.1)
        weights_dict = torch.load(args.weights)
        model.load_state_dict(weights_dict, strict=False)
        model = torch.nn.DataParallel(model).cuda()
"""

_LOAD_LINE = 9


def _methods(source: str) -> tuple[list[str], list[str]]:
    return method_moves(ast.parse(textwrap.dedent(source)))


def test_a_method_reading_its_parameters_moves_nothing():
    assert _methods(_NET) == (["get_parameter_groups"], ["__init__"])


def test_moves_and_hand_overs_make_a_method_moving():
    moving = """
        class Net(nn.Module):
            def to_gpu(self):
                self.cuda()
            def place(self, device):
                place_model(self, device)
            def place_part(self):
                helper(self.head)
            def place_modules(self):
                for m in self.modules():
                    init(m)
            def set_head(self, head):
                self.head = head
            def inherited(self):
                self.setup_everything()
            def part_method(self):
                self.backbone.prepare_all()
            def calls_moving(self):
                self.to_gpu()
            def alias(self):
                me = self
                return place_model(me)
            @on_device
            def wrapped(self):
                return 1
    """
    still, found = _methods(moving)
    assert still == []
    assert set(found) == {
        "to_gpu",
        "place",
        "place_part",
        "place_modules",
        "set_head",
        "inherited",
        "part_method",
        "calls_moving",
        "alias",
        "wrapped",
    }


def test_a_method_under_no_grad_moves_nothing():
    source = """
        class Net(nn.Module):
            @torch.no_grad()
            def parameter_count(self):
                return len(list(self.parameters()))
    """
    assert _methods(source) == (["parameter_count"], [])


def test_called_methods_leave_out_module_methods_that_stay():
    tree = ast.parse("import torch\nmodel.eval()\nmodel.get_parameter_groups()\nmodel.cuda()\ntorch.load(p)\n")
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert called_methods(calls, {"torch"}) == ["get_parameter_groups"]


def test_a_still_project_method_keeps_the_model_on_the_cpu(tmp_path):
    write_project(tmp_path, {"network/resnet_cls.py": _NET, "network/__init__.py": "", "train_cls.py": _TRAIN})
    assert finding_lines(tmp_path / "train_cls.py", "MEM701") == []


def test_a_moving_definition_elsewhere_keeps_it_loud(tmp_path):
    other = _NET.replace("class Net", "class Other").replace(
        "            return groups", "            self.cuda()\n            return groups"
    )
    write_project(
        tmp_path,
        {"network/resnet_cls.py": _NET, "network/vgg_cls.py": other, "network/__init__.py": "", "train_cls.py": _TRAIN},
    )
    assert finding_lines(tmp_path / "train_cls.py", "MEM701") == [_LOAD_LINE]


def test_a_method_the_project_does_not_define_keeps_it_loud(tmp_path):
    train = _TRAIN.replace("get_parameter_groups", "parameter_groups_of_unknown_code")
    write_project(tmp_path, {"network/resnet_cls.py": _NET, "network/__init__.py": "", "train_cls.py": train})
    assert finding_lines(tmp_path / "train_cls.py", "MEM701") == [_LOAD_LINE]


def test_a_library_model_keeps_it_loud(tmp_path):
    train = _TRAIN.replace(
        'getattr(importlib.import_module(args.network), "Net")()', "torchvision.models.resnet50()"
    ).replace("import importlib", "import torchvision")
    write_project(tmp_path, {"network/resnet_cls.py": _NET, "network/__init__.py": "", "train_cls.py": train})
    assert finding_lines(tmp_path / "train_cls.py", "MEM701") == [_LOAD_LINE]
