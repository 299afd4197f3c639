"""facts.objects: what kind of torch object a name holds."""

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from memlint.analysis.facts import ModuleFacts
from memlint.vocabulary.kinds import Kind, guess_kind_from_name


def facts_of(src: str) -> ModuleFacts:
    return ModuleFacts(MetadataWrapper(cst.parse_module(textwrap.dedent(src)), unsafe_skip_copy=True))


def find(module: cst.Module, text: str, kind=cst.BaseExpression):
    """First node of type ``kind`` whose code is ``text``."""
    found = []

    class V(cst.CSTVisitor):
        def on_visit(self, node):
            if not found and isinstance(node, kind) and module.code_for_node(node) == text:
                found.append(node)
            return not found

    module.visit(V())
    assert found, text
    return found[0]


def kind_at(src: str, text: str):
    facts = facts_of(src)
    return facts.objects.kind_of(find(facts.module, text))


def test_constructors_through_imports():
    src = """
    import torch
    import torch.nn as nn
    from torch import optim
    from torch.optim.lr_scheduler import StepLR
    from torch.utils.data import DataLoader
    model = nn.Sequential(nn.Linear(2, 2))
    opt = optim.Adam(model.parameters())
    sched = StepLR(opt, 1)
    crit = nn.CrossEntropyLoss()
    scaler = torch.amp.GradScaler("cuda")
    dl = DataLoader(ds)
    use(model, opt, sched, crit, scaler, dl)
    """
    facts = facts_of(src)
    call = find(facts.module, "use(model, opt, sched, crit, scaler, dl)", cst.Call)
    kinds = [facts.objects.kind_of(a.value) for a in call.args]
    assert kinds == [Kind.MODULE, Kind.OPTIMIZER, Kind.SCHEDULER, Kind.LOSS, Kind.SCALER, Kind.LOADER]


def test_module_subclass_in_file_and_its_subclass():
    src = """
    import torch.nn as nn
    class Net(nn.Module):
        pass
    class Bigger(Net):
        pass
    class FocalLoss(nn.Module):
        pass
    a = Net()
    b = Bigger()
    c = FocalLoss()
    a; b; c
    """
    facts = facts_of(src)
    names = [find(facts.module, n, cst.Name) for n in ("a", "b", "c")]
    # the last occurrence of each name is the read; first is the binding
    assert facts.objects.kind_of("a", facts.module) is Kind.MODULE
    assert facts.objects.kind_of("b", facts.module) is Kind.MODULE
    assert facts.objects.kind_of("c", facts.module) is Kind.LOSS
    assert names


def test_parameters_handed_to_optimizer_make_a_module():
    src = """
    import torch
    thing = build_it()
    opt = torch.optim.SGD(thing.parameters(), lr=0.1)
    thing
    """
    assert facts_of(src).objects.kind_of("thing", None) is Kind.MODULE


def test_self_attributes_and_propagation_through_to():
    src = """
    import torch.nn as nn
    class Trainer:
        def __init__(self, device):
            self.net = nn.Linear(2, 2).to(device)
        def run(self, x):
            return self.net(x)
    """
    facts = facts_of(src)
    call = find(facts.module, "self.net(x)", cst.Call)
    assert facts.objects.is_model_call(call)


def test_function_parameters_fall_back_to_conventional_names():
    src = """
    def train(model, loader, optimizer, criterion, scaler, scheduler, thing):
        pass
    """
    facts = facts_of(src)
    fn = facts.module.body[0]
    body = fn.body
    k = lambda name: facts.objects.kind_of(name, body)
    assert [k(n) for n in ("model", "loader", "optimizer", "criterion", "scaler", "scheduler", "thing")] == [
        Kind.MODULE,
        Kind.LOADER,
        Kind.OPTIMIZER,
        Kind.LOSS,
        Kind.SCALER,
        Kind.SCHEDULER,
        None,
    ]


def test_a_definition_we_cannot_read_beats_the_name():
    src = """
    from sklearn.preprocessing import StandardScaler
    scaler = StandardScaler()
    model = joblib.load("m.pkl")
    scaler; model
    """
    facts = facts_of(src)
    assert facts.objects.kind_of("scaler", facts.module) is None
    assert facts.objects.kind_of("model", facts.module) is None


