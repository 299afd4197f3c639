"""MEM201's path through callers that switch the model to eval elsewhere.

``extract_feature(model, loader)`` in ``utils/extract_feature.py`` holds a
loop over a loader calling ``model`` and nothing that says it evaluates (no
name, no ``.eval()``); ``main.py``'s ``evaluate()`` calls ``model.eval()``
and then the helper. The rule's ``_callers_evaluate`` reads the mode every
caller hands the model in (``loops.mode_before``, whose callers in other
modules are ``external_modes``): the file's own facts show no evaluation,
so the local gate fails, and only the project can tell.

Necessary, file side: a ``for``/``while`` in a function, whose iterable
names data (``is_batch_loop`` with no role needs ``data_tokens &
DATA_TOKENS``) and that holds a call (a model call), and a module-level
function with parameters (the callers
of another module reach only those, and a mode is read only for a model
handed to a parameter). View side: some call from another module hands one
of this module's functions a model it switched to eval (``Caller.modes``),
or calls one from a scope that evaluates (``Caller.eval_scope``): without
one, ``mode_before`` cannot answer "eval" where the file itself switches
nothing.
"""

from __future__ import annotations

import ast
from typing import Any

from memlint.gate.ast_names import ast_tokens
from memlint.vocabulary.tokens import DATA_TOKENS

GateFacts = Any  # gate/facts.GateFacts (no import circle)


def may_evaluate_for_callers(facts: GateFacts) -> bool:
    """See the module docstring (the file side)."""
    if not facts.loops or not facts.iter_tokens & DATA_TOKENS:
        return False
    if not any(
        isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (stmt.args.posonlyargs or stmt.args.args or stmt.args.kwonlyargs)
        for stmt in getattr(facts._tree, "body", ())
    ):
        return False
    # A ``for``/``while`` (not a comprehension) in a function, over data, holding a call.
    spans = sorted((fn.lineno, fn.end_lineno or fn.lineno) for fn in facts._functions)
    for loop in facts._loop_nodes:
        iterable = loop.test if type(loop) is ast.While else loop.iter
        if not ast_tokens(iterable)[0] & DATA_TOKENS:
            continue
        if not any(first <= loop.lineno <= last for first, last in spans):
            continue
        if _trains_each_step(loop):
            continue
        if any(type(node) is ast.Call for node in ast.walk(loop)):
            return True
    return False


def _trains_each_step(loop: ast.For | ast.AsyncFor | ast.While) -> bool:
    """A statement of the loop's own body backpropagates or steps an
    optimizer (``optimizer.step()``, no argument: not ``env.step(a)``) on
    every iteration: a training loop, never an evaluation, whoever calls it.
    A step under an ``if`` (a loop shared by training and evaluation) does
    not count."""
    for stmt in loop.body:
        call = stmt.value if type(stmt) is ast.Expr else None
        if type(call) is ast.Call and type(call.func) is ast.Attribute:
            if call.func.attr == "backward" or (call.func.attr == "step" and not call.args):
                return True
    return False


def hands_a_model_in_eval(view: Any) -> bool:
    """The view side: a caller in another module hands a function of this
    module a model in eval mode (a project.view.ProjectView)."""
    return any(
        c.eval_scope or any(mode == "eval" for _key, mode in c.modes)
        for _name, callers in view.callers
        for c in callers
    )
