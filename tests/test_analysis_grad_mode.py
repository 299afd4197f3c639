"""facts.grad_mode: whether autograd records where a statement runs."""

import libcst as cst
from analysis_helpers import facts_of, find

from memlint.analysis.autograd.grad_mode import GradMode

ON, OFF, UNKNOWN = GradMode.ENABLED, GradMode.DISABLED, GradMode.UNKNOWN


def modes(src: str, *texts: str):
    facts = facts_of(src)
    return [facts.grad_mode.mode_at(find(facts.module, t, cst.Call)) for t in texts]


def test_context_managers():
    src = """
    import torch
    a()
    with torch.no_grad():
        b()
        with torch.enable_grad():
            c()
        d()
    with torch.inference_mode():
        e()
    with torch.set_grad_enabled(False):
        f()
    with torch.set_grad_enabled(phase == "train"):
        g()
    with torch.autocast("cuda"):
        h()
    """
    assert modes(src, "a()", "b()", "c()", "d()", "e()", "f()", "g()", "h()") == [
        ON,
        OFF,
        ON,
        OFF,
        OFF,
        OFF,
        UNKNOWN,
        ON,
    ]


def test_aliases_and_from_imports():
    src = """
    import torch as T
    from torch import no_grad
    with T.no_grad():
        a()
    with no_grad():
        b()
    with open("f") as fh, no_grad():
        c()
    """
    assert modes(src, "a()", "b()", "c()") == [OFF, OFF, OFF]


def test_with_items_run_in_the_outer_mode():
    src = """
    import torch
    with torch.no_grad() if cond else nullcontext(), open(path()) as f:
        body()
    """
    facts = facts_of(src)
    assert facts.grad_mode.mode_at(find(facts.module, "path()", cst.Call)) is ON


def test_decorators_called_or_not():
    src = """
    import torch
    @torch.no_grad()
    def a():
        x()
    @torch.inference_mode
    def b():
        y()
    @torch.enable_grad()
    def c():
        z()
    with torch.no_grad():
        c()
    """
    assert modes(src, "x()", "y()", "z()") == [OFF, OFF, ON]


def test_function_called_only_under_no_grad():
    src = """
    import torch
    def evaluate():
        inner()
    def helper():
        evaluate()
    def mixed():
        other()
    def never_called():
        lonely()
    with torch.no_grad():
        helper()
        mixed()
    mixed()
    """
    # evaluate <- helper <- under no_grad: off through two levels.
    assert modes(src, "inner()", "other()", "lonely()") == [OFF, UNKNOWN, ON]


def test_function_passed_by_name_is_not_trusted():
    src = """
    import torch
    def evaluate():
        inner()
    with torch.no_grad():
        evaluate()
    callbacks.append(evaluate)
    """
    # Its unseen callers may run it with grad on: not trusted to be off.
    assert modes(src, "inner()") == [UNKNOWN]


def test_methods_called_through_self():
    src = """
    import torch
    class Trainer:
        def validate(self):
            inner()
        def fit(self):
            with torch.no_grad():
                self.validate()
    """
    assert modes(src, "inner()") == [OFF]


def test_bare_set_grad_enabled_statement():
    src = """
    import torch
    before()
    torch.set_grad_enabled(False)
    after()
    """
    assert modes(src, "before()", "after()") == [ON, OFF]


def test_lightning_hooks():
    src = """
    import torch
    import pytorch_lightning as pl
    class M(pl.LightningModule):
        def training_step(self, batch, i):
            a()
        def validation_step(self, batch, i):
            b()
    """
    assert modes(src, "a()", "b()") == [ON, OFF]


def test_transformers_pipeline_forward_hook():
    src = """
    from transformers import Pipeline
    class QA(Pipeline):
        def _forward(self, inputs):
            a()
        def preprocess(self, inputs):
            b()
    class NotAPipeline:
        def _forward(self, inputs):
            c()
    """
    assert modes(src, "a()", "b()", "c()") == [OFF, ON, ON]


def test_custom_autograd_function_methods():
    src = """
    import torch
    from torch.autograd import Function
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            a()
        @staticmethod
        def backward(ctx, g):
            b()
    class Clip(Function):
        @staticmethod
        def forward(ctx, x):
            c()
    class Layer(torch.nn.Module):
        def forward(self, x):
            d()
    """
    assert modes(src, "a()", "b()", "c()", "d()") == [OFF, UNKNOWN, OFF, ON]


