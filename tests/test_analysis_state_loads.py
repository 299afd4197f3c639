"""analysis/training/state_loads.py: where a loaded state dict goes."""

import textwrap

import libcst as cst

from memlint.analysis.scope.callgraph import CallGraph
from memlint.analysis.scope.names import ImportTable, dotted_name
from memlint.analysis.training.state_loads import Checkpoints


def _checkpoints(src: str) -> tuple[Checkpoints, list[cst.Call]]:
    module = cst.parse_module(textwrap.dedent(src))
    calls = CallGraph(module)
    found = [c for fn in [module, *calls.functions] for c in calls.calls_in[fn]]
    return Checkpoints(module, ImportTable(module), calls), found


def cpu_loads(src: str) -> list[str]:
    """The receivers of the load_state_dict calls made into a CPU model, in order."""
    cp, calls = _checkpoints(src)
    loads = [c for c in calls if isinstance(c.func, cst.Attribute) and c.func.attr.value == "load_state_dict"]
    return [dotted_name(c.func.value) for c in loads if cp.into_cpu_model(c)]  # type: ignore[union-attr]


def test_built_here_and_not_moved():
    src = """
    import torchvision
    import torch.nn as nn
    from transformers import AutoModel
    class Net(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.fc = nn.Linear(n, n)
    def a(p):
        model = torchvision.models.resnet50().eval()
        model.load_state_dict(sd)
    def b(p):
        enc = AutoModel.from_pretrained("bert-base-uncased")
        enc.load_state_dict(sd)
    def c(p):
        net = Net(10)
        net.train()
        print(net)
        net.load_state_dict(sd)
        net.to("cuda")
    """
    assert cpu_loads(src) == ["model", "enc", "net"]


def test_moved_handed_on_or_not_built_here():
    src = """
    import torch
    import torch.nn as nn
    from models import Imported, build_model  # imported: unknown (an undefined name claims nothing)
    class Net(nn.Module):
        def __init__(self, device=None):
            super().__init__()
            self.fc = nn.Linear(2, 2)
    class SelfMoving(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2).cuda()
    def a(model):
        model.load_state_dict(sd)
    def b():
        net = Net().cuda()
        net.load_state_dict(sd)
    def c():
        net = Net()
        setup(net)
        net.load_state_dict(sd)
    def d():
        net = Net(device="cuda")
        net.load_state_dict(sd)
    def e():
        net = build_model(cfg)
        net.load_state_dict(sd)
    def f():
        net = AutoModel.from_pretrained(n, device_map="auto")
        net.load_state_dict(sd)
    def g(paths):
        net = Net()
        for p in paths:
            net.load_state_dict(sd)
            net.to("cuda")
    def h():
        net = Net()
        net = net.cuda()
        if multi:
            net = nn.DataParallel(net)
        net.load_state_dict(sd)
    def i():
        net = nn.parallel.DistributedDataParallel(Net().cuda())
        net.load_state_dict(sd)
    def j(big):
        net = Net().cuda()
        if big:
            net = Net()
        net.load_state_dict(sd)
    def k():
        net = SelfMoving()
        net.load_state_dict(sd)
        other = Imported()
        other.load_state_dict(sd)
    """
    assert cpu_loads(src) == []


def test_a_default_device_means_no_model_is_known_on_the_cpu():
    src = """
    import torch
    import torch.nn as nn
    with torch.device("cuda"):
        net = nn.Linear(2, 2)
    net.load_state_dict(sd)
    """
    assert cpu_loads(src) == []


def helper_loads(src: str) -> list[bool]:
    """For each call whose argument is ``torch.load(...)``: does it load it?"""
    cp, calls = _checkpoints(src)
    out = []
    for call in calls:
        for arg in call.args:
            if isinstance(arg.value, cst.Call) and dotted_name(arg.value.func) == "torch.load":
                out.append(cp.helper_loads(call, arg))
    return out


def test_helpers_that_load_their_argument():
    src = """
    import torch
    from peft import set_peft_model_state_dict
    from peft.utils import set_peft_model_state_dict as set_sd
    def load_weights(model, state, strict=True):
        model.load_state_dict(state["model"], strict=strict)
    def show(state):
        print(state)
    set_peft_model_state_dict(model, torch.load(p))
    set_sd(model, peft_model_state_dict=torch.load(p))
    load_weights(model, torch.load(p))
    load_weights(model, state=torch.load(p))
    show(torch.load(p))
    set_peft_model_state_dict(torch.load(p), sd)
    """
    assert helper_loads(src) == [True, True, True, True, False, False]


