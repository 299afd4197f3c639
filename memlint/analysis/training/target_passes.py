"""Helpers whose passes make the training step's targets, not an evaluation.

self-label's ``opt_sk(model, selflabels, epoch)`` runs the model over the
training loader under ``no_grad`` in training mode, then solves for pseudo-
labels; its caller, inside the training loop and before that iteration's
backward, binds the result (``selflabels = opt_sk(...)``) and feeds it to the
loss (``criterion(outputs, selflabels[indexes])``). What a validation pass
returns is a metric that is printed, logged or compared; what becomes the
loss's targets is part of training, and the mode it runs in is the method's
choice (step_passes.py's Monte-Carlo teacher, for a loop written inline).

- ``makes_training_targets(fn, calls, loops, objects, project)``: ``fn`` is
  a module-level function called from this module only (no caller in another
  module, never used as a value), and every call is the value of an
  assignment to a name, in the body of a loop that backpropagates after the
  call in the same iteration, and that name is read by a loss call of that
  loop after the call.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from memlint.analysis.scope.callgraph import CallGraph
from memlint.analysis.scope.names import mentions


def makes_training_targets(fn: cst.FunctionDef, calls: CallGraph, loops: Any, objects: Any, project: Any) -> bool:
    if calls.owner.get(fn) is not calls.module or fn in calls.class_of or fn in calls.escapes:
        return False
    if project is not None and project.callers_of(fn.name.value):
        return False
    sites = calls.call_sites.get(fn) or []
    return bool(sites) and all(_feeds_loss(site, calls, loops, objects) for site in sites)


def _feeds_loss(call: cst.Call, calls: CallGraph, loops: Any, objects: Any) -> bool:
    assign = calls.parents.get(call)
    if not (isinstance(assign, cst.Assign) and assign.value is call and len(assign.targets) == 1):
        return False
    target = assign.targets[0].target
    if not isinstance(target, cst.Name):
        return False
    loop = loops.loop_of(call)
    if loop is None or not loops.in_loop_body(call, loop):
        return False
    at = loops.pos(call)
    if not any(loops.pos(b) > at and loops.loop_of(b) is loop for b in loop.backward_calls):
        return False
    return any(
        loop.contains(loops.pos(c)) and loops.pos(c) > at and objects.is_loss_call(c) and mentions(c, target.value)
        for c in calls.calls_in.get(loop.scope, ())
    )
