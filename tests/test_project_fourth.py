"""False alarms of the fourth yardstick batch whose deciding fact is in
another module (issue 29): a teacher copy run only under ``no_grad`` beside
an attack helper of another module, weights copied by a helper whose every
caller holds the ``no_grad``, models built by builders of other modules.
Each project is checked as a tree."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _findings(cwd: Path, code: str, *paths: str) -> list[tuple[str, int]]:
    out = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--exit-zero", "--output-format", "json"]
        + ["--select", code, *paths],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = json.loads(out or "[]")
    return sorted(
        (Path(f["filename"]).resolve().relative_to(cwd.resolve()).as_posix(), f["location"]["row"]) for f in found
    )


_ATTACK = """
    import copy
    import torch
    def attack(model, img):
        model = copy.deepcopy(model)
        inputs = img.clone().requires_grad_(True)
        for _ in range(4):
            model(inputs).sum().backward()
            inputs = (inputs + inputs.grad.sign()).detach().requires_grad_(True)
        return inputs.detach()
"""

_TRAIN = """
    import torch
    from torch.optim import swa_utils
    from attack import attack
    def fit(model, criterion, optimizer, loader, epochs):
        swa_model = swa_utils.AveragedModel(model)
        for epoch in range(epochs):
            model.train()
            for x, y in loader:
                x = attack(model, x)
                out = model(x)
                swa_model.eval()
                with torch.no_grad():
                    teacher = swa_model(x)
                loss = criterion(out, y) + (out - teacher).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            swa_model.update_parameters(model)
"""


def test_a_teacher_run_under_no_grad_beside_an_attack_of_another_module(tmp_path):
    """``swa_model.eval()`` on an averaged copy run only under ``no_grad``;
    ``attack(model, x)`` of attack.py backpropagates, so it is a phase that
    may train what it is handed, but it is not handed ``swa_model``."""
    _write(tmp_path, {"pyproject.toml": "[project]\nname = 'p'\n", "attack.py": _ATTACK, "train.py": _TRAIN})
    assert _findings(tmp_path, "MEM203", ".") == []


def test_a_module_handed_to_the_helper_of_another_module_still_fires(tmp_path):
    """The same loop where the helper is handed the module switched to eval
    (and it is run with grad on): the switch is never undone."""
    train = _TRAIN.replace("x = attack(model, x)", "x = attack(swa_model, x)").replace(
        "with torch.no_grad():\n                    teacher", "if True:\n                    teacher"
    )
    _write(tmp_path, {"pyproject.toml": "[project]\nname = 'p'\n", "attack.py": _ATTACK, "train.py": train})
    assert _findings(tmp_path, "MEM203", ".") == [("train.py", 12)]


_BLOCKS = """
    import torch.nn as nn
    class Bottleneck(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 1)
        def load_from(self, weights, name):
            self.conv.weight.copy_(weights[name + "/kernel"])
            self.conv.bias.copy_(weights[name + "/bias"])
"""

_MODEL = """
    import torch
    import torch.nn as nn
    from blocks import Bottleneck
    class Backbone(nn.Module):
        def __init__(self):
            super().__init__()
            self.units = nn.ModuleList([Bottleneck(), Bottleneck()])
        def copy_weights(self, weights):
            with torch.no_grad():
                for i, unit in enumerate(self.units):
                    unit.load_from(weights, name=str(i))
