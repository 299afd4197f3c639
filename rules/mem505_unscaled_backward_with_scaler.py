"""MEM505 unscaled-backward-with-scaler."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.training.training_verbs import VerbKind
from memlint.rule import Fix, Invalid, Rule, Safety, Valid


class UnscaledBackwardWithScaler(Rule):
    """
    ## What it does
    Flags `loss.backward()` in a loop (or step function) that steps the
    optimizer through `scaler.step(optimizer)` but never scales a loss.

    ## Why it matters
    `scaler.step` divides the gradients by the loss scale (65536 at first)
    before stepping: unscaled gradients become tens of thousands of times too
    small, and float16 gradients that underflow to zero are exactly what the
    scaler was there to prevent. Training barely moves while looking like
    AMP.

    ## Example
    ```python
    with torch.autocast("cuda"):
        loss = criterion(model(x), y)
    loss.backward()
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Use instead
    ```python
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Fix safety
    Unsafe: scaling the loss changes the size of every update (that is the
    point). Silent for `GradScaler(enabled=False)`, when any loss in the
    same iteration is scaled (`scaled = scaler.scale(loss)` counts), and for
    `accelerator.backward`/DeepSpeed/Lightning, which scale on their own.

    ## References
    - https://pytorch.org/docs/stable/notes/amp_examples.html#typical-mixed-precision-training
    """

    code = "MEM505"
    name = "unscaled-backward-with-scaler"
    message = "backward() on an unscaled loss while scaler.step() unscales the gradients: updates are far too small"
    fix_safety = Safety.UNSAFE

    def visit_Module(self, node: cst.Module) -> None:
        verbs = self.facts.verbs
        for backward in verbs.verbs:
            if backward.kind is not VerbKind.BACKWARD or backward.scaler is not None or backward.framework:
                continue
            flat = verbs.reached(verbs.in_region(verbs.region(backward)))
            scalers = {v.scaler for v in flat if v.kind is VerbKind.STEP and v.scaler is not None}
            scalers = {s for s in scalers if s is not None and not verbs.scaler_disabled(s, backward.scope)}
            if len(scalers) != 1:
                continue
            if any(v.kind in (VerbKind.SCALE,) or (v.kind is VerbKind.BACKWARD and v.scaler) for v in flat):
                continue
            scaler = next(iter(scalers))
            self.report(backward.call, fix=self._fix(backward.call, scaler))

    def _fix(self, call: cst.CSTNode, scaler: str) -> Fix | None:
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
            return None
        loss = call.func.value
        if loss.lpar and not isinstance(loss, (cst.Tuple, cst.GeneratorExp)):
            loss = loss.with_changes(lpar=[], rpar=[])  # a lone argument needs no parentheses
        scaled = cst.Call(cst.Attribute(cst.parse_expression(scaler), cst.Name("scale")), [cst.Arg(loss)])
        new = call.with_changes(func=call.func.with_changes(value=scaled))
        return Fix(f"Backpropagate `{scaler}.scale(loss)`", ((call, new),), Safety.UNSAFE)

    valid = [
        Valid(
            """\
for x, y in loader:
    loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
            "scaled backward",
        ),
        Valid(
            """\
import torch
scaler = torch.cuda.amp.GradScaler(enabled=args.amp and False)
amp_scaler = torch.cuda.amp.GradScaler(enabled=False)
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    amp_scaler.step(optimizer)
    amp_scaler.update()
""",
            "GradScaler(enabled=False)",
        ),
        Valid(
            """\
for x, y in loader:
    loss = criterion(model(x), y)
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.step(optimizer)
    scaler.update()
""",
            "the loss was scaled into another name",
        ),
        Valid(
            """\
for batch in loader:
    loss = model(**batch).loss
    accelerator.backward(loss)
    optimizer.step()
""",
            "accelerate scales for you",
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
    loss.backward()
    scaler.step(optimizer)
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
def training_step(self, batch):
    with torch.autocast("cuda", dtype=torch.float16):
        out = self.model(batch["x"])
        loss = self.loss_fn(out, batch["y"])
    (loss / self.accum).backward(retain_graph=False)
    self.scaler.step(self.optimizer)
    self.scaler.update()
""",
            """\
def training_step(self, batch):
    with torch.autocast("cuda", dtype=torch.float16):
        out = self.model(batch["x"])
        loss = self.loss_fn(out, batch["y"])
    self.scaler.scale(loss / self.accum).backward(retain_graph=False)
    self.scaler.step(self.optimizer)
    self.scaler.update()
""",
        ),
    ]
