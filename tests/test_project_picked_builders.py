"""Builders that pick a function by name from a module of builders
(cpu_builders._picked_by_name, index._builder_module): deepvoice3's
``build_model()`` returns ``getattr(builder, hparams.builder)(...)``, and
builder.py's every function returns a model of a class that moves nothing;
synthesis.py loads a checkpoint into ``build_model()``'s model, still on the
CPU, before ``tts()`` moves it."""

from __future__ import annotations

import ast
import textwrap

import pytest
from project_helpers import finding_lines, write_project

from memlint.project.summary import summarise

_BUILDER = """
    import torch.nn as nn
    from pkg.nets import Seq2Seq


    def small(n=3):
        return Seq2Seq(n)


    def large(n=8):
        model = Seq2Seq(n)
        return model
"""

_NETS = """
    import torch.nn as nn


    class Seq2Seq(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.fc = nn.Linear(n, n)
"""

_TRAIN = """
    import torch
    from pkg import builder

    NAME = "small"


    def build_model():
        model = getattr(builder, NAME)(n=3)
        return model


    if __name__ == "__main__":
        model = build_model().cuda()
        torch.save(model.state_dict(), "m.pth")
"""

_SYNTH = """
    import torch


    def _load(path):
        return torch.load(path)


    if __name__ == "__main__":
        from train import build_model
        model = build_model()
        checkpoint = _load("m.pth")
        model.load_state_dict(checkpoint)
        model = model.cuda()
"""


def _foreign(text: str) -> list[str]:
    return summarise(ast.parse(textwrap.dedent(text))).foreign_builders


def test_a_function_returning_a_pick_from_an_imported_module_needs_that_module():
    assert _foreign(_TRAIN) == ["build_model=getattr:builder"]


@pytest.mark.parametrize(
    "change",
    [
        ("getattr(builder, NAME)(n=3)", "getattr(builder, NAME)(n=3, device='cuda')"),  # a device
        ("getattr(builder, NAME)(n=3)", "getattr(builder, NAME)(net)"),  # a model handed on
        ("from pkg import builder", "builder = object()"),  # not an import
        ("getattr(builder, NAME)(n=3)", "getattr(builder, NAME, None)(n=3)"),  # a default
    ],
)
def test_other_picks_need_nothing(change):
    assert _foreign(_TRAIN.replace(*change)) == []


def _project(tmp_path, builder: str = _BUILDER) -> list[int]:
    write_project(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/nets.py": _NETS,
            "pkg/builder.py": builder,
            "train.py": _TRAIN,
            "synth.py": _SYNTH,
        },
    )
    return finding_lines(tmp_path / "synth.py", "MEM701")


def test_a_load_into_a_model_picked_from_a_module_of_cpu_builders_is_silent(tmp_path):
    assert _project(tmp_path) == []


@pytest.mark.parametrize(
    "change",
    [
        ("    model = Seq2Seq(n)\n    return model", "    return Seq2Seq(n).cuda()"),  # a builder moves
        ("import torch.nn as nn\n", "import torch.nn as nn\nfrom pkg.nets import *\n"),  # a star import
        ("import torch.nn as nn\n", "import torch.nn as nn\nclass Head(nn.Module):\n    pass\n"),  # a class too
        ("import torch.nn as nn\n", "import torch.nn as nn\nDEFAULT = Seq2Seq(3).cuda()\n"),  # an object too
    ],
)
def test_a_module_that_may_give_a_moved_model_keeps_it_reported(tmp_path, change):
    builder = textwrap.dedent(_BUILDER).replace(*change)
    assert _project(tmp_path, builder) == [6]
