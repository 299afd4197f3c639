"""analysis/autograd/method_graphs.py: a later method's backward that runs
through nothing of the graph an earlier method retained (GANomaly's
``backward_g`` / ``backward_d``)."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper

from memlint.analysis.autograd.method_graphs import separate_methods
from memlint.analysis.facts import ModuleFacts
from memlint.rule.registry import all_rules

_GAN = next(
    ex.source for ex in next(r for r in all_rules() if r.code == "MEM103").invalid if "def backward_g" in ex.source
)


def _separate(src: str, helper: str = "backward_g", later: str = "backward_d") -> bool:
    facts = ModuleFacts(MetadataWrapper(cst.parse_module(src), unsafe_skip_copy=True))
    methods = {
        f.name.value: f
        for cls in facts.module.body
        if isinstance(cls, cst.ClassDef)
        for f in cls.body.body
        if isinstance(f, cst.FunctionDef)
    }
    retained = facts.loops.scope_facts(methods[helper]).backward_calls[0]
    return separate_methods(facts, retained, methods[helper], methods[later])


def test_a_loss_built_from_a_no_grad_buffer_and_a_detached_fake_is_separate():
    assert _separate(_GAN)


def test_the_fake_itself_is_shared():
    assert not _separate(_GAN.replace("self.netd(self.fake.detach())", "self.netd(self.fake)"))


def test_two_attributes_from_one_forward_are_shared():
    src = _GAN.replace(
        "        self.fake = self.netg(self.input)\n",
        "        h = self.netg(self.input)\n        self.fake = h * 2\n        self.shadow = h + 1\n",
    ).replace("self.netd(self.fake.detach())", "self.netd(self.shadow)")
    assert not _separate(src)


def test_a_buffer_filled_in_place_with_grad_on_is_not_a_leaf():
    assert not _separate(_GAN.replace("        with torch.no_grad():\n            self.input", "        self.input"))


def test_an_attribute_assigned_nowhere_is_not_known():
    assert not _separate(
        _GAN.replace("self.pred_real = self.netd(self.input)", "self.pred_real = self.netd(self.noise)")
    )


def test_a_parameter_of_the_later_method_is_not_known():
    src = (
        _GAN.replace("    def backward_d(self):", "    def backward_d(self, extra):")
        .replace("self.pred_fake.pow(2).mean()\n", "self.pred_fake.pow(2).mean() + extra\n")
        .replace("self.backward_d()", "self.backward_d(self.err_g)")
    )
    assert not _separate(src)


def test_the_helper_itself_is_never_separate():
    assert not _separate(_GAN, "backward_g", "backward_g")


_BASE = """\
class Base:
    def set_input(self, batch):
        self.input.resize_(batch.size()).copy_(batch)


"""


def test_a_base_class_here_that_fills_the_buffer_with_grad_on_is_read():
    src = _GAN.replace("        with torch.no_grad():\n            self.input", "        self.input")
    src = src.replace("    def set_input(self, batch):\n        self.input.resize_(batch.size()).copy_(batch)\n\n", "")
    src = src.replace("class GAN:", _BASE + "class GAN(Base):")
    assert "with torch.no_grad" not in src and "class GAN(Base)" in src
    assert not _separate(src)
    # The base's write under ``no_grad``: a leaf again.
    off = src.replace("        self.input.resize_", "        with torch.no_grad():\n            self.input.resize_", 1)
    assert _separate("import torch\n" + off)


def test_an_imported_base_may_write_anything():
    src = _GAN.replace("class GAN:", "from base import Base\n\n\nclass GAN(Base):")
    assert not _separate(src)
    assert _separate(_GAN.replace("class GAN:", "class GAN(nn.Module):"))
