"""The eleventh batch's MEM701 false alarms decided in another module
(issue 29): a model fetched with ``getattr`` from a project module that
subclasses torchvision's classes and imports its blocks
(self-critical.pytorch's ``getattr(resnet, name)()``)."""

from __future__ import annotations

import ast

from project_helpers import finding_lines, write_project

from memlint.project.model_tables import builds_only_on_cpu

_RESNET = """
    import torch.nn as nn
    import torchvision.models.resnet
    from torchvision.models.resnet import BasicBlock, Bottleneck

    class ResNet(torchvision.models.resnet.ResNet):
        def __init__(self, block, layers):
            super().__init__(block, layers)
            self.head = nn.Linear(2, 2)

    def resnet101():
        return ResNet(Bottleneck, [3, 4, 23, 3])
"""

_SCRIPT = """
    import torch
    from utils import resnet

    def main(name, path):
        net = getattr(resnet, name)()
        net.load_state_dict(torch.load(path))
        net.cuda()
"""


def test_a_module_importing_torchvision_blocks_builds_only_on_the_cpu(tmp_path):
    """torchvision's constructors build on the CPU: importing its blocks
    leaves every class ``getattr(resnet, name)`` gives a CPU one."""
    write_project(tmp_path, {"utils/__init__.py": "", "utils/resnet.py": _RESNET, "prepro.py": _SCRIPT})
    assert finding_lines(tmp_path / "prepro.py", "MEM701") == []


def test_a_module_importing_a_class_of_another_library_is_not_known(tmp_path):
    """A class-like name imported from elsewhere (a project module, another
    library) may be what ``getattr`` gives, and may move itself."""
    other = _RESNET.replace("from torchvision.models.resnet import", "from timm.layers import")
    write_project(tmp_path, {"utils/__init__.py": "", "utils/resnet.py": other, "prepro.py": _SCRIPT})
    assert finding_lines(tmp_path / "prepro.py", "MEM701") == [7]


def test_builds_only_on_cpu_accepts_torch_and_torchvision_imports_only():
    head = "class Net:\n    pass\n"
    for library, expected in (("torch.nn", True), ("torchvision.ops", True), ("torchvisionx", False), ("x", False)):
        tree = ast.parse(f"from {library} import Block\n" + head)
        assert builds_only_on_cpu(tree, ["Net"]) is expected, library
