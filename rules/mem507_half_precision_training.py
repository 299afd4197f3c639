"""MEM507 half-precision-training."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider

from memlint.analysis.scope.bindings import parameters_owners
from memlint.analysis.scope.names import dotted_name
from memlint.analysis.training.test_code import is_test_file
from memlint.analysis.training.training_verbs import VerbKind
from memlint.parse.traversal import visit_fast
from memlint.rule import Invalid, Rule, Safety, Valid
from memlint.vocabulary.kinds import Kind
from memlint.vocabulary.tokens import name_tokens

_HALF_DTYPES = frozenset({"torch.float16", "torch.half"})
_HALF_TYPES = frozenset({"torch.float16", "torch.half", "torch.HalfTensor", "torch.cuda.HalfTensor"})
# Functions that convert for deployment, not for training.
_NOT_TRAINING = frozenset(
    {
        "export",
        "save",
        "infer",
        "inference",
        "predict",
        "eval",
        "evaluate",
        "convert",
        "quantize",
        "benchmark",
        "onnx",
        "trace",
        "serve",
        "deploy",
        "test",
    }
)
# Mixed-precision wrappers that keep fp32 master weights of a half model.
_MASTER_WEIGHTS = ("FP16_Optimizer", "amp.initialize", "master_params", "MixedPrecisionOptimizer", "deepspeed")


class _OptimizerCalls(cst.CSTVisitor):
    """Optimizer constructions, each with the function (or module) it is in."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, objects, module: cst.Module) -> None:
        super().__init__()
        self.objects = objects
        self.found: list[tuple[cst.Call, cst.CSTNode]] = []
        self.scopes: list[cst.CSTNode] = [module]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scopes.pop()

    def visit_Call(self, node: cst.Call) -> None:
        if self.objects.kind_of(node) is Kind.OPTIMIZER:
            self.found.append((node, self.scopes[-1]))


