"""Classes picked at run time from a module named by an option string
(issue 29, InstColorization's ``create_model(opt)``: ``importlib.import_module(
"models." + name + "_model")``, then the class of that module that subclasses
``BaseModel``): the object is "one of the project's classes in the modules the
pattern names", and a verdict holds only when every candidate agrees
(project/dynamic_classes.py)."""

from __future__ import annotations

import ast

from project_helpers import finding_lines, write_project

from memlint.project.dynamic_classes import direct_pick, module_pattern, pickers

_FACTORY = """\
    import importlib
    from models.base_model import BaseModel


    def find_model_using_name(model_name):
        model_filename = "models." + model_name + "_model"
        modellib = importlib.import_module(model_filename)
        model = None
        target_model_name = model_name.replace("_", "") + "model"
        for name, cls in modellib.__dict__.items():
            if name.lower() == target_model_name.lower() and issubclass(cls, BaseModel):
                model = cls
        if model is None:
            exit(0)
        return model


    def create_model(opt):
        model = find_model_using_name(opt.model)
        instance = model()
        instance.initialize(opt)
        return instance
"""

_BASE = """\
    class BaseModel:
        def initialize(self, opt):
            self.opt = opt
"""

_FUSION = """\
    import torch.nn as nn
    from .base_model import BaseModel


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return self.fc(x)


    class FusionModel(BaseModel):
        def initialize(self, opt):
            self.netG = Net()

        def colorize(self, x):
            self.out = self.netG(x)
"""

_TRAIN = """\
    import torch
    import torch.nn as nn
    from .base_model import BaseModel


    class TrainModel(BaseModel):
        def initialize(self, opt):
            self.netG = nn.Linear(4, 4)

        def optimize(self, x):
            self.netG(x).sum().backward()
"""

_TEST = """\
    import torch
    from models import create_model


    def evaluate(loader, opt):
        model = create_model(opt)
        for data in loader:
            model.colorize(data)
"""


def _project(tmp_path, **changes):
    files = {
        "setup.py": "",
        "models/__init__.py": _FACTORY,
        "models/base_model.py": _BASE,
        "models/fusion_model.py": _FUSION,
        "models/train_model.py": _TRAIN,
        "test.py": _TEST,
    }
    files.update(changes)
    write_project(tmp_path, files)
    return tmp_path / "test.py"


def test_an_object_of_a_class_picked_by_an_option_string_is_typed(tmp_path):
    # FusionModel runs its network with grad on; the others have no ``colorize``.
    assert finding_lines(_project(tmp_path), "MEM201") == [7]


def test_a_candidate_that_runs_the_method_under_no_grad_keeps_it_silent(tmp_path):
    other = (
        _TRAIN + "\n        def colorize(self, x):\n            with torch.no_grad():\n                self.netG(x)\n"
    )
    assert finding_lines(_project(tmp_path, **{"models/train_model.py": other}), "MEM201") == []


def test_a_class_picked_without_a_subclass_test_is_not_known(tmp_path):
    factory = _FACTORY.replace(" and issubclass(cls, BaseModel)", "")
    assert finding_lines(_project(tmp_path, **{"models/__init__.py": factory}), "MEM201") == []


def test_a_module_outside_the_pattern_is_no_candidate(tmp_path):
    # ``models/helpers.py`` does not end with ``_model``: its class is never picked.
    helper = _FUSION.replace("FusionModel", "Helper").replace("self.out = self.netG(x)", "pass")
    helper = helper.replace("def colorize(self, x):\n        pass", "def colorize(self, x):\n        return x")
    changed = {"models/helpers.py": helper}
    assert finding_lines(_project(tmp_path, **changed), "MEM201") == [7]


def _spelled(text: str) -> str | None:
    node = ast.parse(text, mode="eval").body
    return module_pattern(node, lambda _name: None)


def test_module_patterns():
    assert _spelled('"models." + name + "_model"') == ("models.", "_model")
    assert _spelled('f"models.{name}"') == ("models.", "")
    assert _spelled('"models.{}".format(cfg.name)') == ("models.", "")
    assert _spelled('"nets.%s_net" % name') == ("nets.", "_net")
    assert _spelled("name") is None  # nothing fixed: any module
    assert _spelled('"model_" + name') is None  # no package: an installed module may answer
    assert _spelled('"." + name') is None  # relative


def _pickers(text: str) -> dict[str, tuple[str, ...]]:
    tree = ast.parse(text)
    bindings = {"importlib": "importlib", "BaseModel": "models.base_model.BaseModel"}

    def qualified(func):
        name = ast.unparse(func)
        head, dot, tail = name.partition(".")
        return bindings.get(head, head) + dot + tail

    def spell(dotted):
        head, dot, tail = dotted.partition(".")
        return bindings[head] + dot + tail if head in bindings else None

    return pickers(tree, qualified, spell)