"""


def test_a_weight_loader_whose_every_caller_in_the_project_holds_the_no_grad(tmp_path):
    """``Bottleneck.load_from`` copies into parameters in place; its only
    caller, in model.py, runs it inside ``torch.no_grad()``: no crash."""
    _write(tmp_path, {"pyproject.toml": "[project]\nname = 'p'\n", "blocks.py": _BLOCKS, "model.py": _MODEL})
    assert _findings(tmp_path, "MEM401", ".") == []


def test_a_weight_loader_called_with_grad_on_in_another_module_still_fires(tmp_path):
    """The same loader, called once more from a script with grad on: autograd
    raises on the in-place copy into a leaf that requires grad."""
    script = """
        import torch
        from model import Backbone
        net = Backbone()
        weights = torch.load("w.pt", map_location="cpu")
        net.units[0].load_from(weights, name="0")
    """
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "blocks.py": _BLOCKS,
            "model.py": _MODEL,
            "script.py": script,
        },
    )
    assert _findings(tmp_path, "MEM401", ".") == [("blocks.py", 8), ("blocks.py", 9)]


def test_a_loader_of_the_same_name_on_another_class_called_with_grad_on(tmp_path):
    """ViT's shape: the script calls ``VisionTransformer.load_from`` (a
    class of another module that defines ``load_from`` itself and holds the
    ``no_grad`` inside) with grad on; ``Bottleneck.load_from`` is only
    reached from under that ``no_grad``: silent. Before, any use of the
    name with grad on counted."""
    model = _MODEL.replace("def copy_weights(self, weights):", "def load_from(self, weights):")
    script = """
        import torch
        from model import Backbone
        net = Backbone()
        net.load_from(torch.load("w.pt", map_location="cpu"))
    """
    files = {"pyproject.toml": "[project]\nname = 'p'\n", "blocks.py": _BLOCKS, "model.py": model, "script.py": script}
    _write(tmp_path, files)
    assert _findings(tmp_path, "MEM401", ".") == []


_HRNET = """
    import os
    import torch
    import torch.nn as nn
    class HighResolutionNet(nn.Module):
        def __init__(self, cfg, **kwargs):
            super().__init__()
            self.conv = nn.Conv2d(3, cfg.width, 3)
        def init_weights(self, pretrained=""):
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight)
            if os.path.isfile(pretrained):
                self.load_state_dict(torch.load(pretrained))
    def get_cls_net(config, **kwargs):
        model = HighResolutionNet(config, **kwargs)
        model.init_weights()
        return model
"""

_VALID = """
    import torch
    import models
    from models.cls_hrnet import get_cls_net
    def main(config):
        model = get_cls_net(config)
        model.load_state_dict(torch.load(config.MODEL_FILE))
        model = torch.nn.DataParallel(model).cuda()
        other = eval("models." + config.NAME + ".get_cls_net")(config)
        other.load_state_dict(torch.load(config.MODEL_FILE))
        other = torch.nn.DataParallel(other).cuda()
"""


def _hrnet(tmp_path: Path, net: str, extra: dict[str, str] | None = None) -> list[tuple[str, int]]:
    files = {
        "pyproject.toml": "[project]\nname = 'p'\n",
        "models/__init__.py": "from . import cls_hrnet\n",
        "models/cls_hrnet.py": net,
        "tools/valid.py": _VALID,
        **(extra or {}),
    }
    _write(tmp_path, files)
    return _findings(tmp_path, "MEM701", ".")


def test_a_builder_that_initialises_the_fresh_model_and_its_eval_spelling(tmp_path):
    """HRNet: ``get_cls_net`` builds ``HighResolutionNet(config, **kwargs)``
    (an ``__init__`` that takes ``**kwargs`` and never reads it), calls
    ``init_weights()`` on it and returns it; the script loads into what it
    returns, by name and through ``eval('models.' + NAME + '.get_cls_net')``
    (every ``get_cls_net`` of the project is such a builder), and
    ``init_weights`` loads into ``self``, a model only ever built there."""
    assert _hrnet(tmp_path, _HRNET) == []


def test_a_class_that_hands_its_kwargs_on_is_not_known_to_stay_on_the_cpu(tmp_path):
    """The same builder, whose class passes ``**kwargs`` on to a layer
    (``device=`` may be among them): every load is reported as before."""
    net = _HRNET.replace("nn.Conv2d(3, cfg.width, 3)", "nn.Conv2d(3, cfg.width, 3, **kwargs)")
    assert _hrnet(tmp_path, net) == [("models/cls_hrnet.py", 14), ("tools/valid.py", 7), ("tools/valid.py", 10)]


def test_an_eval_spelling_with_one_candidate_that_moves_stays_reported(tmp_path):
    """Another module of the project also defines ``get_cls_net``, and its
    model goes to the GPU: the ``eval`` spelling may run either, so that
    load is reported; the import spelling still names the CPU builder."""
    gpu = """
        import torch.nn as nn
        def get_cls_net(config):
            return nn.Linear(2, 2).cuda()
    """
    found = _hrnet(tmp_path, _HRNET, {"models/gpu_net.py": gpu})
    assert found == [("tools/valid.py", 10)]


_ZOO = """
    import torch.nn as nn
    class MobileNetV2(nn.Module):
        def __init__(self, T, feature_dim, width_mult=1.0):
            super().__init__()
            self.fc = nn.Linear(int(32 * width_mult), feature_dim)
    def mobilenetv2_T_w(T, W, feature_dim=100):
        model = MobileNetV2(T=T, feature_dim=feature_dim, width_mult=W)
        return model
    def mobile_half(num_classes):
        return mobilenetv2_T_w(6, 0.5, num_classes)
    class OnGpu(nn.Module):
        def __init__(self, num_classes):
            super().__init__()
            self.fc = nn.Linear(2, num_classes).cuda()
