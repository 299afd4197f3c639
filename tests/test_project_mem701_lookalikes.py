"""MEM701 on look-alikes whose model's device is not known or is the CPU,
read with the project: a helper no module calls (analysis/training/
uncalled_params.py), a model held by a plain class of another module
(analysis/training/state_loads.py)."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

_HELPER = """\
import torch


def init_net(net, net_file):
    net.load_state_dict(torch.load(net_file))


def load_into(model, path):
    model.load_state_dict(torch.load(path)["model"])
"""


def test_a_helper_no_module_calls_stays_silent(tmp_path):
    write_project(tmp_path, {"utils.py": _HELPER, "train.py": "import utils\n"})
    assert finding_lines(tmp_path / "utils.py", "MEM701") == []


def test_a_helper_called_with_a_model_on_a_gpu_is_reported(tmp_path):
    caller = """\
    import torch.nn as nn
    from utils import init_net

    net = nn.Linear(2, 2).cuda()
    init_net(net, "a.pth")
    """
    write_project(tmp_path, {"utils.py": _HELPER, "train.py": caller})
    assert finding_lines(tmp_path / "utils.py", "MEM701") == [5]


def test_a_helper_called_in_its_own_module_or_passed_around_is_reported(tmp_path):
    own = (
        _HELPER
        + "\n\nimport torch.nn as nn\nnet = nn.Linear(2, 2).cuda()\ninit_net(net, 'a.pth')\nhooks = [load_into]\n"
    )
    write_project(tmp_path, {"utils.py": own})
    assert finding_lines(tmp_path / "utils.py", "MEM701") == [5, 9]


def test_a_model_held_by_a_plain_class_of_another_module_stays_on_the_cpu(tmp_path):
    files = {
        "models.py": """\
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)
        """,
        "evaluate.py": """\
        class Evaluator(object):
            def __init__(self, model):
                self.model = model

            def evaluate(self, loader):
                return [self.model(x) for x in loader]
        """,
        "main.py": """\
        import torch
        from evaluate import Evaluator
        from models import Net


        def train(path, loader, device):
            model = Net()
            evaluator = Evaluator(model=model)
            model.load_state_dict(torch.load(path)["model"])
            model.to(device)
            evaluator.evaluate(loader)


        def used_first(path, loader, device):
            model = Net()
            evaluator = Evaluator(model=model)
            evaluator.evaluate(loader)
            model.load_state_dict(torch.load(path)["model"])
            model.to(device)
        """,
    }
    write_project(tmp_path, files)
    assert finding_lines(tmp_path / "main.py", "MEM701") == [18]
