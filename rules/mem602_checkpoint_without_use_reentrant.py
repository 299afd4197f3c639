"""MEM602 checkpoint-without-use-reentrant."""

from __future__ import annotations

import libcst as cst

from memlint.fix.call_args import append_keyword, has_star_kwargs, keyword_arg, positional_args
from memlint.rule import Fix, Invalid, Rule, Safety, Valid
from memlint.rule.migrations import lookup, torch_verdict, written_before

# The functions and how many positional arguments fill the parameters before
# ``use_reentrant`` come from the migration table (memlint/rule/migrations.py;
# ``checkpoint`` takes ``*args``, so the argument is keyword-only there).


class CheckpointWithoutUseReentrant(Rule):
    """
    ## What it does
    Flags `torch.utils.checkpoint.checkpoint(...)` and
    `torch.utils.checkpoint.checkpoint_sequential(...)` called without an
    explicit `use_reentrant=` argument.

    ## Why it matters
    Without the argument torch warns on every call (the warning announces an
    error in a future release) and falls back to the legacy reentrant
    implementation. Reentrant checkpointing does not support keyword
    arguments or `torch.autograd.grad`, and when no input of a checkpointed
    segment requires grad (for example the first block of a network whose
    inputs are data, or a frozen embedding) it silently computes no gradients
    for the parameters inside it: those layers stop training. The
    non-reentrant mode has none of these limits and is the mode PyTorch
    recommends.

    ## Example
    ```python
    from torch.utils.checkpoint import checkpoint

    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x)
        return x
    ```

    ## Use instead
    ```python
    x = checkpoint(block, x, use_reentrant=False)
    ```

    ## Fix safety
    Unsafe: `use_reentrant=False` changes which implementation runs. It is the
    recommended mode and computes the same values, but code that relied on
    reentrant behaviour (for example on gradients being dropped for a segment
    whose inputs do not require grad) will behave differently. Calls that pass
    `**kwargs` are not reported: `use_reentrant` may be among them. The argument
    exists since torch 1.11 (`checkpoint_sequential`'s since 2.0): where the
    project still supports an older torch (its requirements or the
    `torch-version` setting) the fix is withheld and the message says why; where
    every torch it accepts predates the warning (2.1, 2.2 for
    `checkpoint_sequential`), nothing is reported.

    ## When it stays silent
    Nothing is reported where the code was written for a torch without
    the argument: a ceiling below 1.11 (`torch<1.11`), or a pin below it
    (`torch==1.8.1` in `requirements.txt` or a conda environment file such as
    `conda_env.yml`, even beside a wider range elsewhere): there the advice
    would break the code.

    ## References
    - https://pytorch.org/docs/stable/checkpoint.html
    """

    code = "MEM602"
    name = "checkpoint-without-use-reentrant"
    message = "activation checkpoint without `use_reentrant=`: pass `use_reentrant=False` (the recommended mode)"
    fix_safety = Safety.UNSAFE

    def visit_Call(self, node: cst.Call) -> None:
        row = lookup(self.code, self.facts.names.call_name(node))
        if row is None or keyword_arg(node, row.keyword) is not None or has_star_kwargs(node):
            return
        before = row.positional
        if before is not None and (len(positional_args(node)) > before or any(a.star for a in node.args)):
            return  # passed positionally, or hidden in ``*args``
        if written_before(row.requires, self.context.torch):
            return  # the code runs on a torch without the argument: the advice cannot apply
        verdict = torch_verdict(row.since, row, self.context.torch)
        if not verdict.report:
            return  # every torch the project accepts predates the warning
        if verdict.withheld:
            self.report(node, message=f"{self.message} ({verdict.withheld})")
            return
        keyword, _, value = row.replacement.partition("=")
        new = append_keyword(node, keyword, cst.parse_expression(value))
        self.report(node, fix=Fix(f"Pass `{row.replacement}`", ((node, new),), row.safety))

    valid = [
        Valid(
            """\
import deepspeed
from deepspeed.runtime.activation_checkpointing.checkpointing import checkpoint
x = deepspeed.checkpointing.checkpoint(block, x)
x = checkpoint(block, x)
""",
            "DeepSpeed's checkpoint",
        ),
        Valid(
            """\
from fairscale.nn.checkpoint import checkpoint_wrapper
block = checkpoint_wrapper(block)
""",
            "FairScale's wrapper",
        ),
        Valid(
            """\
import torch
checkpoint = torch.load(path, map_location="cpu")
model.load_state_dict(checkpoint["model"])
optimizer.load_state_dict(checkpoint["optimizer"])
start_epoch = checkpoint["epoch"]
""",
            "a variable named checkpoint",
        ),
        Valid(
            """\
import torch
def save(checkpoint, path):
    torch.save(checkpoint, path)
save({"model": model.state_dict()}, "last.pt")
trainer.checkpoint(model)
""",
            "a parameter and a method named checkpoint",
        ),
        Valid(
            """\
from torch.utils.checkpoint import checkpoint, checkpoint_sequential
x = checkpoint(block, x, use_reentrant=False)
y = checkpoint(block, x, use_reentrant=True)
z = checkpoint_sequential(blocks, 2, x, False)
""",
            "use_reentrant already passed, by keyword or positionally",
        ),
        Valid(
            """\
from torch.utils.checkpoint import checkpoint
def ckpt(fn, *args, **kwargs):
    return checkpoint(fn, *args, **kwargs)
""",
            "use_reentrant may be in **kwargs",
        ),
        Valid(
            """\
import torch.utils.checkpoint as checkpoint

def save(trainer, path):
    checkpoint = trainer.checkpointer(path)
    checkpoint.checkpoint(trainer.model)

def resume(checkpoint, model):
    model.load_state_dict(checkpoint.checkpoint(model))

def every(trainers):
    for checkpoint in trainers:
        checkpoint.checkpoint(1)
""",
            "the module's alias hidden by a local, a parameter or a loop target of the calling function",
        ),
        Valid(
            """\
import torch.utils.checkpoint as checkpoint

def make(path):
    checkpoint = Checkpointer(path)

    def run(model):
        return checkpoint.checkpoint(model)

    return run
""",
            "a nested function reading its enclosing function's local of that name",
        ),
    ]
    invalid = [
        Invalid(
            """\
from torch.utils.checkpoint import checkpoint

class Encoder(nn.Module):
    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x)
        return x
""",
            """\
from torch.utils.checkpoint import checkpoint

class Encoder(nn.Module):
    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False)
        return x
""",
        ),
        Invalid(
            """\
import torch.utils.checkpoint
hidden = torch.utils.checkpoint.checkpoint(
    self.layer,
    hidden,
    attention_mask,  # may be None
)
""",
            """\
import torch.utils.checkpoint
hidden = torch.utils.checkpoint.checkpoint(
    self.layer,
    hidden,
    attention_mask,  # may be None
    use_reentrant=False,
)
""",
        ),
        Invalid(
            """\
from torch.utils import checkpoint as ckpt
out = ckpt.checkpoint_sequential(model.features, 4, x)
out = ckpt.checkpoint(model.head, *out)
""",
            """\
from torch.utils import checkpoint as ckpt
out = ckpt.checkpoint_sequential(model.features, 4, x, use_reentrant=False)
out = ckpt.checkpoint(model.head, *out, use_reentrant=False)
""",
            count=2,
        ),
        Invalid(
            """\
import torch as T
def custom_forward(x):
    return T.utils.checkpoint.checkpoint(run, x, preserve_rng_state=False)
""",
            """\
import torch as T
def custom_forward(x):
    return T.utils.checkpoint.checkpoint(run, x, preserve_rng_state=False, use_reentrant=False)
""",
        ),
        Invalid(
            """\
import torch
import torch.utils.checkpoint as checkpoint

class Stage(nn.Module):
    def forward(self, x):
        for blk in self.blocks:
            x = checkpoint.checkpoint(blk, x)
        return x

def build(url):
    model = Stage()
    checkpoint = torch.hub.load_state_dict_from_url(url, map_location="cpu")
    model.load_state_dict(checkpoint)
    return model
""",
            """\
import torch
import torch.utils.checkpoint as checkpoint

class Stage(nn.Module):
    def forward(self, x):
        for blk in self.blocks:
            x = checkpoint.checkpoint(blk, x, use_reentrant=False)
        return x

def build(url):
    model = Stage()
    checkpoint = torch.hub.load_state_dict_from_url(url, map_location="cpu")
    model.load_state_dict(checkpoint)
    return model
""",
        ),
    ]
