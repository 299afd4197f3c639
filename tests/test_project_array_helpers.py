"""A helper of another module named for gradients that only computes on
arrays (issue 29, UGATIT's ``cam(x, size)`` in utils.py: numpy and OpenCV
colouring a heat map the generator returned) is no need for gradients: the
evaluation loop calling it is reported (project/array_helpers.py). A helper
of that name that differentiates, calls what it is handed or anything of
the project, or comes from a library, keeps the loop silent (MEM201's trap)."""

from __future__ import annotations

import ast
import textwrap

import pytest
from project_helpers import finding_lines, write_project

from memlint.project.array_helpers import is_array_helper, names_gradients

_UTILS = """\
    import numpy as np
    import os, cv2

    def cam(x, size=256):
        x = x - np.min(x)
        img = np.uint8(255 * x / np.max(x))
        img = cv2.resize(img, (size, size))
        return cv2.applyColorMap(img, cv2.COLORMAP_JET) / 255.0
"""

_SCRIPT = """\
    import torch
    from utils import *
    from nets import Generator

    def main(loader, out):
        gen = Generator().cuda()
        gen.eval()
        for x, _ in loader:
            fake, heat = gen(x.cuda())
            out.append(cam(heat[0].detach().cpu().numpy()))
"""

_NETS = """\
    import torch.nn as nn

    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3)

        def forward(self, x):
            y = self.conv(x)
            return y, y.mean(1)
"""


def _lines(tmp_path, utils=_UTILS, script=_SCRIPT):
    write_project(tmp_path, {"utils.py": utils, "nets.py": _NETS, "test.py": script, "setup.py": ""})
    return finding_lines(tmp_path / "test.py", "MEM201")


def test_a_heat_map_helper_on_arrays_is_no_need_for_gradients(tmp_path):
    assert _lines(tmp_path) == [8]


def test_an_imported_module_spelling_of_the_helper_too(tmp_path):
    script = _SCRIPT.replace("from utils import *", "import utils").replace("out.append(cam(", "out.append(utils.cam(")
    assert script != _SCRIPT
    assert _lines(tmp_path, script=script) == [8]


@pytest.mark.parametrize(
    "body",
    [
        "    x.requires_grad_(True)\n        return x",
        "    return torch.autograd.grad(x.sum(), x)[0]",
        "    return x.grad",
        "    return model(x)",  # calls what it is handed: a model's forward, perhaps Grad-CAM's
        "    return explain(x)",  # a function of the project: it may differentiate
        "    return np.min(x).backward()",
    ],
)
def test_a_helper_that_may_need_gradients_keeps_the_loop_silent(tmp_path, body):
    utils = (
        "    import numpy as np\n    import torch\n\n    def explain(x):\n        return x\n\n"
        "    def cam(x, model=None):\n    " + body + "\n"
    )
    assert _lines(tmp_path, utils) == []


def test_a_library_helper_of_that_name_keeps_the_loop_silent(tmp_path):
    script = _SCRIPT.replace("from utils import *", "from pytorch_grad_cam import *")
    assert _lines(tmp_path, script=script) == []


def _tree(source: str) -> ast.Module:
    return ast.parse(textwrap.dedent(source))


def test_is_array_helper():
    assert is_array_helper(_tree(_UTILS), "cam")
    assert not is_array_helper(_tree(_UTILS), "other")
    # numpy imported under a name the module binds again: not known to be numpy
    assert not is_array_helper(_tree(_UTILS + "    np = load()\n"), "cam")
    # defined twice: which one runs is not known
    assert not is_array_helper(_tree(_UTILS + _UTILS.replace("import numpy as np\n    import os, cv2\n", "")), "cam")
    # a builtin the module redefines is its own function
    assert not is_array_helper(_tree("import numpy as np\ndef max(x): return x\ndef cam(x): return max(x)\n"), "cam")
    assert is_array_helper(_tree("import numpy as np\ndef cam(x): return max(np.abs(x))\n"), "cam")
    # decorated: the decorator may run anything
    assert not is_array_helper(_tree("import numpy as np\n@wrap\ndef cam(x): return np.abs(x)\n"), "cam")
    # a method of what it is handed
    assert not is_array_helper(_tree("import numpy as np\ndef cam(x): return np.abs(x.numpy())\n"), "cam")


def test_names_gradients():
    assert names_gradients("cam") and names_gradients("utils.grad_cam") and names_gradients("saliency")
    assert not names_gradients("camera") and not names_gradients("tensor2numpy")
