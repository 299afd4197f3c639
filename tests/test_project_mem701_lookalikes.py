"""MEM701 on a look-alike whose model is on the CPU, read with the project:
a model held by a plain class of another module (analysis/training/state_loads.py)."""

from __future__ import annotations

from project_helpers import finding_lines, write_project


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
