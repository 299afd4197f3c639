"""MEM402: an in-place edit in the ``else``/``elif`` of ``if self.training:``
runs only at inference (YOLO heads decode boxes there); the same edit in the
training branch, or in an ``else`` of some other test, is still reported."""

from __future__ import annotations

import textwrap

from memlint.lint.engine import lint_text
from memlint.rule.registry import all_rules

_HEAD = """\
import torch.nn as nn


class Head(nn.Module):
    def forward(self, x):
        p = self.conv(x)
        if {test}:
            out = p
        elif self.export:
            out = p
        else:
            out = p.sigmoid()
            out[..., :2] *= self.stride
        return out
"""


def _mem402(text: str) -> list[int]:
    return [f.line for f in lint_text(textwrap.dedent(text), "t.py", all_rules()) if f.code == "MEM402"]


def test_else_of_an_if_training_chain_is_inference_only():
    assert _mem402(_HEAD.format(test="self.training")) == []


def test_else_of_another_test_is_reported():
    assert _mem402(_HEAD.format(test="self.fast")) == [13]


def test_else_of_if_not_training_is_the_training_path():
    assert _mem402(_HEAD.format(test="not self.training")) == [13]


def test_the_training_branch_itself_is_reported():
    text = """\
    import torch.nn as nn


    class Head(nn.Module):
        def forward(self, x):
            p = self.conv(x)
            if self.training:
                out = p.sigmoid()
                out[..., :2] *= self.stride
            else:
                out = p
            return out
    """
    assert _mem402(text) == [9]
