"""A load into a parameter of a function nothing in the project calls
(analysis/training/uncalled_loads.py): ban-vqa's ``init_net``, NVAE's
``load``, Relation-Shape's ``load_checkpoint``. The model's device is not
known, so the load stays silent; a caller, a move in the helper, or no
project at all keep it reported."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

from memlint.lint.engine import lint_text
from memlint.rule.registry import all_rules

UTILS = """\
import torch
def load(model, model_path):
    model.load_state_dict(torch.load(model_path))
def load_checkpoint(model=None, optimizer=None, filename="checkpoint"):
    checkpoint = torch.load(filename)
    if model is not None:
        model.load_state_dict(checkpoint["model_state"])
    if optimizer is not None:
        optimizer.load_state_dict(checkpoint["optimizer_state"])
    return checkpoint["epoch"]
def resume(model, path):
    model.cuda()
    model.load_state_dict(torch.load(path))
"""

TRAIN = """\
import torch
import torch.nn as nn
import utils
model = nn.Linear(3, 3).cuda()
torch.save(model.state_dict(), "m.pth")
"""


def test_a_load_into_a_parameter_of_an_uncalled_helper_is_silent(tmp_path):
    write_project(tmp_path, {"utils.py": UTILS, "train.py": TRAIN})
    # ``resume`` moves its model before the load: reported, caller or not.
    assert finding_lines(tmp_path / "utils.py", "MEM701") == [13]


def test_a_caller_in_another_module_keeps_the_helper_judged(tmp_path):
    write_project(tmp_path, {"utils.py": UTILS, "train.py": TRAIN + "utils.load(model, 'm.pth')\n"})
    assert finding_lines(tmp_path / "utils.py", "MEM701") == [3, 13]


def test_a_caller_in_the_same_module_or_a_use_as_a_value_keeps_it_judged(tmp_path):
    write_project(tmp_path, {"utils.py": UTILS + "HOOKS = [load_checkpoint]\n", "train.py": TRAIN})
    assert finding_lines(tmp_path / "utils.py", "MEM701") == [5, 13]


def test_without_a_project_the_helper_is_reported():
    found = lint_text(UTILS, "utils.py", all_rules())
    assert sorted(f.line for f in found if f.code == "MEM701") == [3, 5, 13]


def test_a_method_is_judged_as_before(tmp_path):
    net = (
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(3, 3)\n        self.cuda()\n"
        "    def restore(self, path):\n        self.load_state_dict(torch.load(path))\n"
    )
    write_project(tmp_path, {"net.py": net, "train.py": TRAIN})
    assert finding_lines(tmp_path / "net.py", "MEM701") == [9]
