"""MEM305 method-referenced-not-called."""

from __future__ import annotations

import libcst as cst

from memlint.rule import Fix, Invalid, Rule, Safety, Valid
from memlint.vocabulary.kinds import BARE_METHOD_NAMES, BARE_METHOD_RECEIVERS


class MethodReferencedNotCalled(Rule):
    """
    ## What it does
    Flags `model.eval`, `model.train`, `optimizer.zero_grad`,
    `optimizer.step`, `scheduler.step`, `scaler.update` and `loss.backward`
    written as a statement without the parentheses, where the receiver is a
    module, optimizer, scheduler, GradScaler or a tensor with autograd
    history.

    ## Why it matters
    Without `()` the line only looks the method up and throws it away.
    Python raises nothing, and training goes on quietly wrong: the model is
    evaluated with dropout on and BatchNorm statistics updated (`eval`), the
    gradients are never cleared and accumulate across steps (`zero_grad`),
    the weights never change (`step`, `backward`), the learning rate never
    decays (`scheduler.step`), or the loss scale never adapts
    (`scaler.update`).

    ## Example
    ```python
    model.eval
    with torch.no_grad():
        for x, y in val_loader:
            correct += (model(x).argmax(1) == y).sum().item()
    ```

    ## Use instead
    ```python
    model.eval()
    ```

    ## Fix safety
    Unsafe: adding `()` makes the call happen, which is the point, and
    changes what the program does from then on. Receivers the analysis
    cannot identify as a module, optimizer, scheduler, scaler or loss
    tensor are left alone, as are bound methods stored or passed on purpose
    (`closure = optimizer.step`, `hooks.append(model.eval)`) and attributes
    of the same name on other objects (`args.train`, `dataset.eval`).

    ## References
    - https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.eval
    - https://pytorch.org/docs/stable/optim.html#taking-an-optimization-step
    """

    code = "MEM305"
    name = "method-referenced-not-called"
    message = "a training method referenced but not called: the line does nothing"
    fix_safety = Safety.UNSAFE

    def visit_Expr(self, node: cst.Expr) -> None:
        attr = node.value
        if not isinstance(attr, cst.Attribute) or attr.attr.value not in BARE_METHOD_NAMES:
            return
        method = attr.attr.value
        if method == "backward":
            if not self.facts.history.carries_history(attr.value):
                return
        elif self.facts.objects.kind_of(attr.value, node) not in BARE_METHOD_RECEIVERS[method]:
            return
        spelled = self.context.module.code_for_node(attr)
        self.report(
            attr,
            message=f"`{spelled}` is referenced but not called: the line does nothing; call it: `{spelled}()`",
            fix=Fix(f"Call `{spelled}()`", ((attr, cst.Call(func=attr)),), Safety.UNSAFE),
        )

    valid = [
        Valid(
            """\
import torch
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.LBFGS(model.parameters())
closure = optimizer.step
hooks = []
hooks.append(model.eval)
callbacks = {"before_eval": model.eval, "step": optimizer.step}
""",
            "bound methods stored or passed on purpose",
        ),
        Valid(
            """\
import argparse
parser = argparse.ArgumentParser()
args = parser.parse_args()
args.train
dataset.eval
runner.step
""",
            "attributes of the same name on objects that are not torch's",
        ),
        Valid(
            """\
def run(thing, result):
    thing.eval
    result.backward
""",
            "unknown receivers stay silent",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10)
criterion = torch.nn.MSELoss()
for x, y in loader:
    optimizer.zero_grad
    loss = criterion(model(x), y)
    loss.backward
    optimizer.step
scheduler.step
model.eval
""",
            """\
import torch
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10)
criterion = torch.nn.MSELoss()
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
scheduler.step()
model.eval()
""",
            count=5,
        ),
        Invalid(
            """\
import torch
scaler = torch.amp.GradScaler("cuda")
def train_step(model, optimizer, loss):
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update
    model.train
""",
            """\
import torch
scaler = torch.amp.GradScaler("cuda")
def train_step(model, optimizer, loss):
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    model.train()
""",
            count=2,
        ),
    ]
