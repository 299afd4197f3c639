"""analysis/training/retry_loops.py: loops whose iterations are out-of-memory retries."""

import textwrap

import libcst as cst
import pytest
from analysis_helpers import facts_of

from memlint.analysis.training.retry_loops import retries_on_oom

CASES = [
    (
        """
        while True:
            try:
                out = run(bs)
                break
            except torch.cuda.OutOfMemoryError:
                bs //= 2
        """,
        True,
    ),
    (
        """
        for attempt in range(3):
            try:
                out = run(bs)
            except RuntimeError as e:
                if "CUDA out of memory" in str(e):
                    bs //= 2
                    continue
                raise
            else:
                break
        """,
        True,
    ),
    (
        """
        for attempt in range(3):
            if ready():
                try:
                    return run(bs)
                except (ValueError, OutOfMemoryError):
                    bs //= 2
        """,
        True,
    ),
    (
        """
        for batch in loader:
            try:
                step(batch)
            except torch.cuda.OutOfMemoryError:
                continue
        """,
        False,  # a skipped batch: the loop goes on over data
    ),
    (
        """
        while True:
            try:
                out = run(bs)
                break
            except ValueError:
                bs //= 2
        """,
        False,  # not an out-of-memory error
    ),
    (
        """
        while True:
            try:
                out = run(bs)
                break
            except RuntimeError:
                bs //= 2
        """,
        False,  # any runtime error, the message not read
    ),
    (
        """
        for epoch in range(3):
            try:
                for batch in loader:
                    step(batch)
                    break
            except torch.cuda.OutOfMemoryError:
                pass
        """,
        False,  # the break leaves the inner loop only
    ),
]


@pytest.mark.parametrize("body, expected", CASES)
def test_retries_on_oom(body, expected):
    src = "import torch\nfrom torch.cuda import OutOfMemoryError\ndef f(run, bs, loader, step, ready):\n"
    src += textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"
    facts = facts_of(src)
    loop = facts.loops.all[0].node
    assert isinstance(loop, (cst.For, cst.While))
    assert retries_on_oom(loop, facts.names) is expected
