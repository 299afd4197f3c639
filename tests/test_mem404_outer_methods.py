"""MEM404: the graph a backward runs after the step may be built by a method
the stepping one never calls (DRIT: the training script runs ``update_D()``,
whose ``forward()`` stores the fakes, then ``update_EG()``, which steps the
generator between two backwards through them); a loss summed with ``+=``
runs back through every part; unpacked ``torch.split`` parts through the
split tensor."""

from __future__ import annotations

import textwrap

from analysis_helpers import facts_of

from memlint.lint.engine import lint_text
from memlint.rule.registry import all_rules

_MODEL = """\
import torch


class Model:
    def __init__(self, gen, enc, dis):
        self.gen, self.enc, self.dis = gen, enc, dis
        self.gen_opt = torch.optim.Adam(self.gen.parameters())
        self.fake_a = self.fake_b = None

    def forward(self):
        out = self.gen(torch.cat((self.real, self.noise), 0))
        self.fake_a, self.fake_b = torch.split(out, self.real.size(0), dim=0)
{more}
    def update_g(self):
        self.gen_opt.zero_grad()
        self.backward_first()
        self.gen_opt.step()
        self.gen_opt.zero_grad()
        self.backward_second()
        self.gen_opt.step()

    def backward_first(self):
        loss = (self.fake_a - self.real).abs().mean()
        loss.backward(retain_graph=True)

    def backward_second(self):
        loss = 0
        if self.dis is not None:
            loss += -self.dis(self.fake_b).mean()
        loss.backward()
"""


def _mem404(text: str) -> list[int]:
    return [f.line for f in lint_text(textwrap.dedent(text), "t.py", all_rules()) if f.code == "MEM404"]


def test_fakes_of_a_method_the_region_never_runs_reach_the_stepped_generator():
    assert _mem404(_MODEL.format(more="")) == [17]


def test_a_second_method_setting_the_fakes_leaves_it_unknown():
    more = """
    @torch.no_grad()
    def sample(self):
        self.fake_a, self.fake_b = self.gen(self.noise).chunk(2)
"""
    assert _mem404(_MODEL.format(more=more)) == []


def test_fakes_rebuilt_between_the_step_and_the_backward_are_fresh():
    text = _MODEL.format(more="").replace(
        "        self.gen_opt.zero_grad()\n        self.backward_second()",
        "        self.forward()\n        self.gen_opt.zero_grad()\n        self.backward_second()",
    )
    assert _mem404(text) == []


def test_a_loss_summed_with_augmented_assignments_runs_back_through_each_part():
    text = """\
    import torch
    G, D = Generator(), Discriminator()
    opt_d = torch.optim.Adam(D.parameters())
    for z, real in loader:
        fake = G(z)
        g_loss = 0
        g_loss += -D(fake).mean()
        d_loss = D(fake.detach()).mean() - D(real).mean()
        d_loss.backward()
        opt_d.step()
        g_loss.backward()
    """
    assert _mem404(text) == [10]
    fresh = text.replace("        g_loss.backward()\n", "        g_loss = -D(fake).mean()\n        g_loss.backward()\n")
    assert _mem404(fresh) == []


def test_fakes_a_helper_may_rebuild_after_the_step_are_not_followed():
    more = """
    def prepare(self):
        self.forward()
"""
    text = _MODEL.format(more=more).replace(
        "        self.gen_opt.zero_grad()\n        self.backward_second()",
        "        self.prepare()\n        self.gen_opt.zero_grad()\n        self.backward_second()",
    )
    assert _mem404(text) == []


def test_augmented_in_lists_each_augmented_assignment_of_its_scope():
    facts = facts_of(
        """\
        def f(a, b):
            loss = a
            loss += b
            loss *= 2
            return loss
        loss = 0
        """
    )
    fn = facts.module.body[0]
    assert [facts.module.code_for_node(a.value) for a in facts.bindings.augmented_in("loss", fn)] == ["b", "2"]
    assert facts.bindings.augmented_in("loss", facts.module) == []
