"""MEM701 loads into models built by dynamic constructors whose every
candidate is known (issue 29, the tenth batch): a builder filling a local list
of fresh torch.nn layers (``nn.Sequential(*layers)``, deepcluster's
``make_layers_features``)."""

from __future__ import annotations

import ast

from project_helpers import finding_lines, write_project

from memlint.project.cpu_builders import builders
from memlint.project.layer_lists import list_values


def _builders(source: str) -> list[str]:
    tree = ast.parse(source)
    functions = [s.name for s in tree.body if isinstance(s, ast.FunctionDef)]
    return builders(tree, [], functions)[0]


_LAYERS = """\
import torch.nn as nn
def make_layers(cfg, bn):
    layers = []
    for v in cfg:
        conv = nn.Conv2d(3, v, kernel_size=3)
        if bn:
            layers += [conv, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
        else:
            layers.append(conv)
        layers.extend([nn.ReLU()])
    return nn.Sequential(*layers)
"""


def test_a_builder_filling_a_local_list_of_fresh_layers_builds_on_the_cpu():
    """Before, ``nn.Sequential(*layers)`` was unpacked from anything: no builder."""
    assert _builders(_LAYERS) == ["make_layers"]


def test_a_list_handed_in_read_otherwise_or_given_a_model_is_not_claimed():
    handed = "import torch.nn as nn\ndef f(layers):\n    layers += [nn.ReLU()]\n    return nn.Sequential(*layers)\n"
    helper = _LAYERS.replace("    return nn.Sequential", "    grow(layers)\n    return nn.Sequential")
    model = _LAYERS.replace("layers.append(conv)", "layers.append(net)")
    moved = _LAYERS.replace("nn.ReLU()])", "nn.ReLU().cuda()])")
    iterated = _LAYERS.replace(
        "    return nn.Sequential", "    for x in layers:\n        pass\n    return nn.Sequential"
    )
    rebound = _LAYERS.replace("        conv = nn.Conv2d(3, v, kernel_size=3)", "        conv = other(v)")
    for source in (handed, helper, model, moved, iterated, rebound):
        assert _builders(source) == [], source


def test_list_values_lists_what_the_list_is_given():
    fn = ast.parse(_LAYERS).body[1]
    assert isinstance(fn, ast.FunctionDef)
    values = list_values(fn, "layers")
    assert values is not None
    assert sorted(ast.unparse(v) for v in values) == [
        "conv",
        "conv",
        "nn.BatchNorm2d(v)",
        "nn.ReLU()",
        "nn.ReLU(inplace=True)",
    ]
    assert list_values(fn, "cfg") is None


def test_a_model_from_a_package_of_list_filling_builders_is_on_the_cpu(tmp_path):
    """deepcluster's util.py: ``models.__dict__[ck["arch"]](...)`` of a package
    whose builders pass ``make_layers(...)`` to a class that moves nothing."""
    nets = _LAYERS + (
        '__all__ = ["Net", "net"]\n'
        "class Net(nn.Module):\n"
        "    def __init__(self, features, n):\n"
        "        super().__init__()\n"
        "        self.features = features\n"
        "        self.top = nn.Linear(4, n)\n"
        "def net(bn=True, out=10):\n"
        "    model = Net(make_layers([8, 8], bn), out)\n"
        "    return model\n"
    )
    script = """
        import torch
        import models
        def load_model(path):
            checkpoint = torch.load(path)
            model = models.__dict__[checkpoint["arch"]](out=10)
            model.load_state_dict(checkpoint["state_dict"])
            return model
    """
    files = {"models/__init__.py": "from .nets import *\n", "models/nets.py": nets, "util.py": script}
    write_project(tmp_path, files)
    assert finding_lines(tmp_path / "util.py", "MEM701") == []
    files["models/nets.py"] = nets.replace("nn.ReLU()])", "nn.ReLU().cuda()])")
    write_project(tmp_path, files)
    assert finding_lines(tmp_path / "util.py", "MEM701") == [5]


# A function returning one class of a module-level registry (FCGF's
# ``load_model(name)`` over ``MODELS``, filled from project modules).