class HalfPrecisionTraining(Rule):
    """
    ## What it does
    Flags `model.half()` / `model.to(torch.float16)` on a model whose
    parameters go to an optimizer in a module that runs a backward: pure
    float16 training, without fp32 master weights.

    ## Why it matters
    float16 has 10 mantissa bits: an update `lr * grad` smaller than about
    1/2048 of a weight rounds away entirely, so small learning rates and late
    training stop changing the weights; gradients below 6e-8 flush to zero,
    and optimizer states (Adam's squared gradients) under- and overflow.
    Loss curves stall or turn NaN.

    ## Example
    ```python
    model = Net().cuda().half()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ```

    ## Use instead
    ```python
    model = Net().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    ```
    or bfloat16 (`model.to(torch.bfloat16)` or autocast with
    `dtype=torch.bfloat16`) where the hardware supports it. Note that AMP
    keeps fp32 weights plus fp16 copies of activations, so it may use more
    memory than pure fp16; it trains correctly.

    ## Fix safety
    No fix: switching to autocast changes memory, speed and results.

    ## When it stays silent
    Silent for `.half()` used only for inference (no optimizer over the model's parameters,
    or a function named for export/inference), bfloat16, inputs converted with
    `.half()`, and wrappers that keep fp32 master weights (apex
    `FP16_Optimizer`, `amp.initialize`, DeepSpeed). Silent in a test module: a
    file named as pytest and unittest discover tests (`test_*.py`, `*_test.py`),
    whether its code sits in `test_*` functions or runs as a script (`python
    test_groups.py --fp16` taking one SGD step on `bn.half()` and `sbn.half()`
    to compare two implementations): it compares numbers, it trains nothing.
    A file in a `tests/` folder under another name is checked like any script
    (such folders also hold runnable examples and fixtures, and the path a rule
    sees is not relative to the project's root).

    ## References
    - https://pytorch.org/docs/stable/amp.html
    - https://docs.nvidia.com/deeplearning/performance/mixed-precision-training/index.html
    """

    code = "MEM507"
    name = "half-precision-training"
    message = "model converted to float16 and trained without fp32 master weights: small updates round away"
    fix_safety = Safety.NONE

    METADATA_DEPENDENCIES = (*Rule.METADATA_DEPENDENCIES, PositionProvider)

    def __init__(self, context) -> None:
        super().__init__(context)
        self._functions: list[cst.FunctionDef] = []
        # A test module takes a step on a half model to compare kernels or
        # implementations numerically, whether its code sits in ``test_*``
        # functions or runs as a script; nothing it steps is kept.
        self._test_module = is_test_file(context.path)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._functions.pop()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if self._test_module or not isinstance(func, cst.Attribute) or not self._to_half(node):
            return
        if any(name_tokens(fn.name.value) & _NOT_TRAINING for fn in self._functions):
            return
        if any(marker in self.context.source for marker in _MASTER_WEIGHTS):
            return
        objects = self.facts.objects
        holders = [func.value]
        parent = self.parent(node)
        if isinstance(parent, cst.Assign):
            holders.extend(t.target for t in parent.targets)
        if not any(objects.kind_of(h) is Kind.MODULE for h in holders):
            return  # ``x.half()`` on data
        owners = {dotted_name(h) for h in holders} - {None}
        if not owners:
            return
        line = self.get_metadata(PositionProvider, node).start.line
        # The optimizer over this model, built in the same function (another
        # function's ``model`` is another variable).
        scope = self._functions[-1] if self._functions else self.context.module
        optimizers = [
            c
            for c, s in self._optimizer_calls()
            if s is scope and any(dotted_name(o) in owners for o in parameters_owners(c))
        ]
        if not optimizers:
            return
        backwards = [v for v in self.facts.verbs.verbs if v.kind is VerbKind.BACKWARD]
        if not backwards:
            return
        later = lambda n: self.get_metadata(PositionProvider, n).start.line > line  # noqa: E731
        if any(later(c) for c in optimizers) or any(later(v.call) for v in backwards):
            self.report(node)

    def _to_half(self, call: cst.Call) -> bool:
        func = call.func
        assert isinstance(func, cst.Attribute)
        names = self.facts.names
        if func.attr.value == "half" and not call.args:
            return True
        if func.attr.value == "to":
            for arg in call.args:
                if (arg.keyword is None or arg.keyword.value == "dtype") and names.qualified_name(
                    arg.value
                ) in _HALF_DTYPES:
                    return True
        if func.attr.value == "type" and len(call.args) == 1:
            return names.qualified_name(call.args[0].value) in _HALF_TYPES
        return False

    def _optimizer_calls(self) -> list[tuple[cst.Call, cst.CSTNode]]:
        if not hasattr(self, "_optimizers"):
            visitor = _OptimizerCalls(self.facts.objects, self.context.module)
            visit_fast(self.context.module, visitor)
            self._optimizers = visitor.found
        return self._optimizers

    valid = [
        Valid(
            """\
import torch
model = Net().cuda().half().eval()
with torch.no_grad():
    preds = model(x.half())
""",
            ".half() for inference only",
        ),
        Valid(
            """\
import torch
model = Net().cuda().to(torch.bfloat16)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
loss = criterion(model(x), y)
loss.backward()
optimizer.step()
""",
            "bfloat16",
        ),
        Valid(
            """\
import torch
model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()

def export(model):
    model = model.half()
    torch.save(model.state_dict(), "model_fp16.pt")
""",
            "converted after training, for export",
        ),
        Valid(
            """\
import torch
model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x.half()), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
            "inputs converted, weights stay fp32 (AMP)",
        ),
        Valid(
            """\
import torch
def get_state_dict(model, half=False):
    if half:
        model.half()
    return model.state_dict()

def train(model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        model(x).sum().backward()
        optimizer.step()
        optimizer.zero_grad()
""",
            "converted in a helper; the optimizer of another function's model",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch
model = Net().cuda().half()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for x, y in loader:
    loss = criterion(model(x.cuda().half()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        ),
        Invalid(
            """\
import torch
from torch import optim
def main(args):
    model = build_model(args)
    if args.fp16:
        model = model.to(device, dtype=torch.float16)
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    train(model, optimizer)

def train(model, optimizer):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
        ),
    ]