def test_a_loader_of_another_module_given_by_the_project_stage():
    src = "import torch\nfrom utils import restore\nrestore(model, torch.load(p))\n"
    module = cst.parse_module(src)
    calls = CallGraph(module)
    call = next(c for c in calls.calls_in[module] if dotted_name(c.func) == "restore")
    arg = call.args[1]
    assert not Checkpoints(module, ImportTable(module), calls).helper_loads(call, arg)
    told = Checkpoints(module, ImportTable(module), calls, {"utils.restore": (1, "state")})
    assert told.helper_loads(call, arg)


def test_a_helper_loading_into_a_model_it_builds_on_the_cpu_does_not_load_its_argument():
    """sgan's ``get_generator(checkpoint)``: builds, loads, then moves; a
    helper that moves first does load it into a model on a device."""
    src = """
    import torch
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.fc = nn.Linear(n, 2)
    def build_then_load(state):
        model = Net(state["n"])
        model.load_state_dict(state["model"])
        return model.cuda()
    def move_then_load(state):
        model = Net(state["n"]).cuda()
        model.load_state_dict(state["model"])
        return model
    build_then_load(torch.load(p))
    move_then_load(torch.load(p))
    """
    assert helper_loads(src) == [False, True]


def test_a_plain_class_that_moves_nothing_holds_the_model_where_it_is():
    src = """
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
    class Evaluator(object):
        def __init__(self, model):
            self.model = model
        def evaluate(self, loader):
            return [self.model(x) for x in loader]
    class Mover(object):
        def __init__(self, model):
            self.model = model.cuda()
    def held(sd):
        a = Net()
        ev = Evaluator(model=a)
        a.load_state_dict(sd)
    def used_first(sd, loader):
        b = Net()
        ev = Evaluator(b)
        ev.evaluate(loader)
        b.load_state_dict(sd)
    def handed_on(sd):
        c = Net()
        ev = Evaluator(c)
        run(ev)
        c.load_state_dict(sd)
    def aliased(sd):
        d = Net()
        ev = Evaluator(d)
        other = ev
        d.load_state_dict(sd)
    def used_in_the_loop(sd, loader):
        e = Net()
        ev = Evaluator(e)
        for _ in range(2):
            e.load_state_dict(sd)
            ev.evaluate(loader)
    def moving_holder(sd):
        f = Net()
        m = Mover(f)
        f.load_state_dict(sd)
    def not_bound(sd):
        g = Net()
        run(Evaluator(g))
        g.load_state_dict(sd)
    """
    assert cpu_loads(src) == ["a"]


def test_a_model_class_that_moves_nothing_holds_a_part_of_the_model_where_it_is():
    src = """
    import torch.nn as nn
    class Enc(nn.Module):
        def __init__(self):
            super().__init__()
            self.width = 4
            self.fc = nn.Linear(2, 4)
    class Dec(nn.Module):
        def __init__(self, width, device=None):
            super().__init__()
            self.fc = nn.Linear(width, 2)
    class MovingDec(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.fc = nn.Linear(width, 2).cuda()
    def part_handed(sd):
        a = Enc()
        dec = Dec(a.width)
        a.load_state_dict(sd)
    def holder_moved_first(sd):
        b = Enc()
        dec = Dec(b.fc)
        dec.cuda()
        b.load_state_dict(sd)
    def moving_class(sd):
        c = Enc()
        dec = MovingDec(c.width)
        c.load_state_dict(sd)
    def device_given(sd, device):
        d = Enc()
        dec = Dec(d.width, device=device)
        d.load_state_dict(sd)
    def star_args(sd, kw):
        e = Enc()
        dec = Dec(e.width, **kw)
        e.load_state_dict(sd)
    def not_bound(sd):
        g = Enc()
        run(Dec(g.width))
        g.load_state_dict(sd)
    def rebound(sd):
        r = Enc()
        r = Dec(r)
        r.load_state_dict(sd)
    """
    assert cpu_loads(src) == ["a", "r"]


def test_a_class_looked_up_in_an_undefined_module_claims_nothing():
    src = """
    import torch
    import networks
    def load_model(path):
        checkpoint = torch.load(path)
        model = models.__dict__[checkpoint["arch"]](out=3)
        model.load_state_dict(checkpoint["state_dict"])
        return model
    def imported(path):
        checkpoint = torch.load(path)
        model = networks.__dict__[checkpoint["arch"]](out=3)
        model.load_state_dict(checkpoint["state_dict"])
    """
    assert cpu_loads(src) == ["model"]


