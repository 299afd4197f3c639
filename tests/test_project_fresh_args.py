"""MEM701 across modules: a helper loading into the model its callers hand
it, every caller handing a name bound to a model just built on the CPU and
named nowhere since (project/cpu_receivers.fresh_args, CallSite.built)."""

from __future__ import annotations

import ast
import textwrap

import pytest
from project_helpers import finding_lines, write_project

from memlint.project.cpu_receivers import fresh_args

MODELIO = """\
import torch


def load_checkpoint(model, path):
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["state_dict"])
"""

NETS = """\
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
"""


# A module that moves a model: these projects are not CPU-only (cpu_projects.py would silence MEM701).
_GPU = {"gpu.py": "import torch\n\n\ndef to_gpu(model):\n    return model.cuda()\n"}


def _train(body: str) -> str:
    return "import torch\nimport modelio\nfrom nets import Net\n\n\ndef main(path):\n" + textwrap.indent(
        textwrap.dedent(body), "    "
    )


def _lines(tmp_path, body: str) -> list[int]:
    write_project(tmp_path, {"modelio.py": MODELIO, "nets.py": NETS, "train.py": _train(body), **_GPU})
    return finding_lines(tmp_path / "modelio.py", "MEM701")


def test_a_fresh_model_handed_by_name_is_on_the_cpu(tmp_path):
    # obman_train's shape without its DataParallel: build, load, then move.
    body = """\
    model = Net().eval()
    modelio.load_checkpoint(model, path=path)
    return model.cuda()
    """
    assert _lines(tmp_path, body) == []


@pytest.mark.parametrize(
    "body",
    [
        "model = Net()\nmodel.cuda()\nmodelio.load_checkpoint(model, path)\n",
        "model = Net().cuda()\nmodelio.load_checkpoint(model, path)\n",
        "model = Net()\nprepare(model)\nmodelio.load_checkpoint(model, path)\n",
        "model = Net()\nfor _ in range(2):\n    modelio.load_checkpoint(model, path)\n",
        "model = Net()\nif path:\n    model = make()\nmodelio.load_checkpoint(model, path)\n",
        "model = Net(device='cuda')\nmodelio.load_checkpoint(model, path)\n",
        "model = Net()\nmodelio.load_checkpoint(model, path)\n\n\ndef other(model, path):\n"
        "    modelio.load_checkpoint(model, path)\n",  # a caller handing its own parameter: not known
    ],
)
def test_a_model_moved_or_not_known_fresh_keeps_the_load_reported(tmp_path, body):
    assert _lines(tmp_path, body) == [5]


def test_a_wrapped_model_never_moved_leaves_a_helpers_load_alone(tmp_path):
    # obman_train's shape (s25-fp16b, project/wrapped_args.py): where a
    # DataParallel-wrapped, never-moved model sits depends on the GPU count,
    # and the helper's checkpoint is freed before any move. A load in the
    # wrapping function itself stays reported (bts; MEM701's rule page).
    body = "model = Net()\nmodel = torch.nn.DataParallel(model)\nmodelio.load_checkpoint(model, path)\n"
    assert _lines(tmp_path, body) == []


def _fresh(source: str) -> list[tuple[str, str]]:
    tree = ast.parse(textwrap.dedent(source))
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and ast.unparse(n.func) == "helper"]
    found = fresh_args(fn, fn.body, calls, ast.unparse)
    return [b for call in calls for b in found.get(id(call), ())]


def test_fresh_args_keys_each_proven_argument():
    src = """
    def f(path):
        a = Net()
        b = Other(4)
        c = Net()
        c.cuda()
        helper(a, path, c, net=b)
    """
    assert _fresh(src) == [("0", "Net"), ("net", "Other")]


def test_fresh_args_trusts_no_parameter_nor_a_name_the_call_reads_twice():
    src = """
    def f(model, path):
        net = Net()
        helper(model, net, net.parameters())
    """
    assert _fresh(src) == []
