"""Loops whose every iteration is one optimizer step."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memlint.analysis.training.loops import LoopAnalysis, LoopInfo


def steps_each_iteration(loops: LoopAnalysis, info: LoopInfo) -> bool:
    """``info``'s own body steps an optimizer, not only an inner loop of it
    (``for x, y in loader: ...; optimizer.step()``, or a gradient
    accumulation's outer loop stepping after its micro-batch loop): each
    iteration is one training step, whatever else it releases."""
    return any(loops.loop_of(step) is info for step in info.step_calls)
