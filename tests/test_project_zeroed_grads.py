"""MEM304 across modules: a loop's gradients cleared in another module's
code (project/zeroed_grads.py). ``WATrainer(Trainer).train`` calls
``self.standard_loss(x, y)``, inherited from ``Trainer`` in ``core/train.py``,
which starts with ``self.optimizer.zero_grad()``; or a function of another
module that clears the optimizer it is handed (``trades_loss(model, x, y,
optimizer)``). A function or method that takes the optimizer without
clearing it (``adjust_learning_rate(optimizer, epoch)``) leaves the loop
reported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from project_helpers import finding_lines, write_project

from memlint.project.index import view_from_disk
from memlint.project.summary import summarise_text

_BASE = """\
    import torch


    class Trainer:
        def __init__(self, model):
            self.model = model
            self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

        def standard_loss(self, x, y):
            self.optimizer.zero_grad()
            return self.model(x).sub(y).pow(2).mean()

        def plain_loss(self, x, y):
            return self.model(x).sub(y).pow(2).mean()
    """

_LOSSES = """\
    import torch


    def trades_loss(model, x, y, optimizer, beta=1.0):
        optimizer.zero_grad()
        return model(x).sub(y).pow(2).mean() * beta


    def adjust_learning_rate(optimizer, epoch):
        for group in optimizer.param_groups:
            group["lr"] = 0.1 * 0.9**epoch
    """

_CHILD = """\
    import torch

    from core.train import Trainer
    from losses import adjust_learning_rate, trades_loss


    class WATrainer(Trainer):
        def __init__(self, model):
            super().__init__(model)
            self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

        def train(self, loader):
            for x, y in loader:
                loss = self.standard_loss(x, y)
                loss.backward()
                self.optimizer.step()

        def train_plain(self, loader, epoch):
            for x, y in loader:
                loss = self.plain_loss(x, y)
                adjust_learning_rate(self.optimizer, epoch)
                loss.backward()
                self.optimizer.step()

        def train_trades(self, loader):
            for x, y in loader:
                loss = self.trades_loss(x, y)
                loss.backward()
                self.optimizer.step()

        def trades_loss(self, x, y):
            return trades_loss(self.model, x, y, self.optimizer)
    """

_FILES = {
    "pyproject.toml": "",
    "core/__init__.py": "",
    "core/train.py": _BASE,
    "losses.py": _LOSSES,
    "watrain.py": _CHILD,
}


def test_summary_keeps_what_a_function_clears():
    base = summarise_text(_BASE.replace("\n    ", "\n").lstrip())
    losses = summarise_text(_LOSSES.replace("\n    ", "\n").lstrip())
    facts = {f.name: f.clears for f in (*base.functions, *losses.functions)}
    assert facts["Trainer.standard_loss"] == ("self.optimizer",)
    assert facts["Trainer.plain_loss"] == ()
    assert facts["trades_loss"] == ("optimizer",)
    assert facts["adjust_learning_rate"] == ()


def test_view_names_inherited_and_imported_clears(tmp_path: Path):
    write_project(tmp_path, _FILES)
    view = view_from_disk(str(tmp_path / "watrain.py"))
    assert view is not None
    assert view.inherited_clear("Trainer", "standard_loss") == ("self.optimizer",)
    assert view.inherited_clear("Trainer", "plain_loss") == ()
    assert view.grad_clearer("trades_loss") == (("optimizer",), ("model", "x", "y", "optimizer", "beta"), ())
    assert view.grad_clearer("adjust_learning_rate") is None


def _cli(folder: Path) -> list[int]:
    out = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--exit-zero", "--select", "MEM304"]
        + ["--output-format", "json", "."],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(f["location"]["row"] for f in json.loads(out or "[]") if f["filename"].endswith("watrain.py"))


def _flake8(folder: Path) -> list[int]:
    out = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "MEM304", "--format", "%(path)s\t%(row)d", "."],
        cwd=folder,
        capture_output=True,
        text=True,
    ).stdout
    return sorted(
        int(row) for path, row in (line.split("\t") for line in out.splitlines()) if path.endswith("watrain.py")
    )


def test_loops_cleared_elsewhere_are_silent_the_others_reported(tmp_path: Path):
    write_project(tmp_path, _FILES)
    # ``train``: the inherited clear; ``train_trades``: the local method
    # hands ``self.optimizer`` to ``trades_loss``; ``train_plain``: nothing
    # clears (``adjust_learning_rate`` only reads the optimizer).
    assert finding_lines(tmp_path / "watrain.py", "MEM304") == [23]
    assert _cli(tmp_path) == [23]
    assert _flake8(tmp_path) == [23]


def test_without_the_project_the_loop_is_reported(tmp_path: Path):
    write_project(tmp_path, {"pyproject.toml": "", "watrain.py": _CHILD})
    assert finding_lines(tmp_path / "watrain.py", "MEM304") == [16, 23, 29]
