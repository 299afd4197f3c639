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
