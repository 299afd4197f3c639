"""GateFacts (gate/facts.py) and how the engine uses them."""

from __future__ import annotations

import ast
import importlib
import textwrap

import libcst as cst
import pytest

from memlint.gate.cards import CARDS
from memlint.gate.facts import GateFacts, enabled_by_gate
from memlint.lint import engine, screen
from memlint.lint.engine import ParseError, applicable_rules, lint
from memlint.project.view import ProjectView
from memlint.rule import Rule
from memlint.rule.registry import select_rules


def facts(src: str) -> GateFacts:
    return GateFacts(ast.parse(textwrap.dedent(src)))


class _EveryBackward(Rule):
    """A rule with the default tokens and no gate: reports every ``.backward()``."""

    code = "MEM999"
    name = "every-backward"
    message = "a backward"

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward":
            self.report(node)


# A training script that imports everything from local modules (issue 14, item 7).
NO_TORCH_SCRIPT = """\
from mymodels import Net
from mydata import loader
model, opt = Net(), Net.optimizer()
for x, y in loader:
    loss = model.loss(x, y)
    loss.backward()
    opt.step()
"""

# A model file: no training, no evaluation, nothing any default rule needs.
MODEL_FILE = """\
import torch
import torch.nn as nn

class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
    def forward(self, x):
        for _ in range(2):
            x = x + self.fc(self.norm(x))
        return torch.relu(x)
"""


def test_training_verbs_pass_the_pre_filter_without_torch():
    codes = {r.code for r in applicable_rules(NO_TORCH_SCRIPT, select_rules())}
    assert {"MEM101", "MEM102", "MEM104", "MEM201", "MEM202"} <= codes
    assert [f.code for f in lint(NO_TORCH_SCRIPT, "t.py", [_EveryBackward])[0]] == ["MEM999"]


@pytest.mark.parametrize("verb", ["loss.backward()", "opt.zero_grad()", "opt . step ()"])
def test_each_training_verb_alone_passes_the_pre_filter(verb):
    assert applicable_rules(f"x = 1\n{verb}\n", [_EveryBackward]) == [_EveryBackward]


def test_a_rule_without_a_gate_is_never_skipped():
    # Nothing here satisfies any declared condition...
    g = facts("import torch\nx = torch.ones(2)\nx.backward()\n")
    gated = [r for r in select_rules() if r.gate is not None and r.gate(g)]
    assert enabled_by_gate([_EveryBackward], g) == [_EveryBackward]
    # ...and the ungated rule still runs and reports.
    found, _ = lint("import torch\nx = torch.ones(2)\nx.backward()\n", "t.py", [*gated, _EveryBackward])
    assert [f.code for f in found] == ["MEM999"]


def test_a_file_no_rule_can_fire_in_is_not_parsed_by_libcst(monkeypatch):
    calls = []
    real = engine.parse_module
    monkeypatch.setattr(engine, "parse_module", lambda text, tree=None: calls.append(text) or real(text, tree))
    rules = select_rules()
    assert applicable_rules(MODEL_FILE, rules)  # the pre-filter lets it through (it says torch)
    assert lint(MODEL_FILE, "m.py", rules) == ([], None)
    assert calls == []
    monkeypatch.setattr(screen, "GATE", False)
    assert lint(MODEL_FILE, "m.py", rules)[0] == []
    assert calls == [MODEL_FILE]


def test_text_python_cannot_parse_is_not_gated():
    with pytest.raises(ParseError):
        lint("import torch\nfor x in loader:\n    loss.backward(\n", "t.py", select_rules())


def test_training_verbs_are_calls_not_mentions():
    assert not facts("p.grad.zero_()\nif p.grad is None: pass\nstep = 3\n").trains
    assert facts("loss.backward()").backward
    assert facts("accelerator.backward(loss)").backward
    assert facts("self.manual_backward(loss)").backward
    assert facts("import torch\ntorch.autograd.grad(y, x)").backward
    assert facts("from torch.autograd import backward as bw\nbw(loss)").backward
    assert not facts("from torch.autograd import backward").backward
    assert facts("opt.step()").trains and not facts("opt.step()").backward


def test_identifiers_in_strings_and_comments_do_not_count():
    g = facts('"""model.eval(); loss.backward()"""\n# optimizer.step()\nx = "no_grad"\n')
    assert not (g.trains or g.eval_call or g.grad_off)


def test_eval_call_is_a_switch_to_evaluation_mode():
    assert facts("model.eval()").eval_call
    assert facts("model.train(False)").eval_call
    assert not facts("model.train()").eval_call
    assert not facts("self.head.train(self.training)").eval_call
    assert not facts("eval(expression, env)").eval_call


def test_batch_evidence():
    assert facts("for x, y in val_loader:\n    pass\n").batch_evidence
    assert facts("for s in ['train', 'val']:\n    pass\n").batch_evidence  # strings in the iterable count
    assert facts("def validate(m, xs):\n    return [m(x) for x in xs]\n").batch_evidence
    assert not facts("def validate(m, x):\n    return m(x)\n").batch_evidence  # no loop in it
    assert facts("class M:\n    def training_step(self, batch, i):\n        return 1\n").step_hooks
    assert not facts("for blk in self.blocks:\n    x = blk(x)\n").batch_evidence


def test_names_written_in_place():
    g = facts(
        """
        a += 1
        b[0] = 1
        c.add_(1)
        torch.relu_(d)
        F.relu(e, inplace=True)
        f.g += 1
        h[0][1] = 2
        """
    )
    assert {"a", "b", "c", "d", "e"} <= g.inplace_names  # (a superset: ``torch`` too)
    assert not {"f", "g", "h"} & g.inplace_names


def test_saved_outputs_and_leaves():
    g = facts(
        """
        from torch import sigmoid as sg
        s = sg(x)
        t = x.exp()
        u = F.linear(x, w)
        w = nn.Parameter(torch.zeros(3))
        v = torch.ones(3, requires_grad=True)
        z.requires_grad = True
        q = torch.ones(2).requires_grad_()
        for p in model.parameters():
            pass
        """
    )
    assert g.output_names == {"s", "t"}
    assert g.leaf_names == {"w", "v", "z", "q", "p"}


def test_state_dict_snapshots():
    assert facts("best = model.state_dict()").state_dict_snapshot
    assert facts("best = model.state_dict().copy()").state_dict_snapshot
    assert facts("ckpt = {'model': model.state_dict(), 'epoch': 3}").state_dict_snapshot
    assert not facts("torch.save(model.state_dict(), path)").state_dict_snapshot
    assert not facts("sd = model.state_dict(prefix='x')").state_dict_snapshot


def test_checkpoint_calls_memlint_may_flag():
    assert facts("from torch.utils.checkpoint import checkpoint as ck\nck(f, x)").checkpoint_without_reentrant
    assert not facts("checkpoint(f, x, use_reentrant=False)").checkpoint_without_reentrant
    assert not facts("checkpoint(f, x, **kw)").checkpoint_without_reentrant


def test_sequential_with_an_inplace_module_after_one_that_saves_its_output():
    assert facts("nn.Sequential(nn.Linear(2, 2), nn.Sigmoid(), nn.ReLU(inplace=True))").inplace_after_saver
    assert facts("nn.Sequential(nn.Tanh(), nn.ReLU(True))").inplace_after_saver
    assert facts("nn.Sequential(OrderedDict([('a', nn.ReLU()), ('b', nn.ELU(inplace=True))]))").inplace_after_saver
    assert not facts("nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(inplace=True))").inplace_after_saver
    assert not facts("nn.Sequential(nn.ReLU(inplace=True), nn.Sigmoid())").inplace_after_saver


def test_a_list_of_layers_unpacked_into_a_sequential():
    """``layers = [nn.ReLU(), nn.Dropout(p, inplace=True)]; nn.Sequential(*layers)``
    (activations.unpacked_layers)."""
    unpacked = "layers = [nn.Linear(2, 2), nn.ReLU(), nn.Dropout(0.5, inplace=True)]\nm = nn.Sequential(*layers)"
    assert facts(unpacked).inplace_after_saver
    assert _findings(f"import torch.nn as nn\n{unpacked}\n", ["MEM402"], gate=False)
    assert not facts(unpacked.replace("nn.ReLU(), ", "")).inplace_after_saver
    assert not facts(unpacked.replace("*layers", "*blocks")).inplace_after_saver


def test_train_call_is_what_mode_call_reads_as_train():
    assert facts("model.train()").train_call
    assert facts("model.train(True)").train_call
    assert facts("model.train(mode=True)").train_call
    assert not facts("self.head.train(self.training)").train_call  # "unknown" to mode_call
    assert not facts("model.train(False)").train_call


def test_builds_module_under_a_name_a_model_call_may_name():
    assert facts(
        "from torch import nn\nfrom nets import Net\nclass Net(nn.Module):\n    pass\nmodel = Net()\nmodel(x)"
    ).builds_module
    assert facts("from torch import nn\nmodel = nn.Sequential(a, b).to(dev)\nevaluate(model, loader)").builds_module
    assert facts("import torch.nn as tnn\nmodel = tnn.Linear(2, 2)\nmodel(x)").builds_module
    assert facts("model = model.cuda()\nmodel.validate(loader)").builds_module
    assert facts("import torchvision\nnet = torchvision.models.resnet18()\nnet(x)").builds_module
    assert facts("from torchvision.models import resnet18\nnet = resnet18()\nnet(x)").builds_module
    assert facts("import timm\nm = timm.create_model('vit')\nrun(model=m)").builds_module
    assert facts("import torch.nn as nn\nclass net(nn.Module):\n    pass\nm = net()\nm(x)").builds_module
    assert facts(
        "import torch\nclass G(torch.nn.Module):\n    pass\nclass D(G):\n    pass\ng, d = G(), D()\nd(x)"
    ).builds_module
    assert facts("import lightning as L\nclass D(L.LightningModule):\n    pass\nd = D()\nd(x)").builds_module
    # constructor_kind knows no module outside torch, torchvision and timm, nor an unimported callee;
    # a name imported from what may be the project may be one of its model classes until the view
    # says (objects._fresh: ProjectView.mode_classes, gate/project_gate.py asks again)
    output = "from transformers.modeling_outputs import BaseModelOutput\nout = BaseModelOutput(h)\nf(out)"
    relative = "from .modeling import Net\nmodel = Net()\nmodel(x)"
    assert facts(output).builds_module and facts(relative).builds_module
    assert not facts(output).given_project_classes(frozenset()).builds_module
    assert not facts(relative).given_project_classes(frozenset()).builds_module
    assert facts(relative).given_project_classes(frozenset({"Net"})).builds_module
    assert not facts("model = Net()\nmodel(x)").builds_module  # bound nowhere in the file
    # objects._class_kind: a class of this file is a module only through an imported base
    assert not facts("class G:\n    pass\nclass D:\n    pass\ng, d = G(), D()\nd(x)").builds_module
    assert not facts("class net(nn.Module):\n    pass\nm = net()\nm(x)").builds_module  # ``nn`` not imported
    assert not facts("from .base import Base\nclass D(Base):\n    pass\nd = D()\nd(x)").builds_module
    output = "from torch import nn\nclass Out(ModelOutput):\n    pass\nclass FocalLoss(nn.Module):\n    pass\n"
    assert not facts(output + "o = Out(h)\nf(o)\nl = FocalLoss()\nl(x)").builds_module  # a loss, an output
    assert not facts("from torch import nn\nloss_fct = nn.CrossEntropyLoss()\nloss_fct(x, y)").builds_module
    assert not facts("import torch\np = torch.nn.Parameter(w)\nf(p)").builds_module
    assert not facts("import torch\nm = torch.hub.load('a', 'b')\nm(x)").builds_module  # loaded, not built
    # timm's reparameterisation: a module built, filled and returned, never called here
    assert not facts("m = nn.Linear(2, 2)\nm.weight.data.copy_(w)\nreturn_it = m").builds_module
    assert not facts("model = build_model(cfg)\nmodel(x)").builds_module  # a factory of unknown kind
    assert not facts("x = y[:, None].float()\nx(z)").builds_module  # .float() of something not the same name
    assert not facts(
        "class A(nn.Module):\n    def __init__(self):\n        self.head = nn.Linear(2, 2)\n"
        "    def forward(self, x):\n        return self.head(x)\n"
    ).builds_module  # ``self`` is a parameter


def test_builds_module_through_a_factory_of_this_file_only_when_it_may_build_one():
    factory = "import torch\nfrom torch import nn\ndef get_model():\n    model = nn.Linear(2, 2)\n"
    assert facts(factory + "    return model.cuda()\nmodel = get_model()\nmodel(x)").builds_module
    chained = "def get():\n    return make()\ndef make():\n    return nn.Linear(2, 2)\nfrom torch import nn\n"
    assert facts(chained + "model = get()\nmodel(x)").builds_module  # a factory of a factory
    # a def of this file that builds no module (transformers' ``rotate_half``) is no factory
    helper = "import torch\ndef rotate_half(x):\n    return torch.cat((-x[1], x[0])).to(x.device)\n"
    assert not facts(helper + "model = rotate_half(q)\nmodel(x)").builds_module
    assert not facts("def get():\n    nn.Linear(2, 2)\nfrom torch import nn\nmodel = get()\nmodel(x)").builds_module
    # a class of another module of the project (the view's model classes): imported, relative or starred
    project = "def get():\n    model = UNet16(2)\n    return model.cuda()\nmodel = get()\nmodel(x)\n"
    assert facts("from models import UNet16\n" + project).builds_module
    assert facts("from .models import UNet16\n" + project).builds_module
    assert facts("from models import *\n" + project).builds_module
    assert not facts("from torch import zeros as UNet16\n" + project).builds_module  # a library callee


def test_saved_output_written_in_place_in_the_same_function():
    forward = "class M(nn.Module):\n    def forward(self, x):\n        s = torch.sigmoid(x)\n        s.mul_(2)\n"
    assert facts(forward).saved_output_written_in_place
    assert facts("s = x.exp()\ns += 1\nloss.backward()\n").saved_output_written_in_place
    g = facts("def f(x):\n    s = torch.sigmoid(x)\n    return s\ndef g(w, s):\n    w.div_(s)\n    s += 1\n")
    assert not g.saved_output_written_in_place  # a name of the same spelling in another function
    assert not facts(
        "def f(w):\n    s = math.sqrt(2.0)\n    w.div_(s)\n"
    ).saved_output_written_in_place  # an argument, not written


# Each: a file the old condition (a name saved and written in place in one
# scope) sent to libcst, MEM402 silent without the gate; then its twin the
# rule reports in, which the gate must keep.
_MEM402_SKIPPED_AND_KEPT = [
    (  # m2m_100's get_embedding: ``emb`` rebound by a non-saving op before the write
        "import torch\nclass E(nn.Module):\n    def forward(self, x):\n        emb = torch.exp(x)\n"
        "        emb = emb * 2\n        emb[0, :] = 0\n        return emb\n",
        "import torch\nclass E(nn.Module):\n    def forward(self, x):\n        emb = self.proj(x)\n"
        "        emb = torch.exp(emb)\n        emb[0, :] = 0\n        return emb\n",
    ),
    (  # falcon: the write comes before the saving op
        "import torch.nn.functional as F\nclass A(nn.Module):\n    def forward(self, x):\n"
        "        s = self.q(x) @ self.k(x)\n        s /= 8\n        s = F.softmax(s, dim=-1)\n        return s\n",
        "import torch.nn.functional as F\nclass A(nn.Module):\n    def forward(self, x):\n"
        "        s = self.q(x) @ self.k(x)\n        s = F.softmax(s, dim=-1)\n        s /= 8\n        return s\n",
    ),
    (  # the write in another branch than the saving statement
        "import torch\nclass A(nn.Module):\n    def forward(self, x):\n        if self.flag:\n"
        "            s = torch.sigmoid(self.proj(x))\n        else:\n            s = x\n            s += 1\n"
        "        return s\n",
        "import torch\nclass A(nn.Module):\n    def forward(self, x):\n        if self.flag:\n"
        "            s = torch.sigmoid(self.proj(x))\n            s += 1\n        else:\n            s = x\n"
        "        return s\n",
    ),
    (  # a pipeline's post-processing: neither forward nor a function with a backward
        "import torch\ndef select(logits):\n    s = torch.softmax(logits, -1)\n    s[0] = 0\n    return s\n",
        "import torch\ndef train(model, x):\n    logits = model(x)\n    s = torch.softmax(logits, -1)\n"
        "    s[0] = 0\n    s.sum().backward()\n",
    ),
    (  # a helper named like nothing called, in a file with a forward
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        return self.a(x)\n"
        "    def unused(self, x):\n        s = torch.sigmoid(self.a(x))\n        s.mul_(2)\n        return s\n",
        "import torch\nclass M(nn.Module):\n    def forward(self, x):\n        return self.helper(x)\n"
        "    def helper(self, x):\n        s = torch.sigmoid(self.a(x))\n        s.mul_(2)\n        return s\n",
    ),
]


