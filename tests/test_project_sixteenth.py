"""MEM701 look-alikes of the sixteenth batch across modules: a class of
another module whose only moves are to the CPU or of tensors (project/
class_moves.py, read by the project summary)."""

from __future__ import annotations

import ast
import textwrap

import pytest
from project_helpers import finding_lines, write_project

from memlint.project.class_moves import class_moves_to_a_device

BINDINGS = {"torch": "torch", "nn": "torch.nn"}


def _moves(source: str) -> bool:
    tree = ast.parse(textwrap.dedent(source))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    return class_moves_to_a_device(cls, BINDINGS)


@pytest.mark.parametrize(
    "line, moves",
    [
        ('self.smpl = nn.Linear(2, 2).to("cpu")', False),
        ("self.smpl = nn.Linear(2, 2).to(device='cpu')", False),
        ('self.smpl = nn.Linear(2, 2).to(torch.device("cpu"))', False),
        ('self.smpl = nn.Linear(2, 2).to("cuda")', True),
        ("self.smpl = nn.Linear(2, 2).to(self.device)", True),
        ('self.smpl = nn.Linear(2, 2).to("cpu", non_blocking=True)', True),  # not judged: counts
    ],
)
def test_a_move_to_the_cpu_is_no_move_to_a_device(line, moves):
    source = f"""\
    class HMR(nn.Module):
        def __init__(self):
            super().__init__()
            {line}
    """
    assert _moves(source) is moves


@pytest.mark.parametrize(
    "expr, moves",
    [
        ("J[None, :].expand(x.shape[0], -1, -1).to(x.device)", False),
        ("J.view(-1).cuda()", False),
        ("self.fc.weight.unsqueeze(0).to(x.device)", False),
        ("J.to(x.device)", False),  # an input of ``forward``, kept nowhere: a copy (forward_copies.py)
        ("self.fc.float().to(x.device)", True),  # ``Module.float`` returns the module
        ("J[0].to(x.device)", False),  # an item of an input, kept nowhere: a copy
    ],
)
def test_a_move_of_a_tensor_only_methods_result_moves_a_copy(expr, moves):
    source = f"""\
    class Regressor(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def forward(self, x, J=None):
            out = torch.matmul({expr}, self.fc(x))
            return out
    """
    assert _moves(source) is moves


def test_a_kept_copy_of_a_tensor_only_result_still_counts():
    source = """\
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def setup(self, J, d):
            self.register_buffer("J", J.view(-1).to(d))
    """
    assert _moves(source) is True


MODELS = """\
import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.head = nn.Linear(4, 4).to("cpu")

    def forward(self, x, J=None):
        out = self.fc(x)
        if J is not None:
            out = torch.matmul(J[None, :].expand(x.shape[0], -1, -1).to(x.device), out)
        return out
"""

MAIN = """\
import torch
import torch.nn as nn
from models import Regressor


class VIBE(nn.Module):
    def __init__(self, pretrained):
        super().__init__()
        self.regressor = Regressor()
        self.regressor.load_state_dict(torch.load(pretrained)["model"])


def main(pretrained, device):
    model = Regressor()
    model.load_state_dict(torch.load(pretrained)["model"])
    return model.to(device)
"""


def test_mem701_silent_on_a_class_of_another_module_moving_only_copies_or_to_the_cpu(tmp_path):
    # VIBE's vibe.py:96/154 and 147 (Regressor, HMR in lib/models/spin.py).
    write_project(tmp_path, {"models.py": MODELS, "main.py": MAIN})
    assert finding_lines(tmp_path / "main.py", "MEM701") == []


def test_mem701_still_reports_a_class_of_another_module_moving_to_a_device(tmp_path):
    write_project(tmp_path, {"models.py": MODELS.replace('.to("cpu")', '.to("cuda")'), "main.py": MAIN})
    assert finding_lines(tmp_path / "main.py", "MEM701") == [15]
