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


_GAN_TRAINER = """\
    import torch
    from torch.optim import lr_scheduler


    class Plain:
        def step(self):
            pass


    def get_scheduler(optimizer, policy):
        if policy == "constant":
            scheduler = None
        elif policy == "step":
            scheduler = lr_scheduler.StepLR(optimizer, step_size=10)
        else:
            return NotImplementedError(policy)
        return scheduler


    class GANTrainer(torch.nn.Module):
        def __init__(self, net, policy):
            super().__init__()
            self.net = net
            self.gen_opt = torch.optim.Adam(net.parameters())
            self.gen_scheduler = {builder}

        def update(self, x):
            self.gen_opt.zero_grad()
            self.net(x).mean().backward()
            self.gen_opt.step()

        def update_learning_rate(self):
            if self.gen_scheduler is not None:
                self.gen_scheduler.step()
    """

_GAN_TRAIN = """\
    import torch

    from trainer import GANTrainer

    trainer = GANTrainer(net, "step")
    for x in loader:
        {first}
        {second}
    """


def _gan(tmp_path: Path, builder: str, first: str, second: str) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "trainer.py").write_text(textwrap.dedent(_GAN_TRAINER.format(builder=builder)))
    train = tmp_path / "train.py"
    train.write_text(textwrap.dedent(_GAN_TRAIN.format(first=first, second=second)))
    return train


def test_a_trainer_method_that_steps_its_schedulers_before_the_one_that_steps_its_optimizer(tmp_path):
    """MUNIT: both steps are methods of a trainer of another module; the
    scheduler comes from a factory that may also return None or, by mistake,
    an exception object."""
    factory = "get_scheduler(self.gen_opt, policy)"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert _lint(_gan(tmp_path / "a", factory, "trainer.update_learning_rate()", "trainer.update(x)")) == [
        (7, "MEM802")
    ]
    assert _lint(_gan(tmp_path / "b", factory, "trainer.update(x)", "trainer.update_learning_rate()")) == []


def test_a_home_made_scheduler_in_a_trainer_stays_silent(tmp_path):
    train = _gan(tmp_path, "Plain()", "trainer.update_learning_rate()", "trainer.update(x)")
    assert _lint(train) == []