@pytest.mark.parametrize(("skipped", "kept"), _MEM402_SKIPPED_AND_KEPT)
def test_mem402_needs_the_write_while_saved_in_training_code(skipped, kept):
    """mem402._check: the name still saved (no rebinding between, the write
    after and inside the saving block), in forward (or what it calls) or a
    function with a backward."""
    f = facts(skipped)
    assert f.output_names & f.inplace_names  # what the old condition read
    assert not _gated_in(skipped, "MEM402")
    assert not _findings(skipped, ["MEM402"], gate=False)
    _kept_with_its_findings(kept, "MEM402")


# Each: a file the old condition (a name written in place, anywhere, that
# some statement may make a leaf; grad maybe on there) sent to libcst, MEM401
# silent without the gate; then its twin the rule reports in.
_MEM401_SKIPPED_AND_KEPT = [
    (  # hubert: marked ``requires_grad = True`` in one function, written in another
        "def grads(x):\n    x.requires_grad = True\n    return x\ndef mask(x, m):\n    x[m] = 0\n    return x\n",
        "def grads(x):\n    x.requires_grad = True\n    x[0] = 0\n    return x\n",
    ),
    (  # rebound to something else before the write
        "import torch\ndef f(x):\n    w = torch.nn.Parameter(x)\n    w = w * 2\n    w += 1\n    return w\n",
        "import torch\ndef f(x):\n    w = x * 2\n    w = torch.nn.Parameter(w)\n    w += 1\n    return w\n",
    ),
    (  # roformer: made with ``requires_grad=False``
        "import torch\ndef table(n):\n    out = torch.empty(n, 4, requires_grad=False)\n    out[:, 0] = 1\n"
        "    return out\n",
        "import torch\ndef table(n):\n    out = torch.empty(n, 4, requires_grad=True)\n    out[:, 0] = 1\n"
        "    return out\n",
    ),
    (  # the leaf written only under no_grad; a local of that name written with grad on
        "import torch\ndef step(w):\n    with torch.no_grad():\n        w.requires_grad_()\n        w -= 1\n"
        "def other(x):\n    w = x * 2\n    w += 1\n",
        "import torch\ndef step(w):\n    w.requires_grad_()\n    w -= 1\ndef other(x):\n    w = x * 2\n    w += 1\n",
    ),
]


@pytest.mark.parametrize(("skipped", "kept"), _MEM401_SKIPPED_AND_KEPT)
def test_mem401_needs_a_leaf_at_the_write_with_grad_on(skipped, kept):
    """mem401._leaf: a parameter loop around the write, the function's own
    bindings in the order the rule reads them, or a leaf made outside the
    function; and grad_mode.mode_at may be ENABLED at that write."""
    f = facts(skipped)
    assert f.inplace_names & f.leaf_names  # what the old condition read
    assert f.grad_on_writes.inplace_names & f.leaf_names
    assert not _gated_in(skipped, "MEM401")
    assert not _findings(skipped, ["MEM401"], gate=False)
    _kept_with_its_findings(kept, "MEM401")


def test_mem401_counts_every_write_where_the_grad_walk_cannot_follow_the_mode():
    """grad_on_writes gives up on a bare ``set_grad_enabled``: every leaf write counts."""
    src = "import torch\ntorch.set_grad_enabled(True)\nw = torch.zeros(3, requires_grad=True)\nw += 1\n"
    _kept_with_its_findings(src, "MEM401")


def test_leaves_of_loops_only_over_parameters_or_a_list():
    assert "p" in facts("for i, p in enumerate(model.parameters()):\n    pass\n").leaf_names
    assert "p" in facts("for n, p in zip(names, model.named_parameters()):\n    pass\n").leaf_names
    assert "p" in facts("for p in params:\n    pass\n").leaf_names
    assert "info" not in facts("for info in self.feature_info:\n    info['a'] = 1\n").leaf_names
    assert "i" not in facts("for i in range(3):\n    pass\n").leaf_names


def test_sharper_rule_gates_skip_libcst(monkeypatch):
    """Files that the earlier, coarser conditions sent to libcst (timm's
    layers) and no rule can fire in."""
    parsed = []
    real = engine.parse_module
    monkeypatch.setattr(engine, "parse_module", lambda *a, **k: parsed.append(1) or real(*a, **k))
    rules = select_rules()
    texts = [
        # MEM202's old condition (a loop, a no_grad): no .train(), no module built under a name a model call uses
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        for blk in self.blocks:\n"
        "            x = blk(x)\n        return x\n    @torch.no_grad()\n    def init(self):\n"
        "        for m in self.modules():\n            m.reset_parameters()\n        self.head.train(self.training)\n",
        # MEM402's old condition: ``scale`` saved in one function, an argument of an in-place op in another
        "import math, torch\ndef f(x):\n    scale = math.sqrt(2.0)\n    return x * scale\n"
        "def g(buf, scale):\n    buf.div_(scale)\n",
        # MEM804's old condition: verbose= to something that is not a torch scheduler
        "import torch\ntrainer = Trainer(model, verbose=True)\n",
        # MEM404 had no gate: every file that says ``backward`` (a custom autograd Function) reached libcst
        "import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def backward(ctx, g):\n"
        "        return g * 2\n",
    ]
    for text in texts:
        assert lint(text, "m.py", rules)[0] == []
    assert parsed == []


def test_builds_module_whatever_order_a_name_is_imported_twice_in():
    # names.ImportTable answers per call site: a name imported from torch in
    # one function and from elsewhere in another may build a module.
    src = (
        "def a():\n    from torch.nn import Linear\n    m = Linear(2, 2)\n    m(x)\n"
        "def b():\n    from mylib import Linear\n    Linear(1)\n"
    )
    assert facts(src).builds_module  # ast.walk met ``mylib``'s import last: the gate used to say no
    swapped = (
        "def b():\n    from mylib import Linear\n    Linear(1)\n"
        "def a():\n    from torch.nn import Linear\n    m = Linear(2, 2)\n    m(x)\n"
    )
    assert facts(swapped).builds_module


def test_the_walk_sees_what_ast_walk_sees():
    src = textwrap.dedent(
        """
        import torch.nn as tnn
        @torch.no_grad()
        def evaluate(model, loader):
            for x in (b for b in loader):
                out = [model(y) for y in x]
                total += loss.item()
            while running:
                opt.step()
        class K: pass
        """
    )
    f = facts(src)
    every = {n.id for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Name)}
    assert every <= f.idents
    assert {"no_grad", "step", "item", "model"} <= f.called | f.idents
    assert f.loops and f.comprehensions and f.eval_function_loops
    assert {"loader", "x", "running"} <= f.iter_tokens | f.idents
    assert "K" in f.idents and "evaluate" in f.def_names


def test_the_collector_is_paused_while_a_file_is_linted_and_restored_after():
    import gc

    from memlint.parse.collector import collector_paused

    seen = []

    class _Probe(Rule):
        code = "MEM998"
        name = "probe"
        message = "probe"

        def visit_Module(self, node: cst.Module) -> None:
            seen.append(gc.isenabled())

    assert gc.isenabled()
    lint("import torch\nx = torch.ones(1)\n", "a.py", [_Probe])
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            with collector_paused():
                pass
            assert not gc.isenabled()
        assert not gc.isenabled()  # left off: it was off before
    finally:
        gc.enable()


def _grad_on(src: str) -> GateFacts:
    return facts(src).grad_on_writes


def test_writes_under_no_grad_are_not_writes_autograd_records():
    # MEM401 reports only where grad_mode.mode_at is ENABLED
    body = "    emb.proj.weight.copy_(w)\n    p.add_(1)\n    q += 1\n    r[0] = 1\n"
    on = _grad_on("import torch\ndef f(p, q, r):\n" + body)
    assert {"p", "q", "r"} <= on.inplace_names and on.inplace_parameter_attr
    for ctx in ("torch.no_grad()", "torch.inference_mode()", "torch.inference_mode(True)", "torch.no_grad"):
        off = _grad_on(f"import torch\ndef f(p, q, r):\n    with {ctx}:\n" + textwrap.indent(body, "    "))
        assert not off.inplace_names and not off.inplace_parameter_attr, ctx
    off = _grad_on("from torch import no_grad as ng\n@ng()\ndef f(p, q, r):\n" + body)
    assert not off.inplace_names and not off.inplace_parameter_attr
    # autocast leaves the mode as it was (off here)
    assert not _grad_on("import torch\nwith torch.no_grad():\n    with autocast():\n        p.add_(1)\n").inplace_names


def test_writes_where_grad_may_be_on_again_still_count():
    cases = [
        "import torch\nwith torch.no_grad():\n    with torch.enable_grad():\n        p.add_(1)\n",
        "import torch\nwith torch.no_grad(), torch.set_grad_enabled(flag):\n    p.add_(1)\n",
        "import torch\nwith torch.inference_mode(False):\n    p.add_(1)\n",
        "import torch\nctx = torch.no_grad()\nwith ctx:\n    p.add_(1)\n",  # a name may be bound to anything
        "import torch\nwith torch.no_grad():\n    def g():\n        p.add_(1)\n",  # runs when called
        "import torch\n@torch.no_grad()\n@torch.enable_grad()\ndef f():\n    p.add_(1)\n",
        "with no_grad():\n    p.add_(1)\n",  # not imported: context_mode does not know it
        "with torch.no_grad():\n    p.add_(1)\n",
        "import torch\ndef torch_fn(torch):\n    pass\nwith torch.no_grad():\n    p.add_(1)\n",  # rebound
        "from torch import no_grad\nfrom torch.autograd import no_grad\nwith no_grad():\n    p.add_(1)\n",  # ambiguous
        "import torch\nwith torch.no_grad():\n    torch.set_grad_enabled(True)\n    p.add_(1)\n",
        "import torch\nwith torch.no_grad():\n    stack.enter_context(torch.enable_grad())\n    p.add_(1)\n",
    ]
    for src in cases:
        assert "p" in _grad_on(src).inplace_names, src


def test_mem401_is_gated_out_where_every_write_runs_without_grad():
    rules = [r for r in select_rules(["MEM401"])]
    src = (
        "import torch\n@torch.no_grad()\ndef load(model, w):\n    model = nn.Linear(2, 2)\n    model.weight.copy_(w)\n"
    )
    assert not enabled_by_gate(rules, facts(src))
    assert enabled_by_gate(rules, facts(src.replace("@torch.no_grad()\n", "")))


def test_a_loop_may_run_without_grad_only_where_grad_mode_may_find_it_off():
    def off(src: str) -> bool:
        return facts(src).loop_may_run_without_grad

    assert off("import torch\nwith torch.no_grad():\n    for x in loader:\n        model(x)\n")
    assert off("for x in loader:\n    with torch.inference_mode():\n        model(x)\n")  # opened around the calls
    assert off("@torch.no_grad()\ndef evaluate(loader):\n    for x in loader:\n        model(x)\n")
    assert off("def validation_step(self, batch):\n    for x in batch:\n        self(x)\n")  # Lightning's hook
    assert off("with ctx:\n    for x in loader:\n        model(x)\n")  # ``ctx`` may be ``torch.no_grad()``
    assert off(
        "def quiet():\n    yield\nwith quiet():\n    for x in loader:\n        model(x)\n"
    )  # a helper of this file
    # entered with grad off through its call sites, followed by name
    assert off(
        "def run(loader):\n    for x in loader:\n        model(x)\n"
        "def outer():\n    run(a)\nwith torch.no_grad():\n    outer()\n"
    )
    assert off("def run(loader):\n    for x in loader:\n        model(x)\npredict = torch.inference_mode()(run)\n")
    assert off("class F(torch.autograd.Function):\n    def forward(ctx, x):\n        for i in x:\n            net(i)\n")
    assert off("torch.set_grad_enabled(False)\nfor x in loader:\n    model(x)\n")  # not followed: kept
    # grad on everywhere a loop is
    assert not off("import torch\nwith torch.no_grad():\n    w.zero_()\nfor x in loader:\n    model(x)\n")
    assert not off("with open(p) as f:\n    for line in f:\n        g(line)\n")
    assert not off(
        "@torch.no_grad()\ndef init(m):\n    m.weight.zero_()\ndef fit(loader):\n    for x in loader:\n        model(x)\n"
    )
    assert not off("with torch.no_grad():\n    def g(loader):\n        for x in loader:\n            model(x)\n")
    # decorators are read by context_mode alone: a bare name or a helper of this file sets no mode
    assert not off(
        "def deco(f):\n    return f\n@staticmethod\n@deco()\ndef g(loader):\n    for x in loader:\n        m(x)\n"
    )
    # a decorated ``forward`` (a rotary embedding's) is not every ``forward`` of the file
    assert not off(
        "class Rope:\n    @torch.no_grad()\n    def forward(self, x):\n        return x\n"
        "class Model:\n    def forward(self, x):\n        for layer in self.layers:\n            x = layer(x)\n"
    )


def test_the_walk_for_mem202_reads_calls_in_every_part_of_a_statement_where_grad_may_be_off():
    """_loop_may_run_without_grad walks statements and reads a statement's
    calls only where grad may be off: a condition, a handler, a case guard,
    a lambda, a ``with`` item, and a function's defaults count as its own."""
    run = "def run(loader):\n    for x in loader:\n        model(x)\n"

    def off(src: str) -> bool:
        return facts(run + src).loop_may_run_without_grad

    assert off("with torch.no_grad():\n    if run(a):\n        pass\n")
    assert off("with torch.no_grad():\n    try:\n        pass\n    except E:\n        run(a)\n")
    assert off("with torch.no_grad():\n    match x:\n        case 1 if run(a):\n            pass\n")
    assert off("with torch.no_grad():\n    f = lambda: run(a)\n")
    assert off("with torch.no_grad():\n    with open(run(a)):\n        pass\n")
    assert off("def outer(x=run(a)):\n    pass\nwith torch.no_grad():\n    outer()\n")
    # the same calls with grad on, or in a function nobody calls with grad off
    assert not off("if run(a):\n    pass\nf = lambda: run(a)\n")
    assert not off("def outer(x=run(a)):\n    pass\nouter()\n")


def test_mem202_is_gated_out_without_a_loop_that_may_run_without_grad():
    rules = select_rules(["MEM202"])
    model_file = (
        "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    pass\n"
        "@torch.no_grad()\ndef init(m):\n    m.weight.zero_()\n"
        "def fit(loader):\n    model = Net()\n    model.train()\n    for x in loader:\n        model(x)\n"
    )
    assert not enabled_by_gate(rules, facts(model_file))
    assert enabled_by_gate(rules, facts(model_file.replace("def fit", "@torch.no_grad()\ndef fit")))