def test_a_binding_in_a_sibling_branch_is_not_before_a_nested_if():
    src = """
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.fc = nn.Linear(n, 2)
    def build(opt, sd):
        if opt.model == "small":
            model = Net(2)
        elif opt.model == "wide":
            if opt.depth == 50:
                model = Net(50)
            elif opt.depth == 101:
                model = Net(101)
        if not opt.no_cuda:
            model = model.cuda()
        else:
            model.load_state_dict(sd)
    def before(opt, sd):
        other = Net(2).cuda()
        if opt.model == "small":
            other = Net(2)
        elif opt.model == "wide":
            if opt.depth == 50:
                other = Net(50)
        other.load_state_dict(sd)
    """
    assert cpu_loads(src) == ["model"]


def test_self_in_init_is_on_the_cpu_until_the_first_move():
    src = """
    import math
    import torch
    import torch.nn as nn
    class PSP(nn.Module):
        def __init__(self, opts):
            super(PSP, self).__init__()
            self._set_opts(opts)
            self.opts.n = int(math.log(self.opts.size, 2))
            self.encoder = nn.Linear(2, 2)
            self.encoder.load_state_dict(sd)
            self._load_weights()
            self.cuda()
            self.decoder = nn.Linear(2, 2)
            self.decoder.load_state_dict(sd)
        def _set_opts(self, opts):
            self.opts = opts
        def _load_weights(self):
            self.encoder.load_state_dict(torch.load(self.opts.path))
            self._load_avg()
        def _load_avg(self):
            self.avg = self.opts.avg.to(self.opts.device)
    class Moved(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
            super().cuda()
            self.fc.load_state_dict(sd)
    class Parts(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
            self.to("cuda")
            self.fc.load_state_dict(sd)
    """
    # ``self.decoder`` is built after ``self.cuda()`` but on the CPU: a part
    # built later is where its constructor puts it.
    assert cpu_loads(src) == ["self.encoder", "self.decoder", "self.encoder"]


def test_a_name_bound_to_a_choice_of_cpu_classes_builds_on_the_cpu():
    src = """
    import torch.nn as nn
    class F(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
    class CCF(F):
        pass
    class G(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2).cuda()
    def a(args):
        model_cls = F if args.uncond else CCF
        f = model_cls()
        f.load_state_dict(sd)
    def b(args):
        model_cls = CCF
        g = model_cls()
        g.load_state_dict(sd)
    def c(args):
        model_cls = F if args.uncond else G
        h = model_cls()
        h.load_state_dict(sd)
    """
    assert cpu_loads(src) == ["f", "g"]


def test_a_class_picked_by_the_checkpoints_own_entries_builds_on_the_cpu():
    src = """
    import torch
    from registry import find_class
    def a(path):
        data = torch.load(path)
        kind = find_class(data["package"], data["network"], prefix="")
        net = kind(**data["kwargs"])
        net.load_state_dict(data["weights"])
    def b(path, args):
        data = torch.load(path)
        kind = find_class(args.package, data["network"])
        net = kind(**data["kwargs"])
        net.load_state_dict(data["weights"])
    def c(path, settings):
        data = torch.load(path)
        kind = find_class(data["package"], data["network"])
        net = kind(**settings)
        net.load_state_dict(data["weights"])
    def d(path):
        data = torch.load(path)
        kind = find_class(data["package"], data["network"])
        net = kind(**data["kwargs"])
        net.cuda()
        net.load_state_dict(data["weights"])
    def e(path, other):
        data = torch.load(path)
        kind = find_class(data["package"], data["network"])
        kind = other
        net = kind(**data["kwargs"])
        net.load_state_dict(data["weights"])
    def f(path):
        data = torch.load(path)
        kind = find_class(data, mode=mode)
        net = kind()
        net.load_state_dict(data["weights"])
    """
    assert cpu_loads(src) == ["net"]


def test_a_local_function_placing_nothing_keeps_a_cpu_model_there():
    src = """
    import torch.nn as nn
    from helpers import to_gpu
    def trunk(net):
        return nn.Sequential(*list(net.children())[:-1])
    def place(net):
        return net.cuda()
    def wrap(net):
        return place(net)
    def a(sd):
        net = nn.Linear(4, 4)
        net = trunk(net)
        net.load_state_dict(sd)
    def b(sd):
        m = nn.Linear(4, 4)
        m = wrap(m)
        m.load_state_dict(sd)
    def c(sd, other):
        k = nn.Linear(4, 4)
        k = trunk(other)
        k.load_state_dict(sd)
    def handed(net):
        return to_gpu(net)
    def d(sd):
        j = nn.Linear(4, 4)
        j = handed(j)
        j.load_state_dict(sd)
    """
    assert cpu_loads(src) == ["net"]


