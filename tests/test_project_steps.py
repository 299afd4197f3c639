"""Facts across methods and modules (issue 29, point 3): a plain class's model
attribute that nothing in the project switches (MEM202), loss trackers that
keep the tensor they are given (MEM102), each on a multi-module project."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memlint.project.index import view_from_disk
from memlint.project.summary import ModuleSummary, summarise_text


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _cli(*args: str, cwd: Path) -> list[tuple[str, int, str, str]]:
    out = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--exit-zero", "--output-format", "json", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = [(Path(f["filename"]).name, f["location"]["row"], f["code"], f["message"]) for f in json.loads(out or "[]")]
    return sorted(found)


def _flake8(select: str, cwd: Path) -> list[tuple[str, int, str, str]]:
    out = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", select, "--format", "%(path)s\t%(row)d\t%(code)s\t%(text)s", "."],
        cwd=cwd,
        capture_output=True,
        text=True,
    ).stdout
    rows = [line.split("\t") for line in out.splitlines()]
    return sorted((Path(p).name, int(r), c, m) for p, r, c, m in rows)


def _lint(path: Path, project: bool = True):
    from memlint.lint.engine import lint_text
    from memlint.rule.registry import all_rules

    view = (lambda: view_from_disk(str(path))) if project else None
    return lint_text(path.read_text(), str(path), all_rules(), project=view)


# -- MEM202: a plain class's generator, switched nowhere ------------------------

_STARGAN = {
    "model.py": """\
        import torch.nn as nn


        class Generator(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Sequential(nn.Conv2d(3, 3, 3), nn.InstanceNorm2d(3, track_running_stats=True))

            def forward(self, x):
                return self.net(x)
        """,
    "solver.py": """\
        import torch
        from model import Generator


        class Solver(object):
            def __init__(self, loader):
                self.loader = loader
                self.build_model()

            def build_model(self):
                self.G = Generator()
                self.g_optimizer = torch.optim.Adam(self.G.parameters(), 1e-4)
                self.G.to("cuda")

            def restore_model(self):
                self.G.load_state_dict(torch.load("G.ckpt", map_location="cpu"))

            def test(self):
                self.restore_model()
                with torch.no_grad():
                    for x in self.loader:
                        print(self.G(x).mean().item())
        """,
    "main.py": """\
        from solver import Solver

        solver = Solver(loader=[])
        solver.test()
        """,
}
_MEM202 = (
    "evaluation under no_grad with `self.G` still in training mode: dropout and batch-norm statistics behave"
    " as in training"
)


def test_a_plain_class_generator_switched_nowhere_gets_mem202(tmp_path):
    """StarGAN: ``Generator`` (an ``nn.Module`` of model.py) built in
    ``build_model``, evaluated in ``test`` under no_grad, switched by no code
    of the project: in train mode whenever ``test`` runs."""
    _write(tmp_path, _STARGAN)
    # The message names where the project calls ``test`` on a Solver.
    expected = [("solver.py", 21, "MEM202", _MEM202 + " (`test` is called from main.py:4)")]
    assert [f for f in _cli(".", cwd=tmp_path) if f[2] == "MEM202"] == expected
    assert [f for f in _cli("solver.py", cwd=tmp_path) if f[2] == "MEM202"] == expected
    assert _flake8("MEM202", tmp_path) == expected
    # Alone, the file cannot tell that ``Generator`` builds a module.
    assert [f.code for f in _lint(tmp_path / "solver.py", project=False) if f.code == "MEM202"] == []


@pytest.mark.parametrize(
    "main",
    [
        "from solver import Solver\n\nsolver = Solver(loader=[])\nsolver.G.eval()\nsolver.test()\n",
        "from solver import Solver\nfrom utils import freeze\n\nsolver = Solver(loader=[])\nfreeze(solver.G)\nsolver.test()\n",
    ],
    ids=["switched", "handed-to-a-project-function"],
)
def test_a_generator_another_module_may_switch_stays_silent(tmp_path, main):
    files = dict(_STARGAN, **{"main.py": main, "utils.py": "def freeze(m):\n    m.eval()\n"})
    _write(tmp_path, files)
    assert view_from_disk(str(tmp_path / "solver.py")).switched_attrs == ("G",)  # type: ignore[union-attr]
    assert [f for f in _cli(".", cwd=tmp_path) if f[2] == "MEM202"] == []
    assert [f.code for f in _lint(tmp_path / "solver.py") if f.code == "MEM202"] == []


@pytest.mark.parametrize("gate", ["1", "0"])
def test_the_gate_lets_a_plain_class_generator_through(gate, monkeypatch, tmp_path):
    import memlint.lint.screen as screen

    monkeypatch.setattr(screen, "GATE", gate == "1")
    _write(tmp_path, _STARGAN)
    assert [(f.code, f.line) for f in _lint(tmp_path / "solver.py") if f.code == "MEM202"] == [("MEM202", 21)]


def test_summaries_carry_model_classes_plain_attributes_and_switches():
    text = textwrap.dedent(
        """\
        import torch
        import torch.nn as nn
        from torch.nn import Module


        class Net(nn.Module):
            pass


        class Deeper(Net):
            pass


        class Other(Module):
            pass


        class Solver:
            def build(self):
                self.G = Net()
                self.n = 0


        def main(solver, engine):
            solver.G.eval()
            engine.evaluate(solver.D)
            solver.E(torch.zeros(1))
        """
    )
    summary = summarise_text(text)
    assert summary is not None
    assert summary.model_classes == ["Net", "Deeper", "Other"]
    assert summary.plain_attrs == ["G", "n"]
    assert summary.attr_switches == ["G"]  # engine is not a project module here: not a call of the project
    assert ModuleSummary.from_json(json.loads(json.dumps(summary.to_json()))) == summary


# -- MEM102: a tracker of another module that keeps the loss's graph -----------

_TRACKER = {
    "utils.py": """\
        class AverageMeter(object):
            def __init__(self):
                self.sum = 0
                self.count = 0

            def update(self, val, n=1):
                self.val = val
                self.sum += val * n
                self.count += n
                self.avg = self.sum / self.count


        class NumberMeter(object):
            def __init__(self):
                self.sum = 0

            def update(self, val, n=1):
                self.sum += val.item() * n
        """,
    "train.py": """\
        import torch
        import utils
        from utils import AverageMeter, NumberMeter


        def train(model, loader, optimizer, criterion):
            losses = AverageMeter()
            numbers = NumberMeter()
            grads = utils.AverageMeter()
            for x, y in loader:
                loss = criterion(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.update(loss, x.size(0))
                numbers.update(loss, x.size(0))
                grads.update(val=loss)
            return losses.avg
        """,
}
_MEM102 = (
    "`{0}.update` keeps a tensor that carries autograd history across iterations: `AverageMeter.update`"
    " (utils.py:8) adds it to `self.sum`, so every batch's graph stays alive"
)


def test_a_tracker_of_another_module_that_keeps_the_tensor_gets_mem102(tmp_path):
    """utils.py (no training word: read for its exports) defines a meter
    whose update adds the tensor itself to ``self.sum``; train.py feeds it
    the loss once per batch. A meter that stores ``.item()`` stays silent."""
    _write(tmp_path, _TRACKER)
    expected = [
        ("train.py", 15, "MEM102", _MEM102.format("losses")),
        ("train.py", 17, "MEM102", _MEM102.format("grads")),
    ]
    assert [f for f in _cli(".", cwd=tmp_path) if f[2] == "MEM102"] == expected
    assert [f for f in _cli("train.py", cwd=tmp_path) if f[2] == "MEM102"] == expected
    assert _flake8("MEM102", tmp_path) == expected
    assert [f.code for f in _lint(tmp_path / "train.py", project=False) if f.code == "MEM102"] == []
    view = view_from_disk(str(tmp_path / "train.py"))
    assert view is not None
    assert view.tensor_trackers == (
        ("AverageMeter", "update", 0, "val", "sum", "utils.py:8"),
        ("utils.AverageMeter", "update", 0, "val", "sum", "utils.py:8"),
    )


@pytest.mark.parametrize("gate", ["1", "0"])
def test_the_gate_lets_a_tracker_call_through(gate, monkeypatch, tmp_path):
    import memlint.lint.screen as screen

    monkeypatch.setattr(screen, "GATE", gate == "1")
    _write(tmp_path, _TRACKER)
    assert [(f.code, f.line) for f in _lint(tmp_path / "train.py") if f.code == "MEM102"] == [
        ("MEM102", 15),
        ("MEM102", 17),
    ]


def test_the_fix_detaches_what_the_tracker_is_given(tmp_path):
    _write(tmp_path, _TRACKER)
    out = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--select", "MEM102", "--diff", "train.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    ).stdout
    assert "+        losses.update(loss.detach(), x.size(0))" in out
    assert "+        grads.update(val=loss.detach())" in out


def test_summaries_carry_tensor_trackers():
    summary = summarise_text("import torch\n" + textwrap.dedent(_TRACKER["utils.py"]))
    assert summary is not None
    assert [tuple(t) for t in summary.tensor_trackers] == [("AverageMeter", "update", 0, "val", "sum", 9)]
    assert ModuleSummary.from_json(json.loads(json.dumps(summary.to_json()))) == summary
