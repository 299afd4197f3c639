"""A model's named method runs the model when it runs a part handed to its
constructor (issue 29, prototypical-networks: ``Protonet(encoder)`` with
``encoder = nn.Sequential(...)``, and ``Protonet.loss`` running
``self.encoder.forward(x)``), typed from every construction site in the
project. ``super(Protonet, self)`` names the class without handing it out,
so those sites are all its sites. The evaluating module gets its model from
another (a registry: the project cannot type it) and imports no torch."""

from __future__ import annotations

import ast
import textwrap

from project_helpers import finding_lines, write_project

from memlint.project.object_types import object_types

_MODELS = """\
    import torch
    from torch import nn

    class Protonet(nn.Module):
        def __init__(self, encoder):
            super(Protonet, self).__init__()
            self.encoder = encoder

        def loss(self, sample):
            z = self.encoder.forward(sample["x"])
            return z.mean(), {"acc": z.argmax(1).float().mean().item()}

    def load_protonet(hid):
        encoder = nn.Sequential(nn.Conv2d(1, hid, 3), nn.ReLU())
        return Protonet(encoder)

    MODELS = {"protonet": load_protonet}
"""

_UTILS = """\
    def evaluate(model, data_loader, meters):
        model.eval()
        for sample in data_loader:
            _, output = model.loss(sample)
            for field, meter in meters.items():
                meter.add(output[field])
        return meters
"""

_TRAIN = """\
    import models
    import utils

    def main(name, loader, meters):
        model = models.MODELS[name](64)
        utils.evaluate(model, loader, meters)
"""


def _lines(tmp_path, models=_MODELS, utils=_UTILS, train=_TRAIN):
    write_project(tmp_path, {"models.py": models, "utils.py": utils, "train.py": train})
    return finding_lines(tmp_path / "utils.py", "MEM201")


def test_a_method_running_a_constructor_argument_layer_is_a_forward(tmp_path):
    assert _lines(tmp_path) == [3]


def test_an_argument_without_parameters_is_no_layer(tmp_path):
    models = _MODELS.replace("encoder = nn.Sequential(nn.Conv2d(1, hid, 3), nn.ReLU())", "encoder = nn.ReLU()")
    assert models != _MODELS
    assert _lines(tmp_path, models) == []


def test_an_untyped_construction_site_keeps_it_silent(tmp_path):
    models = _MODELS + "\n    def load_other(make):\n        return Protonet(make())\n"
    assert _lines(tmp_path, models) == []


def test_a_class_handed_out_keeps_it_silent(tmp_path):
    """A registry entry may be constructed anywhere, with anything."""
    models = _MODELS + "\n    REGISTRY = {'protonet': Protonet}\n"
    assert _lines(tmp_path, models) == []


def test_a_training_loop_calling_the_method_is_silent(tmp_path):
    utils = """\
        def run_epoch(model, data_loader, optimizer):
            model.eval()
            for sample in data_loader:
                loss, _ = model.loss(sample)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    """
    assert _lines(tmp_path, utils=utils) == []


def test_a_caller_under_no_grad_elsewhere_keeps_it_silent(tmp_path):
    train = _TRAIN.replace("import models\n", "import torch\n    import models\n").replace(
        "        utils.evaluate(model, loader, meters)",
        "        with torch.no_grad():\n            utils.evaluate(model, loader, meters)",
    )
    assert train != _TRAIN
    assert _lines(tmp_path, train=train) == []


def test_super_with_the_class_named_is_no_escape():
    tree = ast.parse(textwrap.dedent(_MODELS))
    facts = object_types(tree, {"torch": "torch", "nn": "torch.nn"}, False)
    assert "Protonet" not in facts.escaped
    facts = object_types(tree, {"torch": "torch", "nn": "torch.nn"}, False)
    handed = ast.parse(textwrap.dedent(_MODELS + "\n    REGISTRY = {'protonet': Protonet}\n"))
    assert "Protonet" in object_types(handed, {"torch": "torch", "nn": "torch.nn"}, False).escaped
