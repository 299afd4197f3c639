"""Classes looked up in a registry that a project decorator fills (issue 29,
SECOND's ``get_voxelnet_class(name)(...)``: ``@register_voxelnet`` on classes
of two modules): the object is "one of the registered classes", and a
verdict holds only when every one agrees (project/class_registries.py).
Also: ``amp.initialize`` hands back the models it is given, and a model
whose eval branch alone runs under ``no_grad`` still builds a graph (MEM201)."""

from __future__ import annotations

import ast

from project_helpers import finding_lines, write_project

from memlint.project.class_registries import module_registries
from memlint.project.eval_forwards import works_before_eval_branch
from memlint.project.object_types import object_types
from memlint.project.summary import module_bindings

_REGISTRY = """\
    REGISTERED = {}


    def register_net(cls, name=None):
        global REGISTERED
        if name is None:
            name = cls.__name__
        assert name not in REGISTERED, f"exists: {REGISTERED}"
        REGISTERED[name] = cls
        return cls


    def get_net_class(name):
        assert name in REGISTERED, f"available: {REGISTERED}"
        return REGISTERED[name]
"""

_VOXELNET = """\
    import torch
    import torch.nn as nn
    from models.registry import register_net


    @register_net
    class VoxelNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def predict(self, preds):
            return preds.sigmoid()

        def forward(self, x):
            preds = self.fc(x)
            if self.training:
                return preds.sum()
            with torch.no_grad():
                res = self.predict(preds)
            return res
"""

_MULTI_HEAD = """\
    import torch.nn as nn
    from models.registry import register_net
    from models.voxelnet import VoxelNet


    @register_net
    class MultiHead(VoxelNet):
        def extra(self):
            return 1
"""

# Its own forward returns what it computed with grad on, in eval mode too.
_OWN_FORWARD = """\
    import torch.nn as nn
    from models.registry import register_net
    from models.voxelnet import VoxelNet


    @register_net
    class MultiHead(VoxelNet):
        def forward(self, x):
            return self.fc(x)
"""

_BUILDER = """\
    from models.registry import get_net_class


    def build(cfg):
        net = get_net_class(cfg.name)()
        return net
"""

_TRAIN = """\
    import torch
    from apex import amp
    from builder import build


    def train(cfg, loader, eval_loader):
        net = build(cfg).to("cuda")
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        if cfg.mixed:
            net, opt = amp.initialize(net, opt, opt_level="O2")
        for x in loader:
            loss = net(x)
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        detections = []
        for example in eval_loader:
            detections += net(example)
        return detections
"""
_EVAL_LINE = 19  # ``detections += net(example)``
_LOOP_LINE = 18


def _project(tmp_path, **override):
    files = {
        "setup.py": "",
        "models/__init__.py": "",
        "models/registry.py": _REGISTRY,
        "models/voxelnet.py": _VOXELNET,
        "models/multi_head.py": _MULTI_HEAD,
        "builder.py": _BUILDER,
        "train.py": _TRAIN,
    }
    files.update(override)
    write_project(tmp_path, files)
    return tmp_path / "train.py"


def test_a_registry_lookup_is_every_registered_class(tmp_path):
    train = _project(tmp_path)
    assert finding_lines(train, "MEM101") == []
    # Its work before the eval branch still builds a graph per batch.
    assert finding_lines(train, "MEM201") == [_LOOP_LINE]


def test_one_registered_class_that_does_not_agree_keeps_the_finding(tmp_path):
    train = _project(tmp_path, **{"models/multi_head.py": _OWN_FORWARD})
    assert finding_lines(train, "MEM101") == [_EVAL_LINE]


def test_a_registration_not_read_here_leaves_the_class_unknown(tmp_path):
    called = _MULTI_HEAD.replace("@register_net\n    class MultiHead", "class MultiHead") + (
        "\n\n    register_net(MultiHead)\n"
    )
    assert finding_lines(_project(tmp_path / "a", **{"models/multi_head.py": called}), "MEM101") == [_EVAL_LINE]
    written = _MULTI_HEAD.replace("@register_net\n    class MultiHead", "class MultiHead").replace(
        "from models.registry import register_net", "from models.registry import REGISTERED"
    ) + ('\n\n    REGISTERED["MultiHead"] = MultiHead\n')
    assert finding_lines(_project(tmp_path / "b", **{"models/multi_head.py": written}), "MEM101") == [_EVAL_LINE]
    handed = _REGISTRY + "\n\n    def plugins():\n        return REGISTERED\n"
    assert finding_lines(_project(tmp_path / "c", **{"models/registry.py": handed}), "MEM101") == [_EVAL_LINE]


def test_the_registry_read_directly_is_a_lookup_too(tmp_path):
    for body in ("REGISTERED[cfg.name]()", "REGISTERED.get(cfg.name)()"):
        builder = _BUILDER.replace("get_net_class(cfg.name)()", body).replace("get_net_class", "REGISTERED")
        train = _project(tmp_path / str(len(body)), **{"builder.py": builder})
        assert finding_lines(train, "MEM101") == []


def _registries(text: str):
    import textwrap

    return module_registries(ast.parse(textwrap.dedent(text)))


def test_module_registries_reads_register_functions_and_lookups():
    found = _registries(_REGISTRY)
    assert found.registers == {"register_net": "REGISTERED"}
    assert found.lookups == {"REGISTERED": "REGISTERED", "get_net_class": "REGISTERED"}
    # A register function that wraps what it is given is no plain registration.
    wraps = _REGISTRY.replace("return cls\n", "return wrap(cls)\n")
    assert _registries(wraps).registers == {}
    # A registry bound twice, or filled with something else, is not one.
    assert _registries(_REGISTRY + "\n    REGISTERED = {}\n").registers == {}
    assert _registries(_REGISTRY + "\n    REGISTERED.update(extra)\n").registers == {}


def _bound(text: str) -> dict[tuple[str, str], tuple[str, ...]]:
    import textwrap

    tree = ast.parse(textwrap.dedent(text))
    bindings, star = module_bindings(tree)
    return {(s, n): t for s, n, t in object_types(tree, bindings, star).bound}


def test_amp_initialize_hands_back_the_models_it_is_given():
    found = _bound(_TRAIN)
    assert found[("train", "net")] == ("builder.build",)
    other = _TRAIN.replace("net, opt = amp.initialize(net, opt", "net, opt = other.initialize(net, opt")
    assert ("train", "net") not in _bound(other)


def test_a_call_of_a_looked_up_class_is_spelled_for_the_registry():
    found = _bound(_BUILDER)
    assert found[("build", "net")] == ("%models.registry.get_net_class",)


def test_work_before_the_eval_branch():
    def forward(body: str) -> ast.FunctionDef:
        import textwrap

        fn = ast.parse("def forward(self, x):\n" + textwrap.indent(textwrap.dedent(body), "    ")).body[0]
        assert isinstance(fn, ast.FunctionDef)
        return fn

    assert works_before_eval_branch(forward("preds = self.net(x)\nif self.training:\n    return preds\nreturn 1\n"))
    assert not works_before_eval_branch(forward("if self.training:\n    return self.net(x)\nreturn 1\n"))
    assert not works_before_eval_branch(forward("y = x + 1\nif self.training:\n    return y\nreturn 1\n"))
