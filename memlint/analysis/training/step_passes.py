"""Inner loops that are part of every training step, not an evaluation.

UA-MT (the uncertainty-aware mean teacher): in every iteration of the
training loop, ``for i in range(T): with torch.no_grad(): preds[i] =
ema_model(x + noise)`` runs the teacher T times on noisy copies of the
batch, and the iteration's backward follows. Those passes make the training
step's targets (Monte-Carlo dropout uncertainty, teacher predictions,
pseudo-labels); the train mode they run in is the method's choice, and
training resumes in the same iteration. A validation loop the training
loop runs now and then (``if i % 500 == 0: for x in val_loader: ...``)
sits under a branch and is not one; nor is a loop over data (a loader, a
dataset), even one run before every backward: those are other batches.

- ``in_every_step(info, loops)``: the loop ``info`` iterates no data and
  runs in every iteration of its enclosing loop (nothing but ``with``
  blocks in between: no branch, handler, ``else`` or function), and a
  backward of that loop's own iteration (not of a loop nested in it: an epoch loop that validates,
  then runs its batch loop, is not one) comes after the inner loop.
"""

from __future__ import annotations

import libcst as cst

from memlint.vocabulary.tokens import DATA_TOKENS

# Nodes between an inner loop and the body of the loop around it that do
# not make it conditional: blocks and ``with`` statements always run.
_ALWAYS_RUN = (cst.IndentedBlock, cst.SimpleStatementSuite, cst.With)


def in_every_step(info, loops) -> bool:
    outer = info.parent
    if outer is None or not outer.backward_calls or info.data_tokens & DATA_TOKENS:
        return False
    if not any(loops.pos(call) >= info.end and loops.loop_of(call) is outer for call in outer.backward_calls):
        return False
    node = loops.parents.get(info.node)
    while node is not None and node is not outer.node:
        if not isinstance(node, _ALWAYS_RUN):
            return False
        node = loops.parents.get(node)
    return node is outer.node
