"""A plain wrapper's method running its network through ``self.forward``
(project/plain_forwards.py), typed from a factory in a module with no
training word (project/wordless_factories.py): Attention-Gated-Networks'
``model = get_model(opts)`` then ``model.validate()`` per batch."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

_FACTORY = """\
    def get_model(opts):
        model = None
        if opts.type == "seg":
            from .wrapper import Segmentation
            model = Segmentation()
        model.initialize(opts)
        return model
"""

_WRAPPER = """\
    import torch
    import torch.nn as nn
    import torch.optim as optim
    from .base import BaseModel


    class Segmentation(BaseModel):
        def initialize(self, opts):
            self.net = nn.Conv2d(3, 3, 3)
            self.optimizer = optim.Adam(self.net.parameters())

        def set_input(self, x):
            self.input = x

        def forward(self, split):
            self.prediction = self.net(self.input)

        def optimize_parameters(self):
            self.forward(split="train")
            self.prediction.sum().backward()
            self.optimizer.step()

        def validate(self):
            self.net.eval()
            self.forward(split="test")
"""

_BASE = """\
    import torch


    class BaseModel:
        def save(self, path):
            torch.save(self.net.cpu().state_dict(), path)
"""

_TRAIN = """\
    from torch.utils.data import DataLoader

    from models import get_model


    def train(opts, train_loader, valid_loader):
        model = get_model(opts)
        for epoch in range(10):
            for images in train_loader:
                model.set_input(images)
                model.optimize_parameters()
            for images in valid_loader:
                model.set_input(images)
                model.validate()


    if __name__ == "__main__":
        train(parse(), DataLoader(train_set), DataLoader(valid_set))
"""


def _lines(tmp_path, wrapper: str = _WRAPPER, train: str = _TRAIN) -> list[int]:
    write_project(
        tmp_path,
        {
            "setup.py": "",
            "models/__init__.py": _FACTORY,
            "models/base.py": _BASE,
            "models/wrapper.py": wrapper,
            "train.py": train,
        },
    )
    return finding_lines(tmp_path / "train.py", "MEM201")


def test_a_plain_wrappers_validate_per_batch_is_an_evaluation_with_grad_on(tmp_path):
    # The epoch loop also trains through ``optimize_parameters``: only the validation loop.
    assert _lines(tmp_path) == [12]


def test_a_network_whose_parameters_no_optimizer_gets_stays_silent(tmp_path):
    wrapper = _WRAPPER.replace("self.optimizer = optim.Adam(self.net.parameters())", "self.optimizer = None")
    assert _lines(tmp_path, wrapper) == []


def test_a_forward_under_no_grad_stays_silent(tmp_path):
    wrapper = _WRAPPER.replace(
        "            self.prediction = self.net(self.input)\n",
        "            with torch.no_grad():\n                self.prediction = self.net(self.input)\n",
    )
    assert _lines(tmp_path, wrapper) == []


def test_an_nn_module_wrapper_is_not_read_this_way(tmp_path):
    wrapper = _WRAPPER.replace("class Segmentation(BaseModel):", "class Segmentation(nn.Module):")
    assert _lines(tmp_path, wrapper) == []


def test_a_loop_that_also_trains_through_the_object_stays_silent(tmp_path):
    train = _TRAIN.replace(
        "            for images in valid_loader:\n                model.set_input(images)\n                model.validate()\n",
        "",
    ).replace(
        "                model.optimize_parameters()\n",
        "                model.optimize_parameters()\n                model.validate()\n",
    )
    assert _lines(tmp_path, train=train) == []
