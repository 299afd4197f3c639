"""A ``map_location`` that is ``None`` whenever CUDA is available.

deep-person-reid's ``load_checkpoint``: ``map_location = None if
torch.cuda.is_available() else 'cpu'`` then ``torch.load(fpath,
map_location=map_location)``. ``None`` is torch's default: on every machine
with a GPU the load restores tensors to the device they were saved from, as
if no ``map_location`` were given; only the CPU-only machine maps them. The
same for a literal ``map_location=None``.

A value counts when it is ``None``, a conditional whose arm on the CUDA path
is ``None`` (the test ``torch.cuda.is_available()`` or a switch named for it:
``use_gpu``, ``args.cuda``; ``not`` swaps the arms), or a local name of the
load's scope (no parameter, ``global`` or ``nonlocal``) whose every binding
there is a plain assignment of such a value. Anything else is a real
``map_location``.
"""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from memlint.analysis.autograd.history import param_names
from memlint.analysis.scope.names import dotted_name
from memlint.analysis.training.load_kwargs import declared

# Switches that say "CUDA is on": ``use_gpu``, ``args.cuda``, ``self.use_cuda``.
_CUDA_SWITCH = re.compile(r"^(use_|using_|on_|is_|has_|with_)?(cuda|gpu)s?$", re.IGNORECASE)


def none_on_gpu(value: cst.BaseExpression, call: cst.Call, facts: Any) -> bool:
    """``value``, the ``map_location`` of ``call``, is ``None`` on the CUDA path."""
    if _none_on_gpu(value, facts):
        return True
    if not isinstance(value, cst.Name):
        return False
    scope = facts.loops.scope_of(call)
    if scope is None:
        return False
    name = value.value
    if isinstance(scope, cst.FunctionDef) and (name in param_names(scope) or declared(scope, name)):
        return False
    bindings = facts.recurrent.bindings_in(scope).get(name, ())
    if not bindings:
        return False
    for b in bindings:
        if b.kind != "assign" or not isinstance(b.stmt, cst.Assign) or b.stmt.value is not b.value:
            return False
        if len(b.stmt.targets) != 1 or not isinstance(b.stmt.targets[0].target, cst.Name):
            return False
        if not _none_on_gpu(b.value, facts):
            return False
    return True


def _none_on_gpu(value: cst.BaseExpression, facts: Any) -> bool:
    if isinstance(value, cst.Name):
        return value.value == "None"
    if not isinstance(value, cst.IfExp):
        return False
    cuda = _cuda_test(value.test, facts)
    if cuda is None:
        return False
    return _none_on_gpu(value.body if cuda else value.orelse, facts)


def _cuda_test(test: cst.BaseExpression, facts: Any) -> bool | None:
    """True when ``test`` holds exactly when CUDA is on, False when it holds
    exactly when it is off (``not use_gpu``), None when it says neither."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _cuda_test(test.expression, facts)
        return None if inner is None else not inner
    if isinstance(test, cst.Call):
        return True if not test.args and facts.names.call_name(test) == "torch.cuda.is_available" else None
    spelled = dotted_name(test) if isinstance(test, (cst.Name, cst.Attribute)) else None
    if spelled is None:
        return None
    return True if _CUDA_SWITCH.match(spelled.rsplit(".", 1)[-1]) else None
