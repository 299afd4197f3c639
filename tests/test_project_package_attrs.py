"""``from pkg import name``: the package's attribute when its ``__init__``
binds ``name``, the submodule only otherwise (project/package_attrs.py)."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

from memlint.project.index import build_index

HMR = """\
import torch.nn as nn


class HMR(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)


def hmr():
    return HMR()
"""


def _resolve(tmp_path, init: str, name: str, importer: str = "eval.py"):
    write_project(tmp_path, {"models/__init__.py": init, "models/hmr.py": HMR, "eval.py": "import models\n"})
    index = build_index(str(tmp_path))
    found = index.resolve(name, str(tmp_path / importer))
    return None if found is None else (found[0][len(str(tmp_path)) + 1 :], found[1])


def test_a_name_the_package_re_exports_is_the_package_attribute(tmp_path):
    assert _resolve(tmp_path, "from .hmr import hmr\n", "models.hmr") == ("models/hmr.py", "hmr")


def test_a_name_the_package_defines_is_the_package_attribute(tmp_path):
    assert _resolve(tmp_path, "def hmr():\n    return None\n", "models.hmr") == ("models/__init__.py", "hmr")


def test_a_name_the_package_does_not_bind_is_the_submodule(tmp_path):
    assert _resolve(tmp_path, "from .hmr import HMR\n", "models.hmr") == ("models/hmr.py", "")
    # ... and one it binds to the submodule itself
    assert _resolve(tmp_path, "from . import hmr\n", "models.hmr") == ("models/hmr.py", "")


def test_a_name_reaching_into_the_module_keeps_the_submodule(tmp_path):
    # ``from models.hmr import HMR`` names the module ``models.hmr``, whatever the package binds.
    assert _resolve(tmp_path, "from .hmr import hmr\n", "models.hmr.HMR") == ("models/hmr.py", "HMR")


def test_a_relative_name_from_inside_the_package_is_the_package_attribute(tmp_path):
    write_project(tmp_path, {"models/other.py": "from . import hmr\n"})
    found = _resolve(tmp_path, "from .hmr import hmr\n", ".hmr", importer="models/other.py")
    assert found == ("models/hmr.py", "hmr")
    # inside the package's own __init__, ``from . import hmr`` is the submodule
    assert _resolve(tmp_path, "from .hmr import hmr\n", ".hmr", importer="models/__init__.py") == ("models/hmr.py", "")


EVAL = """\
import torch
from models import hmr


def main(path):
    model = hmr()
    model.load_state_dict(torch.load(path))
    model.cuda()
"""


def test_mem701_on_a_factory_the_package_re_exports_under_its_module_name(tmp_path):
    # SPIN eval.py: the factory builds a CPU model, moved after the load.
    write_project(tmp_path, {"models/__init__.py": "from .hmr import hmr\n", "models/hmr.py": HMR, "eval.py": EVAL})
    assert finding_lines(tmp_path / "eval.py", "MEM701") == []
