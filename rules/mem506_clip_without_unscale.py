"""MEM506 clip-without-unscale."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.training.training_verbs import VerbKind
from memlint.fix.statement_edits import StatementEdits, statement
from memlint.rule import Fix, Invalid, Rule, Safety, Valid


class ClipWithoutUnscale(Rule):
    """
    ## What it does
    Flags `clip_grad_norm_`/`clip_grad_value_` between
    `scaler.scale(loss).backward()` and `scaler.step(optimizer)` with no
    `scaler.unscale_(optimizer)` before the clip.

    ## Why it matters
    The gradients are still multiplied by the loss scale (65536 at first),
    so `max_norm=1.0` clips them to a norm of 1/65536 of what was meant
    once unscaled: every step is shrunk to almost nothing and training
    stalls, while looking like AMP with clipping.

    ## Example
    ```python
    scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Use instead
    ```python
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Fix safety
    Unsafe: clipping the true gradients changes every clipped update (that
    is the point). The fix inserts `scaler.unscale_(optimizer)` right before
    the clip, with the optimizer of the `scaler.step` that follows;
    `scaler.step` then does not unscale twice. Silent for
    `accelerator.clip_grad_norm_` and wrapper scalers that unscale
    internally (timm's `NativeScaler`), when no optimizer step follows
    the clip in the same iteration, and when an unscaled backward (a second
    network trained without the scaler) comes between the scaled backward
    and the clip.

    ## References
    - https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-clipping
    """

    code = "MEM506"
    name = "clip-without-unscale"
    message = "gradients clipped while still scaled by the GradScaler: call scaler.unscale_(optimizer) first"
    fix_safety = Safety.UNSAFE

    def visit_Module(self, node: cst.Module) -> None:
        verbs = self.facts.verbs
        for clip in verbs.verbs:
            if clip.kind is not VerbKind.CLIP:
                continue
            flat = verbs.in_region(verbs.region(clip))
            scaled = [v for v in flat if v.kind is VerbKind.BACKWARD and v.scaler and v.index < clip.index]
            if not scaled or verbs.scaler_disabled(scaled[-1].scaler or "", clip.scope):
                continue
            last = scaled[-1]
            between = [v for v in flat if last.index < v.index < clip.index]
            if any(v.kind is VerbKind.UNSCALE for v in verbs.reached(between)):
                continue
            if any(v.kind is VerbKind.BACKWARD and not v.scaler for v in between):
                continue  # a second network trained without the scaler: its gradients are clipped
            # The step that uses the clipped gradients: through the scaler, or
            # (wrongly, see MEM504) directly.
            after = [
                v for v in flat if v.kind is VerbKind.STEP and v.index > clip.index and v.scaler in (None, last.scaler)
            ]
            if not after:
                continue
            self.report(clip.call, fix=self._fix(node, clip, last.scaler, after[0].target))

    def _fix(self, module: cst.Module, clip, scaler: str | None, optimizer: str | None) -> Fix | None:
        if clip.line is None or scaler is None or optimizer is None:
            return None
        block = self.parent(clip.line)
        edits = StatementEdits()
        edits.insert_before(clip.line, statement(f"{scaler}.unscale_({optimizer})", module))
        return Fix(
            f"Call `{scaler}.unscale_({optimizer})` before clipping", ((block, edits.apply(block)),), Safety.UNSAFE
        )

    valid = [
        Valid(
            """\
for obs, act, ret in loader:
    opt.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        feats = policy.encode(obs)
        pg_loss = F.cross_entropy(policy.head(feats), act)
    scaler.scale(pg_loss).backward()
    v_opt.zero_grad()
    F.mse_loss(value_head(feats.detach().float()), ret).backward()
    nn.utils.clip_grad_norm_(value_head.parameters(), 0.5)
    v_opt.step()
    scaler.unscale_(opt)
    nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
    scaler.step(opt)
    scaler.update()
""",
            "the clip follows an unscaled backward of a second network trained without the scaler",
        ),
        Valid(
            """\
import torch
scaler.scale(loss).backward()
scaler.unscale_(optimizer)
torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
scaler.step(optimizer)
scaler.update()
""",
            "unscaled before clipping",
        ),
        Valid(
            """\
from timm.utils import NativeScaler
loss_scaler = NativeScaler()
for x, y in loader:
    loss = criterion(model(x), y)
    loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters())
""",
            "timm's NativeScaler unscales internally",
        ),
        Valid(
            """\
for batch in loader:
    with accelerator.accumulate(model):
        loss = model(**batch).loss
        accelerator.backward(loss)
        if accelerator.sync_gradients:
            accelerator.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
""",
            "accelerate unscales in its own clip",
        ),
        Valid(
            """\
import torch
scaler = torch.cuda.amp.GradScaler(enabled=False)
for x, y in loader:
    scaler.scale(criterion(model(x), y)).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
""",
            "GradScaler(enabled=False)",
        ),
        Valid(
            """\
import torch
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
""",
            "no scaler",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch
for x, y in loader:
    with torch.autocast("cuda"):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
""",
            """\
import torch
for x, y in loader:
    with torch.autocast("cuda"):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
""",
        ),
        Invalid(
            """\
from torch.nn.utils import clip_grad_norm_
for step, batch in enumerate(loader):
    scaler.scale(model(**batch).loss / accum).backward()
    if (step + 1) % accum == 0:
        # clip
        grad_norm = clip_grad_norm_(model.parameters(), args.max_grad_norm)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
            """\
from torch.nn.utils import clip_grad_norm_
for step, batch in enumerate(loader):
    scaler.scale(model(**batch).loss / accum).backward()
    if (step + 1) % accum == 0:
        # clip
        scaler.unscale_(optimizer)
        grad_norm = clip_grad_norm_(model.parameters(), args.max_grad_norm)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        ),
    ]
