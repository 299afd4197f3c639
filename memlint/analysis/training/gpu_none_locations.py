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

from memlint.analysis.scope.names import dotted_name
from memlint.analysis.scope.plain_bindings import plain_values

# Switches that say "CUDA is on": ``use_gpu``, ``args.cuda``, ``self.use_cuda``.
_CUDA_SWITCH = re.compile(r"^(use_|using_|on_|is_|has_|with_)?(cuda|gpu)s?$", re.IGNORECASE)


def none_on_gpu(value: cst.BaseExpression, call: cst.Call, facts: Any) -> bool:
    """``value``, the ``map_location`` of ``call``, is ``None`` on the CUDA path."""
    if _none_on_gpu(value, facts):
        return True
    if not isinstance(value, cst.Name):
        return False
    scope = facts.loops.scope_of(call)
    values = plain_values(value, scope, facts) if scope is not None else None
    return values is not None and all(_none_on_gpu(v, facts) for v in values)


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
