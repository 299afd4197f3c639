"""MEM804 scheduler-verbose-deprecated."""

from __future__ import annotations

import libcst as cst

from memlint.fix.call_args import keyword_arg, remove_arg
from memlint.rule import Fix, Invalid, Rule, Safety, Valid
from memlint.rule.migrations import lookup, rows, torch_verdict

# The migration table's row: ``verbose=`` on every ``torch.optim.lr_scheduler`` class.
(VERBOSE,) = rows("MEM804")


class SchedulerVerboseDeprecated(Rule):
    """
    ## What it does
    Flags `verbose=` passed to a learning-rate scheduler from
    `torch.optim.lr_scheduler` (`StepLR`, `ReduceLROnPlateau`, `OneCycleLR`, ...).

    ## Why it matters
    The argument was deprecated in torch 2.2 and removed later: on recent
    releases the constructor raises `TypeError: ... got an unexpected keyword
    argument 'verbose'`, so a training script that ran last year crashes before
    its first step. On releases that still accept it, it only prints the
    learning rate.

    ## Example
    ```python
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, verbose=True)
    ```

    ## Use instead
    ```python
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
    print(scheduler.get_last_lr())  # where the value is wanted
    ```

    ## Fix safety
    Safe: the argument only controlled printing. The fix removes it and keeps
    the layout of the call (trailing commas, one argument per line, comments on
    other lines). Schedulers of other libraries (transformers, timm, Keras
    callbacks) are not touched. A project whose declared torch releases all
    predate 2.2 (`torch<2.2` in its requirements, see the configuration's
    `torch-version`) is not told: the argument is fine there.

    ## References
    - https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate
    - https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.StepLR.html
    """

    code = "MEM804"
    name = "scheduler-verbose-deprecated"
    message = (
        f"`verbose=` of torch LR schedulers is deprecated since torch {VERBOSE.since} and rejected by recent releases"
    )
    fix_safety = Safety.SAFE

    def visit_Call(self, node: cst.Call) -> None:
        arg = keyword_arg(node, VERBOSE.keyword)
        if arg is None:
            return
        name = self.facts.names.call_name(node)
        if name is None or lookup(self.code, name) is None:
            return
        if not torch_verdict(VERBOSE.since, None, self.context.torch).report:
            return  # every torch the project accepts predates the deprecation: verbose= works there
        scheduler = name.rpartition(".")[2]
        fix = Fix(f"Remove `verbose=` from `{scheduler}`", ((node, remove_arg(node, arg)),), VERBOSE.safety)
        self.report(arg, message=f"`verbose=` passed to `{scheduler}`: {self.message}", fix=fix)

    valid = [
        Valid(
            """\
from transformers import get_linear_schedule_with_warmup
scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=100, num_training_steps=1000)
trainer = Trainer(model, verbose=True)
""",
            "another library's scheduler; verbose to a call that is not a scheduler",
        ),
        Valid(
            """\
from timm.scheduler import CosineLRScheduler
scheduler = CosineLRScheduler(optimizer, t_initial=100, warmup_t=5, verbose=True)
""",
            "timm schedulers have their own arguments",
        ),
        Valid(
            """\
import tensorflow as tf
reduce_lr = tf.keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.2, verbose=1)
""",
            "Keras' ReduceLROnPlateau is not torch's",
        ),
        Valid(
            """\
import torch
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", patience=3)
early_stop = EarlyStopping(patience=10, verbose=True)
""",
            "no verbose to the scheduler",
        ),
        Valid(
            """\
from torch.optim.lr_scheduler import LRScheduler
class WarmupLR(LRScheduler):
    def __init__(self, optimizer, warmup, last_epoch=-1, verbose=False):
        self.warmup = warmup
        super().__init__(optimizer, last_epoch)
""",
            "a parameter of the user's own scheduler",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10, verbose=True)
""",
            """\
import torch
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10)
""",
        ),
        Invalid(
            """\
from torch.optim import lr_scheduler
scheduler = lr_scheduler.ReduceLROnPlateau(
    optimizer,
    mode="max",
    factor=0.5,  # halve on plateau
    verbose=True,
)
""",
            """\
from torch.optim import lr_scheduler
scheduler = lr_scheduler.ReduceLROnPlateau(
    optimizer,
    mode="max",
    factor=0.5,  # halve on plateau
)
""",
        ),
        Invalid(
            """\
from torch.optim.lr_scheduler import OneCycleLR as OneCycle
sched = OneCycle(opt, max_lr=0.1, verbose=False, total_steps=1000)
""",
            """\
from torch.optim.lr_scheduler import OneCycleLR as OneCycle
sched = OneCycle(opt, max_lr=0.1, total_steps=1000)
""",
        ),
        Invalid(
            """\
import torch.optim as optim
scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer,
                                                 T_max=50,
                                                 verbose=args.verbose)
""",
            """\
import torch.optim as optim
scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer,
                                                 T_max=50)
""",
        ),
    ]