def test_annotations_and_function_returns():
    src = """
    import torch
    from torch import nn
    def build():
        return nn.Linear(1, 1)
    def run(m: nn.Module, o: torch.optim.Optimizer):
        net = build()
        net; m; o
    """
    facts = facts_of(src)
    fn = facts.module.body[3]
    assert facts.objects.kind_of("net", fn.body) is Kind.MODULE
    assert facts.objects.kind_of("m", fn.body) is Kind.MODULE
    assert facts.objects.kind_of("o", fn.body) is Kind.OPTIMIZER


def test_accelerate_prepare_keeps_kinds():
    src = """
    import torch
    model = torch.nn.Linear(1, 1)
    opt = torch.optim.AdamW(model.parameters())
    model, opt = accelerator.prepare(model, opt)
    """
    facts = facts_of(src)
    assert facts.objects.kind_of("model", facts.module) is Kind.MODULE
    assert facts.objects.kind_of("opt", facts.module) is Kind.OPTIMIZER


def test_hf_and_torchvision_constructors():
    src = """
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    import torchvision
    m = AutoModelForSequenceClassification.from_pretrained("x")
    t = AutoTokenizer.from_pretrained("x")
    r = torchvision.models.resnet18()
    """
    facts = facts_of(src)
    assert facts.objects.kind_of("m", facts.module) is Kind.MODULE
    assert facts.objects.kind_of("t", facts.module) is None
    assert facts.objects.kind_of("r", facts.module) is Kind.MODULE


def test_call_classification():
    src = """
    import torch
    import torch.nn.functional as F
    model = torch.nn.Linear(2, 2)
    criterion = torch.nn.MSELoss()
    opt = torch.optim.SGD(model.parameters(), lr=1)
    out = model(x)
    l1 = criterion(out, y)
    l2 = F.cross_entropy(out, y)
    l1.backward()
    opt.step()
    model.eval()
    model.train(False)
    model.train(flag)
    """
    facts = facts_of(src)
    o = facts.objects
    call = lambda text: find(facts.module, text, cst.Call)
    assert o.is_model_call(call("model(x)"))
    assert not o.is_model_call(call("criterion(out, y)"))
    assert o.is_loss_call(call("criterion(out, y)"))
    assert o.is_loss_call(call("F.cross_entropy(out, y)"))
    assert o.is_backward_call(call("l1.backward()"))
    assert o.is_optimizer_step(call("opt.step()"))
    assert o.mode_call(call("model.eval()")) == "eval"
    assert o.mode_call(call("model.train(False)")) == "eval"
    assert o.mode_call(call("model.train(flag)")) == "unknown"


@pytest.mark.parametrize(
    "name, kind",
    [
        ("optimizer_G", Kind.OPTIMIZER),
        ("opt_d", Kind.OPTIMIZER),
        ("netD", Kind.MODULE),
        ("train_loader", Kind.LOADER),
        ("lr_scheduler", Kind.SCHEDULER),
        ("loss", None),
        ("options", None),
        ("network_name", None),
    ],
)
def test_name_guesses(name, kind):
    assert guess_kind_from_name(name) is kind


@pytest.mark.parametrize(
    "name", ["models", "model_name", "model_path", "netflix", "optimizers", "schedule", "loaders", "scaler_x"]
)
def test_names_that_are_not_objects(name):
    assert guess_kind_from_name(name) is None


def test_mode_dependent_layers():
    src = """
    import torch.nn as nn
    import torchvision
    class Plain(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
            self.act = nn.ReLU()
    class WithDropout(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.1))
    class Wrapper(nn.Module):
        def __init__(self, backbone):
            super().__init__()
            self.backbone = backbone
    a = Plain()
    b = WithDropout().to("cuda")
    c = Wrapper(torchvision.models.resnet18())
    d = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    e = nn.LSTM(2, 2, num_layers=2, dropout=0.2)
    """
    facts = facts_of(src)
    md = lambda name: facts.objects.mode_dependent(name, facts.module)
    assert [md(n) for n in "abcde"] == [False, True, None, True, True]


def test_mode_dependent_ignores_plain_attributes():
    src = """
    import torch.nn as nn
    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size):
            super().__init__()
            self.hidden_size = hidden_size
            self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
            self.softmax = nn.LogSoftmax(dim=1)
    rnn = RNN(3, 4)
    """
    facts = facts_of(src)
    assert facts.objects.mode_dependent("rnn", facts.module) is False