def test_a_parameter_every_caller_hands_a_literal_is_no_model():
    src = """
    import torch.nn as nn
    class A(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
    def _load(model, path):
        if model == "a":
            model = A()
        elif model == "b":
            model = A()
        model.load_state_dict(sd)
    def _mixed(model, path):
        if model == "a":
            model = A()
        model.load_state_dict(sd)
    _load("a", "p")
    _load("b", "p")
    _mixed("a", "p")
    _mixed(net, "p")
    """
    assert cpu_loads(src) == ["model"]


def test_from_pretrained_config_keyword_is_no_model():
    # ``config=`` of ``from_pretrained`` is the settings the weights are built
    # from; another keyword bound from a call may be a model on a device, and
    # ``device_map`` places the weights.
    src = """
    from transformers import AutoConfig, AutoModel
    def a(name):
        config = AutoConfig.from_pretrained(name)
        model = AutoModel.from_pretrained(name, config=config)
        model.load_state_dict(sd)
    def b(name):
        config = AutoConfig.from_pretrained(name)
        other = AutoModel.from_pretrained(name, config=config, device_map="auto")
        other.load_state_dict(sd)
    def c(name):
        encoder = AutoModel.from_pretrained(name)
        pair = AutoModel.from_pretrained(name, encoder=encoder)
        pair.load_state_dict(sd)
    def d(name):
        config = AutoConfig.from_pretrained(name)
        net = build(config=config)
        net.load_state_dict(sd)
    """
    # d: a configuration read by ``from_pretrained`` is settings wherever it
    # goes (vocabulary/settings_values.py), and ``build`` is bound nowhere.
    assert cpu_loads(src) == ["model", "net"]


def test_a_model_picked_from_a_dict_of_cpu_models_is_on_the_cpu():
    """face.evoLVe: ``BACKBONE = BACKBONE_DICT[name]``, a dict literal of
    fresh CPU models; a move of the pick, of the dict's models, or a dict
    holding one moved model proves nothing."""
    src = """
    import torch.nn as nn
    def picked(name):
        nets = {"a": nn.Linear(4, 4), "b": nn.Linear(4, 8)}
        net = nets[name]
        print(net)
        net.load_state_dict(sd)
        net = net.cuda()
    def moved_pick(name):
        nets = {"a": nn.Linear(4, 4), "b": nn.Linear(4, 8)}
        moved = nets[name]
        moved = moved.cuda()
        moved.load_state_dict(sd)
    def one_on_a_device(name):
        nets = {"a": nn.Linear(4, 4).cuda(), "b": nn.Linear(4, 8)}
        gpu = nets[name]
        gpu.load_state_dict(sd)
    def dict_moved(name):
        nets = {"a": nn.Linear(4, 4), "b": nn.Linear(4, 8)}
        for m in nets.values():
            m.cuda()
        later = nets[name]
        later.load_state_dict(sd)
    def filled(name):
        nets = {}
        nets["a"] = nn.Linear(4, 4)
        filled = nets[name]
        filled.load_state_dict(sd)
    """
    assert cpu_loads(src) == ["net", "filled"]


def test_a_model_rebuilt_in_each_iteration_before_the_load_is_on_the_cpu():
    # The move at the end of the body reaches only the model the next
    # iteration replaces; built once before the loop, the next load finds it moved.
    src = """
    import torch
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)
    def rebuilt(paths):
        for p in paths:
            net = Net()
            try:
                net.load_state_dict(sd)
            except KeyError:
                pass
            net = nn.DataParallel(net.cuda())
    def built_once(paths):
        net = Net()
        for p in paths:
            net.load_state_dict(sd)
            net.cuda()
    def inner_loop(paths, parts):
        for p in paths:
            net = Net()
            for q in parts:
                net.load_state_dict(sd)
                net.cuda()
    """
    assert cpu_loads(src) == ["net"]


