"""analysis/training/ignite_events.py: which ignite handlers run before an
engine's process function that steps an optimizer."""

import textwrap

from analysis_helpers import facts_of

from memlint.analysis.training.ignite_events import runs_before_process

FACTORY = """\
import torch
from ignite.engine import Engine, Events

def make(model, optimizer, loss_fn):
    def _update(engine, batch):
        loss_fn(model(batch)).backward()
        optimizer.step()
    return Engine(_update)

def make_evaluator(model):
    def _infer(engine, batch):
        return model(batch)
    engine = Engine(_infer)
    return engine
"""


def _handler(src: str, name: str):
    facts = facts_of(src)
    fn = next(f for f in facts.calls.functions if f.name.value == name)
    return runs_before_process(fn, facts)


def test_a_project_factory_whose_process_function_steps():
    src = FACTORY + textwrap.dedent(
        """\
        def train(model, optimizer, scheduler, loss_fn):
            trainer = make(model, optimizer, loss_fn)
            @trainer.on(Events.EPOCH_STARTED)
            def adjust(engine):
                scheduler.step()
        """
    )
    found = _handler(src, "adjust")
    assert found is not None and found.event == "EPOCH_STARTED"
    assert found.may_step("optimizer") and found.may_step(None) and not found.may_step("opt_d")


def test_engine_built_here_steps_by_name_and_add_event_handler_counts():
    src = textwrap.dedent(
        """\
        from ignite.engine import Engine, Events
        import ignite.engine as ie
        def update(engine, batch):
            opt.zero_grad()
            model(batch).sum().backward()
            opt.step()
        trainer = Engine(update)
        def per_iteration(engine):
            sched.step()
        trainer.add_event_handler(ie.Events.ITERATION_STARTED, per_iteration)
        """
    )
    found = _handler(src, "per_iteration")
    assert found is not None and found.event == "ITERATION_STARTED" and found.steps == {"opt"}
    assert not found.may_step("other_opt")


def test_unknown_or_non_stepping_engines_and_other_events_say_nothing():
    src = FACTORY + textwrap.dedent(
        """\
        from elsewhere import build
        def evaluate(model, scheduler):
            evaluator = make_evaluator(model)
            @evaluator.on(Events.EPOCH_STARTED)
            def a(engine):
                scheduler.step()
        def train(model, optimizer, scheduler, loss_fn):
            other = build(model, optimizer)
            @other.on(Events.EPOCH_STARTED)
            def b(engine):
                scheduler.step()
            trainer = make(model, optimizer, loss_fn)
            @trainer.on(Events.EPOCH_COMPLETED)
            def c(engine):
                scheduler.step()
            @trainer.on(Events.EPOCH_STARTED(every=3))
            def d(engine):
                scheduler.step()
            @trainer.on(EPOCH_STARTED)
            def e(engine):
                scheduler.step()
        """
    )
    for name in "abcde":
        assert _handler(src, name) is None, name


def test_ignite_supervised_trainer_steps_what_it_is_handed():
    src = textwrap.dedent(
        """\
        from ignite.engine import Events, create_supervised_trainer
        trainer = create_supervised_trainer(model, opt_g, loss_fn)
        @trainer.on(Events.EPOCH_STARTED)
        def adjust(engine):
            sched.step()
        """
    )
    found = _handler(src, "adjust")
    assert found is not None and found.may_step("opt_g") and not found.may_step("opt_d")
