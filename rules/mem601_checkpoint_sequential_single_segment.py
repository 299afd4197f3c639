"""MEM601 checkpoint-sequential-single-segment."""

from __future__ import annotations

import libcst as cst

from memlint.fix.call_args import keyword_arg
from memlint.rule import Invalid, Rule, Safety, Valid

CHECKPOINT_SEQUENTIAL = "torch.utils.checkpoint.checkpoint_sequential"


def _is_literal_one(expr: cst.BaseExpression) -> bool:
    if not isinstance(expr, cst.Integer):
        return False
    try:
        return int(expr.value.replace("_", ""), 0) == 1
    except ValueError:
        return False


class CheckpointSequentialSingleSegment(Rule):
    """
    ## What it does
    Flags `torch.utils.checkpoint.checkpoint_sequential(functions, 1, input)`
    (or `segments=1`): activation checkpointing with a single segment.

    ## Why it matters
    `checkpoint_sequential` splits the model into segments and checkpoints
    every segment except the last one, which always runs normally so its
    output can feed the loss. With one segment nothing is checkpointed: every
    activation is kept exactly as without checkpointing, so the call saves no
    memory while the code reads as if it did.

    ## Example
    ```python
    out = checkpoint_sequential(model.layers, 1, x, use_reentrant=False)
    ```

    ## Use instead
    Split into several segments, about the square root of the number of
    layers, which balances stored activations against recomputation:
    ```python
    segments = max(2, int(len(model.layers) ** 0.5))
    out = checkpoint_sequential(model.layers, segments, x, use_reentrant=False)
    ```

    ## Fix safety
    No fix: the right number of segments depends on the model and on how much
    recomputation is acceptable.

    ## References
    - https://pytorch.org/docs/stable/checkpoint.html#torch.utils.checkpoint.checkpoint_sequential
    - Chen et al., "Training Deep Nets with Sublinear Memory Cost", 2016
    """

    code = "MEM601"
    name = "checkpoint-sequential-single-segment"
    message = "checkpoint_sequential with one segment checkpoints nothing: the last segment keeps its activations"
    fix_safety = Safety.NONE

    def visit_Call(self, node: cst.Call) -> None:
        segments = keyword_arg(node, "segments") or self._second_positional(node)
        if segments is None:
            return
        if not _is_literal_one(segments.value):
            return
        if self.facts.names.call_name(node) != CHECKPOINT_SEQUENTIAL:
            return
        self.report(segments)

    @staticmethod
    def _second_positional(node: cst.Call) -> cst.Arg | None:
        seen = 0
        for arg in node.args:
            if arg.star:
                return None  # ``*args`` before the count hides its position
            if arg.keyword is None:
                seen += 1
                if seen == 2:
                    return arg
        return None

    valid = [
        Valid(
            """\
from torch.utils.checkpoint import checkpoint_sequential
segments = max(2, int(len(blocks) ** 0.5))
out = checkpoint_sequential(blocks, segments, x, use_reentrant=False)
""",
            "a segment count that is not the literal 1",
        ),
        Valid(
            """\
import torch.utils.checkpoint
out = torch.utils.checkpoint.checkpoint_sequential(model.layers, 4, x, use_reentrant=False)
out = torch.utils.checkpoint.checkpoint_sequential(model.layers, segments=n_segments, input=x, use_reentrant=False)
""",
            "several segments",
        ),
        Valid(
            """\
from my_project.checkpointing import checkpoint_sequential
out = checkpoint_sequential(model.layers, 1, x)
""",
            "another library's checkpoint_sequential",
        ),
        Valid(
            """\
import torch
checkpoint_sequential = config["checkpoint_sequential"]
retries = run(checkpoint_sequential, 1, x)
""",
            "a variable, not torch's function",
        ),
    ]
    invalid = [
        Invalid(
            """\
from torch.utils.checkpoint import checkpoint_sequential
out = checkpoint_sequential(model.layers, 1, x, use_reentrant=False)
""",
        ),
        Invalid(
            """\
import torch.utils.checkpoint as cp

class Net(nn.Module):
    def forward(self, x):
        return cp.checkpoint_sequential(self.blocks, segments=1, input=x, use_reentrant=False)
""",
        ),
        Invalid(
            """\
import torch
def run(blocks, x):
    return torch.utils.checkpoint.checkpoint_sequential(
        blocks,
        1,  # one segment
        x,
    )
""",
        ),
    ]
