"""MEM302 accumulated-loss-not-scaled."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import dotted_name
from memlint.analysis.training.accumulation import accumulating_steps
from memlint.analysis.training.training_verbs import Verb
from memlint.parse.traversal import OwnCodeVisitor, visit_fast
from memlint.rule import Fix, Invalid, Rule, Safety, Valid
from memlint.vocabulary.kinds import Kind

_NORMALISING_METHODS = frozenset({"div", "div_", "mul", "mul_", "true_divide", "divide", "multiply"})
_REDUCTIONS = frozenset({"mean", "sum"})


def _parenthesized(expr: cst.BaseExpression) -> cst.BaseExpression:
    if expr.lpar or isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def divided(expr: cst.BaseExpression, divisor: cst.BaseExpression, parens: bool) -> cst.BinaryOperation:
    return cst.BinaryOperation(
        left=_parenthesized(expr),
        operator=cst.Divide(),
        right=divisor.deep_clone(),
        lpar=[cst.LeftParen()] if parens else [],
        rpar=[cst.RightParen()] if parens else [],
    )


def _reduced(call: cst.Call, name: str | None) -> cst.BaseExpression | None:
    """What ``torch.mean(x)`` / ``torch.sum(x)`` (one positional argument,
    no ``dim``) reduces: a raw loss stays raw."""
    if name not in ("torch.mean", "torch.sum") or len(call.args) != 1:
        return None
    arg = call.args[0]
    return arg.value if arg.keyword is None and not arg.star else None


class _Scan(OwnCodeVisitor):
    """Assignments in a loop body, and whether anything divides/scales."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, list[cst.BaseExpression | None]] = {}
        self.grad_scaled = False

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            key = dotted_name(t.target)
            if key is not None:
                self.values.setdefault(key, []).append(node.value)
            else:
                # ``logits, loss = model(x, y)``: the loss a model returns.
                for el in getattr(t.target, "elements", ()):
                    k = dotted_name(el.value)
                    if k is not None:
                        returned = node.value if isinstance(node.value, cst.Call) and "loss" in k.lower() else None
                        self.values.setdefault(k, []).append(returned)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        key = dotted_name(node.target)
        if isinstance(node.target, cst.Attribute) and node.target.attr.value == "grad":
            self.grad_scaled = True
        if key is not None:
            scaled = isinstance(node.operator, (cst.DivideAssign, cst.MultiplyAssign, cst.FloorDivideAssign))
            self.values.setdefault(key, []).append(None if not scaled else cst.Name("__scaled__"))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("div_", "mul_"):
            inner = func.value
            if isinstance(inner, cst.Attribute) and inner.attr.value == "data":
                inner = inner.value
            if isinstance(inner, cst.Attribute) and inner.attr.value == "grad":
                self.grad_scaled = True


class _Names(cst.CSTVisitor):
    """Every plain name an expression spells (``args.accum`` -> args, accum)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.found.add(node.value)


def _names(node: cst.CSTNode) -> set[str]:
    visitor = _Names()
    node.visit(visitor)
    return visitor.found


class _SumReductions(cst.CSTVisitor):
    """Arguments ``reduction="sum"``."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self) -> None:
        super().__init__()
        self.found: list[cst.Arg] = []

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value == "reduction":
            if isinstance(node.value, cst.SimpleString) and node.value.evaluated_value == "sum":
                self.found.append(node)


