"""Forwards that run only while their model trains (issue 29, DPR's ``_do_biencoder_fwd_pass``).

A step helper shared by training and validation may choose the grad mode
from the model's own flag::

    if model.training:
        out = model(x)
    else:
        with torch.no_grad():
            out = model(x)

The first forward runs only in training mode: called after ``model.eval()``
it never runs, so it builds no graph for an evaluation loop. Only the flag of
the module the call runs counts (``model.training`` for ``model(x)``,
``self.net.training`` for ``self.net(x)``), in the body of ``if
<m>.training:`` or the ``else`` of ``if not <m>.training:``; a test of any
other module's flag, or one combined with other conditions, says nothing.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from memlint.analysis.scope.names import dotted_name


def _training_flag(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """``m.training`` -> ("m", True); ``not m.training`` -> ("m", False)."""
    negated = False
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, negated = test.expression, True
    if isinstance(test, cst.Attribute) and test.attr.value == "training":
        receiver = dotted_name(test.value)
        if receiver is not None:
            return receiver, not negated
    return None


def runs_only_in_training(call: cst.Call, parent: Callable[[cst.CSTNode], cst.CSTNode | None]) -> bool:
    """``call`` runs a module (``m(x)``, ``m.forward(x)``) only while that
    module is in training mode: it sits, within its own function, in the arm
    of an ``if`` on ``m.training`` that runs when the flag is set."""
    func = call.func
    receiver = dotted_name(func)
    if isinstance(func, cst.Attribute) and func.attr.value == "forward":
        receiver = dotted_name(func.value)
    if receiver is None:
        return False
    child: cst.CSTNode = call
    cur = parent(call)
    while cur is not None and not isinstance(cur, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)):
        if isinstance(cur, cst.If) and child is not cur.test:
            flag = _training_flag(cur.test)
            if flag is not None and flag[0] == receiver:
                return (child is cur.body) == flag[1]
        child, cur = cur, parent(cur)
    return False
