"""The ninth batch's false alarms whose deciding fact is in another module
(issue 29): pytorch-AdaIN's module-level ``vgg = nn.Sequential(...)`` of
``net.py``, read as ``vgg = net.vgg`` and loaded before any move (MEM701)."""

from __future__ import annotations

import ast

from project_helpers import finding_lines, write_project

from memlint.project.module_objects import cpu_objects

_NET = """
    import torch.nn as nn
    decoder = nn.Sequential(nn.Conv2d(3, 3, 1), nn.ReLU())
    vgg = nn.Sequential(nn.Conv2d(3, 3, 1))
    class Net(nn.Module):
        def __init__(self, encoder, decoder):
            super().__init__()
            self.encoder = encoder
            self.decoder = decoder
"""

_SCRIPT = """
    import torch
    import net
    from net import decoder
    vgg = net.vgg
    vgg.eval()
    vgg.load_state_dict(torch.load("vgg.pth"))
    decoder.load_state_dict(torch.load("decoder.pth"))
    vgg.to("cuda")
    decoder.to("cuda")
"""


def _objects(source: str) -> list[str]:
    tree = ast.parse(source)
    return cpu_objects(tree, {"nn": "torch.nn", "torch": "torch"}, [])


def test_module_level_models_built_on_the_cpu_and_named_nowhere_else():
    source = "import torch.nn as nn\nvgg = nn.Sequential(nn.Conv2d(3, 3, 1))\ndef f(vgg):\n    return vgg\n"
    assert _objects(source) == ["vgg"]


def test_a_module_level_model_moved_rebound_or_built_from_a_moved_part_is_not_claimed():
    moved = "import torch.nn as nn\nvgg = nn.Sequential(nn.Conv2d(3, 3, 1))\nvgg.cuda()\n"
    rebound = "import torch.nn as nn\nvgg = nn.Linear(2, 2)\ndef f():\n    global vgg\n    vgg = None\n"
    chained = "import torch.nn as nn\nvgg = nn.Sequential(nn.Conv2d(3, 3, 1).cuda())\n"
    part = "import torch.nn as nn\nconv = nn.Conv2d(3, 3, 1).cuda()\nvgg = nn.Sequential(conv)\n"
    wrapped = "import torch.nn as nn\nvgg = nn.DataParallel(nn.Linear(2, 2))\n"
    assert [_objects(s) for s in (moved, rebound, chained, part, wrapped)] == [[], [], [], [], []]


def test_a_module_level_model_of_another_module_loaded_before_it_moves(tmp_path):
    """Before, ``net.vgg`` was no model the analysis knew: the load was
    reported though the model it fills is on the CPU."""
    write_project(tmp_path, {"net.py": _NET, "train.py": _SCRIPT})
    assert finding_lines(tmp_path / "train.py", "MEM701") == []


def test_the_same_model_moved_before_the_load_stays_reported(tmp_path):
    script = _SCRIPT.replace("    vgg.eval()\n", "    vgg.cuda()\n")
    write_project(tmp_path, {"net.py": _NET, "train.py": script})
    assert finding_lines(tmp_path / "train.py", "MEM701") == [7]


def test_a_module_level_model_its_module_moves_stays_reported(tmp_path):
    net = _NET.replace(
        "    vgg = nn.Sequential(nn.Conv2d(3, 3, 1))\n", "    vgg = nn.Sequential(nn.Conv2d(3, 3, 1)).cuda()\n"
    )
    write_project(tmp_path, {"net.py": net, "train.py": _SCRIPT})
    assert finding_lines(tmp_path / "train.py", "MEM701") == [7]
