"""MEM203: a loop whose only optimizer holds tensors it made (DeepSDF's
``reconstruct`` fits a latent code to a trained decoder) trains no module, so
the decoder's ``eval()`` there is on purpose. An optimizer that may hold a
module's weights (a parameter handed in, an attribute, ``.parameters()``)
keeps the finding."""

from __future__ import annotations

import textwrap

import libcst as cst
from analysis_helpers import facts_of

from memlint.lint.engine import lint_text
from memlint.rule.registry import all_rules

_FIT = """\
import torch


def fit_code(decoder, points, target, steps, size, extra):
    code = torch.zeros(1, size).normal_(std=0.01).cuda()
    code.requires_grad = True
    optimizer = torch.optim.Adam({group}, lr=1e-3)
    for step in range(steps):
        decoder.eval()
        optimizer.zero_grad()
        loss = (decoder(torch.cat([code.expand(len(points), -1), points], 1)) - target).abs().mean()
        loss.backward()
        optimizer.step()
    return code
"""


def _mem203(text: str) -> list[int]:
    return [f.line for f in lint_text(textwrap.dedent(text), "t.py", all_rules()) if f.code == "MEM203"]


def test_an_optimizer_over_a_code_made_here_trains_no_module():
    assert _mem203(_FIT.format(group="[code]")) == []
    assert _mem203(_FIT.format(group="(code, torch.nn.Parameter(torch.randn(3)))")) == []


def test_an_optimizer_that_may_hold_weights_is_still_a_training_loop():
    for group in ("[code, extra]", "[code, decoder.fc.weight]", "decoder.parameters()", "[{'params': [code]}]"):
        assert _mem203(_FIT.format(group=group)) == [9], group


def test_steps_no_module_reads_every_binding():
    text = textwrap.dedent(
        """\
        import torch
        def f(w, flag):
            z = torch.randn(4).cuda()
            y = torch.randn(4)
            if flag:
                y = w
            a = torch.optim.SGD([z], lr=0.1)
            b = torch.optim.SGD([y], lr=0.1)
            c = make_optimizer([z])
        """
    )
    facts = facts_of(text)
    fn = next(n for n in facts.module.body if isinstance(n, cst.FunctionDef))
    table = facts.tensor_optimizers
    assert table.steps_no_module("a", fn)
    assert not table.steps_no_module("b", fn)  # y may be the parameter w
    assert not table.steps_no_module("c", fn)  # not a torch.optim class
