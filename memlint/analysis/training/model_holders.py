"""A model class that moves nothing holds what it is handed where it is (MEM701).

manydepth's ``pose_dec = networks.PoseDecoder(pose_enc.num_ch_enc, ...)``
hands a part of ``pose_enc`` (a model still on the CPU) to another model
class of the project whose code moves nothing to a device; the load
``pose_enc.load_state_dict(...)`` right after still loads into the CPU.
As for a plain holder (``Evaluator(model=model)``), the new object keeps
what it is handed in place until it is itself used: any use of the holder
(a move, a call of a method, handing it on) then counts as a move of what
it holds (cpu_models.py ``_use_holders``).

Only a call with no device argument, no ``*args``/``**kwargs`` (one may be
a device) and no move inside it, of a class (a capitalised name) that the
rule already knows builds on the CPU.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from memlint.analysis.scope.names import dotted_name

_DEVICE_WORDS = frozenset({"device", "device_map"})


def holds_in_place(
    call: cst.Call,
    cpu_class: Callable[[cst.BaseExpression], bool],
    moves_anything: Callable[[cst.CSTNode], bool],
) -> bool:
    """``call`` builds a model of a class that moves nothing (``cpu_class``),
    handed nothing that may name a device: it keeps its arguments where they are."""
    name = dotted_name(call.func)
    if name is None or not name.rpartition(".")[2][:1].isupper():
        return False
    for arg in call.args:
        if arg.star or (arg.keyword is not None and arg.keyword.value in _DEVICE_WORDS):
            return False
    return not moves_anything(call) and cpu_class(call.func)
