"""MEM701 links a load to the saves that may write its file when either
path is a formatted string: ``torch.save({"tasks": t, "model_state_dict":
net.state_dict()}, "{}_{}.pkl".format(name, t))`` after ``net.cpu()`` in a
base class's method, ``torch.load("{}_{}_{}_{}.pkl".format(...))`` in a
subclass's module beside it (the tenth batch's PyCIL)."""

from __future__ import annotations

import ast

from project_helpers import finding_lines, write_project

from memlint.project.checkpoint_files import checkpoint_files
from memlint.vocabulary.checkpoint_files import may_name_same

_BASE = """
    import torch
    class BaseLearner:
        def save_checkpoint(self, filename):
            self._network.cpu()
            save_dict = {"tasks": self._cur_task, "model_state_dict": self._network.state_dict()}
            torch.save(save_dict, "{}_{}.pkl".format(filename, self._cur_task))
"""

_LEARNER = """
    import torch
    from models.base import BaseLearner
    class Learner(BaseLearner):
        def _train(self):
            self._network.to(self._device)
            name = "{}_{}_{}.pkl".format(self.args["model_name"], self.args["init_cls"], self._cur_task)
            self._network.load_state_dict(torch.load(name)["model_state_dict"])
"""

_GPU_SAVE = """
    import torch
    def save(net, name, task):
        torch.save({"model_state_dict": net.state_dict()}, f"{name}_{task}.pkl")
"""


def _files(source: str) -> tuple[list[str], list[str], list[str]]:
    return checkpoint_files(ast.parse(source), {"torch": "torch"})


def test_a_formatted_path_is_a_pattern_of_names():
    source = 'import torch\ntorch.load("{}_{}.pkl".format(a, b))\ntorch.load(f"ck/{a}_0.pth")\n'
    assert _files(source)[2] == ["*_*.pkl", "*_0.pth"]


def test_a_dict_of_cpu_states_and_plain_values_is_a_cpu_state():
    cpu = "import torch\nnet.cpu()\ntorch.save({'epoch': epoch, 'model': net.state_dict()}, 'a.pth')\n"
    assert _files(cpu)[:2] == (["a.pth"], [])
    gpu_part = "import torch\nnet.cpu()\ntorch.save({'model': net.state_dict(), 'opt': opt.state_dict()}, 'a.pth')\n"
    tensor = "import torch\nnet.cpu()\ntorch.save({'model': net.state_dict(), 'best': best_weights}, 'a.pth')\n"
    no_state = "import torch\ntorch.save({'epoch': epoch}, 'a.pth')\n"
    spread = "import torch\nnet.cpu()\ntorch.save({'model': net.state_dict(), **extra}, 'a.pth')\n"
    assert [_files(s)[:2] for s in (gpu_part, tensor, no_state, spread)] == [([], ["a.pth"])] * 4


def test_patterns_may_name_the_same_file():
    assert may_name_same("*_*.pkl", "*_*_*_*.pkl")
    assert may_name_same("dict_0.pkl", "*_*.pkl")
    assert not may_name_same("*_*.pkl", "*.pth")
    assert not may_name_same("best_*.pth", "last_*.pth")


def test_a_load_of_a_file_every_writer_saves_from_the_cpu(tmp_path):
    """Before, neither path named a file: the load was reported."""
    write_project(tmp_path, {"models/base.py": _BASE, "models/learner.py": _LEARNER})
    assert finding_lines(tmp_path / "models" / "learner.py", "MEM701") == []


def test_a_load_a_writer_may_fill_from_a_gpu_state_is_reported(tmp_path):
    files = {"models/base.py": _BASE, "models/learner.py": _LEARNER, "models/gpu.py": _GPU_SAVE}
    write_project(tmp_path, files)
    assert finding_lines(tmp_path / "models" / "learner.py", "MEM701") == [8]
