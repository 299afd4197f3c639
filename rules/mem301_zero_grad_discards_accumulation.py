"""MEM301 zero-grad-discards-accumulation."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.training.accumulation import accumulating_steps
from memlint.analysis.training.training_verbs import Verb, VerbKind
from memlint.fix.statement_edits import StatementEdits, bare, call_statement_only
from memlint.rule import Fix, Invalid, Rule, Safety, Valid


class ZeroGradDiscardsAccumulation(Rule):
    """
    ## What it does
    Flags `optimizer.zero_grad()` that runs on every iteration of a loop whose
    `optimizer.step()` runs only every N iterations (under
    `if (i + 1) % N == 0:`), while the backward runs every iteration.

    ## Why it matters
    Gradient accumulation sums the gradients of N micro-batches and steps
    once. Clearing them every iteration throws away N-1 of the N micro-batches:
    the step sees only the last one, so the effective batch is N times smaller
    than intended and N-1 of every N forward/backward passes are wasted work.
    Nothing crashes; the model just trains worse.

    ## Example
    ```python
    for i, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = criterion(model(x), y) / accum_steps
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
    ```

    ## Use instead
    ```python
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accum_steps
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    ```

    ## Fix safety
    Unsafe: the fix moves `zero_grad()` right after the guarded `step()`,
    which changes what is trained (that is the point). Gradients left over
    from before the loop are no longer cleared before its first step; clear
    them before the loop if that can happen. zero_grad and step are paired
    per optimizer (GANs have two), a `model.zero_grad()` through the
    optimizer built from `model.parameters()`. Loops whose guarded block runs
    its own backward (`if i % n_critic == 0:` in a GAN), accumulation
    handled by `accelerator.accumulate`, and loops where another optimizer
    steps every iteration (local SGD, DiLoCo) are left alone.

    ## References
    - https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-accumulation
    - https://huggingface.co/docs/accelerate/usage_guides/gradient_accumulation
    """

    code = "MEM301"
    name = "zero-grad-discards-accumulation"
    message = "zero_grad() runs every iteration but step() only every N: the accumulated gradients are discarded"
    fix_safety = Safety.UNSAFE

    def visit_Module(self, node: cst.Module) -> None:
        verbs = self.facts.verbs
        loops = {id(v.loop): v.loop for v in verbs.verbs if v.loop is not None and v.kind is VerbKind.STEP}
        reported: set[int] = set()
        for loop in loops.values():
            iteration = verbs.in_iteration(loop)
            steps = [v for v in iteration if v.kind is VerbKind.STEP]
            for step, _guard, _n, _outside in accumulating_steps(verbs, loop):
                for zero in iteration:
                    if zero.kind is not VerbKind.ZERO_GRAD or id(zero) in reported:
                        continue
                    if verbs.conditions(zero, loop) or verbs.pairs(zero, step, steps) is not True:
                        continue
                    reported.add(id(zero))
                    self.report(zero.call, fix=self._fix(verbs, loop, zero, step))

    def _fix(self, verbs, loop, zero: Verb, step: Verb) -> Fix | None:
        if not call_statement_only(zero.line, zero.call) or step.line is None:
            return None
        edits = StatementEdits()
        edits.remove(zero.line, self.parent(zero.line))
        block = self.parent(step.line)
        already = any(
            v.kind is VerbKind.ZERO_GRAD and v.line is not None and self.parent(v.line) is block and v is not zero
            for v in verbs.in_iteration(loop)
        )
        if not already:
            edits.insert_after(step.line, bare(zero.line))
        target = zero.target or "the gradients"
        return Fix(f"Move `{target}.zero_grad()` after the guarded step", ((loop, edits.apply(loop)),), Safety.UNSAFE)

    valid = [
        Valid(
            """\
import torch
def train(model, loader, H=100):
    inner_opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    outer_opt = torch.optim.SGD(model.parameters(), lr=0.7, momentum=0.9)
    snapshot = [p.detach().clone() for p in model.parameters()]
    for step, (x, y) in enumerate(loader):
        model.zero_grad()
        loss = model(x, y)
        loss.backward()
        inner_opt.step()
        if (step + 1) % H == 0:
            with torch.no_grad():
                for p, p0 in zip(model.parameters(), snapshot):
                    p.grad = p0 - p
                    p.copy_(p0)
            outer_opt.step()