"""

_TEACHER = """
    import torch
    from models import model_dict
    def load_teacher(model_path, name, n_cls):
        model = model_dict[name](num_classes=n_cls)
        model.load_state_dict(torch.load(model_path)["model"])
        return model.cuda()
"""


def test_a_table_of_builders_of_another_module(tmp_path):
    """RepDistiller: ``model_dict[name](num_classes=n)``, a table in
    models/__init__.py of builders that move nothing (one returning another
    builder's model): the model is on the CPU at the load."""
    init = "from .zoo import mobile_half, MobileNetV2\nmodel_dict = {'mobile_half': mobile_half, 'mnv2': MobileNetV2}\n"
    files = {"pyproject.toml": "[project]\nname = 'p'\n", "models/__init__.py": init, "models/zoo.py": _ZOO}
    _write(tmp_path, {**files, "teacher.py": _TEACHER})
    assert _findings(tmp_path, "MEM701", ".") == []


def test_a_table_holding_a_class_that_moves_stays_reported(tmp_path):
    init = "from .zoo import mobile_half, OnGpu\nmodel_dict = {'mobile_half': mobile_half, 'gpu': OnGpu}\n"
    files = {"pyproject.toml": "[project]\nname = 'p'\n", "models/__init__.py": init, "models/zoo.py": _ZOO}
    _write(tmp_path, {**files, "teacher.py": _TEACHER})
    assert _findings(tmp_path, "MEM701", ".") == [("teacher.py", 6)]


_LUNA = """
    import math
    import torch
    from torch import nn as nn
    class LunaModel(nn.Module):
        def __init__(self, in_channels=1):
            super().__init__()
            self.fc = nn.Linear(8, 2)
    class LunaBlock(nn.Module):
        def __init__(self, channels=8):
            super().__init__()
            self.conv = nn.Conv3d(channels, channels, 3)
"""

_ANALYSIS = """
    import torch
    import zoo.model
    def init_models(path, name):
        cls_dict = torch.load(path)
        model_cls = getattr(zoo.model, name)
        cls_model = model_cls()
        cls_model.load_state_dict(cls_dict["model_state"])
        cls_model.eval()
        return cls_model.cuda()
"""


def test_a_class_fetched_with_getattr_from_a_module_whose_classes_stay_on_the_cpu(tmp_path):
    """dlwpt: ``getattr(p2ch14.model, name)()``: whatever class the module
    gives moves nothing, so the model is on the CPU at the load."""
    files = {"pyproject.toml": "[project]\nname = 'p'\n", "zoo/__init__.py": "", "zoo/model.py": _LUNA}
    _write(tmp_path, {**files, "analysis.py": _ANALYSIS})
    assert _findings(tmp_path, "MEM701", ".") == []


def test_a_class_fetched_with_getattr_from_a_module_with_a_gpu_class_stays_reported(tmp_path):
    luna = _LUNA.replace("self.fc = nn.Linear(8, 2)", "self.fc = nn.Linear(8, 2).cuda()")
    files = {"pyproject.toml": "[project]\nname = 'p'\n", "zoo/__init__.py": "", "zoo/model.py": luna}
    _write(tmp_path, {**files, "analysis.py": _ANALYSIS})
    assert _findings(tmp_path, "MEM701", ".") == [("analysis.py", 5)]
