"""MEM802 across modules (issue 29, fourth batch): a class of another project
module that subclasses a torch LR scheduler and keeps torch's ``step()`` is a
torch scheduler (``class WarmupPolyLR(_LRScheduler)`` with its own
``get_lr``, ``class WarmupCosineSchedule(LambdaLR)``), whether the checked
module builds it in a function or in a trainer's ``__init__``. A subclass
with its own ``step()`` may set the rate for the coming step: silent."""

from __future__ import annotations

import textwrap
from pathlib import Path

from memlint.project.index import view_from_disk

_SCHEDULERS = """\
    import math

    import torch
    from torch.optim.lr_scheduler import LambdaLR


    class WarmupCosine(LambdaLR):
        def __init__(self, optimizer, warmup, total):
            self.warmup, self.total = warmup, total
            super().__init__(optimizer, self.lr_lambda)

        def lr_lambda(self, step):
            if step < self.warmup:
                return step / max(1, self.warmup)
            return 0.5 * (1 + math.cos(math.pi * step / self.total))


    class WarmupPoly(torch.optim.lr_scheduler._LRScheduler):
        def __init__(self, optimizer, total, last_epoch=-1):
            self.total = total
            super().__init__(optimizer, last_epoch)

        def get_lr(self):
            return [lr * (1 - self.last_epoch / self.total) ** 0.9 for lr in self.base_lrs]


    class LongerWarmup(WarmupCosine):
        pass


    class HandRolled(LambdaLR):
        def step(self, epoch=None):
            for group in self.optimizer.param_groups:
                group["lr"] = self.lr_lambdas[0](epoch)


    class Plateau(torch.optim.lr_scheduler.ReduceLROnPlateau):
        pass
    """

_TRAIN = """\
    import torch

    from utils import schedulers
    from utils.schedulers import {cls}


    def train(model, loader, criterion):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = {cls}(optimizer, {args})
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            scheduler.step()
            optimizer.step()
            optimizer.zero_grad()


    class Trainer:
        def __init__(self, model):
            self.model = model
            self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            self.lr_scheduler = schedulers.{cls}(self.optimizer, {args})

        def train(self, loader, criterion):
            for x, y in loader:
                self.lr_scheduler.step()
                loss = criterion(self.model(x), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
    """

_ARGS = {
    "WarmupCosine": "warmup=5, total=100",
    "WarmupPoly": "total=100",
    "LongerWarmup": "warmup=5, total=100",
    "HandRolled": "lambda s: 0.1",
    "Plateau": "",
}


def _project(tmp_path: Path, cls: str) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("")
    (tmp_path / "utils" / "schedulers.py").write_text(textwrap.dedent(_SCHEDULERS))
    train = tmp_path / "train.py"
    train.write_text(textwrap.dedent(_TRAIN.format(cls=cls, args=_ARGS[cls])))
    return train


def _lint(path: Path, project: bool = True) -> list[tuple[int, str]]:
    from memlint.lint.engine import lint_text
    from memlint.rule.registry import all_rules

    rules = [r for r in all_rules() if r.code == "MEM802"]
    view = (lambda: view_from_disk(str(path))) if project else None
    return [(f.line, f.code) for f in lint_text(path.read_text(), str(path), rules, project=view)]


def test_a_project_lambdalr_subclass_is_a_torch_scheduler(tmp_path):
    train = _project(tmp_path, "WarmupCosine")
    assert _lint(train) == [(13, "MEM802"), (26, "MEM802")]
    assert _lint(train, project=False) == []


def test_a_project_lrscheduler_subclass_with_its_own_get_lr_is_a_torch_scheduler(tmp_path):
    assert _lint(_project(tmp_path, "WarmupPoly")) == [(13, "MEM802"), (26, "MEM802")]


def test_a_subclass_of_a_project_scheduler_subclass_is_one_too(tmp_path):
    assert _lint(_project(tmp_path, "LongerWarmup")) == [(13, "MEM802"), (26, "MEM802")]


def test_a_project_subclass_with_its_own_step_stays_silent(tmp_path):
    assert _lint(_project(tmp_path, "HandRolled")) == []


def test_a_plateau_subclass_stays_silent(tmp_path):
    assert _lint(_project(tmp_path, "Plateau")) == []


def test_the_view_names_the_scheduler_classes_as_the_module_writes_them(tmp_path):
    view = view_from_disk(str(_project(tmp_path, "WarmupCosine")))
    assert view is not None
    assert view.scheduler_classes == ("WarmupCosine", "schedulers.WarmupCosine")


