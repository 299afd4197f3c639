"""MEM803 plateau-step-without-metric."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.training.training_verbs import VerbKind
from memlint.rule import Invalid, Rule, Safety, Valid
from memlint.vocabulary.tokens import name_tokens

_TORCH_SCHEDULERS = "torch.optim.lr_scheduler."
_METRIC_TOKENS = frozenset(
    {
        "loss",
        "losses",
        "acc",
        "accuracy",
        "metric",
        "metrics",
        "score",
        "f1",
        "auc",
        "ppl",
        "perplexity",
        "error",
        "err",
        "mae",
        "mse",
        "rmse",
        "iou",
        "miou",
        "dice",
        "bleu",
        "psnr",
        "val",
        "valid",
        "top1",
    }
)


class _Tokens(cst.CSTVisitor):
    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self) -> None:
        super().__init__()
        self.found: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.found.update(name_tokens(node.value))

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        value = node.evaluated_value
        if isinstance(value, str):
            self.found.update(name_tokens(value))


def _tokens(expr: cst.CSTNode) -> set[str]:
    visitor = _Tokens()
    expr.visit(visitor)
    return visitor.found


class PlateauStepWithoutMetric(Rule):
    """
    ## What it does
    Flags `scheduler.step()` with no metric on a `ReduceLROnPlateau`, and a
    validation metric passed to the `step()` of any other torch scheduler
    (`StepLR`, `CosineAnnealingLR`, `OneCycleLR`...).

    ## Why it matters
    `ReduceLROnPlateau.step(metrics)` needs the monitored value: without it
    the call raises `TypeError` at the end of the first epoch, after that
    epoch's training time is spent. Other schedulers take an optional
    *epoch* as their first argument (deprecated): passing a validation loss
    there sets the schedule's epoch counter to that number (0.53...), so
    the learning rate follows nonsense, with only a deprecation warning.

    ## Example
    ```python
    scheduler = ReduceLROnPlateau(optimizer, mode="min", patience=3)
    for epoch in range(epochs):
        train(...)
        val_loss = validate(...)
        scheduler.step()
    ```

    ## Use instead
    ```python
        scheduler.step(val_loss)
    ```
    and for other schedulers, `scheduler.step()` without arguments.

    ## Fix safety
    No fix: which metric to monitor is the author's choice. The scheduler's
    class comes from its construction in this module; when a name may hold
    several scheduler types (chosen by a flag) or the step is guarded by an
    `isinstance` check, the rule is silent. Epoch arguments
    (`CosineAnnealingWarmRestarts.step(epoch + i / iters)`) and timm
    schedulers, which take an epoch and a metric on purpose, are left alone.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.ReduceLROnPlateau.html
    - https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate
    """

    code = "MEM803"
    name = "plateau-step-without-metric"
    message = "ReduceLROnPlateau.step() needs the monitored metric"
    fix_safety = Safety.NONE

    def visit_Module(self, node: cst.Module) -> None:
        verbs = self.facts.verbs
        for sched in verbs.verbs:
            if sched.kind is not VerbKind.SCHED_STEP or not isinstance(sched.call, cst.Call):
                continue
            if self._type_checked(sched):
                continue
            names = self.facts.bindings.constructors(sched.target or "", sched.scope)
            if not names:
                continue
            plateau = {n.endswith("ReduceLROnPlateau") for n in names}
            if plateau == {True}:
                if not sched.call.args:
                    self.report(sched.call)
            elif plateau == {False} and all(n.startswith(_TORCH_SCHEDULERS) for n in names):
                metric = self._metric_arg(sched.call)
                if metric is not None:
                    cls = next(iter(names)).rsplit(".", 1)[-1] if len(names) == 1 else "this scheduler"
                    self.report(
                        metric,
                        message=f"a metric passed to `{cls}.step()`, which takes an epoch, not a metric: "
                        "only ReduceLROnPlateau monitors a metric",
                    )

    def _metric_arg(self, call: cst.Call) -> cst.BaseExpression | None:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "metrics":
                return arg.value
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if positional and _tokens(positional[0].value) & _METRIC_TOKENS:
            return positional[0].value
        return None

    def _type_checked(self, sched) -> bool:
        for node, _ in sched.path:
            if isinstance(node, cst.If):
                text = self.context.module.code_for_node(node.test)
                if "isinstance" in text or "Plateau" in text or "plateau" in text:
                    return True
        return False

    valid = [
        Valid(
            """\
from torch.optim.lr_scheduler import ReduceLROnPlateau
scheduler = ReduceLROnPlateau(optimizer, "min", patience=5)
for epoch in range(epochs):
    train(model)
    val_loss = validate(model)
    scheduler.step(val_loss)
""",
            "plateau with its metric",
        ),
        Valid(
            """\
import torch
scheduler = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=10)
iters = len(loader)
for epoch in range(epochs):
    for i, batch in enumerate(loader):
        train_step(batch)
        scheduler.step(epoch + i / iters)
""",
            "an epoch argument, as documented",
        ),
        Valid(
            """\
from timm.scheduler import create_scheduler
lr_scheduler, _ = create_scheduler(args, optimizer)
for epoch in range(epochs):
    eval_metrics = validate(model)
    lr_scheduler.step(epoch + 1, eval_metrics["loss"])
""",
            "timm schedulers take an epoch and a metric on purpose",
        ),
        Valid(
            """\
import torch.optim.lr_scheduler as lrs
if args.sched == "plateau":
    scheduler = lrs.ReduceLROnPlateau(optimizer)
else:
    scheduler = lrs.StepLR(optimizer, 30)
for epoch in range(epochs):
    val_loss = validate(model)
    if isinstance(scheduler, lrs.ReduceLROnPlateau):
        scheduler.step(val_loss)
    else:
        scheduler.step()
""",
            "several scheduler types behind one name, guarded by isinstance",
        ),
    ]
    invalid = [
        Invalid(
            """\
from torch.optim.lr_scheduler import ReduceLROnPlateau
scheduler = ReduceLROnPlateau(optimizer, mode="max", factor=0.5)
for epoch in range(epochs):
    train(model)
    acc = validate(model)
    scheduler.step()
""",
        ),
        Invalid(
            """\
import torch.optim as optim
class Trainer:
    def __init__(self, model):
        self.optimizer = optim.SGD(model.parameters(), lr=0.1)
        self.scheduler = optim.lr_scheduler.StepLR(self.optimizer, step_size=10)

    def end_epoch(self, val_loss):
        self.scheduler.step(val_loss)
""",
        ),
    ]
