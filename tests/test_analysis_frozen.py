"""analysis/autograd/frozen.py: modules a function freezes with requires_grad."""

import textwrap

import libcst as cst

from memlint.analysis.autograd.frozen import ever_frozen, frozen_modules


def frozen(src: str) -> set[str]:
    return set(frozen_modules(cst.parse_module(textwrap.dedent(src))))


def test_requires_grad_false():
    assert frozen("model.eval()\nmodel.requires_grad_(False)\n") == {"model"}


def test_parameters_loop():
    src = """
    for p in self.backbone.parameters():
        p.requires_grad = False
    for name, q in teacher.named_parameters():
        q.requires_grad = False
    """
    assert frozen(src) == {"self.backbone", "teacher"}


def test_thawed_again_is_not_frozen():
    src = """
    model.requires_grad_(False)
    train_head(model)
    model.requires_grad_()
    enc.requires_grad_(False)
    for p in enc.parameters():
        p.requires_grad = True
    """
    assert frozen(src) == set()


def test_non_literal_flag_is_not_frozen():
    src = """
    model.requires_grad_(finetune)
    for p in model.parameters():
        p.requires_grad = name in trainable
    """
    assert frozen(src) == set()


def test_other_attributes_in_the_loop_are_ignored():
    src = """
    for p in model.parameters():
        p.grad = None
        other.requires_grad = False
    """
    assert frozen(src) == set()


def test_helpers_of_dit_and_cyclegan():
    src = """
    requires_grad(ema, False)
    set_requires_grad(self.netD, False)
    requires_grad(model, True)
    """
    assert frozen(src) == {"ema", "self.netD"}


def test_frozen_copy_and_detached_parameters():
    src = """
    ema = copy.deepcopy(model).eval().requires_grad_(False)
    for e_p, p in zip(ema_b.parameters(), model.parameters()):
        e_p.detach_()
    """
    assert frozen(src) == {"ema", "ema_b"}


def test_ever_frozen_keeps_a_module_thawed_later():
    src = """
    model.requires_grad_(False)
    model.requires_grad_(True)
    """
    module = cst.parse_module(textwrap.dedent(src))
    assert set(ever_frozen(module)) == {"model"}
    assert frozen(src) == set()
