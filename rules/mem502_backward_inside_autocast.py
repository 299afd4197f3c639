"""MEM502 backward-inside-autocast."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.training.training_verbs import Verb, VerbKind
from memlint.rule import Fix, Invalid, Rule, Safety, Valid


class _ForwardCalls(cst.CSTVisitor):
    """Model and loss calls other than ``backward``."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, objects, backward: cst.CSTNode) -> None:
        super().__init__()
        self.objects = objects
        self.backward = backward
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        if node is not self.backward and (self.objects.is_model_call(node) or self.objects.is_loss_call(node)):
            self.found.append(node)


class BackwardInsideAutocast(Rule):
    """
    ## What it does
    Flags `loss.backward()` (or `scaler.scale(loss).backward()`) written
    inside a `with torch.autocast(...)` block, also when the context is a
    variable (`ctx = torch.autocast(...)`, or nanoGPT's `ctx = nullcontext()
    if ... else torch.amp.autocast(...)`; `with ctx:`).

    ## Why it matters
    autocast is meant for the forward pass and the loss. The PyTorch AMP
    guide says backward passes under autocast are not recommended: the
    backward ops already run in the dtype autocast chose for their forward
    ops, and keeping the context open around the backward (and the optimizer
    step usually written after it) only invites ops in it to be cast again
    and cached casts to be kept alive longer than needed.

    ## Example
    ```python
    with torch.autocast("cuda"):
        loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    ```

    ## Use instead
    ```python
    with torch.autocast("cuda"):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Fix safety
    Safe: the fix ends the `with` block just before the backward, moving the
    backward and every statement after it in the block out one level, in
    order. It is offered only when the backward is a statement of the block
    itself, the `with` has no other context managers, and no forward (model
    or loss call) follows the backward in the block; otherwise the finding is
    reported without a fix. `autocast(enabled=False)` regions and backwards
    in functions merely defined inside the block are not flagged.

    ## References
    - https://pytorch.org/docs/stable/amp.html#torch.autocast
    - https://pytorch.org/docs/stable/notes/amp_examples.html
    """

    code = "MEM502"
    name = "backward-inside-autocast"
    message = "backward() inside an autocast block: end the block after the loss is computed"
    fix_safety = Safety.SAFE

    def visit_Module(self, node: cst.Module) -> None:
        autocast = self.facts.autocast
        for verb in self.facts.verbs.verbs:
            if verb.kind is not VerbKind.BACKWARD or verb.framework:
                continue
            block = autocast.block_of(verb.call)
            if block is None:
                continue
            self.report(verb.call, fix=self._fix(block, verb))

    def _fix(self, block: cst.With, verb: Verb) -> Fix | None:
        if len(block.items) != 1 or not isinstance(block.body, cst.IndentedBlock) or verb.line is None:
            return None
        body = list(block.body.body)
        index = next((i for i, s in enumerate(body) if s is verb.line), None)
        if index is None:
            return None
        moved = body[index:]
        if self._has_forward(moved, verb.call):
            return None
        kept = body[:index]
        if kept:
            new: list[cst.BaseStatement] = [block.with_changes(body=block.body.with_changes(body=kept)), *moved]
        else:
            first = moved[0].with_changes(leading_lines=[*block.leading_lines, *moved[0].leading_lines])
            new = [first, *moved[1:]]
        return Fix("End the autocast block before the backward", ((block, cst.FlattenSentinel(new)),))

    def _has_forward(self, statements, backward: cst.CSTNode) -> bool:
        visitor = _ForwardCalls(self.facts.objects, backward)
        for stmt in statements:
            stmt.visit(visitor)
        return bool(visitor.found)

    valid = [
        Valid(
            """\
from contextlib import nullcontext
import torch
ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type, dtype=torch.bfloat16)
for it in range(max_iters):
    for micro_step in range(gradient_accumulation_steps):
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
            "nanoGPT: the autocast context is a variable, the backward is outside it",
        ),
        Valid(
            """\
import torch
for x, y in loader:
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
            "backward after the block",
        ),
        Valid(
            """\
import torch
with torch.autocast("cuda"):
    out = model(x)
    with torch.autocast("cuda", enabled=False):
        loss = criterion(out.float(), y)
        loss.backward()
""",
            "autocast(enabled=False) region",
        ),
        Valid(
            """\
from torch.cuda.amp import autocast
with autocast():
    def closure():
        loss = criterion(model(x), y)
        loss.backward()
        return loss
optimizer.step(closure)
""",
            "a backward inside a function merely defined in the block",
        ),
        Valid(
            """\
with accelerator.autocast():
    loss = model(**batch).loss
accelerator.backward(loss)
""",
            "accelerate's own context and backward",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch
ctx = torch.autocast("cuda", dtype=torch.float16)
for x, y in loader:
    optimizer.zero_grad()
    with ctx:
        loss = criterion(model(x), y)
        scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
            """\
import torch
ctx = torch.autocast("cuda", dtype=torch.float16)
for x, y in loader:
    optimizer.zero_grad()
    with ctx:
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
        ),
        Invalid(
            """\
import torch
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        out = model(x)
        loss = criterion(out, y)
        # scaled backward
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    print(loss.item())
""",
            """\
import torch
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        out = model(x)
        loss = criterion(out, y)
    # scaled backward
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    print(loss.item())
""",
        ),
        Invalid(
            """\
from torch.cuda.amp import autocast
def train_step(model, batch, optimizer):
    with autocast(enabled=args.amp):
        loss = model(**batch).loss
        loss.backward()
    optimizer.step()
""",
            """\
from torch.cuda.amp import autocast
def train_step(model, batch, optimizer):
    with autocast(enabled=args.amp):
        loss = model(**batch).loss
    loss.backward()
    optimizer.step()
""",
        ),
        Invalid(
            """\
import torch
with torch.amp.autocast("cuda"):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
""",
            None,
        ),
    ]
