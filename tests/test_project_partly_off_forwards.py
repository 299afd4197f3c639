"""A model whose class's ``forward`` turns grad off for some of its work
(issue 29, SPADE's ``Pix2PixModel.forward``: ``mode='inference'`` runs the
generator under ``torch.no_grad()``) may build no graph when called: an
evaluation loop over it, in a script that imports no torch, stays silent.
The same class without that block, or with it only in a method other than
``forward``, is reported."""

from __future__ import annotations

import ast
import textwrap

from project_helpers import finding_lines, write_project

from memlint.project.object_types import object_types

_MODELS = """\
    import torch
    from torch import nn

    class BaseModel(nn.Module):
        def __init__(self, opt):
            super().__init__()
            self.netG = nn.Conv2d(3, 3, 3)

        def generate_fake(self, x):
            return self.netG(x)

    class Pix2PixModel(BaseModel):
        def forward(self, data, mode):
            if mode == "generator":
                return self.generate_fake(data["label"]).mean()
            elif mode == "inference":
                with torch.no_grad():
                    fake = self.generate_fake(data["label"])
                return fake
            raise ValueError(mode)

    class Child(Pix2PixModel):
        pass
"""

_TEST = """\
    import data
    from models import Pix2PixModel

    opt = data.options()
    model = Pix2PixModel(opt)
    model.eval()
    for i, data_i in enumerate(data.create_dataloader(opt)):
        generated = model(data_i, mode="inference")
        data.save(generated)
"""


def _lines(tmp_path, models=_MODELS, test=_TEST):
    write_project(tmp_path, {"models.py": models, "test.py": test, "data.py": "def options():\n    return {}\n"})
    return finding_lines(tmp_path / "test.py", "MEM201")


def test_a_forward_turning_grad_off_inside_keeps_its_callers_silent(tmp_path):
    assert _lines(tmp_path) == []


def test_a_subclass_inheriting_that_forward_keeps_them_silent(tmp_path):
    test = _TEST.replace("Pix2PixModel", "Child")
    assert _lines(tmp_path, test=test) == []


def test_a_forward_running_all_with_grad_on_is_reported(tmp_path):
    models = _MODELS.replace(
        "                with torch.no_grad():\n                    fake = self.generate_fake",
        "                if True:\n                    fake = self.generate_fake",
    )
    assert models != _MODELS
    assert _lines(tmp_path, models) == [7]


def test_a_no_grad_block_in_another_method_is_no_off_forward(tmp_path):
    models = _MODELS.replace(
        "        def generate_fake(self, x):\n            return self.netG(x)",
        "        def generate_fake(self, x):\n            return self.netG(x)\n\n"
        "        def sample(self, x):\n            with torch.no_grad():\n                return self.netG(x)",
    ).replace(
        "                with torch.no_grad():\n                    fake = self.generate_fake",
        "                if True:\n                    fake = self.generate_fake",
    )
    assert _lines(tmp_path, models) == [7]


def test_object_types_records_forwards_that_turn_grad_off():
    facts = object_types(ast.parse(textwrap.dedent(_MODELS)), {"torch": "torch", "nn": "torch.nn"}, False)
    assert facts.off_inside == ["Pix2PixModel"]
    nested = _MODELS.replace(
        "                with torch.no_grad():",
        "                def f():\n                    return 1\n                if f():",
    )
    assert (
        object_types(ast.parse(textwrap.dedent(nested)), {"torch": "torch", "nn": "torch.nn"}, False).off_inside == []
    )
