"""Gradient accumulation: steps that run every N iterations of a loop whose
backward runs every iteration (MEM301, MEM302).

- ``accumulating_steps(verbs, loop)`` -> ``[(step, guard, N, backwards)]``:
  the steps under ``if (i + 1) % N == 0:`` (or a flag bound to that test),
  with the backwards that run outside the guard. Not accumulation: a step
  with a closure, a framework that accumulates (``accelerator.accumulate``,
  ``no_sync``), a guard that runs a whole step backward included (GAN
  critics), or another optimizer stepping every iteration (local SGD).
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.training.training_verbs import Verb, VerbKind, accumulation_divisor


def accumulation_guard(verbs, step: Verb) -> tuple[cst.If, cst.BaseExpression] | None:
    """The ``if (i + 1) % N == 0:`` a step runs under in its loop, and ``N``;
    also ``if is_last:`` after ``is_last = (i + 1) % N == 0``."""
    for node, branch in verbs.conditions(step, step.loop):
        if isinstance(node, cst.If) and branch == "body":
            test = node.test
            divisor = accumulation_divisor(test)
            if divisor is None and isinstance(test, cst.Name):
                values = verbs.bindings.values(test.value, step.scope)
                found = [accumulation_divisor(v) for v in values if v is not None]
                if len(values) == 1 and found and found[0] is not None:
                    divisor = found[0]
            if divisor is not None:
                return node, divisor
    return None


def framework_accumulates(step: Verb) -> bool:
    """``with accelerator.accumulate(model):`` / ``model.no_sync()`` around the step's code."""
    for node, _ in step.path:
        if isinstance(node, cst.With):
            for item in node.items:
                call = item.item
                if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
                    if call.func.attr.value in ("accumulate", "no_sync"):
                        return True
    return False


def accumulating_steps(
    verbs, loop, iteration: list[Verb] | None = None
) -> list[tuple[Verb, cst.If, cst.BaseExpression, list[Verb]]]:
    """Steps that run every N iterations of ``loop`` while the backward runs
    every iteration: ``(step, guard, N, backwards outside the guard)``.
    ``iteration``: the verbs of one iteration (``in_iteration`` by default;
    ``inlined_verbs.inlined`` to read the functions it calls as well)."""
    found = []
    if iteration is None:
        iteration = verbs.in_iteration(loop)
    for step in iteration:
        if step.kind is not VerbKind.STEP or step.closure or framework_accumulates(step):
            continue
        guard = accumulation_guard(verbs, step)
        if guard is None:
            continue
        if_node, divisor = guard
        backwards = [v for v in iteration if v.kind is VerbKind.BACKWARD]
        inside = [b for b in backwards if any(n is if_node for n, _ in b.path)]
        outside = [b for b in backwards if b not in inside]
        # GAN-style ``if i % n_critic == 0:`` runs a whole step, backward included.
        if not outside or any(b.index < step.index for b in inside):
            continue
        # Another optimizer steps every iteration on those gradients (local
        # SGD / DiLoCo: an inner step each batch, an outer one every N).
        if any(
            s.kind is VerbKind.STEP
            and s is not step
            and not any(n is if_node for n, _ in s.path)
            and not verbs.conditions(s, loop)
            and any(b.index < s.index for b in outside)
            for s in iteration
        ):
            continue
        found.append((step, if_node, divisor, outside))
    return found