def test_pickers():
    import textwrap

    found = _pickers(textwrap.dedent(_FACTORY))
    assert found == {"find_model_using_name": ("?models.;_model;<models.base_model.BaseModel",)}
    constant = 'import importlib\ndef get(name):\n    return getattr(importlib.import_module("nets." + name), "Net")\n'
    assert _pickers(constant) == {"get": ("?nets.;;=Net",)}
    computed = 'import importlib\ndef get(name):\n    return getattr(importlib.import_module("nets." + name), name)\n'
    assert _pickers(computed) == {}


def test_direct_pick():
    func = ast.parse('importlib.import_module("nets." + arch).Net', mode="eval").body
    assert direct_pick(func, lambda f: ast.unparse(f)) == "?nets.;;=Net"
    func = ast.parse('getattr(importlib.import_module("nets." + arch), arch)', mode="eval").body
    assert direct_pick(func, lambda f: ast.unparse(f)) is None


# InstColorization's shape: the script never calls ``.eval()``; the picked
# object's ``setup_to_test`` switches its networks, which ``define_G`` builds
# through ``init_net``, a helper handing back the network it is given.
_NETWORKS = """\
    import torch
    import torch.nn as nn


    class Gen(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return self.fc(x)


    class Other(Gen):
        pass


    def init_net(net, gpu_ids=[]):
        if len(gpu_ids) > 0:
            net.to(gpu_ids[0])
            net = torch.nn.DataParallel(net, gpu_ids)
        return net


    def define_G(which, gpu_ids):
        netG = None
        if which == "a":
            netG = Gen()
        elif which == "b":
            netG = Other()
        return init_net(netG, gpu_ids)
"""

_COLOR = """\
    import torch
    from .base_model import BaseModel
    from . import networks


    class ColorModel(BaseModel):
        def initialize(self, opt):
            self.netG = networks.define_G(opt.which, opt.gpu_ids)

        def setup_to_test(self, path):
            self.netG.load_state_dict(torch.load(path, map_location="cpu"))
            self.netG.eval()

        def colorize(self, x):
            self.out = self.netG(x)
"""

_SCRIPT = """\
    import torch
    from models import create_model

    if __name__ == "__main__":
        opt = parse()
        model = create_model(opt)
        model.setup_to_test("weights")
        for data in torch.utils.data.DataLoader(dataset(opt)):
            model.colorize(data)
"""


def _switched(tmp_path, color=_COLOR, script=_SCRIPT):
    files = {
        "setup.py": "",
        "models/__init__.py": _FACTORY,
        "models/base_model.py": _BASE,
        "models/networks.py": _NETWORKS,
        "models/color_model.py": color,
        "models/train_model.py": _TRAIN,
        "test_color.py": script,
    }
    write_project(tmp_path, files)
    return tmp_path / "test_color.py"


def test_a_method_named_for_evaluation_that_switches_the_held_models_is_an_eval_switch(tmp_path):
    assert finding_lines(_switched(tmp_path), "MEM201") == [8]


def test_a_switch_method_that_also_sets_train_mode_is_no_evidence(tmp_path):
    color = _COLOR.replace("self.netG.eval()", "self.netG.eval()\n            self.netG.train()")
    assert finding_lines(_switched(tmp_path, color=color), "MEM201") == []


def test_a_method_not_named_for_evaluation_is_no_evidence(tmp_path):
    color = _COLOR.replace("setup_to_test", "prepare")
    assert (
        finding_lines(_switched(tmp_path, color=color, script=_SCRIPT.replace("setup_to_test", "prepare")), "MEM201")
        == []
    )


def test_a_factory_building_a_plain_object_is_no_model(tmp_path):
    # ``init_net`` hands back what it is given: here a plain object, no network.
    color = _COLOR.replace("networks.define_G(opt.which, opt.gpu_ids)", "networks.init_net(object())")
    assert finding_lines(_switched(tmp_path, color=color), "MEM201") == []


def _passed(text: str) -> dict[str, tuple[int, str]]:
    from memlint.project.passed_through import passthroughs, wraps_itself

    keeps = lambda v, n: wraps_itself(v, n, frozenset({"DataParallel"}), frozenset({"to", "cuda"}))  # noqa: E731
    return passthroughs(ast.parse(text), keeps)


def test_passthroughs():
    import textwrap

    assert _passed(textwrap.dedent(_NETWORKS)) == {"init_net": (0, "net")}
    assert _passed("def f(net):\n    net = other(net)\n    return net\n") == {}
    assert _passed("def f(net, x):\n    if x:\n        return x\n    return net\n") == {}
    assert _passed("def f(net):\n    for net in nets:\n        pass\n    return net\n") == {}
    assert _passed("def f(net):\n    net = net.cuda()\n    return net\n") == {"f": (0, "net")}
