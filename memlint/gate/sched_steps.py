"""MEM802's scheduler step: ``x.step()`` with no argument, in a loop's body,
or in a function with a statement after it (a scheduler stepped first in
``train_one_epoch``).

The rule (visit_Module) reads only SCHED_STEP verbs with a loop
(training_verbs: a loop whose body holds the call in the call's own
function) and no argument (``call.args``, keywords included); its other
path (_scheduler_methods) needs the project's typed objects, which the
card's project part asks the view. A file that calls ``step`` only with
arguments (``optimizer.step(closure)``, timm's ``scheduler.step(epoch)``)
or outside any loop and last in its function (a scheduler class's own
``step``, a ``step`` called once) holds no finding: on transformers,
processors and serving helpers whose ``step`` is a name of their own went
through libcst for none.

Never narrower than the rule: the lines of every loop (its whole
statement: a header or an ``else`` counts too, and a function nested in
it), against each no-argument call's first line.

The card's project part (_scheduler_methods: ``trainer.update_learning_rate()``,
a project method that steps only schedulers, before the object's optimizer
step) reads only a call that is a statement of its own, with no argument,
on a receiver the summary may type (project/object_types.py receivers: a
name, or one attribute of a name: ``trainer``, ``self.trainer``), in a loop
of its function, and never a method named ``step`` (typed_objects.object_facts
leaves those to the step path): ``object_method_in_a_loop``. On transformers
616 files waited for their view for that path alone (any loop and any
import of a project module), and 7 hold such a call in a loop. The same
shape as a ``.step()`` (a loop, or a function where a statement follows
it), so that a project method stepping schedulers at the top of an epoch
function stays readable to the rule's function path.
"""

from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from typing import Any

from memlint.vocabulary.kinds import Kind, guess_kind_from_name

GateFacts = Any  # gate/facts.GateFacts, which imports this module (no import circle)

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def steps_in_a_loop(facts: GateFacts) -> bool:
    """Some ``<receiver>.step()`` call with no argument lies in a loop, or in
    a function where some statement follows it."""
    calls = (
        call
        for call in facts._calls
        if type(call.func) is ast.Attribute and call.func.attr == "step" and not call.args and not call.keywords
    )
    return _in_a_loop_or_followed(facts._tree, calls)


def object_method_in_a_loop(facts: GateFacts) -> bool:
    """Some bare ``<receiver>.m()`` statement (GateFacts._bare_method_calls:
    no argument, ``m`` not ``step``, ``short_receiver``) lies in a loop, or
    in a function where some statement follows it."""
    return _in_a_loop_or_followed(facts._tree, facts._bare_method_calls)


def keyed_scheduler_step(facts: GateFacts) -> bool:
    """Some ``<x>['<key>'].step()`` with no argument whose key names a
    scheduler (``state['scheduler'].step()``, training_verbs' keyed
    scheduler): a file naming its scheduler only in a string."""
    for call in facts._calls:
        func = call.func
        if type(func) is not ast.Attribute or func.attr != "step" or call.args or call.keywords:
            continue
        receiver = func.value
        if type(receiver) is ast.Subscript and _names_a_scheduler_key(receiver.slice):  # type: ignore[attr-defined]
            return True
    return False


def registers_a_hook(facts: GateFacts) -> bool:
    """Some ``<x>.<attr>['<key>'] = <value>``: a function registered as a
    hook of an engine by name (analysis/training/engine_hooks.py)."""
    for node in facts._assigns:
        for target in node.targets:
            if (
                type(target) is ast.Subscript
                and type(target.value) is ast.Attribute  # type: ignore[attr-defined]
                and type(target.slice) is ast.Constant  # type: ignore[attr-defined]
                and isinstance(target.slice.value, str)  # type: ignore[attr-defined]
            ):
                return True
    return False


def _names_a_scheduler_key(index: ast.AST) -> bool:
    return (
        type(index) is ast.Constant
        and isinstance(index.value, str)  # type: ignore[attr-defined]
        and guess_kind_from_name(index.value) is Kind.SCHEDULER  # type: ignore[attr-defined]
    )


def short_receiver(node: ast.AST) -> bool:
    """A receiver object_types may record: a name or an attribute of a name
    (``trainer``, ``self.trainer``); a longer chain is never typed."""
    kind = type(node)
    return kind is ast.Name or (kind is ast.Attribute and type(node.value) is ast.Name)  # type: ignore[attr-defined]


def _in_a_loop_or_followed(tree: ast.AST, calls: Iterable[ast.Call]) -> bool:
    """Some call of ``calls`` lies in a loop, or in a function where some
    statement follows it."""
    spans = sorted((call.lineno, call.end_lineno or call.lineno) for call in calls)
    if not spans:
        return False
    lines = [first for first, _ in spans]
    # Outermost loops only: an inner loop's lines are its outer loop's.
    stack: list[ast.AST] = list(getattr(tree, "body", ()))
    while stack:
        node = stack.pop()
        if isinstance(node, _LOOPS):
            i = bisect_right(lines, node.end_lineno or node.lineno) - 1
            if i >= 0 and lines[i] >= node.lineno:
                return True
            continue
        if isinstance(node, _DEFS) and _followed_in(node, spans, lines):
            return True
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if block:
                stack.extend(block)
    return False


def _followed_in(func: ast.AST, spans: list[tuple[int, int]], lines: list[int]) -> bool:
    """The rule's function shape (``def train_one_epoch(...):
    scheduler.step()`` then the optimizer's step, in a loop or a callee,
    _trains_elsewhere): a step in the function that ends before the
    function does, so some statement follows it."""
    end = func.end_lineno or func.lineno  # type: ignore[attr-defined]
    first = bisect_left(lines, func.lineno)  # type: ignore[attr-defined]
    return any(last < end for _, last in spans[first : bisect_right(lines, end)])
