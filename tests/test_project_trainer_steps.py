"""MEM802 across modules (issue 29, fifth batch: GAN_stability): schedulers
stepped before a trainer's method that steps the optimizer, the trainer's
class defined in another module (``trainer.discriminator_trainstep(x)``
calls ``self.d_optimizer.step()``), the schedulers built by a project factory
whose every ``return`` builds a torch scheduler."""

from __future__ import annotations

import textwrap
from pathlib import Path

from memlint.project.index import view_from_disk

_CONFIG = """\
    from torch import optim


    def build_scheduler(optimizer, every):
        return optim.lr_scheduler.StepLR(optimizer, step_size=every)
    """

_TRAINER = """\
    class Trainer(object):
        def __init__(self, model, optimizer):
            self.model = model
            self.optimizer = optimizer

        def train_step(self, x):
            loss = self.model(x).mean()
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            return loss.item()

        def log(self, x):
            return x
    """

_TRAIN = """\
    import torch

    from pkg.config import build_scheduler
    from pkg.trainer import Trainer

    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    other = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = build_scheduler(optimizer, 10)
    trainer = Trainer(model, {handed})
    for x in loader:
        scheduler.step()
        trainer.{method}(x)
    """


def _project(tmp_path: Path, handed: str = "optimizer", method: str = "train_step") -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "config.py").write_text(textwrap.dedent(_CONFIG))
    (tmp_path / "pkg" / "trainer.py").write_text(textwrap.dedent(_TRAINER))
    train = tmp_path / "train.py"
    train.write_text(textwrap.dedent(_TRAIN.format(handed=handed, method=method)))
    return train


def _lint(path: Path, project: bool = True) -> list[tuple[int, str]]:
    from memlint.lint.engine import lint_text
    from memlint.rule.registry import all_rules

    rules = [r for r in all_rules() if r.code == "MEM802"]
    view = (lambda: view_from_disk(str(path))) if project else None
    return [(f.line, f.code) for f in lint_text(path.read_text(), str(path), rules, project=view)]


def test_a_scheduler_stepped_before_a_trainer_method_that_steps_its_optimizer(tmp_path):
    train = _project(tmp_path)
    assert _lint(train) == [(12, "MEM802")]
    assert _lint(train, project=False) == []
    view = view_from_disk(str(train))
    assert view is not None and view.steps_of("", "trainer", "train_step") == "o"


def test_a_trainer_built_on_another_optimizer_steps_not_this_one(tmp_path):
    assert _lint(_project(tmp_path, handed="other")) == []


def test_a_trainer_method_that_steps_nothing(tmp_path):
    assert _lint(_project(tmp_path, method="log")) == []