""",
            "local SGD: an inner optimizer steps every iteration, the outer one every H",
        ),
        Valid(
            """\
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / accum
    loss.backward()
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            "zero_grad inside the guarded block, after the step",
        ),
        Valid(
            """\
import torch
from torch import optim
optimizer = optim.LBFGS(model.parameters())
for i, (x, y) in enumerate(loader):
    optimizer.zero_grad()
    def closure():
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        return loss
    if (i + 1) % 2 == 0:
        optimizer.step(closure)
""",
            "LBFGS-style step(closure): the closure computes its own gradients",
        ),
        Valid(
            """\
for step, batch in enumerate(train_dataloader):
    with accelerator.accumulate(model):
        outputs = model(**batch)
        accelerator.backward(outputs.loss)
        if step % 4 == 0:
            optimizer.step()
        optimizer.zero_grad()
""",
            "accumulation handled by accelerate",
        ),
        Valid(
            """\
for i, (imgs, _) in enumerate(dataloader):
    optimizer_D.zero_grad()
    loss_D = -torch.mean(discriminator(real)) + torch.mean(discriminator(fake.detach()))
    loss_D.backward()
    optimizer_D.step()
    optimizer_G.zero_grad()
    if i % n_critic == 0:
        loss_G = -torch.mean(discriminator(generator(z)))
        loss_G.backward()
        optimizer_G.step()
""",
            "GAN: the guarded block runs its own backward (n_critic), zero_grad paired per optimizer",
        ),
        Valid(
            """\
for epoch in range(epochs):
    optimizer.zero_grad()
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
    optimizer.step()
""",
            "deliberate full-batch accumulation with one step after the inner loop",
        ),
        Valid(
            """\
for i, (x, y) in enumerate(loader):
    if i % accum == 0:
        optimizer.zero_grad()
    loss = criterion(model(x), y) / accum
    loss.backward()
    if (i + 1) % accum == 0:
        optimizer.step()
""",
            "zero_grad at the start of each accumulation window",
        ),
    ]
    invalid = [
        Invalid(
            """\
for i, (x, y) in enumerate(loader):
    optimizer.zero_grad()
    loss = criterion(model(x), y) / accum_steps
    loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
""",
            """\
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / accum_steps
    loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        ),
        Invalid(
            """\
import torch
scaler = torch.amp.GradScaler("cuda")
for step, batch in enumerate(train_loader):
    # clear old gradients
    model.zero_grad(set_to_none=True)
    with torch.autocast("cuda"):
        loss = model(**batch).loss / args.gradient_accumulation_steps
    scaler.scale(loss).backward()
    if (step + 1) % args.gradient_accumulation_steps == 0 or step == len(train_loader) - 1:
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
""",
            """\
import torch
scaler = torch.amp.GradScaler("cuda")
for step, batch in enumerate(train_loader):
    # clear old gradients
    with torch.autocast("cuda"):
        loss = model(**batch).loss / args.gradient_accumulation_steps
    scaler.scale(loss).backward()
    if (step + 1) % args.gradient_accumulation_steps == 0 or step == len(train_loader) - 1:
        scaler.step(optimizer)
        model.zero_grad(set_to_none=True)
        scaler.update()
        scheduler.step()
""",
        ),
        Invalid(
            """\
for batch_idx, batch in enumerate(train_loader):
    is_last_accum = (batch_idx + 1) % grad_accum == 0
    optimizer.zero_grad()
    loss = model(**batch).loss / grad_accum
    loss.backward()
    if is_last_accum:
        optimizer.step()
""",
            """\
for batch_idx, batch in enumerate(train_loader):
    is_last_accum = (batch_idx + 1) % grad_accum == 0
    loss = model(**batch).loss / grad_accum
    loss.backward()
    if is_last_accum:
        optimizer.step()
        optimizer.zero_grad()
""",
        ),
        Invalid(
            """\
def train(model, loader, optimizer, accum=4):
    for i, (x, y) in enumerate(loader):
        loss = model(x, y) / accum
        loss.backward()
        if not (i + 1) % accum:
            optimizer.step()
        optimizer.zero_grad()  # every iteration
    return model
""",
            """\
def train(model, loader, optimizer, accum=4):
    for i, (x, y) in enumerate(loader):
        loss = model(x, y) / accum
        loss.backward()
        if not (i + 1) % accum:
            optimizer.step()
            optimizer.zero_grad()  # every iteration
    return model
""",
        ),
    ]
