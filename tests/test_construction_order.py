"""analysis/training/construction_order.py: ``self`` on no device while
``__init__`` runs, and the ``self.method()`` calls that leave it there."""

import textwrap

import libcst as cst

from memlint.analysis.scope.callgraph import CallGraph
from memlint.analysis.scope.names import ImportTable
from memlint.analysis.training.construction_order import SelfMethods, starts_on_cpu


def _parsed(src: str) -> tuple[cst.Module, CallGraph, ImportTable]:
    module = cst.parse_module(textwrap.dedent(src))
    return module, CallGraph(module), ImportTable(module)


def _inits(src: str) -> dict[str, bool]:
    module, calls, names = _parsed(src)
    found = {}
    for fn in calls.functions:
        cls = calls.class_of.get(fn)
        if cls is not None and fn.name.value == "__init__":
            found[cls.name.value] = starts_on_cpu(cls, fn, names)
    return found


def test_self_starts_on_the_cpu_under_torch_nn_bases_only():
    src = """
    import torch
    import torch.nn as nn
    from models import Base
    def wrap(cls):
        return cls
    class Plain(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
            self.cuda()
    class Sequence(nn.Sequential):
        def __init__(self):
            super().__init__(nn.Linear(2, 2))
    class Derived(Base):
        def __init__(self):
            super().__init__()
    class OnADevice(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(2, device="cuda"))
    @wrap
    class Decorated(nn.Module):
        def __init__(self):
            super().__init__()
    class Meta(nn.Module, metaclass=type):
        def __init__(self):
            super().__init__()
    """
    assert _inits(src) == {
        "Plain": True,  # a later move is the walk's to see, in order
        "Sequence": True,
        "Derived": False,  # a base of the project may move in its __init__
        "OnADevice": False,
        "Decorated": False,
        "Meta": False,
    }


def _keeping(src: str) -> dict[str, bool]:
    module, calls, names = _parsed(src)
    redefined = lambda fn: fn.name.value == "redone"  # noqa: E731
    reads = lambda call: isinstance(call.func, cst.Name) and call.func.value in ("print", "int")  # noqa: E731
    methods = SelfMethods(calls.resolve, {"to", "cuda", "setup"}, {"eval", "load_state_dict"}, redefined, reads)
    return {fn.name.value: methods.keeps(fn) for fn in calls.functions if fn in calls.class_of}


def test_methods_that_leave_self_where_it_is():
    src = """
    import torch.nn as nn
    from helpers import to_gpu, Encoder
    class Net(nn.Module):
        def set_opts(self, opts):
            self.opts = opts
            print(int(self.opts.size))
        def set_encoder(self):
            if self.opts.kind != "enc":
                raise ValueError("{} is unknown".format(self.opts.kind))
            return Encoder(50, self.opts)
        def chained(self):
            self.set_opts(None)
            self.fc.eval()
        def moves(self):
            self.fc.cuda()
        def calls_mover(self):
            self.moves()
        def hands_self(self):
            to_gpu(self)
        def hands_part(self):
            to_gpu(self.fc)
        def part_method(self):
            self.fc.init_gpu()
        def builds_on_device(self):
            self.w = Encoder(2, device="cuda")
        def hands_param(self, net):
            to_gpu(net)
        def recursive(self):
            self.recursive()
        def redone(self):
            pass
    """
    assert _keeping(src) == {
        "set_opts": True,
        "set_encoder": True,
        "chained": True,
        "moves": False,
        "calls_mover": False,
        "hands_self": False,
        "hands_part": False,
        "part_method": False,
        "builds_on_device": False,
        "hands_param": False,
        "recursive": False,
        "redone": False,
    }