def test_builds_module_leaves_names_built_in_train_mode_can_never_find_all_fresh():
    # a parameter of the def: loops.mode_before goes to the callers, never to _default_mode there
    assert not facts("def f(model, x):\n    model = model.to(dev)\n    model(x)\n").builds_module
    assert not facts("def f(model, x):\n    model = nn.Linear(2, 2)\n    model(x)\n").builds_module
    assert not facts("def f(*models):\n    models = models.cuda()\n    models(x)\n").builds_module
    # another ``=`` of the name in the same def is not fresh: not every definition builds a module
    assert not facts("def f(a, x):\n    h = a * 2\n    h = h.float()\n    h(x)\n").builds_module
    assert not facts(
        "def f(a, x):\n    class C:\n        h = a\n    h = h.to(dev)\n    h(x)\n"
    ).builds_module  # a class body in the def binds in the def (objects._key)
    assert not facts("def f(a, x):\n    h, i = torch.topk(a, 2)\n    h = h.to(dev)\n    h(x)\n").builds_module
    assert not facts("def f(a, x):\n    i, h = 1, a\n    h = h.to(dev)\n    h(x)\n").builds_module
    # twins that may still be found built here
    assert facts(
        "import torch.nn as nn\ndef f(x):\n    h, i = nn.Linear(2, 2), 1\n    h = h.to(dev)\n    h(x)\n"
    ).builds_module
    assert facts("def f(x):\n    model = model.to(dev)\n    model(x)\n").builds_module  # no other definition
    assert facts(
        "import torch.nn as nn\ndef f(x):\n    m = nn.Linear(2, 2)\n    m = m.to(dev)\n    m(x)\n"
    ).builds_module
    assert facts("model = model.cuda()\ndef f(model):\n    pass\nmodel(x)\n").builds_module  # the module's name
    # a def nested in the one with the parameter binds its own local
    assert facts("def f(model):\n    def g(x):\n        model = model.to(dev)\n        model(x)\n").builds_module
    # a non-fresh binding in another def, or in a nested def, leaves this def's name alone
    assert facts(
        "import torch.nn as nn\ndef f(a):\n    m = a * 2\ndef g(x):\n    m = nn.Linear(2, 2)\n    m(x)\n"
    ).builds_module
    assert facts(
        "import torch.nn as nn\ndef g(x):\n    m = nn.Linear(2, 2)\n    def h(a):\n        m = a * 2\n    m(x)\n"
    ).builds_module


# A function that evaluates the model it is given; grad off, no ``.train()``.
_EVALUATE_A_PARAMETER = """\
import torch
import torch.nn as nn
def evaluate(model, loader):
    model = model.to("cuda")
    with torch.no_grad():
        for x, y in loader:
            model(x)
"""


# transformers' modeling files: a module built here and a loop grad may be off
# in (a ``@torch.no_grad()`` init, a ``with torch.no_grad():``) that runs no model.
_NO_GRAD_LOOP_WITHOUT_A_MODEL = """\
import torch
import torch.nn as nn
@torch.no_grad()
def init_weights(params):
    for p in params:
        p.zero_()
def evaluate(loader):
    model = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    init_weights(model.parameters())
    with torch.no_grad():
        for x, y in loader:
            print(x.sum())
"""


def test_mem202_needs_a_model_call_in_a_loop_that_may_run_without_grad():
    """MEM202's ``_check`` needs ``info.model_calls``: a call in the loop
    objects.is_model_call may find a module call (_ModelReach). A loop
    under ``no_grad`` that calls ``p.zero_()`` or ``print`` never is."""
    src = _NO_GRAD_LOOP_WITHOUT_A_MODEL
    assert facts(src).builds_module and facts(src).grad_off  # what kept it before
    assert not facts(src).loop_may_run_without_grad
    assert not _gated_in(src, "MEM202")
    assert not _findings(src, ["MEM202"], gate=False)
    # the model run in the loop: kept, with the finding
    runs = src.replace("print(x.sum())", "print(model(x).sum())")
    _kept_with_its_findings(runs, "MEM202")
    for call in ("self(x)", "self.forward(x)", "net(x)", "m.module(x)", "f(x)", "f.forward(x)"):
        src2 = src.replace("print(x.sum())", call) + "f = load()\ndef m(self):\n    pass\n"
        assert facts(src2).loop_may_run_without_grad, call
    for call in ("self.count(x)", "g(x)", "x.view(x)", "self.a.b(x)"):  # kind_of finds no module in these
        assert not facts(src.replace("print(x.sum())", call)).loop_may_run_without_grad, call
    assert facts(src.replace("print(x.sum())", "self.head(x)") + "self.head = g()\n").loop_may_run_without_grad
    # every path: a ``with`` in the loop, a function entered with grad off
    inner_with = runs.replace(
        "    with torch.no_grad():\n        for x, y in loader:\n            print(",
        "    for x, y in loader:\n        with torch.no_grad():\n            print(",
    )
    _kept_with_its_findings(inner_with, "MEM202")
    assert not facts(inner_with.replace("model(x)", "x")).loop_may_run_without_grad
    assert facts(src.replace("p.zero_()", "net(p)")).loop_may_run_without_grad


def test_mem202_skips_a_parameter_moved_to_a_device_and_keeps_a_module_built_here(monkeypatch):
    rules = select_rules(["MEM202"])
    parsed = []
    real = engine.parse_module
    monkeypatch.setattr(engine, "parse_module", lambda *a, **k: parsed.append(1) or real(*a, **k))
    # A module-level helper handed its model: callers in other modules may hand
    # it one they trained (loops.external_modes), so it is kept; alone, silent.
    assert enabled_by_gate(rules, facts(_EVALUATE_A_PARAMETER))
    assert lint(_EVALUATE_A_PARAMETER, "m.py", rules)[0] == []
    # A method handed its model: nobody elsewhere is followed to it.
    method = "class E:\n" + textwrap.indent(_EVALUATE_A_PARAMETER.split("\n", 2)[2], "    ").replace(
        "def evaluate(model", "def evaluate(self, model"
    )
    method = "import torch\nimport torch.nn as nn\n" + method
    assert not enabled_by_gate(rules, facts(method))
    parsed.clear()
    assert lint(method, "m.py", rules)[0] == []
    assert parsed == []
    built = _EVALUATE_A_PARAMETER.replace(
        "def evaluate(model, loader):\n",
        "def evaluate(loader):\n    model = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))\n",
    )
    assert enabled_by_gate(rules, facts(built))
    assert [f.code for f in lint(built, "m.py", rules)[0]] == ["MEM202"]


# transformers' qwen3_omni_moe: a module list built in ``__init__``, the
# ``@torch.no_grad()`` loop in another method that never calls it.
_BUILT_ELSEWHERE = """\
import torch
from torch import nn
class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        decoder = [nn.Linear(4, 4), nn.Dropout(0.1)]
        self.decoder = nn.ModuleList(decoder)
    @torch.no_grad()
    def chunked_decode(self, codes):
        wavs = []
        for chunk in codes.split(300, dim=-1):
            wavs.append(self(chunk))
        return torch.cat(wavs, dim=-1)
"""

_BUILT_BY_A_CALLER = """\
import torch
import torch.nn as nn
@torch.no_grad()
def predict(model, loader):
    for x in loader:
        print(model(x).argmax(1))
def run(model):
    predict(model, test_loader)
def main():
    net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    run(net)
"""


def test_mem202_needs_the_module_built_where_mode_before_may_read_it():
    """objects.built_in_train_mode reads a bare name keyed by its innermost
    def, only for a receiver local to the scope loops.mode_before ends in:
    the loop's, or a caller's (by call sites, transitively). A module built
    in a def that is neither (transformers' ``__init__``) cannot make the
    loop's state "default-*"; the old gate kept any module built anywhere."""
    rules = select_rules(["MEM202"])
    f = facts(_BUILT_ELSEWHERE)
    assert f.builds_module and f.loop_may_run_without_grad  # what kept it before
    assert not f.module_built_for_a_loop_without_grad
    assert not enabled_by_gate(rules, f)
    assert not _findings(_BUILT_ELSEWHERE, ["MEM202"], gate=False)
    # built in a caller's caller, in the loop's own scope, at module level: kept, with the finding
    _kept_with_its_findings(_BUILT_BY_A_CALLER, "MEM202")
    own = _BUILT_BY_A_CALLER.replace(
        "def predict(model, loader):\n",
        "def predict(loader):\n    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))\n",
    )
    _kept_with_its_findings(own, "MEM202")
    script = """\
import torch
import torch.nn as nn
net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
net.load_state_dict(torch.load("net.pt"))
with torch.no_grad():
    for x in test_loader:
        print(net(x).argmax(1))
"""
    _kept_with_its_findings(script, "MEM202")
    # the chain of callers broken: skipped, and silent without the gate
    broken = _BUILT_BY_A_CALLER.replace("    run(net)\n", "    net.to('cuda')\n    return net\n")
    assert facts(broken).builds_module and not facts(broken).module_built_for_a_loop_without_grad
    assert not _findings(broken, ["MEM202"], gate=False)
    # a train call decides without the fresh module; modes set by statements keep every scope
    assert facts(_BUILT_ELSEWHERE + "def fit(m):\n    m.train()\n").module_built_for_a_loop_without_grad is False
    assert enabled_by_gate(rules, facts(_BUILT_ELSEWHERE + "def fit(m):\n    m.train()\n"))
    assert facts(_BUILT_ELSEWHERE + "torch.set_grad_enabled(False)\n").module_built_for_a_loop_without_grad


def test_a_best_snapshot_is_named_best_or_taken_under_an_if():
    assert facts("best = model.state_dict()\n").best_snapshot
    assert facts("self.best_state = {'m': model.state_dict()}\n").best_snapshot
    assert facts("for e in range(3):\n    if acc > top:\n        keep = model.state_dict()\n").best_snapshot
    assert facts("def f():\n    if is_best:\n        with lock:\n            w = m.state_dict().copy()\n").best_snapshot
    # timm's checkpoint filters: a plain copy of the current weights
    assert not facts("def filt(sd, model):\n    model_state_dict = model.state_dict()\n").best_snapshot
    # the ``if`` is outside the loop around it: MEM801's _selected stops at the loop
    assert not facts("if ok:\n    for e in range(3):\n        w = m.state_dict()\n").best_snapshot
    assert not facts("if ok:\n    def f():\n        w = m.state_dict()\n").best_snapshot


def test_mem801_is_gated_out_for_a_snapshot_never_selected():
    rules = select_rules(["MEM801"])
    src = "import torch\ndef filt(sd, model):\n    model_state_dict = model.state_dict()\n    return model_state_dict\n"
    assert not enabled_by_gate(rules, facts(src))
    assert enabled_by_gate(rules, facts(src.replace("model_state_dict", "best_sd")))


def test_train_false_as_a_keyword_is_an_eval_call():
    # objects.mode_call reads libcst's first argument, keyword or not
    assert facts("model.train(mode=False)").eval_call
    assert facts("model.train(False)").eval_call
    assert not facts("model.train(mode=flag)").eval_call


# -- the loop rules, loop by loop (gate/loops.py) -------------------

LOOP_RULES = ("MEM101", "MEM102", "MEM201", "MEM703")

# A model file: a loop over layers that accumulates and stores, and elsewhere
# a loop over ``range(batch_size)``, the word that opened the file-level gate.
MODEL_WITH_A_BATCH_WORD = """\
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        hidden = ()
        for layer in self.layers:
            x = x + layer(x)
            hidden += (x,)
        return x, hidden
    def split(self, x, batch_size):
        for i in range(batch_size):
            y = x[i].to(x.device)
        return x
"""


def _gated_in(src: str, code: str) -> bool:
    return bool(enabled_by_gate(select_rules([code]), facts(src)))


def _findings(src: str, codes, gate: bool) -> list[tuple[str, int]]:
    screen.GATE = gate
    try:
        found, _ = lint(textwrap.dedent(src), "train.py", select_rules(list(codes)))
    finally:
        screen.GATE = True
    return sorted((f.code, f.line) for f in found)


def _kept_with_its_findings(src: str, code: str) -> None:
    """The gate hands ``src`` to ``code``, which reports, as without the gate."""
    assert _gated_in(src, code)
    with_gate = _findings(src, [code], gate=True)
    assert with_gate and with_gate == _findings(src, [code], gate=False)
    assert {c for c, _ in with_gate} == {code}


def test_a_batch_word_in_another_loop_no_longer_opens_the_loop_rules():
    """The old gate's file-level conjunction (a loop, some iterable naming
    data) sent this model file to libcst for all four rules."""
    f = facts(MODEL_WITH_A_BATCH_WORD)
    assert f.across_iterations  # what the old gate read
    sites = f.loop_sites
    assert not (sites.accumulates or sites.stores or sites.moves or sites.evaluates)
    assert not enabled_by_gate(select_rules(list(LOOP_RULES)), f)
    assert not _findings(MODEL_WITH_A_BATCH_WORD, LOOP_RULES, gate=False)


def test_statements_in_a_loop_that_may_be_a_batch_loop_keep_mem101_and_mem102():
    src = """\
import torch
def fit(model, loader, criterion):
    total, outs = 0, []
    for x, y in loader:
        out = model(x)
        total += criterion(out, y)
        outs.append(out)
"""
    _kept_with_its_findings(src, "MEM101")
    _kept_with_its_findings(src, "MEM102")
    # The loop holding them names no data: neither rule is left.
    other = src.replace("for x, y in loader:", "for x, y in pairs:")
    assert not _gated_in(other, "MEM101") and not _gated_in(other, "MEM102")
    # ... unless it trains: LoopInfo.trains follows calls (gate/trains.py),
    # a file that trains elsewhere is not enough.
    elsewhere = other + "def step(loss, opt):\n    loss.backward()\n    opt.step()\n"
    assert not _gated_in(elsewhere, "MEM101") and not _gated_in(elsewhere, "MEM102")
    assert not _findings(elsewhere, ["MEM101", "MEM102"], gate=False)
    trains = elsewhere.replace("outs.append(out)\n", "outs.append(out)\n        step(criterion(out, y), opt)\n")
    _kept_with_its_findings(trains, "MEM101")
    _kept_with_its_findings(trains, "MEM102")


# MEM101/MEM102's loop side: LoopInfo.is_batch_loop, loop by loop.
_ROLELESS_LOOP = """\
import torch
def run(model, items):
    {}
    total = 0
    for x in items:
        total += model(x)
    return total
"""


def test_the_eval_role_needs_an_eval_call_in_the_loops_own_function():
    """loops._eval_evidence: the last mode call before the loop's end in its scope."""
    _kept_with_its_findings(_ROLELESS_LOOP.format("model.eval()"), "MEM101")
    other = _ROLELESS_LOOP.format("pass") + "def setup(model):\n    model.eval()\n"
    assert facts(other).eval_call  # what the old gate read
    assert not _gated_in(other, "MEM101")
    assert not _findings(other, ["MEM101"], gate=False)
    after = _ROLELESS_LOOP.format("pass").replace("    return total\n", "    model.eval()\n    return total\n")
    assert not _gated_in(after, "MEM101") and not _findings(after, ["MEM101"], gate=False)


def test_a_loop_trains_through_the_functions_it_calls():
    """LoopInfo.trains follows callgraph.resolve (``f()``, ``self.f()``), function by function."""
    chain = (
        _ROLELESS_LOOP.format("pass").replace("total += model(x)\n", "total += model(x)\n        outer(model(x))\n")
        + "def outer(loss):\n    inner(loss)\ndef inner(loss):\n    loss.backward()\n"
    )
    _kept_with_its_findings(chain, "MEM101")
    # ``obj.outer()`` never resolves to the file's ``outer``.
    unresolved = chain.replace("outer(model(x))", "obj.outer(model(x))")
    assert not _gated_in(unresolved, "MEM101")
    assert not _findings(unresolved, ["MEM101"], gate=False)


