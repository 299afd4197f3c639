"""MEM301 zero-grad-discards-accumulation."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider

from memlint.analysis.training.accumulation import accumulating_steps
from memlint.analysis.training.inlined_verbs import inlined, where
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
    Unsafe: the fix moves `zero_grad()` right after the guarded `step()`, which
    changes what is trained (that is the point). Gradients left over from before
    the loop are no longer cleared before its first step; clear them before the
    loop if that can happen. zero_grad and step are paired per optimizer (GANs
    have two), a `model.zero_grad()` through the optimizer built from
    `model.parameters()`. Loops whose guarded block runs its own backward (`if i
    % n_critic == 0:` in a GAN), accumulation handled by
    `accelerator.accumulate`, and loops where another optimizer steps every
    iteration (local SGD, DiLoCo) are left alone.

    ## When it stays silent
    A step split across methods (`fit()` loops and steps every N iterations, the
    `train_step()` it calls clears every time; or the step in a helper called
    under the guard) is read as one iteration, when each helper runs its verbs
    once per call (no loop of its own, no early `return`); so is a function of
    another module of the project (`utils.train_step(model, opt, x, y)`) whose
    verbs sit in its straight-line code, on parameters the call hands an
    optimizer (or a model) it knows, and which calls no other function of its
    own module; the message names the helper and the line calling it, and no fix
    is offered (moving a statement into another function changes what its other
    callers do).

    ## References
    - https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-accumulation
    - https://huggingface.co/docs/accelerate/usage_guides/gradient_accumulation
    """

    code = "MEM301"
    name = "zero-grad-discards-accumulation"
    message = "zero_grad() runs every iteration but step() only every N: the accumulated gradients are discarded"
    fix_safety = Safety.UNSAFE
    project_facts = (
        "Training steps split across modules: a loop that calls a straight-line function of another project "
        "module (`utils.train_step(model, optimizer, batch)`) is read with that function's `zero_grad()`, "
        "`backward()` and `step()` in order, each mapped onto what the call hands over; a helper with a branch, "
        "loop, `try`, early return or a call into its own module is not read, and nothing is claimed. The "
        "message names the helper and its file; no fix is offered across modules."
    )

    def visit_Module(self, node: cst.Module) -> None:
        verbs = self.facts.verbs
        # Loops whose iteration steps, itself or through a local function it
        # calls (a step split across methods: inlined_verbs.py).
        kinds = (VerbKind.STEP, VerbKind.CALL, VerbKind.PROJECT_CALL)
        loops = {id(v.loop): v.loop for v in verbs.verbs if v.loop is not None and v.kind in kinds}
        reported: set[int] = set()
        for loop in loops.values():
            iteration = inlined(verbs, loop, iteration_only=True)
            steps = [v for v in iteration if v.kind is VerbKind.STEP]
            for step, _guard, _n, _outside in accumulating_steps(verbs, loop, iteration):
                for zero in iteration:
                    if zero.kind is not VerbKind.ZERO_GRAD or id(zero.call) in reported:
                        continue
                    if verbs.conditions(zero, loop) or verbs.pairs(zero, step, steps) is not True:
                        continue
                    reported.add(id(zero.call))
                    if zero.via is None and step.via is None:
                        self.report(zero.call, fix=self._fix(verbs, loop, zero, step))
                    else:
                        self.report(zero.call, message=self._split_message(zero, step))

    def _split_message(self, zero: Verb, step: Verb) -> str:
        """The message of a step split across functions: where each half runs.
        No fix: moving a statement from one function into another may change
        what the function's other callers do."""
        return f"{self.message} (zero_grad() {where(zero, self._line)}; step() {where(step, self._line)})"

    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

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
import torch.nn.functional as F
class Trainer:
    def __init__(self, model, optimizer, loader, accum):
        self.model, self.optimizer, self.loader, self.accum = model, optimizer, loader, accum
    def _step(self):
        self.optimizer.step()
        self.optimizer.zero_grad()
    def fit(self):
        for i, (x, y) in enumerate(self.loader):
            loss = F.cross_entropy(self.model(x), y) / self.accum
            loss.backward()
            if (i + 1) % self.accum == 0:
                self._step()
""",
            "the helper that clears the gradients runs only with the guarded step",
        ),
        Valid(
            """\
import torch.nn.functional as F
class Trainer:
    def __init__(self, model, optimizer, loader, accum):
        self.model, self.optimizer, self.loader, self.accum = model, optimizer, loader, accum
    def train_step(self, x, y):
        if self.model.frozen:
            return None
        self.optimizer.zero_grad()
        loss = F.cross_entropy(self.model(x), y) / self.accum
        loss.backward()
        return loss.item()
    def fit(self):
        for i, (x, y) in enumerate(self.loader):
            self.train_step(x, y)
            if (i + 1) % self.accum == 0:
                self.optimizer.step()
""",
            "a helper that may return early is not read at its call: whether it clears every iteration is unknown",
        ),
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
import torch.nn.functional as F
class Trainer:
    def __init__(self, model, optimizer, loader, accum):
        self.model, self.optimizer, self.loader, self.accum = model, optimizer, loader, accum
    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = F.cross_entropy(self.model(x), y) / self.accum
        loss.backward()
        return loss.item()
    def fit(self):
        for i, (x, y) in enumerate(self.loader):
            self.train_step(x, y)
            if (i + 1) % self.accum == 0:
                self.optimizer.step()
""",
            None,
        ),
        Invalid(
            """\
import torch
import torch.nn.functional as F
class Trainer:
    def __init__(self, model, loader, accum):
        self.model, self.loader, self.accum = model, loader, accum
        self.optimizer = torch.optim.AdamW(model.parameters())
        self.scaler = torch.amp.GradScaler("cuda")
    def _step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()
    def fit(self):
        for i, (x, y) in enumerate(self.loader):
            self.optimizer.zero_grad()
            loss = F.cross_entropy(self.model(x), y) / self.accum
            self.scaler.scale(loss).backward()
            if (i + 1) % self.accum == 0:
                self._step()
""",
            None,
        ),
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
