"""Functions a project engine runs, as a hook, before its optimizer steps.

prototypical-networks' ``scripts/train/few_shot/train.py``::

    engine = Engine()

    def on_start_epoch(state):
        state['scheduler'].step()
    engine.hooks['on_start_epoch'] = on_start_epoch

    engine.train(model=model, loader=train_loader, ...)

``Engine.train`` (protonets/engine.py) calls ``self.hooks['on_start_epoch']``
at the top of each epoch, before the batch loop that steps the optimizer:
what the function does comes before that step (MEM802). The place of each
hook is a project fact (project/engine_hooks.py): of an imported class, from
its module's summary through the view (``ProjectView.engine_hooks``); of a
class of this module, read from its own ``ast`` tree. Only a certain shape
counts: the function (or ``functools.partial`` of it) is the one value the
function's own scope stores in ``<engine>.<attr>['<key>']``, ``<engine>`` is
bound once there to a call of that class, and the hook's place is known and
comes before the step. An engine class the project does not hold (torchnet's
or ignite's, installed) is unknown, and stays silent.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from memlint.analysis.scope.names import dotted_name
from memlint.parse.guard import python_tree
from memlint.parse.traversal import OwnScopeVisitor, visit_fast

_PARTIAL = frozenset({"functools.partial"})


@dataclass(frozen=True)
class HookRun:
    """``<engine>.<attr>['<key>']`` runs at ``place`` (project/engine_hooks.py),
    the call being at ``where``; ``handed``: what the engine's construction
    and the calls of its methods in that scope hand it."""

    engine: str
    attr: str
    key: str
    place: str
    where: str
    handed: frozenset[str]

    def may_step(self, optimizer: str | None) -> bool:
        """The engine may step ``optimizer`` (None: any one): it was handed it."""
        return optimizer is None or optimizer in self.handed


def runs_before_step(handler: cst.FunctionDef, facts) -> HookRun | None:
    """How the engine ``handler`` is registered on runs it, when that is
    before the engine's optimizer step in the same iteration; None otherwise."""
    from memlint.project.engine_hooks import BEFORE_STEP

    owner = facts.calls.owner.get(handler)
    if owner is None or facts.calls.visible_functions(handler.name.value, owner) != [handler]:
        return None
    stores = _Stores(owner)
    visit_fast(owner, stores)
    registered = [(e, a, k) for (e, a, k), values in stores.found.items() if _only(values, handler, facts)]
    if len(registered) != 1:
        return None  # never registered, or under several names: not known which runs when
    engine, attr, key = registered[0]
    call = facts.bindings.call_of(engine, owner)
    spelled = dotted_name(call.func) if call is not None else None
    if spelled is None:
        return None
    found = _place(spelled, attr, key, facts)
    if found is None or found[0] not in BEFORE_STEP:
        return None
    handed = {dotted_name(a.value) for a in call.args}  # type: ignore[union-attr]
    for other in facts.calls.calls_in.get(owner, ()):
        if isinstance(other.func, cst.Attribute) and dotted_name(other.func.value) == engine:
            handed.update(dotted_name(a.value) for a in other.args)
    handed.discard(None)
    return HookRun(engine, attr, key, found[0], found[1], frozenset(handed))  # type: ignore[arg-type]


def _only(values: list[cst.BaseExpression], handler: cst.FunctionDef, facts) -> bool:
    """Every value stored under the name is ``handler`` (or a partial of it)."""
    name = handler.name.value
    for value in values:
        if isinstance(value, cst.Call) and facts.names.call_name(value) in _PARTIAL and value.args:
            value = value.args[0].value
        if not (isinstance(value, cst.Name) and value.value == name):
            return False
    return True


def _place(spelled: str, attr: str, key: str, facts) -> tuple[str, str] | None:
    """(place, where) of hook ``attr[key]`` of the class ``spelled`` names:
    a class of another project module (the view), or of this one."""
    project = facts.project
    for local, a, k, place, where in project.engine_hooks if project is not None else ():
        if (local, a, k) == (spelled, attr, key):
            return place, where
    if "." in spelled or spelled in facts.names.bindings:
        return None
    from memlint.project.engine_hooks import class_hooks

    # Linted without the gate's tree (fix, the server's single rules): the code's own.
    tree = facts.python_tree if facts.python_tree is not None else python_tree(facts.module.code)
    if tree is None:
        return None
    # A class of this module, at any depth (one defined in ``main``): one of that name only.
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == spelled]
    if len(classes) != 1:
        return None
    for hook in class_hooks(classes[0]):
        if (hook.attr, hook.key) == (attr, key):
            return hook.place, f"line {hook.line}"
    return None


class _Stores(OwnScopeVisitor):
    """``<engine>.<attr>['<key>'] = value`` in ``scope``'s own code:
    (engine, attr, key) -> the values stored."""

    def __init__(self, scope: cst.CSTNode) -> None:
        super().__init__()
        self.own = scope
        self.found: dict[tuple[str, str, str], list[cst.BaseExpression]] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            stored = _stored_hook(target.target)
            if stored is not None:
                self.found.setdefault(stored, []).append(node.value)


def _stored_hook(target: cst.BaseExpression) -> tuple[str, str, str] | None:
    if not isinstance(target, cst.Subscript) or len(target.slice) != 1:
        return None
    value = target.value
    if not isinstance(value, cst.Attribute):
        return None
    engine = dotted_name(value.value)
    index = target.slice[0].slice
    if engine is None or not isinstance(index, cst.Index) or not isinstance(index.value, cst.SimpleString):
        return None
    key = index.value.evaluated_value
    return (engine, value.attr.value, key) if isinstance(key, str) else None
