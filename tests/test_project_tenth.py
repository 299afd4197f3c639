"""The tenth batch's MEM701 false alarms decided in another module (issue
29): a model fetched by name from a package that only star-imports CPU
classes (``models.__dict__[args.arch](...)``, network-slimming), and a
project function returning a fresh torch.nn layer (``def vgg(): return
nn.Linear(...)``)."""

from __future__ import annotations

import ast

from project_helpers import finding_lines, write_project

from memlint.project.cpu_builders import builders

_VGG = """
    import torch.nn as nn
    __all__ = ["vgg"]
    class vgg(nn.Module):
        def __init__(self, depth=19, cfg=None):
            super().__init__()
            self.fc = nn.Linear(2, 2)
"""

_MOVING = """
    import torch.nn as nn
    class resnet(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2).cuda()
"""

_SCRIPT = """
    import torch
    import models
    checkpoint = torch.load("ck.pth")
    model = models.__dict__["vgg"](cfg=checkpoint["cfg"])
    model.load_state_dict(checkpoint["state_dict"])
    model.cuda()
"""


def test_a_model_fetched_by_name_from_a_package_of_cpu_classes_is_on_the_cpu(tmp_path):
    """Before, ``models.__dict__[name]`` was an unknown constructor: the load was reported."""
    write_project(
        tmp_path,
        {
            "models/__init__.py": "from __future__ import absolute_import\nfrom .vgg import *\n",
            "models/vgg.py": _VGG,
            "main.py": _SCRIPT,
        },
    )
    assert finding_lines(tmp_path / "main.py", "MEM701") == []


def test_a_package_that_also_brings_a_moving_class_or_defines_its_own_is_not_claimed(tmp_path):
    write_project(
        tmp_path,
        {
            "models/__init__.py": "from .vgg import *\nfrom .resnet import *\n",
            "models/vgg.py": _VGG,
            "models/resnet.py": _MOVING,
            "main.py": _SCRIPT,
            "other/__init__.py": "from .vgg import *\nfrom somewhere import Net\n",
            "other/vgg.py": _VGG,
            "second.py": _SCRIPT.replace("models", "other"),
        },
    )
    assert finding_lines(tmp_path / "main.py", "MEM701") == [4]
    assert finding_lines(tmp_path / "second.py", "MEM701") == [4]


def _builders(source: str) -> list[str]:
    tree = ast.parse(source)
    functions = [s.name for s in tree.body if isinstance(s, ast.FunctionDef)]
    return builders(tree, [], functions)[0]


def test_a_function_returning_a_fresh_torch_layer_builds_on_the_cpu():
    source = (
        "import torch\nimport torch.nn as nn\n"
        "def vgg():\n    return nn.Linear(10, 2)\n"
        "def head(n):\n    return torch.nn.Sequential(torch.nn.Linear(n, 2), torch.nn.ReLU())\n"
    )
    assert _builders(source) == ["vgg", "head"]


def test_a_torch_layer_holding_a_model_or_on_a_device_is_not_claimed():
    source = (
        "import torch.nn as nn\n"
        "def wrap(net):\n    return nn.Sequential(net, nn.ReLU())\n"
        "def par():\n    return nn.DataParallel(nn.Linear(2, 2))\n"
        "def dev(d):\n    return nn.Linear(2, 2, device=d)\n"
        "def unpacked(layers):\n    return nn.Sequential(*layers)\n"
    )
    assert _builders(source) == []


def test_a_project_function_returning_a_torch_layer_is_a_cpu_constructor(tmp_path):
    """Before, ``vgg()`` of another module was not known: the load was reported."""
    nets = "import torch.nn as nn\ndef vgg():\n    return nn.Linear(10, 2)\n"
    script = """
        import torch
        from nets import vgg
        def main(path):
            model = vgg()
            sd = torch.load(path)
            model.load_state_dict(sd["state_dict"])
            model.cuda()
    """
    write_project(tmp_path, {"nets.py": nets, "train.py": script})
    assert finding_lines(tmp_path / "train.py", "MEM701") == []