def test_disabling_context():
    src = """
    import torch
    with torch.no_grad():
        for x in loader:
            y()
    """
    facts = facts_of(src)
    ctx = facts.grad_mode.disabling_context(find(facts.module, "y()", cst.Call))
    assert isinstance(ctx, cst.With)


def test_context_held_in_a_variable():
    src = """
    import torch
    from contextlib import nullcontext
    def f(model, train):
        ctx = torch.no_grad()
        with ctx:
            a()
        maybe = nullcontext() if train else torch.no_grad()
        with maybe:
            b()
        other = open("log.txt")
        with other:
            c()
    """
    assert modes(src, "a()", "b()", "c()") == [OFF, UNKNOWN, ON]


def test_decorator_applied_by_a_call_and_contexts_entered_on_a_stack():
    src = """
    import torch
    from contextlib import ExitStack
    def _predict(model, x):
        a()
    predict = torch.inference_mode()(_predict)
    def run(model, loader):
        with ExitStack() as stack:
            b()
            stack.enter_context(torch.no_grad())
            c()
            if flag:
                d()
    """
    assert modes(src, "a()", "b()", "c()", "d()") == [OFF, ON, OFF, OFF]


def test_method_called_only_under_no_grad_through_an_instance():
    src = """
    import torch
    class Shadow:
        def update(self, model):
            a()
        def reset(self):
            b()
    def step(ema, shadow, model):
        with torch.no_grad():
            ema.update(model)
        shadow.reset()
    """
    facts = facts_of(src)
    grad = facts.grad_mode
    fns = {fn.name.value: fn for fn in facts.calls.functions}
    assert grad.method_called_without_grad(fns["update"])
    assert not grad.method_called_without_grad(fns["reset"])
    assert not grad.method_called_without_grad(fns["step"])  # not a method


def test_context_managers_of_the_project():
    src = """
    import contextlib
    import torch
    from helpers import evaluating, progress
    @contextlib.contextmanager
    def quiet():
        with torch.no_grad():
            yield
    @contextlib.contextmanager
    def timed():
        yield
    with quiet():
        a()
    with timed():
        b()
    with evaluating(model):
        c()
    with progress(loader):
        d()
    """
    assert modes(src, "a()", "b()", "c()", "d()") == [OFF, ON, UNKNOWN, ON]


INHERITED = """
import torch
class Base:
    def train(self):
        with torch.no_grad():
            self._valid_epoch()
class Trainer(Base):
    def _valid_epoch(self):
        return self.model(self.x)
class Deeper(Trainer):
    pass
class Own(Base):
    def train(self):
        self._valid_epoch()
    def _valid_epoch(self):
        return self.model(self.x)
"""


def test_a_method_run_by_a_base_class_method_the_subclass_inherits_takes_its_mode():
    facts = facts_of(INHERITED)
    classes = {c.name.value: c for c in facts.module.body if isinstance(c, cst.ClassDef)}
    trainer = facts.calls.methods[classes["Trainer"]]["_valid_epoch"]
    own = facts.calls.methods[classes["Own"]]["_valid_epoch"]
    assert facts.grad_mode.entry_mode(trainer) is OFF
    # ``Own`` overrides ``train``: the base class's call never runs its method
    assert facts.grad_mode.entry_mode(own) is ON
    assert not facts.calls.inherited_sites.get(own)


def _entered(src: str, text: str) -> bool:
    facts = facts_of(src)
    return facts.grad_mode.entered_with_grad_here(find(facts.module, text, cst.Call))


_MIXED = """
import torch
def validate(model, x):
    return model(x)
def main(model, x, evaluate):
    if evaluate:
        validate(model, x)
    with torch.no_grad():
        validate(model, x)
"""


def test_entered_with_grad_by_one_call_of_the_module():
    # RULES.md's MEM201: a helper not called *only* from no_grad in its own module.
    assert modes(_MIXED, "model(x)") == [UNKNOWN]
    assert _entered(_MIXED, "model(x)")


def test_not_entered_with_grad_when_every_call_is_off_or_unknown():
    off = _MIXED.replace("    if evaluate:\n        validate(model, x)\n", "")
    assert not _entered(off, "model(x)")
    assert not _entered(
        _MIXED.replace("def validate(model, x):", "@torch.no_grad()\ndef validate(model, x):"), "model(x)"
    )
    # handed out: whoever receives it calls it in a mode this module does not show
    handed = _MIXED + "hooks = [validate]\n"
    assert not _entered(handed, "model(x)")


def test_a_mode_set_inside_the_function_is_its_own():
    inner = _MIXED.replace("    return model(x)", "    with torch.enable_grad():\n        return model(x)")
    assert not _entered(inner, "model(x)")
