"""A model's named method runs the model when it runs one of the class's
parts (issue 29, PyCIL's ``self._network.extract_vector(x)`` after
``self._network.eval()`` in a loader loop): a part the class's ``forward``
runs too, whatever builds it (``self.convnet = get_convnet(args)``, a
factory the project cannot type), or an item of a torch layer container
(``[convnet(x) for convnet in self.convnets]``). The receiver is a model
because the same function switches it with ``.eval()``."""

from __future__ import annotations

import ast
import textwrap

from project_helpers import finding_lines, write_project

from memlint.project.object_types import CONTAINER_ITEM, FORWARD_PART, object_types

_NETS = """\
    import torch
    from torch import nn
    from convs import resnet32, memo_resnet32

    def get_convnet(name):
        if name == "resnet32":
            return resnet32()
        return memo_resnet32(), None

    class BaseNet(nn.Module):
        def __init__(self, name):
            super().__init__()
            self.convnet = get_convnet(name)
            self.fc = None

        def extract_vector(self, x):
            return self.convnet(x)["features"]

        def forward(self, x):
            x = self.convnet(x)
            return self.fc(x["features"])

    class DERNet(nn.Module):
        def __init__(self, name):
            super().__init__()
            self.convnets = nn.ModuleList()

        def extract_vector(self, x):
            features = [convnet(x)["features"] for convnet in self.convnets]
            return torch.cat(features, 1)

        def forward(self, x):
            features = [convnet(x)["features"] for convnet in self.convnets]
            return torch.cat(features, 1)
"""

_CONVS = """\
    from torch import nn

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3)

        def forward(self, x):
            return {"features": self.conv(x)}

    def resnet32():
        return ResNet()

    def memo_resnet32():
        return ResNet()
"""

_LEARNER = """\
    import numpy as np
    import torch

    class BaseLearner:
        def __init__(self):
            self._network = None

        def build_rehearsal_memory(self, loader):
            vectors, targets = self._extract_vectors(loader)
            return vectors.mean(0)

        def _extract_vectors(self, loader):
            self._network.eval()
            vectors, targets = [], []
            for _, inputs, labels in loader:
                vectors.append(self._network.extract_vector(inputs.cuda()).data.cpu().numpy())
                targets.append(labels.numpy())
            return np.concatenate(vectors), np.concatenate(targets)
"""


def _lines(tmp_path, nets=_NETS, learner=_LEARNER):
    write_project(tmp_path, {"inc_net.py": nets, "convs.py": _CONVS, "base.py": learner})
    return finding_lines(tmp_path / "base.py", "MEM201")


def test_a_method_running_the_forwards_parts_after_eval_is_a_forward(tmp_path):
    assert _lines(tmp_path) == [15]


def test_a_part_typed_to_a_layer_without_parameters_is_no_forward(tmp_path):
    nets = _NETS.replace("self.convnet = get_convnet(name)", "self.convnet = nn.ReLU()")
    assert _lines(tmp_path, nets) == []


def test_a_container_item_run_under_no_grad_is_no_forward(tmp_path):
    nets = _NETS.replace(
        '            features = [convnet(x)["features"] for convnet in self.convnets]\n            return torch.cat(features, 1)\n\n        def forward',
        '            with torch.no_grad():\n                features = [convnet(x)["features"] for convnet in self.convnets]\n            return torch.cat(features, 1)\n\n        def forward',
    )
    assert nets != _NETS
    assert _lines(tmp_path, nets) == []


def test_an_attribute_the_forward_does_not_run_is_no_part(tmp_path):
    nets = _NETS.replace(
        '            x = self.convnet(x)\n            return self.fc(x["features"])', "            return self.fc(x)"
    )
    assert nets != _NETS
    assert _lines(tmp_path, nets) == []


def test_a_receiver_not_switched_to_eval_in_the_function_is_not_known_as_a_model(tmp_path):
    learner = _LEARNER.replace("            self._network.eval()\n", "")
    assert _lines(tmp_path, learner=learner) == []


def test_a_method_its_module_never_calls_is_not_judged(tmp_path):
    """Other modules may call it under ``no_grad``; the project reads their
    mode only for methods named for evaluation (ObjectTable._entry_readable)."""
    learner = _LEARNER.replace(
        "            vectors, targets = self._extract_vectors(loader)\n", "            vectors = loader\n"
    )
    assert learner != _LEARNER
    assert _lines(tmp_path, learner=learner) == []


def test_object_types_records_parts_and_container_items():
    tree = ast.parse(textwrap.dedent(_NETS))
    bindings = {
        "torch": "torch",
        "nn": "torch.nn",
        "resnet32": "convs.resnet32",
        "memo_resnet32": "convs.memo_resnet32",
    }
    forwards = {m: (attr, ctor) for m, attr, _line, ctor, _via in object_types(tree, bindings, False).forwards}
    assert forwards["BaseNet.extract_vector"] == ("convnet", f"{FORWARD_PART}|:get_convnet")
    assert forwards["DERNet.extract_vector"] == ("convnets", CONTAINER_ITEM)


def test_the_modules_own_api_called_in_forward_is_no_part():
    """WaveRNN's Tacotron: ``forward`` calls ``self.train()``; ``self.train()``
    at the end of ``generate`` runs no part of the model."""
    nets = _NETS.replace(
        "        def forward(self, x):\n            x = self.convnet(x)",
        "        def forward(self, x):\n            self.train()\n            x = self.convnet(x)",
    ).replace('            return self.convnet(x)["features"]\n', "            self.train()\n            return x\n")
    assert nets.count("self.train()") == 2
    tree = ast.parse(textwrap.dedent(nets))
    bindings = {
        "torch": "torch",
        "nn": "torch.nn",
        "resnet32": "convs.resnet32",
        "memo_resnet32": "convs.memo_resnet32",
    }
    methods = {m for m, *_ in object_types(tree, bindings, False).forwards}
    assert "BaseNet.extract_vector" not in methods
