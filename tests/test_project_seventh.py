"""The seventh batch's misses and false alarms (issue 29): SimGNN's trainer
loads into ``self.model`` built on the CPU in another method and moved
nowhere (MEM701); the same trainer moved by ``main.py`` stays reported."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

_TRAINER = """
    import torch
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 1)
        def forward(self, x):
            return self.fc(x)
    class Trainer(object):
        def __init__(self, args):
            self.args = args
            self.setup_model()
        def setup_model(self):
            self.model = Net()
        def fit(self, batches):
            self.optimizer = torch.optim.Adam(self.model.parameters())
            self.model.train()
            for x in batches:
                self.model(x).sum().backward()
                self.optimizer.step()
        def save(self):
            torch.save(self.model.state_dict(), self.args.path)
        def load(self):
            self.model.load_state_dict(torch.load(self.args.path))
"""


def test_a_plain_class_attribute_built_on_the_cpu_and_moved_nowhere_is_on_the_cpu_at_a_load(tmp_path):
    main = "from trainer import Trainer\ntrainer = Trainer(None)\ntrainer.load()\ntrainer.fit([])\n"
    write_project(tmp_path, {"trainer.py": _TRAINER, "main.py": main})
    assert finding_lines(tmp_path / "trainer.py", "MEM701") == []


def test_the_attribute_moved_by_another_module_stays_reported(tmp_path):
    main = "from trainer import Trainer\ntrainer = Trainer(None)\ntrainer.model.cuda()\ntrainer.load()\n"
    write_project(tmp_path, {"trainer.py": _TRAINER, "main.py": main})
    assert finding_lines(tmp_path / "trainer.py", "MEM701") == [25]


def test_the_attribute_moved_by_a_method_of_its_class_stays_reported(tmp_path):
    moved = _TRAINER.replace("self.model = Net()", "self.model = Net()\n            self.model.cuda()")
    write_project(tmp_path, {"trainer.py": moved, "main.py": "from trainer import Trainer\nTrainer(None).load()\n"})
    assert finding_lines(tmp_path / "trainer.py", "MEM701") == [26]