def test_training_lines():
    from memlint.gate.trains import TrainingLines

    src = """\
import torch
class Fit:
    def step_all(self, loss):
        self.update(loss)
    def update(self, loss):
        loss.backward()
    def log(self, loss):
        print(loss)
def free(loss):
    obj.update(loss)
def grads(loss, x):
    return torch.autograd.grad(loss, x)
"""
    lines = TrainingLines(facts(src))
    assert lines.may_train(3, 4)  # step_all, through self.update
    assert lines.may_train(6, 6)  # the backward itself
    assert not lines.may_train(7, 8)  # log
    assert not lines.may_train(9, 10)  # obj.update: not the file's method
    assert lines.may_train(11, 12)  # torch.autograd.grad
    assert TrainingLines(facts("def f(x):\n    return x\nfor x in y:\n    f(x)\n")).may_train(1, 4) is False


def test_an_accumulation_must_read_its_target_back():
    """mem101._accumulates: ``x = a + b`` adds nothing to ``x``."""
    loop = "import torch\nfor x in loader:\n    out = model(x)\n    {}\n"
    assert facts(loop.format("total = total + model(x)")).loop_sites.accumulates
    assert facts(loop.format("self.t = (self.t * 3 + model(x)) / 4")).loop_sites.accumulates
    assert facts(loop.format("t = {k: t[k] + out[k] for k in t}")).loop_sites.accumulates
    assert facts(loop.format("ema = out if ema is None else ema + out")).loop_sites.accumulates
    assert not facts(loop.format("h = a + model(x)")).loop_sites.accumulates
    assert not facts(loop.format("total = total * model(x)")).loop_sites.accumulates
    assert facts(loop.format("preds = torch.cat((preds, model(x)))")).loop_sites.stores
    assert not facts(loop.format("preds = torch.cat((a, model(x)))")).loop_sites.stores
    assert facts(loop.format("outs[i] = model(x)")).loop_sites.stores


def test_a_helper_a_batch_loop_calls_keeps_what_outlives_its_call():
    """carried_across: ``self.x`` or a name the helper does not bind, written
    in a function a batch loop calls (batch_loop_calling)."""
    global_sum = """\
import torch
total_loss = 0
def train_step(model, x, y, opt, criterion):
    global total_loss
    loss = criterion(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    total_loss += loss
def fit(model, loader, opt, criterion):
    for x, y in loader:
        train_step(model, x, y, opt, criterion)
"""
    _kept_with_its_findings(global_sum, "MEM101")
    # Local to the helper: nothing outlives its call.
    local = global_sum.replace("    global total_loss\n", "    total_loss = 0\n")
    assert not _gated_in(local, "MEM101")
    assert not _findings(local, ["MEM101"], gate=False)
    # Never called by its name: no loop runs it.
    assert not _gated_in(global_sum.replace("        train_step(", "        other("), "MEM101")
    kept_on_self = """\
import torch
class T:
    def train_step(self, x, y):
        loss = self.criterion(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.losses.append(loss)
    def fit(self, loader):
        for x, y in loader:
            self.train_step(x, y)
"""
    _kept_with_its_findings(kept_on_self, "MEM102")


def test_a_class_body_binds_no_name_of_its_function():
    """loops._local_names does not look into a class: its names are not the
    function's locals, so the function's ``total`` is still the global."""
    src = """\
import torch
total = 0
def add(loss):
    class C:
        total = 1
    global total
    total += model(loss)
for x in loader:
    add(x)
"""
    assert facts(src).loop_sites.accumulates
    assert not facts(src.replace("    global total\n", "    total = 0\n")).loop_sites.accumulates


def test_training_step_keeps_what_it_stores_on_self():
    """carried_by_framework: Lightning runs ``training_step`` once per batch."""
    src = """\
import torch
import lightning as L
class M(L.LightningModule):
    def training_step(self, batch, idx):
        loss = self.model(batch).sum()
        self.outs.append(loss)
        return loss
"""
    _kept_with_its_findings(src, "MEM102")
    assert not facts(src.replace("self.outs.append", "outs.append")).loop_sites.stores


def test_mem703_needs_a_move_in_a_loop_that_may_run_per_batch_or_per_sample():
    src = """\
import torch
def fit(model, loader, opt, criterion, device):
    for x, y in loader:
        model.to(device)
        loss = criterion(model(x.to(device)), y.to(device))
        loss.backward()
        opt.step()
"""
    _kept_with_its_findings(src, "MEM703")
    # A loop over ``range(batch_size)`` in a file that neither trains nor
    # evaluates, with no loader: _per_batch cannot hold.
    model_file = "import torch\ndef split(x, w, batch_size):\n    for i in range(batch_size):\n        w.to(x.device)\n"
    assert facts(model_file).across_iterations
    assert not _gated_in(model_file, "MEM703")
    assert facts(model_file.replace("range(batch_size)", "val_images")).loop_sites.moves  # _per_sample
    assert facts(model_file.replace("range(batch_size)", "range(len(loader))")).loop_sites.moves  # a loader
    # The innermost loop is the one MEM703 reads; a function or a class stops it.
    assert facts("for x in images:\n    w.to(d)\n").loop_sites.moves
    assert not facts("for x in images:\n    for i in range(3):\n        w.to(d)\n").loop_sites.moves
    assert not facts("for x in images:\n    def f():\n        w.to(d)\n").loop_sites.moves
    assert not facts("for x in images:\n    class C:\n        w.to(d)\n").loop_sites.moves


# MEM703, move by move (gate/moves.py). A training file whose loop
# over a loader holds one statement: the old gate opened on any ``.to(`` in
# any loop of a file that trains.
_MOVE_LOOP = """\
import torch
def fit(model, loader, opt, criterion, device):
    for step, (x, y) in enumerate(loader):
        {}
        loss = criterion(model(x.to(device)), y.to(device))
        loss.backward()
        opt.step()
"""


@pytest.mark.parametrize(
    "skipped, kept",
    [
        # _constant_tensor: shaping methods over a torch factory of literals only.
        ("m = torch.arange(end=x.size(0)).to(device)", "m = torch.arange(8).view(2, 4).to(device)"),
        ("m = torch.tensor(x.shape).float().cuda()", "m = torch.tensor([0.5, 0.5]).float().cuda()"),
        ("m = torch.ones(3).view(x.size(0)).cuda()", "m = torch.ones(3).view(1, 3).cuda()"),
        # Neither a constant nor a dotted name (a module's dotted_name): a subscript, a call, an operation.
        ("h = x[0].to(device)", "h = model.to(device)"),
        ("h = model.get_encoder().to(device)", "h = model.module.to(device)"),
        ("h = (x + 1).to(device)", "h = criterion.to(device)"),
        # _enclosing_loop: no try block or handler, an if (either arm) only on a flag.
        ("if step == 0:\n            model.to(device)", "if use_cuda:\n            model.to(device)"),
        (
            "if step == 0:\n            pass\n        else:\n            model.to(device)",
            "if use_cuda:\n            pass\n        else:\n            model.to(device)",
        ),
        (
            "if step == 0:\n            pass\n        elif use_cuda:\n            model.to(device)",
            "with torch.no_grad():\n            model.to(device)",
        ),
        ("try:\n            model.to(device)\n        except RuntimeError:\n            pass", "model.to(device)"),
        ("try:\n            pass\n        except RuntimeError:\n            model.to(device)", "model.to(device)"),
        ("try:\n            pass\n        finally:\n            model.to(device)", "model.to(device)"),
        # ... nor a lambda, a comprehension, an inner loop's header, a function's defaults.
        ("move = lambda: model.to(device)", "move = model.to(device)"),
        ("ms = [model.to(device) for _ in range(2)]", "ms = model.to(device)"),
        ("for p in model.to(device).parameters():\n            pass", "model.to(device)"),
        ("def f(m=model.to(device)):\n            pass", "model.to(device)"),
        # _rebound_in: a receiver the loop's body binds to another object (gate/rebinds.py),
        # transformers' ``codebook_preds = torch.argmax(...)`` then ``codebook_preds.to(torch.int32)``
        ("model = model.half()\n        model.to(device)", "model = model.to(device)"),
        ("if use_cuda:\n            h = x.sum()\n            h.cuda()", "h = criterion.cuda()"),
        ("a, crit = 1, x.sum()\n        crit.to(device)", "a, crit = 1, criterion.to(device)"),
        (
            "for crit in [x]:\n            pass\n        crit.to(device)",
            "crit = criterion\n        criterion.to(device)",
        ),
        # the other arm of the flag test holding the move (_other_arm): not a rebinding
        (
            "model = model.half()\n        model.cuda()",
            "if use_cuda:\n            model.cuda()\n        else:\n            model = model.cpu()",
        ),
    ],
)
def test_mem703_needs_a_move_the_rule_may_report(skipped, kept):
    old = _MOVE_LOOP.format(skipped)
    assert not _gated_in(old, "MEM703")
    assert not _findings(old, ["MEM703"], gate=False)
    _kept_with_its_findings(_MOVE_LOOP.format(kept).replace("device):", "device, use_cuda, args):"), "MEM703")


def test_mem703_leaves_a_loops_own_target_to_it():
    """_rebound_in: the loop variable is a new module each iteration."""
    src = _MOVE_LOOP.replace("(x, y) in enumerate(loader)", "(x, y, model) in enumerate(loader)")
    assert not _gated_in(src.format("model.to(device)"), "MEM703")
    assert not _findings(src.format("model.to(device)"), ["MEM703"], gate=False)
    assert _gated_in(src.format("criterion.to(device)"), "MEM703")


# A loop over anything but a loader, in a file that trains: _per_batch needs
# a training verb in that loop's own iteration (training_verbs.in_iteration).
_VERB_LOOP = """\
import torch
def fit(model, steps, opt, criterion, device, x, y):
    for i in range(steps):
        model.to(device)
        loss = criterion(model(x), y)
        {}
"""


def test_mem703_needs_a_training_verb_in_the_moves_own_iteration():
    _kept_with_its_findings(_VERB_LOOP.format("loss.backward()\n        opt.step()"), "MEM703")  # after the move
    _kept_with_its_findings(_VERB_LOOP.format("if i % 4 == 0:\n            opt.step()"), "MEM703")  # under an if
    elsewhere = _VERB_LOOP.format("pass") + "def train(loss, opt):\n    loss.backward()\n    opt.step()\n"
    assert facts(elsewhere).trains  # what the old gate read
    assert not _gated_in(elsewhere, "MEM703")
    assert not _findings(elsewhere, ["MEM703"], gate=False)
    # A verb in an inner loop is that loop's, one in the loop's else the outer one's.
    inner = _VERB_LOOP.format("for k in range(2):\n            opt.step()")
    assert not _gated_in(inner, "MEM703") and not _findings(inner, ["MEM703"], gate=False)
    after = _VERB_LOOP.format("pass") + "    else:\n        opt.step()\n"
    assert not _gated_in(after, "MEM703") and not _findings(after, ["MEM703"], gate=False)


_EVAL_LOOP = """\
import torch
def run(model, items, device):
    {}
    for x in items:
        model.to(device)
        print(model(x))
"""


def test_mem703_reads_an_eval_call_in_the_loops_own_function():
    """loops._eval_evidence: the last mode call before the loop ends, in its scope."""
    _kept_with_its_findings(_EVAL_LOOP.format("model.eval()"), "MEM703")
    _kept_with_its_findings(_EVAL_LOOP.format("model.train(False)"), "MEM703")
    other = _EVAL_LOOP.format("pass") + "def setup(model):\n    model.eval()\n"
    assert facts(other).eval_call  # what the old gate read
    assert not _gated_in(other, "MEM703")
    assert not _findings(other, ["MEM703"], gate=False)
    outside = "import torch\nmodel.eval()\nfor x in items:\n    model.to(device)\n    print(model(x))\n"
    _kept_with_its_findings(outside, "MEM703")  # a loop outside any function: the module's calls


def test_the_gates_move_names_are_mem703s():
    from memlint.gate import moves as gate_moves

    module = importlib.import_module("memlint.rules.mem703_loop_invariant_device_move")
    assert gate_moves.FACTORIES == module._FACTORIES
    assert gate_moves.SHAPING == module._SHAPING


def test_mem201_needs_evidence_of_evaluation():
    evaluate = """\
import torch
def evaluate(model, data):
    for x in data:
        out = model(x)
        print(out.sum().item())
"""
    _kept_with_its_findings(evaluate, "MEM201")
    collect = evaluate.replace("def evaluate(", "def collect(").replace("data", "batches")
    assert not CARDS["MEM201"].local_gate(facts(collect))
    # Only for its callers in other modules (gate/caller_evals.py): it waits for a view
    # that hands it a model in eval mode, and needs a function with parameters for that.
    assert _gated_in(collect, "MEM201")
    assert not _gated_in(collect.replace("def collect(model, batches):", "def collect():"), "MEM201")
    # loops._iterates_eval_argument: a parameter every call fills with test data.
    argument = (
        evaluate.replace("def evaluate(", "def run(") + "def main(model, test_data):\n    run(model, test_data)\n"
    )
    _kept_with_its_findings(argument, "MEM201")
    # (the local gate: callers in other modules may still evaluate it, gate/caller_evals.py)
    assert not CARDS["MEM201"].local_gate(facts(argument.replace("test_data", "more")))
    # test data handed to another function says nothing about this one
    assert not CARDS["MEM201"].local_gate(facts(argument.replace("run(model, test_data)", "other(model, test_data)")))
    # a function's first parameter named ``self`` is bound by a call of its name ...
    assert facts("def run(self, m):\n    for x in self.items:\n        m(x)\nrun(a, test)\n").loop_sites.evaluates
    # ... a method's never (callgraph resolves it only as ``self.run(...)``)
    method = "class A:\n    def run(self, m):\n        for x in self.items:\n            m(x)\nA().run(test)\n"
    assert not facts(method).loop_sites.evaluates
    # a comprehension over test data
    assert facts("import torch\nouts = [model(x) for x in test_loader]\n").loop_sites.evaluates
    assert facts("import torch\nmodel.eval()\nfor x in xs:\n    model(x)\n").loop_sites.evaluates
    assert facts("import torch\nfor x in xs:\n    model.step(x, volatile=True)\n").loop_sites.evaluates


def test_the_loop_sites_walk_reads_the_rules_own_words():
    """MEM102's adders and tracker methods are the gate's: a new one must widen the gate."""
    import sys

    from memlint.gate.loops import ADDERS
    from memlint.rule.registry import rule_by_code

    mem102 = rule_by_code("MEM102")
    assert mem102 is not None
    module = sys.modules[mem102.__module__]
    assert module._ADDERS | module._TRACKER_METHODS == ADDERS


# -- MEM101/MEM102: the statement as the rule matches it, and a value history.py may call history-carrying --

_BATCH_LOOP = "import torch\nfor x, y in loader:\n    out = model(x)\n    loss = criterion(out, y)\n    {}\n"


def _stores(stmt: str) -> bool:
    return facts(_BATCH_LOOP.format(stmt)).loop_sites.stores


def _accumulates(stmt: str) -> bool:
    return facts(_BATCH_LOOP.format(stmt)).loop_sites.accumulates


def _silent_without_gate(stmt: str, code: str) -> None:
    """What the gate skips, the rule does not report without it either."""
    assert not _findings(_BATCH_LOOP.format(stmt), [code], gate=False)


@pytest.mark.parametrize(
    "stmt",
    [
        "ema = out if ema is None else ema + out",  # mem102.visit_Assign matches no conditional
        "t = {k: t[k] + out[k] for k in t}",  # nor a comprehension
        "h = h * 0.9 + out",  # nor arithmetic other than ``lst + [...]``
        "lst = lst + (out,)",  # ``+ [...]`` only
        "lst = other + [out]",  # the target read back first
    ],
)
def test_mem102_counts_only_the_assignments_it_visits(stmt):
    assert not _stores(stmt)
    _silent_without_gate(stmt, "MEM102")


