"""A loss class of another module returning ``loss, prec`` with ``prec``
computed from values without history (ECAPA-TDNN's ``AAMsoftmax``:
``prec1 = accuracy(output.detach(), label.detach(), topk=(1,))[0]``), called
as ``self.speaker_loss.forward(...)``: the element keeps no graph
(project/tuple_returns.py, objects.tuple_items), and ``top1 += prec`` is no
MEM101."""

from __future__ import annotations

import ast
import textwrap

import pytest
from project_helpers import finding_lines, write_project

from memlint.project.tuple_returns import forward_items

_LOSS = """
    import torch.nn as nn
    from tools import *
    class AAM(nn.Module):
        def __init__(self):
            super().__init__()
            self.ce = nn.CrossEntropyLoss()
            self.fc = nn.Linear(4, 4)
        def forward(self, x, label):
            output = self.fc(x)
            loss = self.ce(output, label)
            prec1 = accuracy(output.detach(), label.detach(), topk=(1,))[0]
            return loss, prec1
"""

_TRAIN = """
    import torch
    from loss import AAM
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.speaker_loss = AAM()
            self.optim = torch.optim.Adam(self.parameters())
        def train_network(self, loader):
            top1 = 0
            for x, y in loader:
                self.zero_grad()
                nloss, prec = self.speaker_loss.forward(x, y)
                nloss.backward()
                self.optim.step()
                top1 += prec
            return top1
"""

_LINE = "            prec1 = accuracy(output.detach(), label.detach(), topk=(1,))[0]\n"


def _items(source: str) -> dict[str, list[int]]:
    return forward_items(ast.parse(textwrap.dedent(source)), {"nn": "torch.nn"})


@pytest.mark.parametrize(
    "value",
    [
        "accuracy(output.detach(), label.detach(), topk=(1,))[0]",
        "(output.detach().argmax(1) == label).float().mean()",
        "(output.argmax(1) == label).sum()",
    ],
)
def test_values_without_history_are_fresh(value):
    assert _items(_LOSS.replace(_LINE, f"            prec1 = {value}\n")) == {"AAM": [2, 1]}


@pytest.mark.parametrize(
    "value",
    [
        "accuracy(output, label)[0]",  # handed a value with history
        "Head(output.detach())",  # a class: it may own parameters
        "self.fc(output.detach())",  # a model attribute's forward
        "output.detach().mul(self.fc.weight)",  # a method handed a parameter
        "output.detach().add_(loss)",  # written in place
        "accuracy(*outs)",  # unknown arguments
    ],
)
def test_values_that_may_carry_history_are_not(value):
    assert _items(_LOSS.replace(_LINE, f"            prec1 = {value}\n")) == {}


def test_a_cross_module_loss_element_keeps_no_graph(tmp_path):
    tools = "def accuracy(output, target, topk=(1,)):\n    return [output.argmax(1).eq(target).float().sum()]\n"
    write_project(tmp_path, {"setup.py": "", "tools.py": tools, "loss.py": _LOSS, "train.py": _TRAIN})
    assert finding_lines(tmp_path / "train.py", "MEM101") == []
    with_history = _LOSS.replace(_LINE, "            prec1 = accuracy(output, label)[0]\n")
    write_project(tmp_path, {"loss.py": with_history})
    assert finding_lines(tmp_path / "train.py", "MEM101") == [16]
