"""Handlers an ignite ``Engine`` runs before its process function steps.

``@trainer.on(Events.EPOCH_STARTED) def adjust(engine): scheduler.step()``
(reid-strong-baseline): ignite fires ``EPOCH_STARTED`` before the epoch's
first iteration and ``ITERATION_STARTED`` before each call of the process
function, so what such a handler does comes before that process function's
optimizer step. Only a plain event counts (a filtered
``Events.EPOCH_STARTED(every=2)`` first fires after some steps), and only an
engine whose process function provably steps an optimizer:

- ``Engine(update)`` with ``update`` a function of this module that steps one;
- a call of a function of this module whose every ``return`` is such an
  engine (``create_supervised_trainer(model, optimizer, loss_fn)`` written
  in the project, as reid-strong-baseline does);
- ignite's own ``create_supervised_trainer``, whose update steps the
  optimizer it is handed.

The engine is the name the handler's decorator (``@trainer.on(...)``) or an
``trainer.add_event_handler(Events.X, handler)`` of the handler's own scope
names, bound once in that scope. Anything else is unknown, and stays silent.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from memlint.analysis.scope.names import dotted_name
from memlint.analysis.scope.own_returns import own_returns
from memlint.analysis.training.training_verbs import VerbKind

_EVENTS = ("ignite.engine.Events.", "ignite.engine.events.Events.")
# The events fired before the process function runs, in an epoch or an iteration.
_BEFORE_PROCESS = frozenset({"EPOCH_STARTED", "ITERATION_STARTED"})
_ENGINES = frozenset({"ignite.engine.Engine", "ignite.engine.engine.Engine"})
_SUPERVISED = frozenset({"ignite.engine.create_supervised_trainer", "ignite.engine.trainer.create_supervised_trainer"})


@dataclass(frozen=True)
class EngineSteps:
    """An engine whose process function steps an optimizer, and which one:
    those its process function steps by name (``steps``), or any of those a
    factory was handed (``handed``: the optimizer is the factory's argument)."""

    event: str
    steps: frozenset[str] = frozenset()
    handed: frozenset[str] = frozenset()

    def may_step(self, optimizer: str | None) -> bool:
        """Its process function steps ``optimizer`` (None: any one)."""
        return optimizer is None or optimizer in self.steps or optimizer in self.handed


def runs_before_process(handler: cst.FunctionDef, facts) -> EngineSteps | None:
    """The engine ``handler`` is registered on, for an event fired before
    its process function runs, when that function provably steps an
    optimizer; None otherwise."""
    owner = facts.calls.owner.get(handler)
    if owner is None:
        return None
    for receiver, event in _registrations(handler, owner, facts):
        call = facts.bindings.call_of(receiver, owner)
        found = _engine_steps(call, owner, facts) if call is not None else None
        if found is not None:
            return EngineSteps(event, *found)
    return None


def _registrations(handler: cst.FunctionDef, owner, facts) -> list[tuple[str, str]]:
    """(engine name, event) of each registration of ``handler`` for an
    event fired before the process function."""
    found = []
    for decorator in handler.decorators:
        call = decorator.decorator
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "on":
            event = _event(call.args[0] if call.args else None, facts)
            receiver = dotted_name(call.func.value)
            if event is not None and receiver is not None:
                found.append((receiver, event))
    name = handler.name.value
    for call in facts.calls.calls_in.get(owner, ()):
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "add_event_handler" or len(call.args) < 2:
            continue
        target = call.args[1].value
        if not isinstance(target, cst.Name) or target.value != name:
            continue
        if facts.calls.visible_functions(name, owner) != [handler]:
            continue
        event = _event(call.args[0], facts)
        receiver = dotted_name(func.value)
        if event is not None and receiver is not None:
            found.append((receiver, event))
    return found


def _event(arg: cst.Arg | None, facts) -> str | None:
    """``Events.EPOCH_STARTED`` (ignite's, not filtered) as its name."""
    if arg is None or arg.keyword is not None:
        return None
    qualified = facts.names.qualified_name(arg.value) or ""
    for prefix in _EVENTS:
        if qualified.startswith(prefix) and qualified[len(prefix) :] in _BEFORE_PROCESS:
            return qualified[len(prefix) :]
    return None


def _engine_steps(call: cst.Call, scope, facts) -> tuple[frozenset[str], frozenset[str]] | None:
    """(optimizers stepped, optimizers handed) of the engine ``call`` builds
    when its process function provably steps one; None otherwise."""
    name = facts.names.call_name(call) or ""
    if name in _ENGINES:
        return _process_steps(call, scope, facts)
    if name in _SUPERVISED:
        handed = _handed(call)
        return (frozenset(), handed) if handed else None
    factory = facts.calls.resolve(call)
    if factory is None:
        # A function of another project module returning such an engine
        # (project/engine_factories.py): what it steps is what it is handed.
        project = facts.project
        written = dotted_name(call.func)
        if project is not None and written is not None and written in project.engine_factories:
            handed = _handed(call)
            return (frozenset(), handed) if handed else None
        return None
    returned, _ = own_returns(factory)
    engines = []
    for value in returned:
        if isinstance(value, cst.Name):
            value = facts.bindings.call_of(value.value, factory)
        if not isinstance(value, cst.Call) or (facts.names.call_name(value) or "") not in _ENGINES:
            return None
        engines.append(_process_steps(value, factory, facts))
    if not engines or any(e is None for e in engines):
        return None
    # The optimizer the factory's process function steps is the one it was
    # handed (a closure over its parameter): any argument of the call may be it.
    return frozenset(), _handed(call)


def _process_steps(engine: cst.Call, scope, facts) -> tuple[frozenset[str], frozenset[str]] | None:
    process = next((a.value for a in engine.args if a.keyword is None or a.keyword.value == "process_function"), None)
    if not isinstance(process, cst.Name):
        return None
    defs = facts.calls.visible_functions(process.value, scope)
    if len(defs) != 1:
        return None
    steps = frozenset(
        v.target or "" for v in facts.verbs.reached(facts.verbs.in_scope(defs[0])) if v.kind is VerbKind.STEP
    )
    return (steps, frozenset()) if steps else None


def _handed(call: cst.Call) -> frozenset[str]:
    return frozenset(name for a in call.args if (name := dotted_name(a.value)) is not None)