@pytest.mark.parametrize(
    "stmt",
    ["outs += [out]", "outs += (out,)", "outs -= [out]", "outs += [o for o in out]", "outs += {out}"],
)
def test_mem101_leaves_a_container_display_to_mem102(stmt):
    """mem101._is_container."""
    assert not _accumulates(stmt)
    _silent_without_gate(stmt, "MEM101")


@pytest.mark.parametrize(
    "stmt",
    [
        "d[k] = 0",
        "d[k] = None",
        "d[k] = -1.5",
        "d[k] = f'{loss}'",
        "d[k] = '%.3f' % loss",
        "d[k] = loss > 0",
        "d[k] = not loss",
        "d[k] = (1, 'a', [None])",
        "d[k] = {'loss': 0.0, **{'n': 1}}",
        "d[k] = loss and None",
        "d[k] = loss if k else 0",
        "d[k] = lambda: loss",
        "d[k] = [0 for _ in out]",
        "losses.append(loss.item())",
        "losses.append(out.detach().cpu().numpy())",
        "losses.append((loss.item(), out.argmax(1).tolist()))",
        "losses.extend(out.size())",
        "preds = torch.cat((preds, out.argmax(-1)))",
        "lst = lst + [loss.item()]",
        "lst += [f'{loss:.3f}']",
    ],
)
def test_mem102_skips_values_history_never_calls_history_carrying(stmt):
    assert not _stores(stmt)
    _silent_without_gate(stmt, "MEM102")


@pytest.mark.parametrize(
    "stmt",
    [
        "total += loss.item()",
        "total += 1",
        "total -= loss.item() * 2 + 1",
        "total = total + loss.detach()",
        "total = 0.9 * total + 0.1 * loss.item()",
        "count += (out.argmax(1) == y).sum().item()",
        "t = {k: t[k] + out[k].item() for k in t}",
        "total += loss.item() if k else 0",
    ],
)
def test_mem101_skips_terms_history_never_calls_history_carrying(stmt):
    assert not _accumulates(stmt)
    _silent_without_gate(stmt, "MEM101")


def test_a_name_its_function_never_writes_holds_what_history_calls_unknown():
    """history.py walks a function once with unknown parameters and no
    globals: a name the function never binds, mutates or hands to a call
    statement is MAYBE, never YES."""
    helper = """\
import torch
class Tracker:
    def log(self, loss, step):
        self.losses.append(loss)
        self.total += loss
        self.by_step[step] = LAST
    def fit(self, loader):
        for x, y in loader:
            loss = self.criterion(self.model(x), y)
            loss.backward()
            self.log(loss, 0)
"""
    f = facts(helper)
    assert not f.loop_sites.stores and not f.loop_sites.accumulates
    assert not _findings(helper, ["MEM101", "MEM102"], gate=False)
    # Bound in the helper: it may carry history.
    bound = helper.replace("        self.losses.append(loss)\n", "        loss = self.model(loss)\n")
    assert facts(bound).loop_sites.accumulates
    _kept_with_its_findings(bound, "MEM101")
    # A name the helper writes may carry history only where its walk holds a
    # seed (gate_seeds): a backward is one, ``mul_``/``x[0] =``/``extend`` of
    # values without history are not ...
    seeded = helper.replace("        self.by_step", "        torch.autograd.backward(loss)\n        self.by_step")
    assert facts(seeded).loop_sites.stores
    fed_by_a_model = {
        "loss.mul_(2)": "loss.mul_(self.model(step))",
        "loss[0] = step": "loss[0] = self.model(step)",
        "loss.extend(x)": "loss.extend(self.model(step))",
    }
    for writes in fed_by_a_model:
        src = helper.replace("        self.by_step", f"        {writes}\n        self.by_step")
        assert not facts(src).loop_sites.stores, writes
        assert not _findings(src, ["MEM102"], gate=False), writes
        # A model call in the helper seeds, but only what takes its value
        # may carry history (_Values._may_hold_history) ...
        unused = src.replace("        self.losses.append", "        out = self.model(step)\n        self.losses.append")
        assert not facts(unused).loop_sites.stores, writes
        assert not _findings(unused, ["MEM102"], gate=False), writes
        # ... as ``loss`` does when it is written with one.
        fed = src.replace(writes, fed_by_a_model[writes])
        assert facts(fed).loop_sites.stores, writes


def test_a_name_written_in_a_nested_function_or_class_is_not_the_functions():
    src = """\
import torch
def fit(model, loader, losses, loss):
    for x, y in loader:
        def inner():
            loss = model(x)
        class C:
            loss = model(x)
        losses.append(loss)
"""
    assert not facts(src).loop_sites.stores
    assert not _findings(src, ["MEM102"], gate=False)
    assert facts(
        src.replace("    for x, y in loader:\n", "    for x, y in loader:\n        loss = model(x)\n")
    ).loop_sites.stores


@pytest.mark.parametrize(
    "stmt",
    [
        "losses.append(out)",
        "losses.append(loss * 2)",
        "losses.append(loss or out)",
        "losses.append(loss.mean())",
        "losses.append(F.item(loss))",  # an import's function: library_call combines its arguments
        "losses.append(item(loss))",
        "losses.append((1, loss))",
        "losses.append({'loss': loss})",
        "losses.append(out[0])",
        "losses.append(out.logits)",
        "d[k] = loss if k else out",
        "losses.append(object=loss)",  # mem102.visit_Call reads the last argument, a keyword too
    ],
)
def test_mem102_keeps_what_may_carry_history(stmt):
    src = "import torch.nn.functional as F\n" + _BATCH_LOOP.format(stmt)
    assert facts(src).loop_sites.stores


def test_a_self_attribute_call_seeds_history_only_where_it_may_be_a_module():
    """kind_of(self.item) is MODULE only through a definition of the class
    (``self.item = ...``), a ``.parameters()`` read, or the name guess; else
    ``self.item()`` is no model call and its receiver is unknown."""
    src = _BATCH_LOOP.format("losses.append(self.item())")
    assert not facts(src).loop_sites.stores
    _silent_without_gate("losses.append(self.item())", "MEM102")
    for defines in ("self.item = make()\n", "opt = SGD(self.item.parameters())\n"):
        assert facts(defines + src).loop_sites.stores, defines
    assert facts(_BATCH_LOOP.format("losses.append(self.model_ema())")).loop_sites.stores


def test_a_detaching_method_named_by_a_function_of_the_file_may_carry_history():
    """calls.resolve: ``x.item()`` may call the file's own ``item``."""
    src = _BATCH_LOOP.format("losses.append(loss.item())") + "def item(self):\n    return self.model(x)\n"
    assert facts(src).loop_sites.stores


def test_the_gates_detaching_methods_are_historys():
    from memlint.analysis.autograd import history
    from memlint.gate.loops import DETACHING_METHODS

    assert DETACHING_METHODS <= history._DETACHING_METHODS


def test_a_stored_loss_keeps_mem101_and_mem102_with_their_findings():
    stmt = "losses.append(loss)\n    total += loss\n    hist[k] = (loss, out.argmax(1))"
    src = _BATCH_LOOP.format(stmt)
    _kept_with_its_findings(src, "MEM102")
    _kept_with_its_findings(src, "MEM101")


# -- MEM102: a store into what its function returns, carried by a loop with no role (mem102._check) --

_RETURNED = """\
import torch
def post_process(model, batches, batch_size):
    results = []
    for batch in batches:
        out = model(batch)
        results.append(out)
    return results
"""
_RETURNED_THROUGH_A_LOOP = _RETURNED.replace(
    "    return results\n",
    "    projected = []\n    for r in results:\n        projected.append(r * 2)\n    return torch.cat(projected)\n",
)
_TRAINS_ELSEWHERE = """\
def train(model, opt, loader):
    for x in loader:
        model(x).sum().backward()
        opt.step()
"""


@pytest.mark.parametrize(
    "src",
    [
        _RETURNED,
        # usage.reaches_return follows assignments (_ScopeUsage.deps) and yields
        _RETURNED.replace("    return results\n", "    outputs = (out, results)\n    return outputs\n"),
        _RETURNED.replace("    return results\n", "    yield results\n"),
        _RETURNED.replace("results.append(out)", "results[len(results)] = out"),
        # phi4_multimodal's ``output_imgs``: returned through a ``for`` over it and an
        # ``append`` (_ScopeUsage.visit_For, visit_Call's container adds)
        _RETURNED_THROUGH_A_LOOP,
        # pop2piano: the file trains elsewhere, but no loop around the store may (_may_have_role)
        _RETURNED + _TRAINS_ELSEWHERE,
        # carried through a caller's loop (batch_loop_calling): a global the helper returns
        """\
import torch
def helper(model, batch):
    out = model(batch)
    RESULTS.append(out)
    return RESULTS
def run(model, batches):
    for batch in batches:
        helper(model, batch)
""",
    ],
)
def test_mem102_skips_a_store_its_function_returns_when_no_loop_has_a_role(src):
    """transformers' ``all_hidden_states += (h,)`` in a forward and
    ``results.append(...)`` in post-processing: with no training and no
    evaluation evidence in the file, the batch loop carried_across gives has
    no role, and mem102._check stays silent on a container reaches_return
    finds. The old gate kept these files."""
    assert not facts(src).loop_sites.stores
    assert not _findings(src, ["MEM102"], gate=False)


@pytest.mark.parametrize(
    "src",
    [
        _RETURNED.replace("    return results\n", "    return None\n"),  # not returned
        _RETURNED.replace(
            "        results.append(out)\n", "        results.append(out)\n        out.sum().backward()\n"
        ),
        _RETURNED.replace("post_process", "evaluate"),  # loops._eval_evidence: a function named for it
        _RETURNED.replace("for batch in batches", "for batch in val_loader"),  # data named for it
        _RETURNED.replace("    results = []\n", "    model.eval()\n    results = []\n"),  # a mode call
        _RETURNED_THROUGH_A_LOOP.replace("    results = []\n", "    model.eval()\n    results = []\n"),
        # the store's own loop may train (through the file's ``train_step``)
        _RETURNED.replace("        out = model(batch)\n", "        out = model(batch)\n        train_step(out)\n")
        + "def train_step(loss):\n    loss.backward()\n",
    ],
)
def test_mem102_keeps_a_returned_store_a_loop_with_a_role_carries(src):
    """A loop with a role ("train", "eval") is reported even when the
    container is returned; a container not returned, whatever the loop."""
    _kept_with_its_findings(src, "MEM102")


# -- MEM201: an evaluation site that may run with grad on (gate.evaluates_with_grad)


def test_mem201_needs_a_call_that_may_run_a_model_in_the_evaluation_loop():
    """transformers' configs and processors: ``validate_inputs`` loops over
    its arguments calling ``len``, ``isinstance``, ``ValueError`` and
    methods of what it iterates; none of them is a module (objects.kind_of)
    or a function of the file (callgraph), so ``_builds_graph`` fails."""
    validate = """\
import torch
def validate_inputs(images, text):
    for sample in text:
        if not isinstance(sample, str) or len(sample) > sample.count("<image>"):
            raise ValueError(f"bad {sample}")
"""
    assert facts(validate).loop_sites.evaluates  # what kept it before
    assert not facts(validate).evaluates_with_grad
    assert not _gated_in(validate, "MEM201")
    assert not _findings(validate, ["MEM201"], gate=False)
    # a model named like one, ``self.x``, ``x.forward``, a name bound in the file: kept
    for call in ("model(sample)", "self.head(sample)", "m.forward(sample)", "check(sample)"):
        src = validate.replace('raise ValueError(f"bad {sample}")', call) + "check = load()\nself.head = load()\n"
        assert facts(src).evaluates_with_grad, call
    evaluate = """\
import torch
def evaluate(model, data):
    for x in data:
        out = model(x)
        print(out.sum().item())
"""
    _kept_with_its_findings(evaluate, "MEM201")
    # ``len`` rebound in the file may be anything (objects' definitions first)
    rebound = validate.replace("import torch\n", "import torch\nlen = load_model()\n")
    assert facts(rebound).evaluates_with_grad


def test_mem201_follows_a_function_of_the_file_an_evaluation_loop_calls():
    """loops.LoopInfo.calls_model: a loop's call of a def of the file counts
    only when that def (or one it calls in turn) may call a model.
    transformers' processors: ``validate_images`` loops calling
    ``_is_valid_image``, which only reads ``isinstance``."""
    src = """\
import torch
def validate_images(images):
    for image in images:
        if not _is_valid_image(image):
            raise ValueError("bad image")
def _is_valid_image(image):
    return _is_array(image) or isinstance(image, str)
def _is_array(x):
    return hasattr(x, "shape")
"""
    assert not facts(src).evaluates_with_grad
    assert not _gated_in(src, "MEM201")
    assert not _findings(src, ["MEM201"], gate=False)
    # the helper, or the helper's helper, runs what may be a model: kept, with the finding
    calls_model = """\
import torch
def validate(model, images):
    for image in images:
        print(score(model, image).item())
def score(model, image):
    return _run(model, image).sum()
def _run(model, image):
    return model(image)
"""
    _kept_with_its_findings(calls_model, "MEM201")
    assert facts(calls_model.replace("model(image)", "net.forward(image)")).evaluates_with_grad
    assert facts(calls_model.replace("model(image)", "self.net(image)")).evaluates_with_grad
    # bound otherwise too (``check = load()``): the call itself may run a model
    assert facts(src + "_is_valid_image = load()\n").evaluates_with_grad
    # a cycle of defs is read whole, whichever def an earlier site asked about first
    cycle = """\
import torch
def validate(data):
    for x in data:
        print(b(x).sum().item())
def run(items):
    for x in items:
        a(x)
def a(x):
    b(x)
    return model(x)
def b(x):
    return a(x)
run(train_items)
"""
    for order in (cycle, cycle.replace("    b(x)\n    return model(x)", "    y = model(x)\n    return b(y)")):
        assert facts(order).evaluates_with_grad
    _kept_with_its_findings(cycle, "MEM201")
    # a comprehension reads only the model calls in its own span
    # an import, a class: objects binds neither, so only the name's guess may make a model of it
    imported = "import torch\nfrom copy import deepcopy\nclass Box:\n    pass\n" + src.replace(
        "if not _is_valid_image(image)", "if not deepcopy(image) and Box(image)"
    )
    assert not facts(imported).evaluates_with_grad
    assert not _findings(imported, ["MEM201"], gate=False)
    assert facts(imported.replace("deepcopy(image)", "model(image)")).evaluates_with_grad
    comprehension = "import torch\ndef valid(xs):\n    return [f(x) for x in xs]\ndef f(x):\n    return model(x)\n"
    assert not facts(comprehension).evaluates_with_grad
    assert facts(
        comprehension.replace("return [f(x)", "for x in xs:\n        f(x)\n    return [f(x)")
    ).evaluates_with_grad


SELF_CALLS = """\
import torch
from torch import nn
class Evaluator:
    def __init__(self):
        self.head = nn.Linear(2, 2)
    def validate(self, images):
        for image in images:
            print(self._score(image).item())
    def _score(self, image):
        return self.head(image)
"""


