"""MEM701 and classes imported inside a function (KAIR's test scripts:
``from models.network_dncnn import DnCNN as net`` in ``main()``, the model
built, loaded, then moved): the import names a project class as a
module-level one would (project/local_imports.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from memlint.project.summary import summarise_text

_NETS = """
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self, n=1):
            super().__init__()
            self.l = nn.Conv2d(n, 1, 3)
    class Small(nn.Module):
        def __init__(self, n=1):
            super().__init__()
            self.l = nn.Linear(n, 1)
    class OnGpu(nn.Module):
        def __init__(self, n=1):
            super().__init__()
            self.l = nn.Linear(n, 1).cuda()
"""


def _mem701(folder: Path, files: dict[str, str]) -> list[tuple[str, int]]:
    for name, text in {"pyproject.toml": "[project]\nname = 'p'\n", "models/nets.py": _NETS, **files}.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    (folder / "models" / "__init__.py").write_text("")
    out = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--exit-zero", "--output-format", "json"]
        + ["--select", "MEM701", "."],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted((Path(f["filename"]).name, f["location"]["row"]) for f in json.loads(out or "[]"))


def test_a_class_imported_in_the_function_that_builds_the_model(tmp_path):
    """Built from a CPU class imported in ``main()``: loaded before its
    ``.to(device)``, nothing is reported; the same with a class that moves
    itself is."""
    script = """
        import torch

        def main(path):
            device = torch.device("cuda")
            from models.nets import Net as net
            model = net(n=1)
            model.load_state_dict(torch.load(path), strict=True)
            model = model.to(device)

        def other(path):
            from models.nets import OnGpu as gnet
            model = gnet(n=1)
            model.load_state_dict(torch.load(path))
    """
    assert _mem701(tmp_path, {"test_net.py": script}) == [("test_net.py", 14)]


def test_one_name_imported_to_a_class_per_branch(tmp_path):
    """``net`` imported in each branch choosing the model: every target
    moves nothing, so the model is on the CPU at the load; one target that
    moves itself, and the load is reported."""
    script = """
        import torch

        def main(name, path, device):
            if name == "net":
                from models.nets import Net as net
                model = net(n=1)
            elif name == "small":
                from models.nets import Small as net
                model = net(n=1)
            model.load_state_dict(torch.load(path))
            model.to(device)
    """
    assert _mem701(tmp_path, {"cpu_only.py": script}) == []
    moving = script.replace("Small as net", "OnGpu as net")
    assert _mem701(tmp_path, {"cpu_only.py": moving}) == [("cpu_only.py", 11)]


def test_a_local_import_whose_name_is_bound_otherwise_too(tmp_path):
    """The name bound another way somewhere in the module (an assignment in
    another function, a module-level binding): which one a call runs is not
    known, and the load is reported as before."""
    assigned = """
        import torch

        def main(path, device):
            from models.nets import Net as net
            model = net(n=1)
            model.load_state_dict(torch.load(path))
            model.to(device)

        def other(make):
            net = make()
            return net
    """
    module_level = """
        import torch
        net = None

        def main(path, device):
            from models.nets import Net as net
            model = net(n=1)
            model.load_state_dict(torch.load(path))
            model.to(device)
    """
    assert _mem701(tmp_path, {"assigned.py": assigned, "module_level.py": module_level}) == [
        ("assigned.py", 7),
        ("module_level.py", 8),
    ]


def test_the_summary_keeps_only_names_no_module_level_code_binds():
    text = textwrap.dedent(
        """
        import torch
        from models import Shared as both

        def main():
            from models.a import A as net
            from models.b import B as net
            import models.c as zoo
            from models import Other as both
            model = net()
            model.load_state_dict(torch.load("w.pth"))
        """
    )
    summary = summarise_text(text, always=True)
    assert summary is not None
    assert summary.local_imports == {"net": ["models.a.A", "models.b.B"], "zoo": ["models.c"]}
    assert type(summary).from_json(json.loads(json.dumps(summary.to_json()))).local_imports == summary.local_imports


def test_a_module_that_loads_no_state_keeps_no_local_import():
    """No ``load_state_dict`` call: no model of this module is loaded, and
    the views need not resolve what its functions import."""
    text = "def main():\n    from models.a import A as net\n    return net()\n"
    summary = summarise_text(text, always=True)
    assert summary is not None and summary.local_imports == {}