def test_an_activation_slot_set_in_init_keeps_the_model_on_the_cpu():
    # ``self.act = act`` with ``act=nn.ReLU()``: a slot for a layer with no
    # tensors; ``self.extra = extra`` (default None) or a slot rebound
    # before the store may hold a model on a device.
    src = """
    import torch
    import torch.nn as nn
    class Slot(nn.Module):
        def __init__(self, path, act=nn.LeakyReLU(negative_slope=0.1)):
            super().__init__()
            self.fc = nn.Linear(2, 2)
            self.act = act
            self.load_state_dict(torch.load(path))
    class Extra(nn.Module):
        def __init__(self, path, extra=None):
            super().__init__()
            self.fc = nn.Linear(2, 2)
            self.extra = extra
            self.load_state_dict(torch.load(path))
    class Layer(nn.Module):
        def __init__(self, path, act=nn.Linear(2, 2)):
            super().__init__()
            self.act = act
            self.load_state_dict(torch.load(path))
    class Rebound(nn.Module):
        def __init__(self, path, net, act=nn.ReLU()):
            super().__init__()
            act = net
            self.act = act
            self.load_state_dict(torch.load(path))
    def moves(x):
        return x.cuda()
    """
    assert cpu_loads(src) == ["self"]


def test_branch_taken_under_the_literal_every_call_passes():
    # MOON's ``init_nets(..., device='cpu')``: the ``else`` moving each net
    # never runs; the dict of nets it returns in a tuple holds CPU models.
    builder = """
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
    def _init_nets(n, device='cpu'):
        nets = {i: None for i in range(n)}
        for i in range(n):
            net = Net()
            if device == 'cpu':
                net.to(device)
            else:
                net = net.cuda()
            nets[i] = net
        for k, v in nets[0].state_dict().items():
            print(k)
        return nets, 3
    def _build(device='cpu'):
        net = Net()
        if device != 'cpu':
            net = net.cuda()
        return net
    """
    src = (
        builder
        + """
    def main(p):
        nets, n = _init_nets(3, device='cpu')
        first = nets[0]
        first.load_state_dict(sd)
        for k, net in nets.items():
            net.load_state_dict(sd[k])
        model = _build()
        model.load_state_dict(sd)
    """
    )
    assert cpu_loads(src) == ["first", "net", "model"]
    # A caller passing ``device='cuda'``, a variable, or two callers
    # disagreeing: the branch is not decided, the nets may be on a GPU.
    for calls in (
        "nets, n = _init_nets(3, device='cuda')\n        model = _build('cuda')",
        "nets, n = _init_nets(3, device=dev)\n        model = _build(dev)",
        "nets, n = _init_nets(3)\n        _init_nets(2, 'cuda')\n        model = _build()\n        _build('cuda')",
    ):
        src = (
            builder
            + f"""
    def main(p, dev):
        {calls}
        first = nets[0]
        first.load_state_dict(sd)
        model.load_state_dict(sd)
    """
        )
        assert cpu_loads(src) == [], calls


def test_a_dict_of_cpu_models_moved_or_handed_over_is_not_on_the_cpu():
    src = """
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
    def _init_nets(n):
        nets = {}
        for i in range(n):
            net = Net()
            nets[i] = net
            net.cuda()
        return nets, 1
    def _two(n):
        nets = {i: None for i in range(n)}
        nets[0] = Net()
        return nets, 1
    def main(p):
        a, _ = _init_nets(2)
        first = a[0]
        first.load_state_dict(sd)
        b, _ = _two(2)
        for k, v in b.items():
            v.cuda()
        c = b[0]
        c.load_state_dict(sd)
        d, _ = _two(2)
        e = d[0]
        e.load_state_dict(sd)
    """
    assert cpu_loads(src) == ["e"]


def test_moves_to_the_cpu_keep_a_model_there():
    src = """
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self, device=None):
            super().__init__()
            self.fc = nn.Linear(2, 2)
    def main(p):
        net = Net()
        net.to("cpu")
        net.load_state_dict(sd)
        other = Net(device="cpu")
        other.load_state_dict(sd)
        gpu = Net(device="cuda")
        gpu.load_state_dict(sd)
    """
    assert cpu_loads(src) == ["net", "other"]


def test_a_load_in_an_arm_no_call_takes_is_judged_as_before():
    # Tramac's ``get_xception_a(pretrained=False)``, called here only with the
    # default: its ``if pretrained:`` load still goes into a CPU model.
    src = """
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
    def _get_net(pretrained=False):
        net = Net()
        if pretrained:
            net.load_state_dict(sd)
        return net
    model = _get_net()
    """
    assert cpu_loads(src) == ["net"]
