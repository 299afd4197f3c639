"""MEM802's scheduler step: ``x.step()`` with no argument, in a loop's body.

The rule (visit_Module) reads only SCHED_STEP verbs with a loop
(training_verbs: a loop whose body holds the call in the call's own
function) and no argument (``call.args``, keywords included); its other
path (_scheduler_methods) needs the project's typed objects, which the
card's project part asks the view. A file that calls ``step`` only with
arguments (``optimizer.step(closure)``, timm's ``scheduler.step(epoch)``)
or outside any loop (a scheduler class's own methods, a ``step`` called
once) holds no finding: on transformers, processors and serving helpers
whose ``step`` is a name of their own went through libcst for none.

Never narrower than the rule: the lines of every loop (its whole
statement: a header or an ``else`` counts too, and a function nested in
it), against each no-argument call's first line.
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from typing import Any

GateFacts = Any  # gate/facts.GateFacts, which imports this module (no import circle)

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def steps_in_a_loop(facts: GateFacts) -> bool:
    """Some ``<receiver>.step()`` call with no argument lies in a loop."""
    lines = sorted(
        call.lineno
        for call in facts._calls
        if type(call.func) is ast.Attribute and call.func.attr == "step" and not call.args and not call.keywords
    )
    if not lines:
        return False
    # Outermost loops only: an inner loop's lines are its outer loop's.
    stack: list[ast.AST] = list(getattr(facts._tree, "body", ()))
    while stack:
        node = stack.pop()
        if isinstance(node, _LOOPS):
            i = bisect_right(lines, node.end_lineno or node.lineno) - 1
            if i >= 0 and lines[i] >= node.lineno:
                return True
            continue
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if block:
                stack.extend(block)
    return False