class AccumulatedLossNotScaled(Rule):
    """
    ## What it does
    Flags a backward in a gradient-accumulation loop (the optimizer steps
    every N iterations, the backward runs every iteration) whose loss is
    never divided by the number of accumulated micro-batches. A loss reduced
    on its way (`loss.mean()`, or `loss = torch.mean(loss)` over the per-GPU
    losses a `DataParallel` model returns) is still that loss, and so is
    what a model's own `loss` method returns (`model.loss(scores, labels)`)
    when it is not handed the count.

    ## Why it matters
    Gradients of the N micro-batches are summed, so the step applies N times
    the mean gradient: with SGD the effective learning rate is N times larger
    than configured, gradient clipping thresholds mean something else, and
    changing N silently changes the training dynamics. Averaging the loss
    over the N micro-batches gives the gradient of the large batch.

    ## Example
    ```python
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    ```

    ## Use instead
    ```python
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        (loss / accum_steps).backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    ```

    ## Fix safety
    Unsafe: dividing the loss changes the size of every update (that is the
    point), and a learning rate tuned for the unscaled sum needs retuning.
    The fix divides the backpropagated tensor by the `N` of the guard and
    leaves the logged loss alone. The rule stays silent when the loss is
    divided or multiplied anywhere in the loop (`reduction="sum"` divided by
    a token count, `loss = loss / N` under a condition), when gradients are
    scaled by hand (`p.grad /= N`), when a criterion sums on purpose
    (`reduction="sum"`), when the loss comes from a function it cannot see
    into, and for `accelerator.backward`/DeepSpeed, which scale for you.

    ## References
    - https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-accumulation
    - https://huggingface.co/docs/transformers/perf_train_gpu_one#gradient-accumulation
    """

    code = "MEM302"
    name = "accumulated-loss-not-scaled"
    message = "gradients are accumulated over N micro-batches but the loss is not divided by N before backward"
    fix_safety = Safety.UNSAFE

    def __init__(self, context) -> None:
        super().__init__(context)
        self._divisor_names: set[str] = set()

    def visit_Module(self, node: cst.Module) -> None:
        verbs = self.facts.verbs
        if self._sums_on_purpose(node):
            return
        loops = {id(v.loop): v.loop for v in verbs.verbs if v.loop is not None}
        for loop in loops.values():
            found = accumulating_steps(verbs, loop)
            if not found:
                continue
            scan = _Scan()
            visit_fast(loop.body, scan)
            if scan.grad_scaled:
                continue
            reported: set[int] = set()
            for _step, _guard, divisor, outside in found:
                for backward in outside:
                    if id(backward) in reported or backward.framework or backward.loss is None:
                        continue
                    self._divisor_names = _names(divisor)
                    if self._raw_loss(backward.loss, scan.values, set()):
                        reported.add(id(backward))
                        self.report(backward.call, fix=self._fix(backward, divisor))

    def _sums_on_purpose(self, module: cst.Module) -> bool:
        visitor = _SumReductions()
        visit_fast(module, visitor)
        return bool(visitor.found)

    def _raw_loss(self, expr: cst.BaseExpression | None, values, seen: set[str]) -> bool:
        """``expr`` is a loss that nothing normalised: a loss call, a model
        output's ``.loss``, sums of those, their ``.mean()``..."""
        objects = self.facts.objects
        if expr is None:
            return False
        if isinstance(expr, cst.BinaryOperation):
            if not isinstance(expr.operator, (cst.Add, cst.Subtract)):
                return False
            return self._raw_loss(expr.left, values, seen) and self._raw_loss(expr.right, values, seen)
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in _REDUCTIONS and not expr.args:
                return self._raw_loss(func.value, values, seen)
            if isinstance(func, cst.Attribute) and func.attr.value in _NORMALISING_METHODS:
                return False
            reduced = _reduced(expr, self.facts.names.call_name(expr))
            if reduced is not None:
                return self._raw_loss(reduced, values, seen)
            return objects.is_loss_call(expr) or self._model_loss_method(expr)
        if isinstance(expr, cst.Attribute) and expr.attr.value == "loss":
            return True
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name):
            return self._model_output(expr.value.value, values)
        if isinstance(expr, (cst.Name, cst.Attribute)):
            key = dotted_name(expr)
            if key is None or key in seen or key not in values:
                return False
            seen = seen | {key}
            # ``loss = torch.mean(loss)`` (the per-GPU losses of DataParallel)
            # reduces the value before it: raw when that one is.
            base = [v for v in values[key] if not self._reduces_itself(v, key)]
            return bool(base) and all(self._raw_loss(v, values, seen) or self._returned_loss(key, v) for v in base)
        return False

    def _model_loss_method(self, call: cst.Call) -> bool:
        """``model.loss(scores, labels)``: the loss method of a model (a
        network that defines its own criterion), handed nothing that names
        the accumulation count, so it cannot divide by it."""
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "loss":
            return False
        if self.facts.objects.kind_of(func.value, call) is not Kind.MODULE:
            return False
        return not any(_names(arg.value) & self._divisor_names for arg in call.args)

    def _reduces_itself(self, value: cst.BaseExpression | None, key: str) -> bool:
        """``value`` is ``key``'s mean or sum: ``torch.mean(loss)``, ``loss.sum()``."""
        if not isinstance(value, cst.Call):
            return False
        func = value.func
        if isinstance(func, cst.Attribute) and func.attr.value in _REDUCTIONS and not value.args:
            return dotted_name(func.value) == key
        reduced = _reduced(value, self.facts.names.call_name(value))
        return reduced is not None and dotted_name(reduced) == key

    def _returned_loss(self, name: str, value: cst.BaseExpression | None) -> bool:
        """``loss = model(x, y)`` / ``_, loss = model(x, y)``: a model that returns its loss."""
        return isinstance(value, cst.Call) and "loss" in name.lower() and self.facts.objects.is_model_call(value)

    def _model_output(self, name: str, values) -> bool:
        """``outputs[0]`` / ``out["loss"]`` where ``outputs = model(...)``."""
        vals = values.get(name, [])
        return bool(vals) and all(isinstance(v, cst.Call) and self.facts.objects.is_model_call(v) for v in vals)

    def _fix(self, backward: Verb, divisor: cst.BaseExpression) -> Fix | None:
        call = backward.call
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
            return None
        recv = call.func.value
        if backward.scaler is not None and isinstance(recv, cst.Call) and recv.args:
            arg = recv.args[0]
            new_recv = recv.with_changes(
                args=[arg.with_changes(value=divided(arg.value, divisor, False)), *recv.args[1:]]
            )
        elif backward.scaler is None:
            new_recv = divided(recv, divisor, True)
        else:
            return None
        new_call = call.with_changes(func=call.func.with_changes(value=new_recv))
        return Fix("Divide the loss by the accumulation count before backward", ((call, new_call),), Safety.UNSAFE)

    valid = [
        Valid(
            """\
def train_epoch(model, optimizer, loader, batch_size):
    for it, (x, labels) in enumerate(loader):
        loss = model.loss(model(x), labels, batch_size)
        loss.backward()
        if not (it % batch_size):
            optimizer.step()
            optimizer.zero_grad()
        stats = meter.loss(x, labels)
""",
            "a model's loss method handed the accumulation count may divide by it",
        ),
        Valid(
            """\
import torch
model = torch.nn.DataParallel(Darknet(cfg))
for i, (imgs, targets) in enumerate(dataloader):
    loss, components = model(imgs, targets)
    loss = torch.mean(loss) / accumulated_batches
    loss.backward()
    if (i + 1) % accumulated_batches == 0:
        optimizer.step()
        optimizer.zero_grad()
    stats = torch.mean(stats)
    stats.backward()
""",
            "the mean of the per-GPU losses a model returns is divided by the count; a name only ever "
            "reduced from itself (`stats = torch.mean(stats)`) is no loss the rule knows",
        ),
        Valid(
            """\
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss = loss / accum_steps
    loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            "the loss is divided before backward",
        ),
        Valid(
            """\
import torch.nn as nn
criterion = nn.CrossEntropyLoss(reduction="sum")
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x).flatten(0, 1), y.flatten()) / n_tokens
    loss.backward()
    if (step + 1) % grad_accum == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            "reduction='sum' normalised by a token count elsewhere",
        ),
        Valid(
            """\
for step, batch in enumerate(train_dataloader):
    with accelerator.accumulate(model):
        loss = model(**batch).loss
        accelerator.backward(loss)
        if step % 8 == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
            "accelerate scales the loss for the accumulation itself",
        ),
        Valid(
            """\
for i, (x, y) in enumerate(loader):
    loss = compute_loss(model, x, y, accum)
    loss.backward()
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            "the loss comes from a function the rule cannot see into",
        ),
        Valid(
            """\
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    if (i + 1) % accum == 0:
        for p in model.parameters():
            p.grad /= accum
        optimizer.step()
        optimizer.zero_grad()
""",
            "gradients normalised by hand before the step",
        ),
        Valid(
            """\
for epoch in range(epochs):
    optimizer.zero_grad()
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
    optimizer.step()
""",
            "full-batch accumulation without a modulo guard is not this rule's business",
        ),
    ]
    invalid = [
        Invalid(
            """\
def train_epoch(model, optimizer, loader, batch_size):
    optimizer.zero_grad()
    for it, (x, labels) in enumerate(loader):
        scores = model.forward(x)
        loss = model.loss(scores, labels)
        loss.backward()
        if not (it % batch_size):
            optimizer.step()
            optimizer.zero_grad()
""",
            """\
def train_epoch(model, optimizer, loader, batch_size):
    optimizer.zero_grad()
    for it, (x, labels) in enumerate(loader):
        scores = model.forward(x)
        loss = model.loss(scores, labels)
        (loss / batch_size).backward()
        if not (it % batch_size):
            optimizer.step()
            optimizer.zero_grad()
""",
        ),
        Invalid(
            """\
for it in range(max_iters):
    X, Y = get_batch("train")
    logits, loss = model(X, Y)
    loss.backward()
    if (it + 1) % grad_accum == 0:
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
""",
            """\
for it in range(max_iters):
    X, Y = get_batch("train")
    logits, loss = model(X, Y)
    (loss / grad_accum).backward()
    if (it + 1) % grad_accum == 0:
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
""",
        ),
        Invalid(
            """\
import torch.nn as nn
criterion = nn.CrossEntropyLoss()
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
    running_loss += loss.item()
""",
            """\
import torch.nn as nn
criterion = nn.CrossEntropyLoss()
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    (loss / accum_steps).backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
    running_loss += loss.item()
""",
        ),
        Invalid(
            """\
import torch
for step, batch in enumerate(train_loader):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        outputs = model(**batch)
        loss = outputs.loss
    scaler.scale(loss).backward()
    if (step + 1) % args.gradient_accumulation_steps == 0:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
            """\
import torch
for step, batch in enumerate(train_loader):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        outputs = model(**batch)
        loss = outputs.loss
    scaler.scale(loss / args.gradient_accumulation_steps).backward()
    if (step + 1) % args.gradient_accumulation_steps == 0:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        ),
        Invalid(
            """\
import torch.nn.functional as F
for it, (x, y) in enumerate(loader):
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    if it % ACCUM == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            """\
import torch.nn.functional as F
for it, (x, y) in enumerate(loader):
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    (loss / ACCUM).backward()
    if it % ACCUM == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        ),
        Invalid(
            """\
import torch
model = torch.nn.DataParallel(Darknet(cfg))
for i, (imgs, targets) in enumerate(dataloader):
    loss, components = model(imgs, targets)
    loss = torch.mean(loss)
    loss.backward()
    if ((i + 1) % accumulated_batches == 0) or (i == len(dataloader) - 1):
        optimizer.step()
        optimizer.zero_grad()
""",
            """\
import torch
model = torch.nn.DataParallel(Darknet(cfg))
for i, (imgs, targets) in enumerate(dataloader):
    loss, components = model(imgs, targets)
    loss = torch.mean(loss)
    (loss / accumulated_batches).backward()
    if ((i + 1) % accumulated_batches == 0) or (i == len(dataloader) - 1):
        optimizer.step()
        optimizer.zero_grad()
""",
        ),
    ]
