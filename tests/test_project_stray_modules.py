"""project/stray_modules.py: an import no module of the project resolves
(``from models import Classifier`` at the root, with only
``utils/models.py`` in the project) names the one project module its dotted
path may mean, to learn that its class builds on the CPU (MEM701)."""

from __future__ import annotations

import subprocess
import sys

from project_helpers import finding_lines, write_project

from memlint.project.stray_modules import StrayModules

_MODELS = """\
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)


class Mover(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2).cuda()
"""

_TESTING = """\
import torch
from models import Classifier, Mover


def main(path, device):
    model = Classifier()
    ckpt = torch.load(path)
    model.load_state_dict(ckpt["state_dict"])
    model = model.to(device)
    other = Mover()
    other.load_state_dict(torch.load(path))
"""


def test_find_one_module_by_the_end_of_its_path(tmp_path):
    files = [str(tmp_path / p) for p in ("utils/models.py", "a/b/c.py", "x/c.py", "pkg/__init__.py", "main.py")]
    strays = StrayModules(str(tmp_path), files)
    assert strays.find("models.Classifier") == (str(tmp_path / "utils/models.py"), "Classifier")
    assert strays.find("b.c.Net") == (str(tmp_path / "a/b/c.py"), "Net")
    assert strays.find("c.Net") is None  # two modules could be meant
    assert strays.find("pkg.Net") == (str(tmp_path / "pkg/__init__.py"), "Net")
    assert strays.find(".models.Classifier") is None  # relative: resolved or not, never guessed
    assert strays.find("nowhere.Net") is None


def test_a_class_of_the_one_module_an_unresolved_import_means_builds_on_the_cpu(tmp_path):
    write_project(tmp_path, {"utils/models.py": _MODELS, "testing.py": _TESTING})
    # Classifier moves nothing: its load is silent; Mover moves itself: reported.
    assert finding_lines(tmp_path / "testing.py", "MEM701") == [11]


def test_two_modules_of_that_name_leave_the_import_unknown(tmp_path):
    write_project(tmp_path, {"utils/models.py": _MODELS, "old/models.py": _MODELS, "testing.py": _TESTING})
    assert finding_lines(tmp_path / "testing.py", "MEM701") == [7, 11]


def test_the_cli_on_the_tree_agrees(tmp_path):
    write_project(tmp_path, {"utils/models.py": _MODELS, "testing.py": _TESTING, "setup.py": ""})
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "memlint",
            "check",
            "--no-cache",
            "--select",
            "MEM701",
            "--output-format",
            "concise",
            ".",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    ).stdout
    assert "testing.py:11:" in out and "testing.py:7:" not in out
