"""MEM103 across modules (issue 29, point 3): a Grad-CAM class in cam.py
whose method backpropagates what it is handed with ``retain_graph=True``,
built and called from main.py. Reported when every module that builds the
class builds an instance used only to call it, on values fresh at the call
and kept nowhere, in a scope with no backward (project/closed_instances.py);
silent for each trap RULES.md lists for MEM103's helpers."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

_CAM = """\
import numpy as np


class CAM:
    def __init__(self, model):
        self.model = model

    def generate(self, image, k=0):
        out = self.model(image)
        out[0, k].backward(retain_graph=True)
        return np.abs(self.model.grads.numpy())

    __call__ = generate
"""

_MAIN = """\
import torch

from cam import CAM


def main(net, loader):
    cam = CAM(net)
    for img in loader:
        heat = cam.generate(img, 0)
        print(heat)
"""

_MESSAGE = (
    "`retain_graph=True` but nothing backpropagates through this graph again; its buffers are kept for nothing"
    " (its class is built only at {where}: no caller backpropagates again)"
)


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text))


def _cli(*args: str, cwd: Path) -> list[tuple[str, int, str, str]]:
    out = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--exit-zero", "--output-format", "json"]
        + ["--select", "MEM103", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(
        (Path(f["filename"]).name, f["location"]["row"], f["code"], f["message"]) for f in json.loads(out or "[]")
    )


def _flake8(cwd: Path) -> list[tuple[str, int, str, str]]:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "flake8",
            "--select",
            "MEM103",
            "--format",
            "%(path)s\t%(row)d\t%(code)s\t%(text)s",
            ".",
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
    ).stdout
    rows = [line.split("\t") for line in out.splitlines()]
    return sorted((Path(p).name, int(r), c, m) for p, r, c, m in rows)


@pytest.mark.parametrize("target", [".", "cam.py"])
def test_a_cam_built_and_called_once_per_image_in_another_module(tmp_path, target):
    _write(tmp_path, {"cam.py": _CAM, "main.py": _MAIN})
    expected = [("cam.py", 10, "MEM103", _MESSAGE.format(where="main.py:7"))]
    assert _cli(target, cwd=tmp_path) == expected
    assert _flake8(tmp_path) == expected


def test_a_cam_called_as_a_function_at_module_level(tmp_path):
    """WZMIAOMIAO's Grad-CAM script: ``cam = GradCAM(...)`` then
    ``grayscale_cam = cam(input_tensor=x)`` once, with nothing after it."""
    main = """\
        import torch
        import cam as cams

        model = torch.nn.Linear(2, 2)
        x = torch.unsqueeze(load("dog.png"), dim=0)
        cam = cams.CAM(model)
        grayscale_cam = cam(x, k=281)
        show(grayscale_cam)
        """
    _write(tmp_path, {"cam.py": _CAM, "main.py": main})
    assert _cli(".", cwd=tmp_path) == [("cam.py", 10, "MEM103", _MESSAGE.format(where="main.py:6"))]


_TRAPS = {
    "caller-backpropagates": (
        _MAIN.replace("        print(heat)\n", "        img.sum().backward()\n"),
        "the caller backpropagates again (through what it handed over)",
    ),
    "instance-escapes": (
        _MAIN.replace("        print(heat)\n", "        print(heat)\n    explain_all(cam, loader)\n"),
        "the instance is handed to code that may call the method on tensors with history",
    ),
    "same-features-each-iteration": (
        _MAIN.replace("    for img in loader:\n", "    feats = backbone(loader)\n    for k in range(3):\n").replace(
            "cam.generate(img, 0)", "cam.generate(feats, k)"
        ),
        "every iteration hands the same features: each call backpropagates through their graph again",
    ),
    "pieces-of-one-graph": (
        _MAIN.replace("    for img in loader:\n", "    for img in backbone(loader).split(1):\n"),
        "the loop hands pieces of one tensor: the calls share its graph",
    ),
    "two-calls": (
        _MAIN.replace(
            "    for img in loader:\n        heat = cam.generate(img, 0)\n",
            "    feats = backbone(loader)\n    first, second = feats[:1], feats[1:]\n    heat = cam.generate(first, 0)\n    heat = cam.generate(second, 1)\n",
        ),
        "the second call backpropagates through the backbone's graph, shared with what the first got",
    ),
    "values-from-the-callers-parameters": (
        _MAIN.replace(
            "    for img in loader:\n        heat = cam.generate(img, 0)\n", "    heat = cam.generate(loader, 0)\n"
        ),
        "the value comes from the caller's caller, which may backpropagate through it",
    ),
    "value-kept": (
        _MAIN.replace("        print(heat)\n", "        kept.append(img)\n"),
        "the value handed over is kept after the call",
    ),
    "built-on-an-attribute": (
        _MAIN + "\n\nclass App:\n    def __init__(self, net):\n        self.cam = CAM(net)\n",
        "another construction keeps the instance on an attribute: its calls are not seen",
    ),
}


@pytest.mark.parametrize("case", sorted(_TRAPS))
def test_a_caller_that_may_backpropagate_again_keeps_it_silent(tmp_path, case):
    main, why = _TRAPS[case]
    assert main != _MAIN
    _write(tmp_path, {"cam.py": _CAM, "main.py": main})
    assert _cli(".", cwd=tmp_path) == [], why


def test_a_subclass_in_another_module_keeps_it_silent(tmp_path):
    staged = """\
        from cam import CAM


        class TwoStage(CAM):
            def generate(self, image, k=0):
                feats = self.stem(image)
                heat = super().generate(feats, k)
                feats.sum().backward()
                return heat
        """
    _write(tmp_path, {"cam.py": _CAM, "main.py": _MAIN, "staged.py": staged})
    assert _cli(".", cwd=tmp_path) == []


def test_a_class_its_own_module_builds_keeps_it_silent(tmp_path):
    cam = _CAM + "\n\ndef build(model):\n    return CAM(model)\n"
    _write(tmp_path, {"cam.py": cam, "main.py": _MAIN})
    assert _cli(".", cwd=tmp_path) == []


# -- the summary fact ---------------------------------------------------------------


def _closed(source: str, params: set[str] | None = None):
    from memlint.project.summary import summarise

    return summarise(ast.parse(textwrap.dedent(source))).closed_instances


def test_closed_instances_name_the_class_and_the_constructor_line():
    assert _closed(_MAIN) == [("cam.CAM", 7)]
    assert _closed(_TRAPS["value-kept"][0]) == []
    assert _closed(_MAIN.replace("        print(heat)\n", "        print(heat)\n        loss.backward()\n")) == []
