"""A loss module whose ``forward`` returns ``loss, wd, obj`` with ``wd``
started at 0 and augmented only by ``.item()`` numbers (DM-Count's
``OT_Loss``, in another module): the caller's ``wd`` keeps no graph
(project/tuple_returns.py reads the augmented name as fresh, and the
summary carries it to the caller's module). The other elements still carry
the loss's history."""

from __future__ import annotations

import ast
import textwrap

from project_helpers import finding_lines, write_project

from memlint.project.tuple_returns import forward_items

_LOSS = """
    import torch
    from torch.nn import Module
    class OT_Loss(Module):
        def __init__(self, device):
            super().__init__()
            self.device = device
        def forward(self, normed, unnormed, points):
            loss = torch.zeros([1]).to(self.device)
            wd = 0
            for idx, p in enumerate(points):
                dis = normed[idx] - p
                loss += torch.sum(unnormed[idx] * dis)
                wd += torch.sum(dis).item()
            return loss, wd, loss * 2
"""

_TRAIN = """
    import torch
    from ot_loss import OT_Loss
    class Trainer:
        def setup(self, model, device):
            self.model = model
            self.ot_loss = OT_Loss(device)
            self.optimizer = torch.optim.Adam(model.parameters())
        def train_epoch(self, loader):
            kept = []
            for inputs, points in loader:
                outputs, normed = self.model(inputs)
                ot_loss, wd, ot_obj = self.ot_loss(normed, outputs, points)
                kept.append(wd)
                self.optimizer.zero_grad()
                ot_loss.backward()
                self.optimizer.step()
            return kept
"""


def _items(source: str) -> dict[str, list[int]]:
    return forward_items(ast.parse(textwrap.dedent(source)), {"torch": "torch"})


def test_a_name_augmented_only_by_numbers_is_fresh():
    assert _items(_LOSS) == {"OT_Loss": [3, 1]}
    line = "                wd += torch.sum(dis).item()\n"
    for other in (
        "                wd += torch.sum(dis)\n",  # a tensor with history
        "                wd @= dis.item()\n",  # not arithmetic on numbers
    ):
        assert _items(_LOSS.replace(line, other)) == {}, other
    assert _items(_LOSS.replace("            wd = 0\n", "            wd = loss\n")) == {}


def test_the_fresh_element_of_a_loss_module_in_another_module_keeps_no_graph(tmp_path):
    write_project(tmp_path, {"setup.py": "", "ot_loss.py": _LOSS, "train.py": _TRAIN})
    assert finding_lines(tmp_path / "train.py", "MEM102") == []


def test_an_element_with_the_loss_s_history_stays_reported(tmp_path):
    train = _TRAIN.replace("kept.append(wd)", "kept.append(ot_obj)")
    write_project(tmp_path, {"setup.py": "", "ot_loss.py": _LOSS, "train.py": train})
    assert finding_lines(tmp_path / "train.py", "MEM102") == [14]