def test_the_view_holds_no_home_made_scheduler(tmp_path):
    view = view_from_disk(str(_project(tmp_path, "HandRolled")))
    assert view is not None
    assert view.scheduler_classes == ()


_TRAINER = """\
    class Trainer:
        def __init__(self, model, optimizer, scheduler):
            self.model = model
            self.optimizer = optimizer
            self.scheduler = scheduler

        def train_epoch(self, loader):
            for x, y in loader:
                self.scheduler.step()
                self.model(x).sum().backward()
                self.optimizer.step()
                self.optimizer.zero_grad()
    """

_RUN = """\
    import torch

    from trainer import Trainer
    from utils.schedulers import {cls}


    def main(model):
        optimizer = torch.optim.AdamW(model.parameters())
        Trainer(model, optimizer, {cls}(optimizer, {args})).train_epoch([])
    """


def test_an_attribute_typed_by_its_construction_site_as_a_project_subclass(tmp_path):
    """``self.scheduler`` from a constructor argument that the one
    construction site builds from a project torch-scheduler subclass."""
    for cls, expected in (("WarmupPoly", [(9, "MEM802")]), ("HandRolled", [])):
        folder = tmp_path / cls
        folder.mkdir()
        _project(folder, cls)
        (folder / "trainer.py").write_text(textwrap.dedent(_TRAINER))
        (folder / "run.py").write_text(textwrap.dedent(_RUN.format(cls=cls, args=_ARGS[cls])))
        assert _lint(folder / "trainer.py") == expected, cls


_EPOCHS = """\
    import torch


    def train_and_eval(epochs, model, tg_optimizer, tg_lr_scheduler, loader):
        for epoch in range(epochs):
            print(tg_lr_scheduler.get_last_lr())
            tg_lr_scheduler.step()
            for x, y in loader:
                tg_optimizer.zero_grad()
                model(x).sum().backward()
                tg_optimizer.step()
        return model
    """

_CALLER = """\
    import torch
    from torch.optim import lr_scheduler

    from utils.epochs import train_and_eval


    def run(model, loader, args):
        tg_optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        tg_lr_scheduler = {built}
        return train_and_eval(args.epochs, model, tg_optimizer, tg_lr_scheduler, loader)
    """

_MULTISTEP = "lr_scheduler.MultiStepLR(tg_optimizer, milestones=[30, 60], gamma=0.1)"


def _epoch_project(tmp_path: Path, *built: str) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("")
    helper = tmp_path / "utils" / "epochs.py"
    helper.write_text(textwrap.dedent(_EPOCHS))
    for i, b in enumerate(built):
        (tmp_path / f"run{i}.py").write_text(textwrap.dedent(_CALLER.format(built=b)))
    return helper


def test_a_scheduler_parameter_every_caller_builds_as_an_epoch_scheduler(tmp_path):
    """``tg_lr_scheduler`` (no name convention says scheduler) stepped at the
    top of each epoch, before the batch loop's optimizer steps: every caller
    of the project hands a MultiStepLR (CVPR19_Incremental_Learning). The
    scheduler's first method read (``get_last_lr``) is not its ``step``."""
    helper = _epoch_project(tmp_path, _MULTISTEP, "lr_scheduler.StepLR(tg_optimizer, 30)")
    assert _lint(helper) == [(7, "MEM802")]
    assert _lint(helper, project=False) == []
    view = view_from_disk(str(helper))
    assert view is not None
    assert view.types_of("train_and_eval", "tg_lr_scheduler") == (
        "torch.optim.lr_scheduler.MultiStepLR",
        "torch.optim.lr_scheduler.StepLR",
    )


def test_a_scheduler_parameter_with_a_per_batch_or_an_untyped_caller_stays_silent(tmp_path):
    """A caller handing a per-batch OneCycleLR, a plateau scheduler, a
    project object of its own, or a value the project cannot type: the
    parameter's kind is unknown."""
    for i, other in enumerate(
        (
            "lr_scheduler.OneCycleLR(tg_optimizer, max_lr=0.1, total_steps=100)",
            "lr_scheduler.ReduceLROnPlateau(tg_optimizer)",
            "args.make_scheduler(tg_optimizer)",
        )
    ):
        folder = tmp_path / str(i)
        folder.mkdir()
        assert _lint(_epoch_project(folder, _MULTISTEP, other)) == [], other
