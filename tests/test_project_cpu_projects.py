"""MEM701 in a project none of whose modules puts anything on a GPU
(project/gpu_moves.py, project/cpu_projects.py, ProjectView.moves_nothing):
torchMoji's loads are into CPU models, of CPU checkpoints."""

from __future__ import annotations

import ast
import os

import pytest
from project_helpers import finding_lines, write_project

from memlint.project.gpu_moves import gpu_call, may_move
from memlint.project.summary import ModuleSummary, summarise

MODEL = """\
import torch
import torch.nn as nn


class TorchMoji(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        if isinstance(x, (torch.LongTensor, torch.cuda.LongTensor)):
            x = x.float()
        return self.fc(x)
"""
FINETUNING = """\
import torch


def train(model, optimizer, loader, checkpoint_path):
    for x in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
    torch.save(model.state_dict(), checkpoint_path)
    # Reload the best weights found to avoid overfitting.
    model.load_state_dict(torch.load(checkpoint_path))
    return model
"""
# The load is reported when the project may move models (line 14).
LOAD_LINE = 11


def _call(text: str) -> ast.Call:
    node = ast.parse(text).body[0]
    assert isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
    return node.value


@pytest.mark.parametrize(
    "text",
    [
        "model.cuda()",
        "x.to(device)",
        "x.to('cuda:0')",
        "torch.cuda.manual_seed(1)",
        "nn.DataParallel(model)",
        "DistributedDataParallel(model, device_ids=[0])",
        "torch.zeros(3, device=d)",
        "x.type(torch.cuda.FloatTensor)",
        "torch.set_default_tensor_type('torch.cuda.FloatTensor')",
        "torch.device('cuda')",
        "Trainer(gpus=1)",
    ],
)
def test_a_call_that_may_place_something_on_a_device(text):
    assert gpu_call(_call(text))


@pytest.mark.parametrize(
    "text",
    [
        "x.to(torch.float16)",
        "x.to(dtype=torch.float32)",
        "isinstance(x, torch.cuda.LongTensor)",
        "torch.load(path)",
        "model.load_state_dict(state)",
        "print('loading')",
    ],
)
def test_a_call_that_moves_nothing(text):
    assert not gpu_call(_call(text))


def test_the_text_screen_of_a_module_without_a_summary():
    assert may_move(b"def f(m):\n    return m.cuda()\n")
    assert may_move(b"import pytorch_lightning as pl\n")
    assert may_move(b"n_gpu = 2\nuse_gpu = gpu\n")
    # ``input`` spells ``npu``, ``dumps`` spells ``mps``: whole words only.
    assert not may_move(b"def tokenize(input):\n    return json.dumps(input)\n")


def test_the_summary_says_whether_a_module_may_move():
    assert not summarise(ast.parse(MODEL)).gpu_moves
    assert not summarise(ast.parse(FINETUNING)).gpu_moves
    assert summarise(ast.parse(FINETUNING + "\n\ndef to_gpu(m):\n    return m.cuda()\n")).gpu_moves
    assert summarise(ast.parse("import torch\nfrom accelerate import Accelerator\n")).gpu_moves
    # An import inside a function, a call in a lambda or a default: the walk reads every part.
    assert summarise(ast.parse("import torch\ndef f():\n    import lightning\n")).gpu_moves
    assert summarise(ast.parse("import torch\nmove = lambda m: m.to(dev)\n")).gpu_moves
    assert summarise(ast.parse("import torch\ndef f(x=torch.zeros(2).cuda()):\n    pass\n")).gpu_moves
    # Unknown (a summary of nothing, an old entry without the field): it may.
    assert ModuleSummary().gpu_moves
    data = summarise(ast.parse(MODEL)).to_json()
    assert ModuleSummary.from_json(data).gpu_moves is False
    del data["gpu_moves"]
    assert ModuleSummary.from_json(data).gpu_moves is True


def test_a_project_that_moves_nothing_loads_into_cpu_models(tmp_path):
    write_project(tmp_path, {"setup.py": "", "model_def.py": MODEL, "finetuning.py": FINETUNING})
    assert finding_lines(tmp_path / "finetuning.py", "MEM701") == []


@pytest.mark.parametrize(
    "other",
    [
        # One move anywhere in the project.
        "import torch\n\n\ndef to_gpu(model):\n    return model.cuda()\n",
        "import torch.nn as nn\n\n\ndef wrap(model):\n    return nn.DataParallel(model)\n",
        # A module without a training word: its text's words count.
        "def to_gpu(model):\n    return model.cuda()\n",
        # A framework that moves the models it is handed.
        "import torch\nimport pytorch_lightning as pl\n",
    ],
)
def test_one_move_anywhere_keeps_the_rule_on(tmp_path, other):
    write_project(tmp_path, {"setup.py": "", "model_def.py": MODEL, "finetuning.py": FINETUNING, "run.py": other})
    assert finding_lines(tmp_path / "finetuning.py", "MEM701") == [LOAD_LINE]


def test_the_live_index_reads_an_open_document(tmp_path):
    from memlint.project.live import LiveIndex
    from memlint.project.modules import project_files

    write_project(tmp_path, {"setup.py": "", "model_def.py": MODEL, "finetuning.py": FINETUNING, "run.py": "x = 1\n"})
    index = LiveIndex(str(tmp_path), project_files(str(tmp_path)) or [])
    loader = str(tmp_path / "finetuning.py")
    assert index.view_for(loader).moves_nothing
    index.set_text(str(tmp_path / "run.py"), "import torch\n\n\ndef go(m):\n    return m.to('cuda')\n")
    assert not index.view_for(loader).moves_nothing


def test_an_edit_that_adds_a_move_elsewhere_lints_the_loader_again(tmp_path):
    """The verdict is the whole project's: the loader's cached entry read
    every module, and a module whose summary now moves is seen as changed."""
    import memlint.run.runner as runner
    from memlint.run.cache import FindingsCache
    from memlint.run.results import Settings

    project = tmp_path / "proj"
    write_project(
        project,
        {
            "setup.py": "",
            "model_def.py": MODEL,
            "finetuning.py": FINETUNING,
            "utils.py": "import torch\n\n\ndef count(model):\n    return sum(p.numel() for p in model.parameters())\n",
        },
    )
    files = sorted(str(p) for p in project.glob("*.py"))
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="test")
    settings = Settings(root=str(project))

    def check():
        reports = runner.run(files, settings, jobs=1, cache=cache)
        return sorted((os.path.basename(r.path), f.line) for r in reports for f in r.findings if f.code == "MEM701")

    assert check() == []
    assert check() == []  # warm
    utils = project / "utils.py"
    utils.write_text(utils.read_text().replace("    return sum(", "    model.cuda()\n    return sum("))
    assert check() == [("finetuning.py", LOAD_LINE)]
    utils.write_text(utils.read_text().replace("    model.cuda()\n", ""))
    assert check() == []