def test_mem201_reads_self_x_as_objects_does():
    """``self.x(...)`` may be a model call only where ``self.x`` is assigned
    in the file, read as ``self.x.attr``, or named like a model (objects'
    key ``(class, "self.x")``); else it counts through the method it may
    resolve to. transformers' ``_get_greenlist_ids``, ``_need_fallback``."""
    _kept_with_its_findings(SELF_CALLS, "MEM201")
    never_assigned = SELF_CALLS.replace("        self.head = nn.Linear(2, 2)\n", "        pass\n")
    assert not facts(never_assigned).evaluates_with_grad
    assert not _gated_in(never_assigned, "MEM201")
    assert not _findings(never_assigned, ["MEM201"], gate=False)
    # read as ``self.head.parameters()``, named like a model, ``self`` rebound: kept
    assert facts(never_assigned + "    def n(self):\n        return self.head.parameters()\n").evaluates_with_grad
    # any other ``self.head.attr`` is no evidence of a module (objects._key_for_read's key has no definition)
    weight = never_assigned + "    def n(self):\n        return self.head.weight\n"
    assert not facts(weight).evaluates_with_grad
    assert not _findings(weight, ["MEM201"], gate=False)
    assert facts(never_assigned.replace("self.head(", "self.encoder(")).evaluates_with_grad
    assert facts(never_assigned + "def f(self):\n    self = g()\n").evaluates_with_grad
    # ``cls.x`` is never a model call: only the method it may resolve to counts
    by_cls = never_assigned.replace("self._score(", "cls._score(")
    assert not facts(by_cls).evaluates_with_grad
    assert facts(by_cls.replace("return self.head(image)", "return model(image)")).evaluates_with_grad


def test_mem201_is_silent_where_grad_is_surely_set_around_the_loop():
    """grad_mode.mode_at must be ENABLED with no local_mode: ``generate``
    under ``@torch.no_grad()`` (transformers), a loop under ``with
    torch.no_grad():``, give no evidence."""
    generate = """\
import torch
class Model:
    @torch.no_grad()
    def generate(self, input_ids, steps):
        for _ in range(steps):
            input_ids = self.decoder(input_ids)
        return input_ids
"""
    assert facts(generate).loop_sites.evaluates  # what kept it before
    assert not facts(generate).evaluates_with_grad
    assert not _gated_in(generate, "MEM201")
    with_block = (
        "import torch\ndef predict(model, xs):\n    with torch.no_grad():\n        for x in xs:\n            model(x)\n"
    )
    assert not facts(with_block).evaluates_with_grad
    # the decorator removed, or another one than a grad context: kept, with the finding
    undecorated = """\
import torch
@cache
def evaluate(model, data):
    for x in data:
        out = model(x)
        print(out.sum().item())
"""
    _kept_with_its_findings(undecorated, "MEM201")
    assert facts(generate.replace("@torch.no_grad()", "@torch.enable_grad()")).evaluates_with_grad
    assert facts(generate.replace("@torch.no_grad()", "@no_grad_if(flag)")).evaluates_with_grad
    # a nested function starts in its own entry mode
    nested = "import torch\n@torch.no_grad()\ndef predict(model, xs):\n    def run():\n        for x in xs:\n            model(x)\n"
    assert facts(nested.replace("def run", "def run_eval")).evaluates_with_grad
    # ``torch`` rebound: names.ImportTable may not resolve the decorator
    assert facts(generate + "def f(torch):\n    pass\n").evaluates_with_grad
    # ``torch`` not imported: context_mode reads nothing
    assert facts(generate.replace("import torch\n", "")).evaluates_with_grad


def test_mem201_reads_a_parameter_loop_as_evidence_only_with_evaluation_data_passed():
    run = "import torch\ndef run(model, items):\n    for x in items:\n        model(x)\n"
    assert not facts(run + "run(net, train_items)\n").evaluates_with_grad
    assert facts(run + "run(net, test_items)\n").evaluates_with_grad
    # ``volatile=`` anywhere opens MEM201's other paths; an eval call only in the loop's own scope
    assert not facts(run + "net.eval()\n").evaluates_with_grad
    assert not _findings(run + "net.eval()\n", ["MEM201"], gate=False)
    assert facts(run.replace("    for x", "    model.eval()\n    for x")).evaluates_with_grad
    assert facts(run + "net.step(x, volatile=True)\n").evaluates_with_grad


# transformers' frozen VQ models (chameleon, emu3, glm_image): ``self.eval()``
# in ``__init__``, the model's loops and comprehension elsewhere.
FROZEN = """\
import torch
from torch import nn
class VQModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.encoder = Encoder(config)
        self.quantize = Quantizer(config)
        self.eval()  # frozen
    def forward(self, pixels):
        hidden = self.encoder(pixels)
        for layer in self.layers:
            hidden = layer(hidden)
        return [self.quantize(h) for h in hidden]
"""


def test_mem201_takes_an_eval_call_as_evidence_only_in_its_own_scope():
    """loops' ``mode_calls`` are per scope (the innermost def, the module
    outside any): the eval role's and comprehension_is_eval's last mode
    call, visit_FunctionDef's and visit_Module's eval call are all in the
    reported node's own function. The old gate kept any file with an eval
    call for MEM201."""
    assert facts(FROZEN).eval_call and facts(FROZEN).loop_sites.evaluates  # what kept it before
    assert not facts(FROZEN).evaluates_with_grad
    assert not _gated_in(FROZEN, "MEM201")
    assert not _findings(FROZEN, ["MEM201"], gate=False)
    # the eval call where the loop, the comprehension or the forward is: kept
    assert facts(
        FROZEN.replace("        hidden = self.encoder(", "        self.eval()\n        hidden = self.encoder(")
    ).evaluates_with_grad
    loop = "import torch\ndef extract(model, batches):\n    model.eval()\n    for x in batches:\n        print(model(x).sum().item())\n"
    comprehension = (
        "import torch\ndef total(model, xs):\n    model.eval()\n    return sum(model(x).sum().item() for x in xs)\n"
    )
    function = """\
import torch
def test(model, data):
    model.eval()
    out = model(data.x)
    return out.argmax(1).eq(data.y).sum().item()
"""
    script = """\
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(20, 64), nn.Dropout(0.2), nn.Linear(64, 2))
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(100):
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(X_train), y_train).backward()
    optimizer.step()
model.eval()
y_pred = model(X_test)
print((y_pred.argmax(1) == y_test).float().mean())
"""
    for src in (loop, comprehension, function, script):
        _kept_with_its_findings(src, "MEM201")
    # the eval call moved into another function: none of them has evidence
    for src in (loop, comprehension, function):
        moved = src.replace("    model.eval()\n", "") + "def switch(model):\n    model.eval()\n"
        assert not facts(moved).evaluates_with_grad
        assert not _findings(moved, ["MEM201"], gate=False)


def test_mem201_keeps_a_data_loop_its_callers_put_in_eval_mode():
    """``_callers_evaluate``: mode_before follows the loop's callers (and
    callees), so an eval call anywhere counts for a data loop of a function
    called in the file."""
    callers = """\
import torch
import torchvision
def extract_feature(model, dataloaders):
    features = []
    for img, _ in dataloaders:
        features.append(model(img.cuda()).data.cpu())
    return torch.cat(features)
model = torchvision.models.resnet50()
model.eval()
bank = extract_feature(model, gallery_loader)
"""
    _kept_with_its_findings(callers, "MEM201")
    # never called in the file (no call site to read the mode at), or an iterable that names no data: skipped
    for src in (callers.replace("bank = extract_feature(", "bank = other("), callers.replace("dataloaders", "things")):
        assert not facts(src).evaluates_with_grad
        assert not _findings(src, ["MEM201"], gate=False)


# -- MEM101/MEM102's history seeds (gate/seeds.py) -------------------

_SEEDLESS = """\
import torch
def collect(loader, make, layers, total):
    for batch in loader:
        layers.append(Layer(batch))
        total += len(batch) * make()
"""


def test_a_function_without_a_history_seed_skips_mem101_and_mem102():
    """No model call, backward, functional_call nor seeded function of the
    file: history.py's walk of ``collect`` holds no YES, however its loop's
    values are computed (the old gate kept any call)."""
    f = facts(_SEEDLESS)
    assert not f.loop_sites.stores and not f.loop_sites.accumulates
    assert not _findings(_SEEDLESS, ["MEM101", "MEM102"], gate=False)


@pytest.mark.parametrize(
    "seed",
    [
        "        out = model(batch)\n",  # a module by the name guess
        "        out = self_made(batch)\n        self_made = build()\n",  # a name the function binds
        "        loss = step(batch)\n        loss.backward()\n",  # a backward
        "        out = torch.func.functional_call(net, params, (batch,))\n",
        "        out = helper(batch)\n",  # a function of the file holding a seed
    ],
)
def test_a_history_seed_in_the_function_keeps_mem101_and_mem102(seed):
    src = _SEEDLESS.replace("    for batch in loader:\n", "    for batch in loader:\n" + seed)
    src = src.replace("Layer(batch)", "Layer(out)").replace("make()", "make(out)")
    src = src.replace("        loss.backward()\n", "        loss.backward()\n        out = loss\n")
    src += "def helper(x):\n    return model(x)\n"
    f = facts(src)
    assert f.loop_sites.stores and f.loop_sites.accumulates, seed


def test_a_seeded_function_keeps_its_findings():
    src = (
        "import torch\n"
        "def collect(loader, model, outs, total):\n"
        "    for batch in loader:\n"
        "        outs.append(torch.sigmoid(model(batch)))\n"
        "        total += helper(batch)\n"
        "def helper(x):\n"
        "    return model(x).sum()\n"
    )
    _kept_with_its_findings(src, "MEM102")
    _kept_with_its_findings(src, "MEM101")


def test_a_call_that_seeds_nothing_carries_history_only_through_its_inputs():
    """``Layer(batch)``, ``make()``: no model call (a class name, an
    unannotated parameter: objects.kind_of is no MODULE), no function of
    the file: MAYBE unless an argument or the receiver carries history."""
    src = _SEEDLESS.replace("    for batch in loader:\n", "    for batch in loader:\n        out = model(batch)\n")
    quiet = src.replace("Layer(batch)", "Layer(cfg)").replace("len(batch) * make()", "make()")
    f = facts(quiet)
    assert not f.loop_sites.stores and not f.loop_sites.accumulates
    assert not _findings(quiet, ["MEM101", "MEM102"], gate=False)
    # Through an argument or a receiver: kept, with the findings history gives.
    loud = quiet.replace("Layer(cfg)", "Layer(out)").replace("make()", "out.sum().mul(2)")
    assert facts(loud).loop_sites.stores
    _kept_with_its_findings(loud, "MEM101")
    # An annotated parameter may be a module (objects._param_kind).
    typed = quiet.replace("make, layers", "make: torch.nn.Module, layers")
    assert facts(typed).loop_sites.accumulates
    _kept_with_its_findings(typed, "MEM101")


def test_a_name_bound_in_another_function_is_no_module_key_here():
    """objects._key_for_read looks in the function, its enclosing ones and
    the module: a sibling's binding of ``make`` does not make it one."""
    src = _SEEDLESS.replace("Layer(batch)", "Layer(cfg)").replace("len(batch) * make()", "make()")
    sibling = src + "def other():\n    make = build()\n    return make\n"
    assert not facts(sibling).loop_sites.accumulates
    enclosing = "def outer():\n    make = build()\n" + textwrap.indent(src.replace("make, ", ""), "    ")
    assert facts(enclosing).loop_sites.accumulates


# A ``generate`` under ``@torch.no_grad()``: history.py walks it with grad
# off (grad_mode.decorator_mode), where a model call is ``fresh()`` = NO.
_OFF_GENERATE = """\
import torch
class Sampler(torch.nn.Module):
    @torch.no_grad()
    def generate(self, loader):
        for batch in loader:
            out = self.model(batch)
            self.samples.append(out)
            self.total += out.sum()
"""


def test_a_body_decorated_with_no_grad_is_seeded_only_by_a_backward():
    f = facts(_OFF_GENERATE)
    assert not f.loop_sites.stores and not f.loop_sites.accumulates
    assert not _findings(_OFF_GENERATE, ["MEM101", "MEM102"], gate=False)
    inference = _OFF_GENERATE.replace("torch.no_grad()", "torch.inference_mode()")
    assert not facts(inference).loop_sites.stores
    imported = _OFF_GENERATE.replace("import torch\n", "import torch\nfrom torch import no_grad\n")
    assert not facts(imported.replace("@torch.no_grad()", "@no_grad()")).loop_sites.stores


@pytest.mark.parametrize(
    "change",
    [
        ("    @torch.no_grad()\n", ""),  # not decorated: the model call seeds
        ("torch.no_grad()", "torch.enable_grad()"),
        ("torch.no_grad()", "torch.inference_mode(False)"),
        # grad turned back on inside: grad_mode.local_mode ENABLED
        (
            "            out = self.model(batch)\n",
            "            with torch.enable_grad():\n                out = self.model(batch)\n",
        ),
    ],
)
def test_a_body_that_may_run_with_grad_keeps_mem101_and_mem102(change):
    src = _OFF_GENERATE.replace(*change)
    assert facts(src).loop_sites.stores and facts(src).loop_sites.accumulates, change
    _kept_with_its_findings(src, "MEM102")


def test_a_no_grad_body_is_still_seeded_by_a_backward_or_a_decorator_it_cannot_read():
    """``_backward_proves`` reads no mode; a rebound ``torch`` leaves
    names.ImportTable no import to read the decorator through; a function
    decorated off that calls a function holding a backward gets its YES."""
    backward = _OFF_GENERATE.replace("self.samples.append(out)", "out.backward()\n            self.samples.append(out)")
    assert facts(backward).loop_sites.stores
    helper = _OFF_GENERATE.replace("out = self.model(batch)", "out = self.fit(batch)")
    helper += "    def fit(self, x):\n        loss = x.pow(2).sum()\n        loss.backward()\n        return loss\n"
    assert facts(helper).loop_sites.stores
    rebound = _OFF_GENERATE + "def f(torch):\n    return torch\n"
    assert facts(rebound).loop_sites.stores


def test_a_caller_of_a_no_grad_function_gets_no_history_from_it():
    """``summary`` walks the callee in its decorator's mode: ``sample``
    returns NO to ``collect``, whose own body holds no other seed."""
    src = (
        "import torch\n"
        "@torch.no_grad()\n"
        "def sample(model, x):\n"
        "    return model(x)\n"
        "def collect(loader, outs):\n"
        "    for batch in loader:\n"
        "        outs.append(sample(net, batch))\n"
    )
    assert not facts(src).loop_sites.stores
    assert not _findings(src, ["MEM102"], gate=False)
    assert facts(src.replace("@torch.no_grad()\n", "")).loop_sites.stores


# A method with a store and no loop of its own: MEM102 reports it only when a
# batch loop calls it through callgraph (loops.batch_loop_calling), which
# resolves a method only from ``self.m()``/``cls.m()``.
_RECORDER = """\
import torch
class Recorder:
    def __init__(self, model):
        self.model = model
        self.outs = []
    def record(self, x):
        self.outs.append(self.model(x))
def run(rec, loader):
    for batch in loader:
        rec.record(batch)
"""


def test_a_method_no_self_call_resolves_to_keeps_no_store():
    f = facts(_RECORDER)
    assert not f.loop_sites.stores
    assert not _findings(_RECORDER, ["MEM102"], gate=False)
    # ``super().__init__()`` resolves to nothing either
    init = _RECORDER.replace(
        "        self.outs = []\n", "        self.outs = {}\n        self.outs[0] = self.model(0)\n"
    )
    init += "class Child(Recorder):\n    def __init__(self, m):\n        super().__init__(m)\n"
    assert not facts(init).loop_sites.stores
    # a bare call of the method's name finds no method
    assert not facts(_RECORDER.replace("rec.record(batch)", "record(batch)")).loop_sites.stores


def test_a_method_a_batch_loop_calls_through_self_keeps_its_store():
    src = _RECORDER.replace(
        "def run(rec, loader):\n    for batch in loader:\n        rec.record(batch)\n",
        "    def run(self, loader):\n        for batch in loader:\n            self.record(batch)\n",
    )
    assert facts(src).loop_sites.stores
    _kept_with_its_findings(src, "MEM102")


