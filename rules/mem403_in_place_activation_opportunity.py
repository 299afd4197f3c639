"""MEM403 in-place-activation-opportunity (opt-in)."""

from __future__ import annotations

import re

import libcst as cst

from memlint.analysis.autograd.activations import inplace_arg, nn_class, runs_inplace, sequential_elements
from memlint.fix.call_args import append_keyword
from memlint.rule import Fix, Invalid, Rule, Safety, Valid
from memlint.vocabulary.ops import INPUT_SAVING_LAYERS

# Activations whose in-place backward reads their output, so the in-place
# form really reuses the buffer: each measured by bench/inplace_activations.py.
# ReLU6, Hardtanh, SiLU, Mish, Hardswish read their input even in place:
# autograd keeps a copy of it and nothing is saved; GELU has no in-place form.
_ACTIVATIONS = frozenset({"ReLU", "LeakyReLU", "ELU", "CELU", "SELU"})
# In place, these reject a negative first argument (slope, alpha).
_SIGN_CHECKED = frozenset({"LeakyReLU", "ELU", "CELU"})
# Code that reads layer outputs from outside the forward: an in-place
# activation would change what it sees.
_OBSERVERS = re.compile(
    r"register_(?:full_)?(?:forward|backward)_hook|create_feature_extractor|IntermediateLayerGetter|FeatureHooks"
)


