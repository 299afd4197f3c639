"""MEM504 optimizer-step-bypasses-scaler."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.training.training_verbs import VerbKind
from memlint.rule import Fix, Invalid, Rule, Safety, Valid


class OptimizerStepBypassesScaler(Rule):
    """
    ## What it does
    Flags `optimizer.step()` after `scaler.scale(loss).backward()` where the
    optimizer is never stepped through `scaler.step(optimizer)`.

    ## Why it matters
    The gradients are still multiplied by the loss scale (65536 at first), so
    the step is tens of thousands of times too large, and a step with
    inf/NaN gradients from an overflow is applied instead of skipped: the
    weights become NaN. `scaler.step` unscales, checks for infs and skips
    such steps. With `scaler.unscale_(optimizer)` before the step the size is
    right, but overflowed steps are still applied.

    ## Example
    ```python
    scaler.scale(loss).backward()
    optimizer.step()
    scaler.update()
    ```

    ## Use instead
    ```python
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Fix safety
    Unsafe: `scaler.step(optimizer)` skips steps whose gradients overflowed
    and changes every update's size, which changes results (that is the
    point). A loop that also needs `scaler.update()` is reported by MEM503.
    Silent for `GradScaler(enabled=False)`, when an unscaled backward comes
    between or runs for a second optimizer while the scaler steps the first
    (a second network, an online probe, trained without the scaler), and for wrapper
    scalers that step for you (timm's `NativeScaler`, accelerate).

    ## References
    - https://pytorch.org/docs/stable/notes/amp_examples.html#typical-mixed-precision-training
    - https://pytorch.org/docs/stable/amp.html#torch.cuda.amp.GradScaler.step
    """

    code = "MEM504"
    name = "optimizer-step-bypasses-scaler"
    message = "optimizer.step() after a scaled backward: the gradients are still scaled and infs are not skipped"
    fix_safety = Safety.UNSAFE

    def visit_Module(self, node: cst.Module) -> None:
        verbs = self.facts.verbs
        for step in verbs.verbs:
            if step.kind is not VerbKind.STEP or step.scaler is not None or step.closure:
                continue
            flat = verbs.in_region(verbs.region(step))
            if any(v.kind is VerbKind.STEP and v.scaler is not None and v.target == step.target for v in flat):
                continue
            before = [v for v in flat if v.kind is VerbKind.BACKWARD and v.index < step.index]
            if not before or before[-1].scaler is None or verbs.scaler_disabled(before[-1].scaler, step.scope):
                continue
            scaler = before[-1].scaler
            if any(v.scaler is None for v in before) and any(
                v.kind is VerbKind.STEP and v.scaler is not None and v.target != step.target for v in flat
            ):
                continue  # an unscaled backward for a second network (an online probe) stepped directly
            unscaled = any(
                v.kind is VerbKind.UNSCALE and v.target == step.target and before[-1].index < v.index < step.index
                for v in flat
            )
            message = (
                "optimizer.step() after scaler.unscale_(): steps whose gradients overflowed are applied instead of skipped"
                if unscaled
                else None
            )
            call = step.call
            assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
            new = call.with_changes(
                func=cst.Attribute(cst.parse_expression(scaler), cst.Name("step")),
                args=[cst.Arg(call.func.value)],
            )
            self.report(
                call, message=message, fix=Fix(f"Step through `{scaler}.step(...)`", ((call, new),), Safety.UNSAFE)
            )

    valid = [
        Valid(
            """\
scaler.scale(loss).backward()
scaler.step(optimizer)
scaler.update()
""",
            "stepped through the scaler",
        ),
        Valid(
            """\
import torch
scaler = torch.amp.GradScaler("cuda", enabled=False)
for x, y in loader:
    scaler.scale(criterion(model(x), y)).backward()
    optimizer.step()
""",
            "GradScaler(enabled=False)",
        ),
        Valid(
            """\
for real in loader:
    scaler.scale(loss_d).backward()
    scaler.step(opt_d)
    scaler.update()
    loss_g.backward()
    opt_g.step()
""",
            "the second network is trained without the scaler",
        ),
        Valid(
            """\
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        h = encoder(x)
        loss = ssl_loss(projector(h))
    probe_opt.zero_grad()
    F.cross_entropy(probe(h.detach().float()), y).backward()
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    probe_opt.step()
""",
            "an online probe trained in fp32 by its own unscaled backward, stepped after the scaled network",
        ),
        Valid(
            """\
from timm.utils import NativeScaler
loss_scaler = NativeScaler()
for x, y in loader:
    loss = criterion(model(x), y)
    loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters())
""",
            "timm's NativeScaler steps internally",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch
scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    optimizer.step()
    scaler.update()
""",
            """\
import torch
scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
        ),
        Invalid(
            """\
def train_step(self, batch):
    loss = self.model(**batch).loss
    self.scaler.scale(loss).backward()
    self.scaler.unscale_(self.optimizer)
    torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
    self.optimizer.step()
    self.scaler.update()
""",
            """\
def train_step(self, batch):
    loss = self.model(**batch).loss
    self.scaler.scale(loss).backward()
    self.scaler.unscale_(self.optimizer)
    torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
    self.scaler.step(self.optimizer)
    self.scaler.update()
""",
        ),
    ]
