"""MEM204 grad-mode-call-without-with."""

from __future__ import annotations

import libcst as cst

from memlint.rule import Invalid, Rule, Valid
from memlint.vocabulary.ops import CONTEXT_ONLY


class GradModeCallWithoutWith(Rule):
    """
    ## What it does
    Flags `torch.no_grad()`, `torch.inference_mode()`, `torch.enable_grad()`
    and `torch.autocast(...)` (also `torch.amp.autocast`,
    `torch.cuda.amp.autocast`) written as a statement of their own, outside a
    `with`.

    ## Why it matters
    These are context managers: calling one builds an object and nothing
    else. Only entering it (`with torch.no_grad():`, or as a decorator)
    switches the mode, so the object is thrown away and the code after the
    line runs exactly as before: the evaluation loop still records a graph
    for every batch and holds its activations, the autocast region still runs
    in float32. Nothing fails, which is why it survives review.

    ## Example
    ```python
    model.eval()
    torch.no_grad()
    for images, labels in val_loader:
        outputs = model(images)
    ```

    ## Use instead
    ```python
    model.eval()
    with torch.no_grad():
        for images, labels in val_loader:
            outputs = model(images)
    ```
    Or `torch.set_grad_enabled(False)` as a statement, which does set the
    mode (remember to turn it back on).

    ## Fix safety
    No fix: which statements belong inside the `with` block is a decision
    the rule cannot make. `torch.set_grad_enabled(False)` as a statement
    works and is never reported; neither is a grad-mode object stored for
    later (`ctx = torch.no_grad()` ... `with ctx:`), nor a local function of
    the same name.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.no_grad.html
    - https://pytorch.org/docs/stable/generated/torch.set_grad_enabled.html
    - https://pytorch.org/docs/stable/amp.html#torch.autocast
    """

    code = "MEM204"
    name = "grad-mode-call-without-with"
    message = "a grad-mode context manager called as a statement is built and thrown away: the mode does not change"

    def visit_Expr(self, node: cst.Expr) -> None:
        call = node.value
        if not isinstance(call, cst.Call):
            return
        qualified = self.facts.names.call_name(call)
        short = CONTEXT_ONLY.get(qualified or "")
        if short is None:
            return
        spelled = self.context.module.code_for_node(call.func)
        self.report(
            call,
            message=f"`{spelled}(...)` as a statement is built and thrown away: the mode does not change; "
            f"put the code that needs it in a `with {spelled}(...):` block",
        )

    valid = [
        Valid(
            """\
import torch
def validate(model, loader):
    model.eval()
    torch.set_grad_enabled(False)
    total = 0.0
    for x, y in loader:
        total += model(x).sum().item()
    torch.set_grad_enabled(True)
    return total
""",
            "set_grad_enabled sets the mode when it is called: as a statement it works",
        ),
        Valid(
            """\
import torch
ctx = torch.no_grad() if evaluating else torch.enable_grad()
with ctx:
    out = model(x)
amp_ctx = torch.autocast("cuda", dtype=torch.bfloat16)
""",
            "a grad-mode object stored for later use",
        ),
        Valid(
            """\
import torch
@torch.no_grad()
def predict(model, x):
    return model(x)
with torch.inference_mode():
    y = predict(model, x)
""",
            "a decorator and a with block enter the context",
        ),
        Valid(
            """\
def no_grad():
    print("not torch's")
no_grad()
""",
            "a local function of the same name",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch
def validate(netG_A, netG_B, val_loader):
    netG_A.eval()
    netG_B.eval()
    torch.no_grad()
    for real_A, real_B in val_loader:
        fake_B = netG_A(real_A)
        fake_A = netG_B(real_B)
""",
        ),
        Invalid(
            """\
from torch import inference_mode as im
from torch.cuda import amp
import torch as T
im()
amp.autocast()
T.autocast("cuda", dtype=T.bfloat16)
T.amp.autocast("cuda")
T.enable_grad()
""",
            count=5,
        ),
    ]