class InPlaceActivationOpportunity(Rule):
    """
    ## What it does
    Suggests `inplace=True` for `nn.ReLU()`, `nn.LeakyReLU()` (non-negative
    slope), `nn.ELU()`, `nn.CELU()` and `nn.SELU()` that directly follow a
    Conv, Linear, BatchNorm or LayerNorm inside `nn.Sequential` (never the
    first element, whose input belongs to the caller). Off by default:
    enable with `--extend-select MEM403`.

    ## Why it matters
    Those layers save their *input* for the backward, not their output, so
    the activation may overwrite their output: out of place, the layer's
    output and the activation's output are both alive for a moment; in
    place, one buffer serves both (how much that saves: see Details).

    ## Example
    ```python
    block = nn.Sequential(nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU())
    ```

    ## Use instead
    ```python
    block = nn.Sequential(nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(inplace=True))
    ```

    ## Fix safety
    Safe: the values and gradients are identical. It is not offered when the
    next element is itself in place (that would break the backward, see
    MEM402), when `inplace` is already given, or when the Sequential is not
    written out literally. Forward hooks that keep the previous layer's
    output would see it overwritten: the rule is silent in a file that
    registers forward or backward hooks or extracts features
    (`create_feature_extractor`, `IntermediateLayerGetter`), and opt-in
    because hooks elsewhere cannot be seen.

    ## Details
    How much in place saves depends on what the activation's backward reads,
    measured by `bench/inplace_activations.py` (a `Linear(1024, 1024)` then
    the activation, batch 2048, float32: one activation is 8 MiB; torch 2.13
    on the CPU):

    | activation | in place saves |
    | --- | --- |
    | ReLU | 8 MiB at the forward's transient peak; the bytes kept for the backward are the same (8 MiB) |
    | LeakyReLU(0.2), ELU, CELU, SELU | 8 MiB kept for the backward (16 -> 8 MiB, for the whole step, per layer) and 8 MiB at the peak |
    | ReLU6, Hardtanh, SiLU, Mish, Hardswish, Hardsigmoid | nothing: their backward reads the input, so autograd keeps a copy of it |
    | GELU | no in-place form |

    So the rule suggests it only for the first two rows. For ReLU the saving
    is modest and honest to state: about one activation at the transient
    peak of the forward, not one per layer.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.nn.ReLU.html
    - https://pytorch.org/docs/stable/generated/torch.nn.LeakyReLU.html
    - https://discuss.pytorch.org/t/whats-the-difference-between-nn-relu-and-nn-relu-inplace-true/948
    """

    code = "MEM403"
    name = "in-place-activation-opportunity"
    message = "activation after a Conv/Linear/Norm layer can run in place (saves about one activation)"
    fix_safety = Safety.SAFE
    default_enabled = False

    def visit_Call(self, node: cst.Call) -> None:
        names = self.facts.names
        elements = sequential_elements(node, names)
        if elements is None or _OBSERVERS.search(self.context.source):
            return
        for i in range(1, len(elements)):
            cur = elements[i]
            cls = nn_class(cur, names)
            if cls not in _ACTIVATIONS or nn_class(elements[i - 1], names) not in INPUT_SAVING_LAYERS:
                continue
            assert isinstance(cur, cst.Call)
            if inplace_arg(cur, cls) is not None or any(a.star for a in cur.args):  # type: ignore[arg-type]
                continue
            if cls in _SIGN_CHECKED and any(isinstance(a.value, cst.UnaryOperation) for a in cur.args):
                continue  # in-place leaky_relu and elu reject a negative slope or alpha
            if i + 1 < len(elements):
                nxt = elements[i + 1]
                nxt_cls = nn_class(nxt, names)
                if nxt_cls is None or runs_inplace(nxt, nxt_cls):  # type: ignore[arg-type]
                    continue
            fix = Fix(f"Use `{cls}(inplace=True)`", ((cur, append_keyword(cur, "inplace", cst.Name("True"))),))
            self.report(
                cur,
                # The rule's message says what in general; this one names the
                # pair, and says the saving once.
                message=f"`{cls}()` after `{nn_class(elements[i - 1], names)}` can run in place "
                "(`inplace=True` saves about one transient activation)",
                fix=fix,
            )

    valid = [
        Valid(
            """\
import torch.nn as nn
features = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
acts = {}
features[0].register_forward_hook(lambda m, i, o: acts.__setitem__("conv", o))
""",
            "a forward hook keeps the conv output the activation would overwrite",
        ),
        Valid(
            """\
import torch.nn as nn
from torchvision.models.feature_extraction import create_feature_extractor
model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))
extractor = create_feature_extractor(model, return_nodes={"0": "conv_out", "4": "logits"})
""",
            "a feature extractor returns the pre-activation output",
        ),
        Valid(
            """\
import torch.nn as nn
stem = nn.Sequential(nn.ReLU(), nn.Conv2d(3, 16, 3))
""",
            "first element: its input belongs to the caller",
        ),
        Valid(
            """\
import torch.nn as nn
head = nn.Sequential(nn.Linear(16, 16), nn.ReLU(inplace=False), nn.Linear(16, 2))
gate = nn.Sequential(nn.Linear(16, 16), nn.Sigmoid(), nn.ReLU())
""",
            "inplace chosen explicitly; after an op that saves its output",
        ),
        Valid(
            """\
import torch.nn as nn
mlp = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Dropout(0.1, inplace=True))
""",
            "the next module is in place: two in-place ops in a row break the backward",
        ),
        Valid(
            """\
import torch.nn as nn
mlp = nn.Sequential(nn.Linear(784, 256), nn.SiLU(), nn.LayerNorm(256), nn.Hardswish(), nn.Linear(256, 10))
head = nn.Sequential(nn.Conv2d(64, 64, 3), nn.BatchNorm2d(64), nn.ReLU6(), nn.Conv2d(64, 8, 1), nn.Mish())
""",
            "SiLU, Hardswish, ReLU6 and Mish read their input in the backward: in place saves nothing",
        ),
        Valid(
            """\
import torch.nn as nn
act = nn.Sequential(nn.Linear(16, 16), nn.ELU(-0.5), nn.Linear(16, 16), nn.LeakyReLU(-0.1))
""",
            "in place, a negative alpha or slope is rejected by torch",
        ),
        Valid(
            """\
import torch.nn as nn
layers = [nn.Conv2d(3, 8, 3), nn.ReLU()]
net = nn.Sequential(*layers)
""",
            "not written out literally",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch.nn as nn
block = nn.Sequential(nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU())
""",
            """\
import torch.nn as nn
block = nn.Sequential(nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(inplace=True))
""",
        ),
        Invalid(
            """\
from torch import nn
mlp = nn.Sequential(
    nn.Linear(784, 256),
    nn.LeakyReLU(0.2),
    nn.LayerNorm(256),
    nn.SiLU(),
    nn.Linear(256, 64),
    nn.ELU(),
    nn.Linear(64, 10),
)
""",
            """\
from torch import nn
mlp = nn.Sequential(
    nn.Linear(784, 256),
    nn.LeakyReLU(0.2, inplace=True),
    nn.LayerNorm(256),
    nn.SiLU(),
    nn.Linear(256, 64),
    nn.ELU(inplace=True),
    nn.Linear(64, 10),
)
""",
            count=2,
        ),
    ]