_REGISTRY = """\
import logging
import nets.small as smalls
MODELS = []
def add_models(module):
    MODELS.extend([getattr(module, a) for a in dir(module) if "Net" in a])
add_models(smalls)
def load_model(name):
    all_models = MODELS
    mdict = {model.__name__: model for model in all_models}
    if name not in mdict:
        for model in all_models:
            logging.info(model.__name__)
        return None
    NetClass = mdict[name]
    return NetClass
"""


def _factories(source: str) -> dict[str, list[str]]:
    from memlint.project.class_factories import factories

    return factories(ast.parse(source))


def test_a_function_returning_a_registry_element_lists_the_registry_sources():
    assert _factories(_REGISTRY) == {"load_model": ["@smalls"]}
    listed = "from nets import A, B\nMODELS = {'a': A}\nMODELS['b'] = B\ndef pick(n):\n    return MODELS.get(n)\n"
    assert _factories(listed) == {"pick": ["A", "B"]}


def test_a_registry_handed_on_filled_otherwise_or_a_function_returning_more_is_not_a_factory():
    handed = _REGISTRY + "register(MODELS)\n"
    called_late = _REGISTRY + "def more(m):\n    add_models(m)\n"
    filled = _REGISTRY.replace("add_models(smalls)", "add_models(smalls)\nMODELS.append(make())")
    other = _REGISTRY.replace("        return None", "        return build(name)")
    whole = _REGISTRY.replace("    return NetClass", "    return all_models")
    aliased = _REGISTRY.replace("    all_models = MODELS", "    all_models = MODELS\n    all_models.append(X)")
    stored = _REGISTRY + "MODELS[0] = make()\n"
    for source in (handed, called_late, filled, other, whole, aliased, stored):
        assert _factories(source) == {}, source


_SMALL = """\
import torch.nn as nn
class SmallNet(nn.Module):
    def __init__(self, n, bn_momentum=0.1):
        super().__init__()
        self.fc = nn.Linear(n, 2)
class SmallNetBN(SmallNet):
    pass
"""

_TRAIN = """\
import torch
from nets import load_model
def main(cfg, device):
    Model = load_model(cfg.model)
    model = Model(1, bn_momentum=cfg.bn_momentum)
    checkpoint = torch.load(cfg.weights)
    model.load_state_dict(checkpoint["state_dict"])
    model = model.to(device)
"""


def test_a_model_built_from_a_registry_of_cpu_classes_is_on_the_cpu(tmp_path):
    """FCGF's lib/trainer.py: before, ``Model = load_model(...)`` was an unknown constructor."""
    files = {"nets/__init__.py": _REGISTRY, "nets/small.py": _SMALL, "train.py": _TRAIN}
    write_project(tmp_path, files)
    assert finding_lines(tmp_path / "train.py", "MEM701") == []


def test_a_registry_with_a_moving_class_keeps_the_finding(tmp_path):
    moving = _SMALL.replace("    pass", "    def __init__(self, n):\n        super().__init__(n)\n        self.cuda()")
    files = {"nets/__init__.py": _REGISTRY, "nets/small.py": moving, "train.py": _TRAIN}
    write_project(tmp_path, files)
    assert finding_lines(tmp_path / "train.py", "MEM701") == [6]
    files = {"nets/__init__.py": _REGISTRY + "register(MODELS)\n", "nets/small.py": _SMALL, "train.py": _TRAIN}
    write_project(tmp_path, files)
    assert finding_lines(tmp_path / "train.py", "MEM701") == [6]


def test_the_module_facts_read_the_factories_without_the_gates_tree():
    """Linted without the gate's tree (fix, the server's single rules): the
    module's code parsed; code Python cannot parse has no factory."""
    import libcst as cst

    from memlint.analysis.training.factory_classes import FactoryClasses

    def own(source: str, tree: ast.Module | None) -> dict[str, list[str]]:
        return FactoryClasses(cst.parse_module(source), tree, frozenset())._own_factories()

    assert own(_REGISTRY, None) == own(_REGISTRY, ast.parse(_REGISTRY)) == {"load_model": ["@smalls"]}
    assert own(_REGISTRY + "# a NUL byte: \0\n", None) == {}  # libcst reads it, Python does not
