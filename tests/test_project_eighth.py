"""The eighth batch's false alarms whose deciding fact is in another module
(issue 29): TransUNet's weight loader reached only from under ``no_grad``
while the script calls another class's same-named loader on a chained
constructor (MEM401); CRNN's module alias rebound to the model it builds,
still a project class on the CPU (MEM701)."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

_BLOCKS = """
    import torch.nn as nn
    class Unit(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 1)
        def load_from(self, w):
            self.conv.weight.copy_(w)
"""

_MODEL = """
    import torch
    import torch.nn as nn
    from blocks import Unit
    class Top(nn.Module):
        def __init__(self):
            super().__init__()
            self.units = nn.ModuleList([Unit(), Unit()])
        def load_from(self, w):
            with torch.no_grad():
                for unit in self.units:
                    unit.load_from(w)
"""


def test_a_same_named_loader_called_on_a_chained_constructor_of_another_class(tmp_path):
    """``net = Top().cuda()``: the receiver is still a ``Top``, which defines
    ``load_from`` itself, so the script's grad-on call never reaches
    ``Unit.load_from``, whose one caller holds the ``no_grad``. Before, the
    ``.cuda()`` chain hid the class and the name alone counted."""
    script = "import torch\nfrom model import Top\nnet = Top().cuda()\nnet.load_from(torch.zeros(3, 3, 1, 1))\n"
    write_project(tmp_path, {"blocks.py": _BLOCKS, "model.py": _MODEL, "train.py": script})
    assert finding_lines(tmp_path / "blocks.py", "MEM401") == []


def test_the_loader_itself_called_with_grad_on_stays_reported(tmp_path):
    script = "import torch\nfrom blocks import Unit\nunit = Unit().cuda()\nunit.load_from(torch.zeros(3, 3, 1, 1))\n"
    write_project(tmp_path, {"blocks.py": _BLOCKS, "model.py": _MODEL, "train.py": script})
    assert finding_lines(tmp_path / "blocks.py", "MEM401") == [8]


_CRNN = """
    import torch.nn as nn
    class CRNN(nn.Module):
        def __init__(self, h):
            super().__init__()
            self.fc = nn.Linear(h, 2)
"""


def test_a_module_alias_rebound_to_the_model_it_builds_is_a_cpu_model(tmp_path):
    """CRNN's ``crnn = crnn.CRNN(...)``: the load comes before ``.cuda()``
    into a model of a project class that moves nothing. Before, the
    rebinding hid the import, so the constructor was unknown."""
    script = """
        import torch
        import models.crnn as crnn
        crnn = crnn.CRNN(32)
        crnn.load_state_dict(torch.load("pretrained.pth"))
        crnn.cuda()
    """
    write_project(tmp_path, {"models/__init__.py": "", "models/crnn.py": _CRNN, "train.py": script})
    assert finding_lines(tmp_path / "train.py", "MEM701") == []


def test_the_rebound_alias_moved_before_the_load_stays_reported(tmp_path):
    script = """
        import torch
        import models.crnn as crnn
        crnn = crnn.CRNN(32).cuda()
        crnn.load_state_dict(torch.load("pretrained.pth"))
    """
    write_project(tmp_path, {"models/__init__.py": "", "models/crnn.py": _CRNN, "train.py": script})
    assert finding_lines(tmp_path / "train.py", "MEM701") == [5]
