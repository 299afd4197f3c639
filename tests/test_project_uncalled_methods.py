"""MEM201 on a method named for evaluation that nothing in the project calls
(issue 29, the sixteenth batch: SymbolicMathematics'
``TransformerModel.generate``, decoding done by ``generate_beam`` under the
evaluator's ``no_grad``): a helper is judged by its callers, and with none
the mode it runs in is not known."""

from __future__ import annotations

import os

from project_helpers import finding_lines, write_project

from memlint.project.index import view_from_disk

_MODEL = """\
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        return self.proj(x)

    def generate(self, x, max_len):
        cur_len = 1
        while cur_len < max_len:
            x = self.forward(x)
            cur_len += 1
        return x

    def generate_beam(self, x, max_len):
        cur_len = 1
        while cur_len < max_len:
            x = self.forward(x)
            cur_len += 1
        return x
"""

_EVALUATOR = """\
import torch
from model import Decoder


def run_all_evals(decoder, x):
    with torch.no_grad():
        return decoder.generate_beam(x, 10)
"""


def test_a_method_no_module_calls_is_listed_uncalled(tmp_path):
    write_project(tmp_path, {".git/HEAD": "", "model.py": _MODEL, "evaluator.py": _EVALUATOR})
    view = view_from_disk(os.fspath(tmp_path / "model.py"))
    assert view is not None
    assert view.methods_uncalled_elsewhere == ("generate",)
    assert view.methods_off_elsewhere == ("generate_beam",)


def test_an_uncalled_decoding_method_is_silent_and_a_called_one_reported(tmp_path):
    write_project(tmp_path, {".git/HEAD": "", "model.py": _MODEL, "evaluator.py": _EVALUATOR})
    assert finding_lines(tmp_path / "model.py", "MEM201") == []
    sampler = "from model import Decoder\n\n\ndef sample(decoder, x):\n    return decoder.generate(x, 10)\n"
    write_project(tmp_path, {"sample.py": sampler})
    assert finding_lines(tmp_path / "model.py", "MEM201") == [15]


def test_an_uncalled_method_that_switches_to_eval_or_iterates_data_is_reported(tmp_path):
    switched = _MODEL.replace("        cur_len = 1\n", "        self.eval()\n        cur_len = 1\n", 1)
    write_project(tmp_path, {".git/HEAD": "", "model.py": switched, "evaluator.py": _EVALUATOR})
    assert finding_lines(tmp_path / "model.py", "MEM201") == [16]
    over_data = _MODEL.replace(
        "        cur_len = 1\n        while cur_len < max_len:\n            x = self.forward(x)\n            cur_len += 1\n",
        "        for batch in x:\n            batch = self.forward(batch)\n",
        1,
    )
    write_project(tmp_path, {"model.py": over_data})
    assert finding_lines(tmp_path / "model.py", "MEM201") == [14]  # at the def: the method gets the decorator


def test_an_uncalled_method_handing_nothing_back_is_an_end_and_reported(tmp_path):
    """pytorch-wgan's ``generate_latent_walk`` saves what it generates: no
    caller gets a value to use, with grad or without (recall_real's TPs)."""
    saving = _MODEL.replace(
        "            cur_len += 1\n        return x\n", "            cur_len += 1\n        torch.save(x, 'x.pt')\n", 1
    )
    write_project(tmp_path, {".git/HEAD": "", "model.py": saving, "evaluator.py": _EVALUATOR})
    assert finding_lines(tmp_path / "model.py", "MEM201") == [15]
