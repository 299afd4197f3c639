"""project/engine_factories.py: functions returning an ignite engine whose
process function steps an optimizer, and MEM802 reading them from another
module (ProjectView.engine_factories)."""

import ast
import json
import textwrap

from memlint.project.engine_factories import engine_factories

TRAINER = """\
import torch
from ignite.engine import Engine


def create_supervised_trainer(model, optimizer, loss_fn):
    def _update(engine, batch):
        optimizer.zero_grad()
        x, y = batch
        loss_fn(model(x), y).backward()
        optimizer.step()
        return 0.0

    return Engine(_update)


def create_named(model, optimizer):
    def step(engine, batch):
        model(batch).sum().backward()
        optimizer.step()

    trainer = Engine(step)
    return trainer


def create_evaluator(model):
    def _infer(engine, batch):
        with torch.no_grad():
            return model(batch)

    return Engine(_infer)


def create_either(model, optimizer, evaluate):
    def _update(engine, batch):
        optimizer.step()

    if evaluate:
        return build_evaluator(model)
    return Engine(_update)


def stepping_a_scheduler(model, scheduler):
    def _update(engine, batch):
        scheduler.step()

    return Engine(_update)
"""


def test_only_functions_whose_every_return_is_a_stepping_engine():
    assert engine_factories(ast.parse(TRAINER)) == ["create_supervised_trainer", "create_named"]


def test_another_engine_class_is_not_ignite():
    other = TRAINER.replace("from ignite.engine import Engine", "from mylib import Engine")
    assert engine_factories(ast.parse(other)) == []
    aliased = TRAINER.replace("from ignite.engine import Engine", "import ignite.engine as ie").replace(
        "Engine(", "ie.Engine("
    )
    assert engine_factories(ast.parse(aliased)) == ["create_supervised_trainer", "create_named"]


TRAIN = """\
import torch
from ignite.engine import Events

from engine.trainer import create_evaluator, create_supervised_trainer


def main(model, loader, loss_fn):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
    trainer = create_supervised_trainer(model, optimizer, loss_fn)
    evaluator = create_evaluator(model)

    @trainer.on(Events.EPOCH_STARTED)
    def adjust(engine):
        scheduler.step()

    @evaluator.on(Events.EPOCH_STARTED)
    def on_evaluation(engine):
        scheduler.step()

    trainer.run(loader, max_epochs=10)
"""


def test_mem802_reads_the_factory_of_another_module(tmp_path, run_memlint):
    (tmp_path / ".git").mkdir()
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "__init__.py").write_text("")
    (tmp_path / "engine" / "trainer.py").write_text(TRAINER)
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "train.py").write_text(TRAIN)
    check = ("check", "--no-cache", "--select", "MEM802", "--output-format", "json")
    for target in (".", "tools/train.py"):  # the tree, and one file with its project read from disk
        found = json.loads(run_memlint(*check, target).stdout)
        assert [(f["filename"].replace("\\", "/").rsplit("/", 1)[-1], f["location"]["row"]) for f in found] == [
            ("train.py", 15)
        ], found
    # The factory's module edited so its engine no longer steps: silent.
    (tmp_path / "engine" / "trainer.py").write_text(textwrap.dedent(TRAINER).replace("optimizer.step()", "pass"))
    assert json.loads(run_memlint(*check, ".").stdout) == []
