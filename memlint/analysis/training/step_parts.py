"""Loops that run inside one training step: over the samples of a batch
(``for i in range(args.batch_size)``) or over a GAN's discriminators
(``for i in range(len(netsD))``), nested in a batch loop whose every
iteration backpropagates or steps an optimizer itself.

A value rebound at the top of such an outer iteration (``pred = torch.zeros(
bs, 4)``, ``errD_total = 0``) and written in the inner loop lives one
training step: the inner loop's iterations are parts of that step, not
batches it outlives (analysis/training/loops.py, ``carried_across``).
"""

from __future__ import annotations

import libcst as cst

from memlint.parse.traversal import visit_fast
from memlint.vocabulary.tokens import DATA_TOKENS, name_tokens

# ``batch`` names a batch's size (``range(args.batch_size)``: its samples);
# every other data token in the count (``range(num_batches)``,
# ``range(len(loader))``, ``range(iters)``) names a pass over data.
_PASS_TOKENS = DATA_TOKENS - {"batch"}


class _Fetches(cst.CSTVisitor):
    """A ``next(it)`` / ``it.next()`` / ``it.__next__()`` call: the loop draws data."""

    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        if (isinstance(func, cst.Name) and func.value == "next") or (
            isinstance(func, cst.Attribute) and func.attr.value in ("next", "__next__")
        ):
            self.found = True
        return not self.found


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.tokens: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.tokens.update(name_tokens(node.value))


def counted_part(node: cst.CSTNode) -> bool:
    """``for i in range(n)`` whose count names no data pass and whose body
    fetches no data: it counts the parts of something (samples, models),
    not batches."""
    if not isinstance(node, cst.For):
        return False
    it = node.iter
    if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range"):
        return False
    names = _Names()
    for arg in it.args:
        visit_fast(arg.value, names)
    if names.tokens & _PASS_TOKENS:
        return False
    fetches = _Fetches()
    visit_fast(node.body, fetches)
    return not fetches.found
