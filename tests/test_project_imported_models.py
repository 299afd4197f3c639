"""A class of another project module that derives from ``nn.Module`` builds a
model: ``model = Tacotron(...)`` after ``from synthesizer.models.tacotron
import Tacotron`` is run like one defined in the file (issue 29, the fifth
batch's Real-Time-Voice-Cloning ``synthesize.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

_NET = """
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)
        def forward(self, x):
            return self.fc(x)
    class Config:
        def __init__(self):
            self.dim = 4
        def __call__(self, x):
            return x
"""

_INFER = """
    import torch
    from pkg.net import {name}
    def run(loader):
        model = {name}().cuda()
        model.eval()
        outs = []
        for x in loader:
            y = model(x)
            outs.append(y.argmax(1).tolist())
        return outs
"""


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _mem201(cwd: Path, *paths: str) -> list[tuple[str, int]]:
    out = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--exit-zero", "--output-format", "json"]
        + ["--select", "MEM201", *paths],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(
        (Path(f["filename"]).resolve().relative_to(cwd.resolve()).as_posix(), f["location"]["row"])
        for f in json.loads(out or "[]")
    )


def test_an_imported_module_class_is_a_model(tmp_path):
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "pkg/__init__.py": "",
            "pkg/net.py": _NET,
            "infer.py": _INFER.format(name="Net"),
        },
    )
    assert _mem201(tmp_path, ".") == [("infer.py", 8)]
    assert _mem201(tmp_path, "infer.py") == [("infer.py", 8)]


def test_an_imported_plain_class_is_not(tmp_path):
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "pkg/__init__.py": "",
            "pkg/net.py": _NET,
            "infer.py": _INFER.format(name="Config"),
        },
    )
    assert _mem201(tmp_path, ".") == []
