"""Loops whose grad was turned off the only way torch before 0.4 had.

``Variable(x, volatile=True)`` made every result computed from ``x`` carry
no graph until torch 0.4, which ignores the flag. A loop that wraps its data
so evaluates without a graph where the project accepts no torch from 0.4 on
(a pin or a ceiling read by find/torch_floor.py). Otherwise the flag is taken
as ignored: the loop builds a graph per batch on a current torch.

Not read as the era's mark: ``<loss>.data[0]`` in the same function (it
raises on a 0-dim loss from torch 0.5 on, so such code only completes where
``volatile`` worked). The batches label that shape both ways (ESPNet and the
eighteenth's rethinking-network-pruning negative; ZijunDeng, mixup-cifar10,
L1aoXingyu and network-slimming positive), so it stays reported.
"""

from __future__ import annotations

import libcst as cst

_VARIABLES = frozenset(("torch.autograd.Variable", "torch.autograd.variable.Variable"))
_VOLATILE_UNTIL = "0.4"


def volatile_era_loop(info, facts, torch_range) -> bool:
    """``info`` (a LoopInfo) wraps its data in ``Variable(..., volatile=True)``
    and the project runs only on a torch before 0.4."""
    if torch_range is None or not torch_range.predates(_VOLATILE_UNTIL):
        return False
    return _wraps_volatile(info, facts)


def _wraps_volatile(info, facts) -> bool:
    calls = facts.calls
    names = facts.names
    for call in calls.between(calls.calls_in.get(info.scope, []), info.start, info.end):
        if not isinstance(call, cst.Call) or names.call_name(call) not in _VARIABLES:
            continue
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "volatile":
                if isinstance(arg.value, cst.Name) and arg.value.value == "True":
                    return True
    return False
