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


# -- issue 30: every spelling that leaves no parameter requiring grad --------


def frozen_at(src: str, fn: str | None = None) -> set[str]:
    """What ``FrozenModules`` answers in function ``fn`` (the module if None)."""
    from memlint.analysis.autograd.frozen import FrozenModules
    from memlint.analysis.scope.callgraph import CallGraph

    module = cst.parse_module(textwrap.dedent(src))
    calls = CallGraph(module)
    scope = module if fn is None else next(f for f in calls.functions if f.name.value == fn)
    return set(FrozenModules(module, calls).frozen_in(scope))


def test_chained_on_an_existing_name():
    src = """
    sampler.eval().requires_grad_(False).to(device)
    model.requires_grad_(False).eval()
    enc.train(False).cuda().requires_grad_(False)
    """
    assert frozen(src) == {"sampler", "model", "enc"}


def test_chained_thaw_on_an_existing_name():
    src = """
    model.requires_grad_(False)
    model.train().requires_grad_(True)
    """
    assert frozen(src) == set()


def test_the_outermost_requires_grad_of_a_chain_decides():
    assert frozen("net = Net().requires_grad_(False).requires_grad_(True)\n") == set()
    assert frozen("net = Net().requires_grad_(True).eval().requires_grad_(False)\n") == {"net"}


def test_a_copy_of_a_frozen_model_is_frozen():
    src = """
    G = Generator().train().requires_grad_(False).to(device)
    G_ema = copy.deepcopy(G).eval()
    G_cpu = G.cpu()
    D_ema = copy.deepcopy(D).eval()
    """
    assert frozen(src) == {"G", "G_ema", "G_cpu"}


def test_a_copy_made_before_the_freeze_is_not():
    src = """
    G_ema = copy.deepcopy(G).eval()
    G.requires_grad_(False)
    G2 = G
    G2 = Net()
    G3 = copy.deepcopy(G2)
    """
    assert frozen(src) == {"G", "G2"}


def test_parameter_loop_with_requires_grad_():
    src = """
    for name, p in teacher.named_parameters():
        p.requires_grad_(False)
    """
    assert frozen(src) == {"teacher"}


def test_a_part_thawed_again_unfreezes_its_parent():
    src = """
    model.requires_grad_(False)
    model.head.requires_grad_(True)
    enc.requires_grad_(False)
    """
    assert frozen(src) == {"enc"}


def test_a_frozen_parent_freezes_its_parts():
    from memlint.analysis.autograd.frozen import is_frozen_key

    assert is_frozen_key("self.ema.block", {"self.ema"})
    assert not is_frozen_key("self.emax", {"self.ema"})
    assert not is_frozen_key("self", {"self.ema"})


def test_helpers_of_this_module_and_lists_of_models():
    src = """
    def freeze(module):
        for p in module.parameters():
            p.requires_grad = False
    def toggle(net, on=True):
        for p in net.parameters():
            p.requires_grad = on
    def run(a, b, c, d, e):
        freeze(a)
        toggle(b, False)
        toggle(c)
        self.set_requires_grad([d, e], False)
    """
    assert frozen_at(src, "run") == {"a", "b", "d", "e"}


def test_a_function_sees_the_models_frozen_at_the_top_of_its_module():
    src = """
    sampler = Net()
    sampler.eval().requires_grad_(False)
    def sample(z):
        return sampler(z)
    def rebinds(z):
        sampler = Net()
        return sampler(z)
    def takes(sampler):
        return sampler(1)
    """
    assert frozen_at(src, "sample") == {"sampler"}
    assert frozen_at(src, "rebinds") == set()
    assert frozen_at(src, "takes") == set()


def test_a_model_thawed_in_a_function_is_not_frozen_at_the_top():
    src = """
    D = Net().requires_grad_(False)
    def train_d():
        D.requires_grad_(True)
    def score(x):
        return D(x)
    """
    assert frozen_at(src, "score") == set()


def test_a_method_sees_what_its_class_freezes():
    src = """
    class Trainer:
        def __init__(self, net):
            self.avg = copy.deepcopy(net).eval()
            self.avg.requires_grad_(False)
            self.other = net
        def evaluate(self, x):
            return self.avg(x)
    """
    assert frozen_at(src, "evaluate") == {"self.avg"}


def test_a_helper_of_another_module_given_by_the_project_stage():
    from memlint.analysis.autograd.frozen import FreezeHelper, FrozenModules
    from memlint.analysis.scope.callgraph import CallGraph

    src = "from utils import freeze_all\ndef run(ema, model):\n    freeze_all(ema)\n    return ema\n"
    module = cst.parse_module(src)
    calls = CallGraph(module)
    run = calls.functions[0]
    assert FrozenModules(module, calls).frozen_in(run) == frozenset()
    told = FrozenModules(module, calls, {"freeze_all": FreezeHelper(0, "m")})
    assert told.frozen_in(run) == {"ema"}


def test_a_closure_sees_what_its_enclosing_function_froze():
    src = """
    def run(loader):
        scorer = Net()
        scorer.eval().requires_grad_(False)
        def evaluate(x):
            return scorer(x)
        def rebinds(x):
            scorer = Net()
            return scorer(x)
        return evaluate
    """
    assert frozen_at(src, "evaluate") == {"scorer"}
    assert frozen_at(src, "rebinds") == set()  # its own scorer is another object


_LOADER = """
import torch


class VideoGenerator:
    def __init__(self, args):
        self.model = self.__load_model()

    def _inference(self, images):
        return [self.model.get_last_selfattention(img) for img in images]

    def __load_model(self):
        model = build()
        for p in model.parameters():
            p.requires_grad = False
        model.eval()
        return model
"""


def test_a_model_returned_frozen_by_a_function_of_the_module_is_frozen():
    """DINO's ``self.model = self.__load_model()``, which freezes every
    parameter of the model it returns."""
    assert "self.model" in frozen_at(_LOADER, "_inference")


def test_a_function_returning_another_value_too_builds_no_frozen_model():
    src = _LOADER.replace(
        "        model.eval()\n        return model",
        "        if args:\n            return build()\n        return model",
    )
    assert src != _LOADER
    assert "self.model" not in frozen_at(src, "_inference")


def test_a_function_returning_a_model_it_did_not_freeze_builds_no_frozen_model():
    src = _LOADER.replace("            p.requires_grad = False\n", "            p.requires_grad = True\n")
    assert "self.model" not in frozen_at(src, "_inference")


def test_zip_freezing_two_models_is_partial():
    """``zip`` stops at the shorter parameter list: freezing both sides of a
    zip over two models leaves the longer one partly trainable, and which
    one is longer is not known (Attention_ocr's ``val()``)."""
    src = """
    for e, d in zip(encoder.parameters(), decoder.parameters()):
        e.requires_grad = False
        d.requires_grad = False
    """
    assert frozen(src) == set()


def test_zip_freezing_one_side_stays_a_freeze():
    """An EMA copy frozen beside the model it follows: equal lists, one side frozen."""
    src = """
    for p_ema, p in zip(ema.parameters(), model.parameters()):
        p_ema.requires_grad = False
    """
    assert frozen(src) == {"ema"}


def test_zip_freeze_keeps_an_earlier_freeze():
    src = """
    encoder.requires_grad_(False)
    for e, d in zip(encoder.parameters(), decoder.parameters()):
        e.requires_grad = False
        d.requires_grad = False
    """
    assert frozen(src) == {"encoder"}