def test_mem201_reads_training_only_for_a_loop_shared_with_evaluation():
    """Without an eval call or ``volatile=``, training opens only
    _check_shared_loop: a backward or step under ``if train:``, ``train`` a
    parameter some call passes ``False``. transformers' trainers and
    schedulers call ``step`` without one."""
    shared = """\
import torch
def iteration(model, loader, opt, train=True):
    for x, y in loader:
        loss = model(x).sum()
        if train:
            loss.backward()
            opt.step()
def fit(model, loader, opt):
    iteration(model, loader, opt)
    iteration(model, loader, opt, train=False)
"""
    _kept_with_its_findings(shared, "MEM201")
    assert facts(shared.replace("train=False)", "False)")).evaluates_with_grad  # positional
    never_false = shared.replace("train=False", "train=True")
    assert facts(never_false).trains and not facts(never_false).evaluates_with_grad
    assert not CARDS["MEM201"].local_gate(facts(never_false))  # (its callers elsewhere: gate/caller_evals.py)
    assert not _findings(never_false, ["MEM201"], gate=False)
    unguarded = shared.replace("        if train:\n            loss", "        if x:\n            loss")
    assert not facts(unguarded).evaluates_with_grad
    assert not _findings(unguarded, ["MEM201"], gate=False)
    scheduler = "import torch\ndef run(model, sched, steps):\n    for _ in range(steps):\n        sched.step()\n"
    assert not facts(scheduler + "run(m, s, 3)\nf(x, flag=False)\n").evaluates_with_grad


# -- the gate's own walks read gate/ast_fields' tables: the same answers ---------


def test_returned_keys_read_the_container_adds_usage_reads():
    """_returned_keys follows ``x.append(v)`` as _ScopeUsage.visit_Call does:
    the same method names, never more (a key the analysis does not find
    would drop a store the rule reports)."""
    from memlint.analysis.training.usage import _CONTAINER_ADD
    from memlint.gate.loops import _CONTAINER_ADDS, _returned_keys

    assert _CONTAINER_ADDS == _CONTAINER_ADD
    fn = ast.parse(
        textwrap.dedent(
            """\
            def f(xs, ys):
                out, seen, kept = [], set(), []
                for x in xs:
                    seen.add(x)
                out.append(seen)
                for y in ys:
                    kept.push(y)
                return out
            """
        )
    ).body[0]
    keys = _returned_keys(fn.body)  # type: ignore[attr-defined]
    assert {"out", "seen", "x", "xs"} <= keys
    assert not {"kept", "y", "ys"} & keys  # ``push`` adds nothing the analysis follows


def test_returned_keys_follow_a_yield_inside_an_assigned_or_returned_value():
    """_returned_keys reads a value's keys off its nodes and walks below it
    only where a ``yield`` there is a seed of its own."""
    from memlint.gate.loops import _returned_keys

    fn = ast.parse(
        textwrap.dedent(
            """\
            def gen(loader):
                outs, extra, kept = [], [], []
                got = yield outs
                total: int = (yield from extra)
                x = lambda: (yield kept)
                return (yield got) + 1
            """
        )
    ).body[0]
    keys = _returned_keys(fn.body)  # type: ignore[attr-defined]
    assert {"outs", "extra", "got"} <= keys
    assert "kept" not in keys and "total" not in keys  # a lambda is left out; ``total`` is never returned


def test_bindings_give_every_name_of_a_backward_call_wherever_it_sits():
    from memlint.gate.loops import _bindings

    body = ast.parse(
        textwrap.dedent(
            """\
            for b in loader:
                if b:
                    accelerator.backward(loss_fn(out, b))
                hist.append(out)
                state.x[0] = 1
                y = (total := scaler.scale(z).backward())
            f = lambda: grads.backward()
            """
        )
    ).body
    pairs, always = _bindings(body, {}, False)
    assert always == {"accelerator", "loss_fn", "out", "b", "scaler", "z"}
    roots = {root for root, _ in pairs}
    # ``accelerator.backward(...)`` is a method called by a statement too; a lambda is not walked
    assert roots == {"b", "accelerator", "hist", "state", "y", "total", "f"}


def test_bindings_give_the_names_a_training_step_returns():
    from memlint.gate.loops import _bindings

    body = ast.parse("loss = compute(batch)\nreturn {'loss': loss, 'n': n}\n").body
    assert _bindings(body, {}, True)[1] == {"loss", "n"}
    assert _bindings(body, {}, False)[1] == set()


def test_a_leaf_bound_by_an_annotated_assignment_or_a_walrus_is_a_module_leaf():
    """_leaf_written_with_grad reads module_leaf's bindings off the main walk's."""
    for binding in ("w: Tensor = nn.Parameter(torch.ones(2))", "print(w := nn.Parameter(torch.ones(2)))"):
        # ``w`` a leaf name by another function's loop; in ``step`` only the binding outside says so.
        rest = "def other(model):\n    for w in model.parameters():\n        pass\ndef step():\n    w.add_(1)\n"
        assert facts(f"{binding}\n{rest}").leaf_written_with_grad, binding
        assert not facts(f"{binding.replace('nn.Parameter', 'make')}\n{rest}").leaf_written_with_grad, binding


# -- MEM401: a function some call surely enters without grad -------------------

_ENTERED_OFF = """\
import torch
from torch import nn


def copy_into(new_layer, w):
    fresh = nn.Linear(2, 2)
    fresh.weight.copy_(w)
    return fresh


class Backbone(nn.Module):
    def __init__(self, w):
        super().__init__()
        with torch.no_grad():
            self.layer = copy_into(None, w)
"""


def test_mem401_skips_a_function_some_call_enters_without_grad():
    """grad_mode.entry_mode joins the modes of the calls callgraph resolves
    to ``copy_into``: one under ``torch.no_grad()`` makes it DISABLED or
    UNKNOWN, never ENABLED, so MEM401 stays silent in it (the old gate kept
    any write outside a no-grad ``with`` of its own function)."""
    assert not facts(_ENTERED_OFF).grad_on_writes.inplace_parameter_attr
    assert not _gated_in(_ENTERED_OFF, "MEM401")
    assert not _findings(_ENTERED_OFF, ["MEM401"], gate=False)
    # Another call with grad on as well: UNKNOWN, still silent.
    both = _ENTERED_OFF + "\n\ndef build(w):\n    return copy_into(None, w)\n"
    assert not _gated_in(both, "MEM401")
    assert not _findings(both, ["MEM401"], gate=False)


@pytest.mark.parametrize(
    "change",
    [
        # no call under no_grad: entry ENABLED
        (
            "        with torch.no_grad():\n            self.layer = copy_into(None, w)\n",
            "        self.layer = copy_into(None, w)\n",
        ),
        # the mode set inside the function decides, not its entry
        ("    fresh.weight.copy_(w)\n", "    with torch.enable_grad():\n        fresh.weight.copy_(w)\n"),
        # set by a statement the walk does not follow
        ("    fresh.weight.copy_(w)\n", "    torch.set_grad_enabled(True)\n    fresh.weight.copy_(w)\n"),
    ],
)
def test_mem401_keeps_a_function_whose_entry_may_be_enabled(change):
    src = _ENTERED_OFF.replace(*change)
    assert src != _ENTERED_OFF
    _kept_with_its_findings(src, "MEM401")


def test_a_private_set_grad_enabled_statement_keeps_every_write():
    """grad_mode's bare statements: a torch callee whose name ends in
    ``set_grad_enabled``, ``torch._C._set_grad_enabled`` too."""
    src = _ENTERED_OFF.replace(
        "    fresh.weight.copy_(w)\n", "    torch._C._set_grad_enabled(True)\n    fresh.weight.copy_(w)\n"
    )
    f = facts(src)
    assert f.grad_on_writes is f  # every write counts
    assert _gated_in(src, "MEM401")


@pytest.mark.parametrize(
    "change",
    [
        # two defs of that name: callgraph resolves neither call
        ("class Backbone", "def copy_into(a, b):\n    return a\n\n\nclass Backbone"),
        # a decorated def: the decorator's mode comes first
        ("def copy_into", "@functools.cache\ndef copy_into"),
        # a def inside a class: a bare call never resolves to it
        ("def copy_into(new_layer, w):", "class Holder:\n  def copy_into(new_layer, w):"),
    ],
)
def test_mem401_reads_only_calls_callgraph_surely_resolves(change):
    src = _ENTERED_OFF.replace(*change)
    assert src != _ENTERED_OFF
    assert facts(src).grad_on_writes.inplace_parameter_attr


_LOOP_OVER_A_NAME = """\
import torch


def tag(messages, content):
    for message in messages:
        message["content"] = content
    return messages
"""


def test_mem401_reads_a_loop_over_a_bare_name_only_where_leaves_are_made():
    """leaves.leaf_list needs every value of the name to be a display of
    leaves, each made by creates_leaf; a file with no such call has none
    (the old gate took any ``for x in name:`` for a loop over leaves)."""
    assert not facts(_LOOP_OVER_A_NAME).leaf_written_with_grad
    assert not _gated_in(_LOOP_OVER_A_NAME, "MEM401")
    assert not _findings(_LOOP_OVER_A_NAME, ["MEM401"], gate=False)
    made = (
        _LOOP_OVER_A_NAME
        + "\n\nw = torch.zeros(2, requires_grad=True)\nparams = [w]\nfor p in params:\n    p.add_(1)\n"
    )
    _kept_with_its_findings(made, "MEM401")
    parameter = made.replace("torch.zeros(2, requires_grad=True)", "torch.nn.Parameter(torch.zeros(2))")
    _kept_with_its_findings(parameter, "MEM401")


_LOADS_MAPPED = """\
import torch


def restore(model, path, **kwargs):
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(state, strict=False)
    extra = torch.load(path, "cpu")
    other = torch.load(path, **kwargs["options"])
    stats = torch.load(*kwargs["paths"])
    return extra, other, stats
"""


def test_mem701_needs_a_load_without_map_location_and_a_load_state_dict_call():
    """_is_load_without_map_location: no ``map_location=``, fewer than two
    positional arguments, no ``*``, no ``**`` but of a bare name; every report starts from a
    ``.load_state_dict(...)`` call (the old gate kept any ``load`` call)."""
    assert not facts(_LOADS_MAPPED).load_without_map_location
    # Its load_state_dict call may load what another module's function
    # returns (ProjectView.mixed_loaders): only the view lets it through.
    assert _gated_in(_LOADS_MAPPED, "MEM701")
    assert not CARDS["MEM701"].local_gate(facts(_LOADS_MAPPED))  # type: ignore[misc]
    assert not CARDS["MEM701"].project_matters(ProjectView(root="", path=""))  # type: ignore[misc]
    assert not _findings(_LOADS_MAPPED, ["MEM701"], gate=False)
    unmapped = _LOADS_MAPPED.replace('map_location="cpu", ', "")
    _kept_with_its_findings(unmapped, "MEM701")
    aliased = unmapped.replace("import torch\n", "import torch\nfrom torch import load as read\n").replace(
        "torch.load(path, weights_only", "read(path, weights_only"
    )
    _kept_with_its_findings(aliased, "MEM701")
    # A load without map_location but no load_state_dict call: nothing to report.
    no_state_dict = unmapped.replace("model.load_state_dict(state, strict=False)", "model.update(state)")
    assert facts(no_state_dict).load_without_map_location
    # The file's own evidence passes nothing; the full gate keeps a file with a
    # def for its callers in other modules (a returned load, Caller.gpu_state).
    assert not CARDS["MEM701"].local_gate(facts(no_state_dict))  # type: ignore[misc]
    assert not _findings(no_state_dict, ["MEM701"], gate=False)


def test_mem701_lets_through_a_load_splatting_a_bare_name():
    """``torch.load(p, **kwargs)``: a local dict display without map_location
    on some path (analysis/training/load_kwargs.py) is reported; the gate
    lets every ``**name`` through, a parameter's included."""
    local = """\
import torch


def restore(model, path, cpu):
    if cpu:
        kwargs = {"map_location": "cpu"}
    else:
        kwargs = {}
    model.cuda()
    model.load_state_dict(torch.load(path, **kwargs))
"""
    assert facts(local).load_without_map_location
    _kept_with_its_findings(local, "MEM701")
    passed = local.replace("def restore(model, path, cpu):", "def restore(model, path, cpu, **kwargs):").replace(
        '    if cpu:\n        kwargs = {"map_location": "cpu"}\n    else:\n        kwargs = {}\n', ""
    )
    assert "kwargs = " not in passed
    assert facts(passed).load_without_map_location
    assert not _findings(passed, ["MEM701"], gate=False)


_EMPTY_CACHE_GUARDED = """\
import gc
import torch


def free():
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def fit(model, loader, step):
    for i, batch in enumerate(loader):
        step(model, batch)
        try:
            model.flush()
        except RuntimeError:
            torch.cuda.empty_cache()
        finally:
            gc.collect()
            torch.cuda.empty_cache()
        if i % 100 == 0:
            torch.cuda.empty_cache()
        free()
        def later():
            torch.cuda.empty_cache()
        later()
    torch.cuda.empty_cache()


def run(configs, loader, train_one):
    for cfg in configs:
        if cfg.enabled:
            train_one(cfg, loader)
            torch.cuda.empty_cache()
    CACHES = {"cuda": torch.cuda.empty_cache}
    return CACHES
"""


def test_mem702_needs_an_unguarded_empty_cache_statement_in_a_loop_of_its_function():
    """loop_of (a loop around the call in its own function) and _guarded
    (no ``if`` body but a main guard's, ``except`` or ``finally`` up to the
    function, the loop included): the old gate kept any file with a loop
    and ``empty_cache``."""
    f = facts(_EMPTY_CACHE_GUARDED)
    assert f.loops and "empty_cache" in f.idents  # what the old gate read
    assert not f.empty_cache_in_loop
    assert not _gated_in(_EMPTY_CACHE_GUARDED, "MEM702")
    assert not _findings(_EMPTY_CACHE_GUARDED, ["MEM702"], gate=False)


@pytest.mark.parametrize(
    "change",
    [
        # in the loop's body
        ("        free()\n", "        torch.cuda.empty_cache()\n"),
        # in the else of an emptiness test
        ("        if i % 100 == 0:\n", "        if not batch:\n            pass\n        else:\n"),
        # an alias of the function
        ("        free()\n", "        from torch.cuda import empty_cache as ec\n        ec()\n"),
        # the loop in a with block, a class body in the loop
        (
            "        free()\n",
            "        with torch.no_grad():\n            class K:\n                torch.cuda.empty_cache()\n",
        ),
        # the if inside the loop gone (a with block instead)
        (
            "    for cfg in configs:\n        if cfg.enabled:\n            train_one(cfg, loader)\n",
            "    with torch.no_grad():\n        for batch in loader:\n            configs(batch)\n",
        ),
        # a script's main guard around the loop guards nothing
        (
            "    for cfg in configs:\n        if cfg.enabled:\n            train_one(cfg, loader)\n",
            '    if __name__ == "__main__":\n        for batch in loader:\n            configs(batch)\n',
        ),
    ],
)
def test_mem702_keeps_an_empty_cache_the_rule_reports(change):
    src = _EMPTY_CACHE_GUARDED.replace(*change)
    assert src != _EMPTY_CACHE_GUARDED
    _kept_with_its_findings(src, "MEM702")


_SNAPSHOT_UNDER_A_FLAG = """\
import torch


def fit(model, loader, evaluate, epochs, keep):
    top = 0.0
    for epoch in range(epochs):
        for x, y in loader:
            model.step(x, y)
        acc = evaluate(model)
        if keep and acc:
            snap = model.state_dict()
    model.load_state_dict(snap)
    return top
"""