def test_a_name_whose_parameters_are_read_is_a_module():
    src = """
    import model as lm
    net = lm.RNNModel("LSTM", 200)
    other = lm.Corpus("./data")
    torch.nn.utils.clip_grad_norm_(net.parameters(), 0.25)
    other.parameters(3)
    """
    facts = facts_of(src)
    assert facts.objects.kind_of(find(facts.module, "net", cst.Name)) is Kind.MODULE
    assert facts.objects.kind_of(find(facts.module, "other", cst.Name)) is None  # an argument: not nn.Module.parameters


@pytest.mark.parametrize(
    "factory, kind",
    [
        ("model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), 'cuda')", Kind.OPTIMIZER),
        ("create_optimizer_v2(model, 'adamw', lr=1e-3)", Kind.OPTIMIZER),
        ("build_optimizer(cfg.optim, model)", Kind.OPTIMIZER),
        ("get_optimizer_state(path)", None),
        ("optimizer_from_config(cfg)", None),
    ],
)
def test_optimizer_factories_are_known_by_name(factory, kind):
    facts = facts_of(f"opt = {factory}\nopt.step()\n")
    assert facts.objects.kind_of(find(facts.module, "opt", cst.Name)) is kind


def test_self_in_a_module_subclass_is_a_module():
    """``self.eval()`` / ``self.forward(x)`` in a method of an ``nn.Module``
    subclass; not in a LightningModule, a plain class or a static method."""
    src = """
    import torch.nn as nn
    import pytorch_lightning as pl
    class CNN(nn.Module):
        def _test(self, loader):
            self.eval()
            for x in loader:
                self.forward(x)
        @staticmethod
        def make(self):
            return self
    class Lit(pl.LightningModule):
        def validation_step(self, batch, i):
            return self(batch)
    class Trainer:
        def run(self):
            self.eval()
    """
    facts = facts_of(src)
    objects = facts.objects
    assert objects.is_model_call(find(facts.module, "self.forward(x)", cst.Call))
    assert not objects.is_model_call(find(facts.module, "self(batch)", cst.Call))
    assert objects.kind_of(find(facts.module, "return self", cst.Return).value) is None
    calls = []

    class V(cst.CSTVisitor):
        def visit_Call(self, node):
            if facts.module.code_for_node(node) == "self.eval()":
                calls.append(node)

    facts.module.visit(V())
    assert [objects.mode_call(c) for c in calls] == ["eval", None]


def test_a_project_criterion_class_is_a_loss():
    src = """
    from utils.losses import Criterion, Detection_criterion
    from utils.metrics import Meter
    criterion = Criterion(args)
    det = Detection_criterion(args)
    meter = Meter()
    use(criterion, det, meter)
    """
    facts = facts_of(src)
    call = find(facts.module, "use(criterion, det, meter)", cst.Call)
    assert [facts.objects.kind_of(a.value) for a in call.args] == [Kind.LOSS, None, None]


def test_an_element_of_a_module_list_is_a_module():
    src = """
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
            self.named = nn.ModuleDict({"a": nn.Linear(2, 2)})
        def forward(self, x):
            outs = [h(x) for h in self.heads]
            for block in self.heads:
                x = block(x)
            keys = [k for k in self.named]
            use(h, block, k)
    """
    facts = facts_of(src)
    assert facts.objects.is_model_call(find(facts.module, "h(x)", cst.Call))
    assert facts.objects.is_model_call(find(facts.module, "block(x)", cst.Call))
    call = find(facts.module, "use(h, block, k)", cst.Call)
    assert facts.objects.kind_of(call.args[2].value) is None  # a ModuleDict yields its keys