def test_mem801_needs_an_if_that_selects():
    """_selected: only an ``if`` whose test ``_selects`` (an ordering
    comparison, a name saying best/improv) makes a snapshot not named
    ``best`` worth reporting (the old gate took any ``if``)."""
    assert not facts(_SNAPSHOT_UNDER_A_FLAG).best_snapshot
    assert not _gated_in(_SNAPSHOT_UNDER_A_FLAG, "MEM801")
    assert not _findings(_SNAPSHOT_UNDER_A_FLAG, ["MEM801"], gate=False)
    assert not facts("if ok:\n    w = m.state_dict()\n").best_snapshot


@pytest.mark.parametrize(
    "test",
    ["acc > top", "keep and acc >= top", "keep.improved", "is_best(acc)", "keep(best=acc)", "(lambda best: best)(acc)"],
)
def test_mem801_keeps_a_snapshot_under_an_if_that_may_select(test):
    src = _SNAPSHOT_UNDER_A_FLAG.replace("keep and acc", test)
    assert facts(src).best_snapshot
    if test in ("acc > top", "keep.improved"):
        _kept_with_its_findings(src, "MEM801")


def test_mem701_reads_torch_load_only_as_names_resolves_it():
    """names.call_name gives ``torch.load`` only to ``load(...)`` imported
    from torch or ``<a name bound to torch>.load(...)``: ``json.load(f)``
    and ``self.torch.load(p)`` are other functions."""
    src = _LOADS_MAPPED.replace('map_location="cpu", ', "").replace(
        "torch.load(path, weights", "json.load(path, weights"
    )
    src = src.replace("import torch\n", "import json\nimport torch\n")
    assert not facts(src).load_without_map_location
    assert not CARDS["MEM701"].local_gate(facts(src))  # type: ignore[misc]
    assert not _findings(src, ["MEM701"], gate=False)
    assert not facts("import torch\nsd = self.torch.load(p)\nm.load_state_dict(sd)\n").load_without_map_location
    for aliased in ("import torch as T\nsd = T.load(p)\n", "import foo.torch as T\nsd = T.load(p)\n"):
        assert facts(aliased).load_without_map_location
    _kept_with_its_findings(src.replace("json.load(path, weights", "torch.load(path, weights"), "MEM701")


_ROUTER = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Router(nn.Module):
    def forward(self, hidden_states):
        router_logits = self.wg(hidden_states)
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        for [probs, *rest] in self.pairs:
            probs = torch.sigmoid(router_logits)
            for probs, _ in rest:
                probs.mul_(2)
        return router_logits, routing_weights, selected_experts
"""


def test_mem402_drops_a_name_a_tuple_target_or_a_for_target_rebinds():
    """leave_Assign's ``_rebind`` drops every name of a tuple, list or
    starred target (``w, idx = torch.topk(w, k)``), visit_For's every name
    of the loop's target (the old gate kept a name a tuple rebound, and
    dropped only a bare ``for`` target)."""
    f = facts(_ROUTER)
    assert f.output_names & f.inplace_names  # what the old gate read first
    assert not f.saved_output_written_in_place
    assert not _gated_in(_ROUTER, "MEM402")
    assert not _findings(_ROUTER, ["MEM402"], gate=False)
    _kept_with_its_findings(_ROUTER.replace("routing_weights, selected_experts = ", "selected_experts = "), "MEM402")
    _kept_with_its_findings(_ROUTER.replace("for probs, _ in rest:", "for _ in rest:"), "MEM402")


_XSOFTMAX = """\
import torch


class XSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, mask, dim):
        rmask = ~(mask.to(torch.bool))
        output = input.masked_fill(rmask, torch.tensor(torch.finfo(input.dtype).min))
        output = torch.softmax(output, dim)
        output.masked_fill_(rmask, 0)
        ctx.save_for_backward(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        (output,) = ctx.saved_tensors
        return output * grad_output, None, None
"""


def test_mem402_skips_the_methods_of_a_custom_autograd_function():
    """grad_mode runs a custom ``torch.autograd.Function``'s forward with
    grad off (its backward UNKNOWN): never ENABLED, so _check stays silent
    (the old gate kept any write in a method named ``forward``)."""
    f = facts(_XSOFTMAX)
    assert not f.saved_output_written_in_place
    assert not f.grad_on_writes.inplace_names & {"output"}
    assert not _gated_in(_XSOFTMAX, "MEM402")
    assert not _findings(_XSOFTMAX, ["MEM402"], gate=False)


@pytest.mark.parametrize(
    "change",
    [
        # another base class
        ("class XSoftmax(torch.autograd.Function):", "class XSoftmax(torch.nn.Module):"),
        # grad turned back on inside the forward
        (
            "        output.masked_fill_(rmask, 0)\n",
            "        with torch.enable_grad():\n            output.masked_fill_(rmask, 0)\n",
        ),
        # a decorator that sets the mode comes first
        ("    @staticmethod\n    def forward", "    @staticmethod\n    @torch.enable_grad()\n    def forward"),
        # ``torch`` rebound: names.ImportTable no longer resolves the base
        ("import torch\n", "import torch\n\n\ndef torch():\n    pass\n"),
    ],
)
def test_mem402_keeps_a_forward_grad_may_run_in(change):
    src = _XSOFTMAX.replace(*change)
    assert src != _XSOFTMAX
    assert facts(src).saved_output_written_in_place
    if "def torch" not in src:  # the rebound torch breaks the rule's own resolution too
        _kept_with_its_findings(src, "MEM402")


def test_mem401_reads_a_loop_over_a_bare_name_only_where_some_call_makes_a_leaf():
    """``requires_grad_(False)`` and ``Parameter(..., requires_grad=False)``
    make no leaf (leaves.creates_leaf): no list of leaves either (the old
    gate took the callee's name for a leaf maker; the exporters of
    transformers freeze their models this way)."""
    frozen = (
        _LOOP_OVER_A_NAME
        + "\n\ndef freeze(model, t):\n    model.requires_grad_(False)\n"
        + "    return torch.nn.Parameter(t, requires_grad=False)\n"
    )
    assert not facts(frozen).leaf_written_with_grad
    assert not _gated_in(frozen, "MEM401")
    assert not _findings(frozen, ["MEM401"], gate=False)
    made = frozen + "\n\nw = torch.zeros(2).requires_grad_()\nparams = [w]\nfor p in params:\n    p.add_(1)\n"
    _kept_with_its_findings(made, "MEM401")


_RECURRENT = """\
import torch


def train(model, loader, criterion, optimizer, batch_size):
    hidden = model.init_hidden(batch_size)
    for x, y in loader:
        out, hidden = model(x, hidden)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
"""


@pytest.mark.parametrize(
    "change",
    [
        # rebound earlier in the iteration (``_carried``: not carried)
        ("    for x, y in loader:\n", "    for x, y in loader:\n        hidden = model.init_hidden(batch_size)\n"),
        # a loop target, ``+=``, ``detach_()`` in the loop
        ("    for x, y in loader:\n", "    for hidden in loader:\n"),
        ("        loss.backward()\n", "        loss.backward()\n        hidden += 0\n"),
        ("        loss.backward()\n", "        loss.backward()\n        hidden.detach_()\n"),
        # fed only through ``*``
        ("model(x, hidden)", "model(x, *hidden)"),
        # no backward, grad or step on the loop's lines
        ("        loss.backward()\n        optimizer.step()\n", "    loss.backward()\n    optimizer.step()\n"),
    ],
)
def test_mem104_needs_a_fed_name_the_iteration_rebinds_after_the_call(change):
    """recurrent.carried_states: a call in a training loop fed a name whose
    every binding in the loop is an assignment at or after that call (the old
    gate kept any file with a loop and a training verb)."""
    src = _RECURRENT.replace(*change)
    assert src != _RECURRENT
    f = facts(src)
    assert f.loops and f.trains  # what the old gate read
    assert not f.carries_state
    assert not _gated_in(src, "MEM104")
    assert not _findings(src, ["MEM104"], gate=False)


@pytest.mark.parametrize(
    "change",
    [
        ("", ""),
        # a tuple argument, a keyword, an attribute
        ("model(x, hidden)", "model(x, state=(hidden, x))"),
        ("hidden", "self.hidden"),
        # rebound after the call, in another statement
        ("        optimizer.step()\n", "        optimizer.step()\n        hidden = out\n"),
    ],
)
def test_mem104_keeps_a_state_carried_to_the_next_batch(change):
    src = _RECURRENT.replace(*change)
    assert facts(src).carries_state
    if change[1] != "self.hidden":
        _kept_with_its_findings(src, "MEM104")


@pytest.mark.parametrize(
    ("names", "loader"),
    [
        ("train_loader = 1", True),
        ("ValLoader = 1", True),
        ("train_DL = 1", True),
        ("dlx = 1\ndownload = 2", False),
        ("x = 1", False),
    ],
)
def test_names_loader_reads_each_identifier(names, loader):
    """objects' LOADER guess by name: ``loader`` anywhere in it, or a name
    ending in ``dl``, in any case (read once, on the joined identifiers)."""
    assert facts(names).names_loader is loader


def test_bare_statements_for_mem204_and_mem305():
    """Only a call or an attribute written as a statement of its own counts;
    an import alias counts as what it imports."""
    f = facts(
        "import torch\nfrom torch import inference_mode as im\n"
        "torch.no_grad()\nim()\nwith torch.enable_grad():\n    model.eval()\nmodel.train\nx = opt.step\n"
    )
    assert f.bare_calls >= {"no_grad", "inference_mode"} and "enable_grad" not in f.bare_calls
    assert "eval" in f.bare_calls  # ``model.eval()`` as a statement: its callee counts
    assert f.bare_attributes == {"train"}
    decorated = facts("import torch\n@torch.no_grad()\ndef f(m):\n    return m.eval()\n")
    assert not decorated.bare_calls & {"no_grad"} and not decorated.bare_attributes


def test_a_module_restored_for_evaluation_seeds_history():
    """objects._restored: ``q.load_state_dict(sd)`` and ``q.eval()`` make ``q``
    (a parameter, or ``self.q`` never written) a module, so ``q(x)`` may carry
    history: the gate must let MEM102 see it."""
    from memlint.lint import screen
    from memlint.lint.engine import lint
    from memlint.rule.registry import all_rules

    src = """\
import torch
class Runner:
    def run(self, loader, sd):
        self.q.load_state_dict(sd)
        self.q.eval()
        outs = []
        for x in loader:
            outs.append(self.q(x))
        return outs
def run(q, sd, loader):
    q.load_state_dict(sd)
    q.eval()
    outs = []
    for x in loader:
        outs.append(q(x))
    return outs
"""
    rules = list(all_rules())
    results = []
    for gate in (False, True):
        old, screen.GATE = screen.GATE, gate
        try:
            found, _ = lint(src, "example.py", rules)
        finally:
            screen.GATE = old
        results.append(sorted((f.code, f.line) for f in found))
    assert ("MEM102", 8) in results[0] and ("MEM102", 15) in results[0]
    assert results[0] == results[1]


def test_mem201_gate_keeps_a_loop_after_a_helper_that_switches_to_eval():
    """``self.net_mode(train=False)`` before the loop: the helper's
    ``.eval()`` is the loop scope's evidence (MEM201's
    _helper_switched_to_eval), through a chain of helpers too; a scope that
    calls no switching helper is not kept by it."""
    src = """\
import torch
class Solver:
    def net_mode(self, train):
        if train:
            self.net.train()
        else:
            self.net.eval()

    def to_eval(self):
        self.net_mode(False)

    def viz(self, z):
        self.to_eval()
        decoder = self.net.decoder
        for val in torch.arange(3):
            print(decoder(z).sum().item())
"""
    assert facts(src).evaluates_with_grad
    assert _gated_in(src, "MEM201")
    assert _findings(src, ["MEM201"], gate=False)
    plain = src.replace("        self.to_eval()\n", "")
    assert not facts(plain).evaluates_with_grad
    assert not _findings(plain, ["MEM201"], gate=False)


_SELF_ATTR_READ = """\
import torch
class Exporter:
    def export_component(self, x, config):
        if not isinstance(config, self.config_class):
            raise TypeError(self.config_class.__name__)
        return self.config_class(x)

    def validate(self, loader):
        out = []
        for x in loader:
            out.append(self.export_component(x, None))
        return out
"""


def test_mem201_gate_reads_self_attr_reads_as_objects_does():
    """transformers' exporters: ``self.config_class(...)``, the attribute
    never assigned in the file and read as ``self.config_class.__name__``:
    objects.kind_of calls such a ``self.x`` a module only from a
    ``.parameters()``/``.named_parameters()`` read or a
    ``.load_state_dict()`` (with ``.eval()``), else by its name; any other
    ``self.x.attr`` is no evidence, so no call in the evaluation loop may
    run a model. Read as ``self.config_class.parameters()``, it may."""
    from memlint.gate.cards import _mem201_gate

    src = _SELF_ATTR_READ
    assert not facts(src).evaluates_with_grad
    assert not _mem201_gate(facts(src))  # the local gate: a typed project object is its project part's
    assert not _findings(src, ["MEM201"], gate=False)
    read = src.replace("self.config_class.__name__", "list(self.config_class.parameters())")
    assert facts(read).evaluates_with_grad
    assert _findings(read, ["MEM201"], gate=False)


def test_mem201_gate_reads_a_helpers_switch_for_loops_only():
    """transformers' BigBird ``forward``: ``self.set_attention_type(...)``
    switches a layer to eval, then one forward with no loop. Only a loop
    takes a called helper's switch as its own (_helper_switched_to_eval);
    visit_FunctionDef and visit_Module need an eval-mode call in the scope
    itself, so the scope is no site, and the gate drops the file. With the
    forward in a loop over data, it is kept, and the rule reports it."""
    src = """\
import torch
class Solver:
    def net_mode(self, train):
        if train:
            self.net.train()
        else:
            self.net.eval()

    def viz(self, z):
        self.net_mode(False)
        return self.net(z).sum().item()
"""
    assert not facts(src).evaluates_with_grad
    assert not _gated_in(src, "MEM201")
    assert not _findings(src, ["MEM201"], gate=False)
    looped = src.replace(
        "        return self.net(z).sum().item()\n",
        "        for x in torch.arange(3):\n            print(self.net(z).sum().item())\n",
    )
    assert facts(looped).evaluates_with_grad
    assert _findings(looped, ["MEM201"], gate=False)


# transformers' core_model_loading and generation mixins: plain classes binding
# ``self.x`` to calls that build no module (loops._attribute_mode needs
# objects.built_in_train_mode: gate/eval.py FreshCalls).
_PLAIN_CLASS = """\
import re
import torch
import torch.nn as nn


class Solver:
    def __init__(self, patterns):
        self.G = {}

    def test(self, loader):
        with torch.no_grad():
            for x in loader:
                print(self.G(x).mean().item())
"""


@pytest.mark.parametrize(
    "value", ['re.compile("x")', "patterns.copy()", 'AutoModel.from_pretrained("m")', "len(patterns)"]
)
def test_mem202_plain_class_path_needs_an_attribute_a_call_may_build_a_module_into(value):
    src = _PLAIN_CLASS.format(value)
    assert not facts(src).plain_class_loop_without_grad
    assert not _gated_in(src, "MEM202")
    assert not _findings(src, ["MEM202"], gate=False)


@pytest.mark.parametrize(
    "value", ["nn.Dropout(0.5)", "nn.Dropout(0.5).to('cuda')", "build()", "Net()", "torch.nn.Dropout(0.5)"]
)
def test_mem202_plain_class_path_keeps_an_attribute_a_call_may_build_a_module_into(value):
    """A torch module, a move of one, a factory or a class of this file."""
    src = _PLAIN_CLASS.format(value) + (
        "\n\ndef build():\n    return nn.Dropout(0.5)\n\n\nclass Net(nn.Module):\n    pass\n"
    )
    assert facts(src).plain_class_loop_without_grad
    assert _gated_in(src, "MEM202")