def test_mode_dependence_follows_helpers_bases_and_arguments():
    src = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    def layer_init(layer, std=1.0):
        torch.nn.init.orthogonal_(layer.weight, std)
        return layer
    def with_extra(layer):
        layer.extra = make_extra()
        return layer
    def mlp(n):
        return nn.Sequential(nn.Linear(n, n), nn.Tanh())
    class Body(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = layer_init(nn.Linear(4, 4))
            self.rnn = nn.LSTM(4, 4, num_layers=2, dropout=0.0)
            self.head = mlp(4)
    class Critic(Body):
        def __init__(self):
            super().__init__()
            self.v = layer_init(nn.Linear(4, 1))
    class Dropper(Body):
        def forward(self, x):
            return F.dropout(x, 0.1, training=self.training)
    class Extra(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = with_extra(nn.Linear(4, 4))
    a = Critic()
    b = Dropper()
    c = Extra()
    d = nn.Sequential(layer_init(nn.Linear(2, 2)), nn.Dropout(0.1))
    e = nn.MultiheadAttention(8, 2, dropout=0.1)
    f = nn.MultiheadAttention(8, 2)
    g = nn.InstanceNorm2d(3, track_running_stats=True)
    h = nn.InstanceNorm2d(3, affine=True)
    i = nn.LSTM(2, 2, 2, True, False, 0.3)
    j = nn.GRU(2, 2, num_layers=2, dropout=0)
    """
    facts = facts_of(src)
    md = lambda name: facts.objects.mode_dependent(name, facts.module)
    assert [md(n) for n in "abcdefghij"] == [False, True, None, True, True, False, True, False, True, False]
    assert facts.objects.class_mode_dependence("Critic") is False
    assert facts.objects.class_mode_dependence("Dropper") is True
    assert facts.objects.class_mode_dependence("Extra") is None  # the helper may add a layer


def test_a_name_restored_and_switched_to_eval_is_a_module():
    src = """
    import torch
    def evaluate(Model, envs, path, make_agent, opt_state):
        model = Model(envs).to("cuda")
        model.load_state_dict(torch.load(path))
        model.eval()
        agent = make_agent()
        agent.eval()
        opt = make_agent()
        opt.load_state_dict(opt_state)
        keep(model, agent, opt)
    """
    facts = facts_of(src)
    call = find(facts.module, "keep(model, agent, opt)", cst.Call)
    kinds = [facts.objects.kind_of(a.value) for a in call.args]
    # Only both together say module: an optimizer loads a state dict too, and
    # a project's agent class may have an eval() of its own.
    assert kinds == [Kind.MODULE, None, None]


def test_mode_dependence_reads_the_definitions_in_effect():
    src = """
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
    model = Net()
    first = model
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    model = Net()
    second = model
    def later():
        return model
    for i in range(2):
        other = Net()
        use(other)
    """
    facts = facts_of(src)
    md = lambda name, at, kind: facts.objects.mode_dependent(name, find(facts.module, at, kind))
    assert md("model", "first = model", cst.Assign) is False  # the first cell's Net, the first model
    assert md("model", "second = model", cst.Assign) is True
    assert md("model", "return model", cst.Return) is True  # a function may run later: both models
    assert md("other", "use(other)", cst.Call) is True  # built in a loop: the last Net


def test_a_factory_call_is_no_forward_pass():
    src = """
    import torch
    def run(get_net, x):
        m = build_model()
        y = get_net(3)
        z = model(x)
        w = load_model("a.pt")
    """
    facts = facts_of(src)
    objects = facts.objects
    assert not objects.is_model_call(find(facts.module, "build_model()", cst.Call))
    assert not objects.is_model_call(find(facts.module, "get_net(3)", cst.Call))
    assert not objects.is_model_call(find(facts.module, 'load_model("a.pt")', cst.Call))
    assert objects.is_model_call(find(facts.module, "model(x)", cst.Call))


def test_a_parameter_a_caller_fills_with_a_plain_object_has_no_kind():
    """MixMatch: ``ema_optimizer = WeightEMA(...)`` handed to ``train``;
    before, the parameter's name made it an optimizer."""
    src = """
    import torch
    class WeightEMA(object):
        def step(self):
            pass
    def train(optimizer, ema_optimizer):
        optimizer.step()
        ema_optimizer.step()
    def main(model):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        ema_optimizer = WeightEMA()
        train(optimizer, ema_optimizer)
    """
    assert kind_at(src, "ema_optimizer") is None
    assert kind_at(src, "optimizer") is Kind.OPTIMIZER


def test_a_part_of_a_model_named_for_one_is_a_module():
    """``self.net.decoder`` of a model: a submodule, as a name so spelled
    is guessed to be; ``self.net.fc`` (no model word) and a part of what
    is not known as a model stay unknown."""
    src = """
    import torch
    from model import BetaVAE
    class Solver:
        def __init__(self):
            self.net = BetaVAE(10)
            self.optim = torch.optim.Adam(self.net.parameters())
            self.cfg = load()

        def viz(self, z):
            decoder = self.net.decoder
            return decoder(z), self.net.fc(z), self.cfg.decoder(z)
    """
    facts = facts_of(src)
    kind_of = facts.objects.kind_of
    assert kind_of(find(facts.module, "decoder", cst.Name)) is Kind.MODULE
    assert kind_of(find(facts.module, "self.net.fc", cst.Attribute)) is None
    assert kind_of(find(facts.module, "self.cfg.decoder", cst.Attribute)) is None


FACTORIES = """
import torch.nn as nn
class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.1)
def make_eval():
    return Tower().eval()
def make_train():
    return Tower().train().cuda()
def make_off():
    return Tower().train(False)
def make_flag(flag):
    return Tower().train(flag)
"""


def test_a_factory_returning_a_module_switched_to_eval_is_not_fresh_in_train_mode():
    facts = facts_of(FACTORIES)
    fns = {s.name.value: s for s in facts.module.body if isinstance(s, cst.FunctionDef)}
    assert facts.objects.fresh_factory(fns["make_train"])
    assert not facts.objects.fresh_factory(fns["make_eval"])
    assert not facts.objects.fresh_factory(fns["make_off"])
    assert not facts.objects.fresh_factory(fns["make_flag"])


def test_a_named_forward_on_an_attribute_built_from_a_model_class_whatever_its_name():
    """``self.__S__.forward_aud(x)``: the name says nothing of a model, but
    every binding of ``self.__S__`` builds one (ObjectTable._built_module);
    a parameter of the same name proves nothing."""
    from memlint.project.view import ProjectView

    src = """
    import torch.nn as nn
    class S(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
        def forward_aud(self, x):
            return self.fc(x)
    class Instance:
        def __init__(self):
            self.__S__ = S().cuda()
        def evaluate(self, x):
            return self.__S__.forward_aud(x)
    def handed(reader, x):
        return reader.forward_aud(x)
    """
    tree = cst.parse_module(textwrap.dedent(src))
    view = ProjectView(root="/p", path="/p/m.py", forward_methods=("forward_aud",))
    facts = ModuleFacts(MetadataWrapper(tree, unsafe_skip_copy=True), project=view)
    objects = facts.objects
    assert objects.is_model_call(find(facts.module, "self.__S__.forward_aud(x)", cst.Call))
    assert not objects.is_model_call(find(facts.module, "reader.forward_aud(x)", cst.Call))


_UNRESOLVED_BUILD = """
import torch
from syncnet import *


class Instance(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.__S__ = S(num_layers=1024){move}

    def evaluate(self, x):
        self.__S__.eval()
        return self.__S__(x)
"""


def test_a_class_built_moved_and_switched_to_eval_is_a_module():
    """``self.__S__ = S(...).cuda()`` then ``self.__S__.eval()``, ``S`` from an
    import nothing answers: only a module is moved to a device and switched."""
    src = _UNRESOLVED_BUILD.format(move=".cuda()")
    assert kind_at(src, "self.__S__") is Kind.MODULE


@pytest.mark.parametrize("move", ["", ".float()"])
def test_a_class_built_and_switched_but_never_moved_stays_unknown(move):
    src = _UNRESOLVED_BUILD.format(move=move)
    assert kind_at(src, "self.__S__") is None


def test_a_class_built_and_moved_but_never_switched_stays_unknown():
    src = _UNRESOLVED_BUILD.format(move=".cuda()").replace("        self.__S__.eval()\n", "")
    assert kind_at(src, "self.__S__") is None


_HOLDERS = """
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.optimizer = torch.optim.Adam(self.parameters())
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, 3)
        self.plan = torch.optim.lr_scheduler.StepLR(self.optimizer, 3)

class Other:
    def __init__(self, plan):
        self.plan = plan

def run(model):
    model.scheduler.step()
    model.optimizer.step()
    model.plan.step()
    self.scheduler.step()
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("model.scheduler", Kind.SCHEDULER),  # the one class holding ``self.scheduler`` builds a StepLR
        ("model.optimizer", Kind.OPTIMIZER),
        ("model.plan", None),  # two classes hold ``self.plan``: which one ``model`` is cannot be told
        ("self.scheduler", None),  # ``self`` is read by the class's own analysis, not by the holder
    ],
)
def test_sole_holder_kind(text, expected):
    facts = facts_of(_HOLDERS)
    assert facts.objects.sole_holder_kind(find(facts.module, text, cst.Attribute)) is expected
