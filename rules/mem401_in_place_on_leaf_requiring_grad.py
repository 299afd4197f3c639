"""MEM401 in-place-on-leaf-requiring-grad."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.autograd.frozen import parameter_loop_targets
from memlint.analysis.autograd.grad_mode import GradMode
from memlint.analysis.autograd.leaves import creates_leaf
from memlint.fix.statement_edits import wrap_in_with
from memlint.rule import Fix, Invalid, Rule, Safety, Valid
from memlint.vocabulary.ops import is_inplace_method


def _literal(expr: cst.BaseExpression, value: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == value


class _GradAttributes(cst.CSTVisitor):
    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self) -> None:
        super().__init__()
        self.found: list[cst.Attribute] = []

    def visit_Attribute(self, n: cst.Attribute) -> None:
        if n.attr.value == "grad":
            self.found.append(n)


def _mentions_grad(node: cst.CSTNode) -> bool:
    visitor = _GradAttributes()
    node.visit(visitor)
    return bool(visitor.found)


class _OnlyUpdates(cst.CSTVisitor):
    """Clears ``ok`` at a statement that neither updates one of ``names`` nor
    handles ``.grad``, and at any nested loop, ``with``, ``try`` or def."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, names: set[str]) -> None:
        super().__init__()
        self.names = names
        self.ok = True

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        for small in node.body:
            if isinstance(small, (cst.Pass, cst.Continue, cst.Break)) or _mentions_grad(small):
                continue
            root = None
            if isinstance(small, cst.AugAssign):
                root = small.target
            elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                root = small.value.func
            while isinstance(root, (cst.Attribute, cst.Call, cst.Subscript)):
                root = root.func if isinstance(root, cst.Call) else root.value
            if not (isinstance(root, cst.Name) and root.value in self.names):
                self.ok = False
        return False

    def visit_For(self, node: cst.For) -> bool:
        self.ok = False
        return False

    visit_While = visit_With = visit_Try = visit_FunctionDef = visit_For  # type: ignore[assignment]


class InPlaceOnLeafRequiringGrad(Rule):
    """
    ## What it does
    Flags in-place updates of tensors that are leaves requiring grad, while
    autograd is recording: `p -= lr * p.grad` over `model.parameters()`,
    `w.add_(...)`, `w[i] = ...` on a `torch.randn(..., requires_grad=True)`
    or an `nn.Parameter`, and writes into a layer's own `.weight`/`.bias`
    or a slice of it (`model.emb.weight.copy_(glove)`,
    `self.layers[i].weight[:, :k] = w`) when the model is known to be a
    module (built here, loaded with `from_pretrained`, handed to an
    optimizer, `self` of an `nn.Module`).

    ## Why it matters
    Autograd refuses it: `RuntimeError: a leaf Variable that requires grad
    is being used in an in-place operation`, usually after the first forward
    and backward have already spent their time and memory. A manual SGD
    step is not part of the graph and belongs under `torch.no_grad()`.

    ## Example
    ```python
    loss.backward()
    for p in model.parameters():
        p -= lr * p.grad
    ```

    ## Use instead
    ```python
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= lr * p.grad
    ```

    ## Fix safety
    Safe for manual parameter updates (a loop over `parameters()`, or an update
    that reads `.grad`): the fix wraps the update in `with torch.no_grad():`
    (the whole parameter loop when it only updates parameters), which is what
    makes it run at all; `import torch` is added when missing. Other in-place
    writes to a leaf (a layer's weight edited in place included) are reported
    without a fix.

    ## When it stays silent
    Silent under `no_grad`/`inference_mode` and in functions only called there
    or decorated with them, for `.data`, `.grad`, `torch.nn.init.*_`, tensors
    that do not require grad, and frozen models (RULES.md, "Frozen means"):
    `requires_grad_(False)`, also chained
    (`Net().train().requires_grad_(False).to(device)`), a parameter loop that
    turns `requires_grad` off, a copy of a model frozen before it was copied
    (`G_ema = copy.deepcopy(G).eval()`), a part of a frozen parent
    (`self.ema.block` after `self.ema.requires_grad_(False)`), a model passed to
    a helper that freezes it (DiT's and CycleGAN's `requires_grad(ema, False)` /
    `set_requires_grad(net, False)`, or a function of the module whose body
    freezes its argument), nor methods this module only calls under
    `torch.no_grad()` (`ema.update(model)`), nor a weight loader (a method named
    for loading, `load_from`) whose every use in the project is a call under
    `torch.no_grad()`. A layer's weight is left alone when the file touches its
    `requires_grad` (or its model's) anywhere, when it is reached through
    `.data`, `.detach()` or a loss object (class weights are buffers), for
    `self.weight` itself (may be a buffer), and when only the name of a
    function's parameter says it is a model.

    ## References
    - https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd
    - https://pytorch.org/tutorials/beginner/examples_autograd/polynomial_autograd.html
    """

    code = "MEM401"
    name = "in-place-on-leaf-requiring-grad"
    project_facts = (
        "The callers of a weight loader, wherever they are in the project: a method named for loading "
        "(`PreActBottleneck.load_from`) whose every use in the project is a call under `torch.no_grad()` "
        "(`unit.load_from(weights)` inside another module's `with torch.no_grad():`) copies into its "
        "parameters without a finding; a call of a method of the same name on an instance of another class "
        "that defines it itself does not count (`net = VisionTransformer(...).cuda()`: the class under a chain "
        "of `.cuda()`, `.to()`, `.eval()` is the instance's)."
    )
    message = (
        "in-place update of a leaf tensor that requires grad outside torch.no_grad(): autograd raises a RuntimeError"
    )
    fix_safety = Safety.SAFE

    def __init__(self, context) -> None:
        super().__init__(context)
        self._leaves: list[dict[str, bool]] = [{}]
        self._fns: list[cst.FunctionDef] = []
        self._targets_memo: dict[cst.For, list[tuple[str, str]]] = {}
        self._wrapped_loops: set[int] = set()
        self._reported_lines: set[int] = set()

    # -- scopes and bindings ---------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._leaves.append({})
        self._fns.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._leaves.pop()
        self._fns.pop()

    def _loop_targets(self, info) -> list[tuple[str, str]]:
        """(variable, owner) for each parameter the loop ``info`` binds: ``for p
        in model.parameters()``, ``for p in params`` over a list of leaves."""
        node = info.node
        if not isinstance(node, cst.For):
            return []
        found = self._targets_memo.get(node)
        if found is None:
            found = parameter_loop_targets(node.target, node.iter)
            if not found and isinstance(node.target, cst.Name) and isinstance(node.iter, cst.Name):
                # ``for p in params`` over a list of leaves built elsewhere
                if self.facts.leaves.leaf_list(node.iter, info.scope):
                    found = [(node.target.value, node.iter.value)]
            self._targets_memo[node] = found
        return found

    def _parameter_loop(self, name: cst.Name) -> tuple[str, cst.For] | None:
        """The innermost loop around ``name`` (in its function) that binds it
        to a parameter, and the parameter's owner."""
        for info in self.facts.loops.enclosing_loops(name):
            for var, owner in reversed(self._loop_targets(info)):
                if var == name.value:
                    return owner, info.node
        return None

    def _creates_leaf(self, value: cst.BaseExpression) -> bool:
        return creates_leaf(value, self.facts.names)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            tgt = t.target
            if isinstance(tgt, cst.Subscript):
                self._check(tgt.value, node)
            elif isinstance(tgt, cst.Name):
                if self._creates_leaf(node.value):
                    self._leaves[-1][tgt.value] = True
                else:
                    self._leaves[-1].pop(tgt.value, None)
            elif (
                isinstance(tgt, cst.Attribute) and tgt.attr.value == "requires_grad" and isinstance(tgt.value, cst.Name)
            ):
                if _literal(node.value, "True"):
                    self._leaves[-1][tgt.value.value] = True
                else:
                    self._leaves[-1].pop(tgt.value.value, None)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        tgt = node.target
        self._check(tgt.value if isinstance(tgt, cst.Subscript) else tgt, node)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        if func.attr.value == "requires_grad_" and isinstance(func.value, cst.Name):
            if isinstance(self.parent(node), cst.Expr):
                if not node.args or _literal(node.args[0].value, "True"):
                    self._leaves[-1][func.value.value] = True
                else:
                    self._leaves[-1].pop(func.value.value, None)
            return
        if is_inplace_method(func.attr.value):
            self._check(func.value, node)

    # -- the check ----------------------------------------------------------
    def _leaf(self, expr: cst.BaseExpression, at: cst.CSTNode | None = None) -> tuple[str, cst.For | None] | None:
        if not isinstance(expr, cst.Name):
            if at is not None and self.facts.module_params.written_parameter(expr, at):
                return ("leaf", None)  # a layer's weight or bias (or a slice of it)
            return None
        found = self._parameter_loop(expr)
        if found is not None:
            owner, loop = found
            return None if self.facts.frozen.ever_frozen_key(owner) else ("param", loop)
        if self._leaves[-1].get(expr.value):
            return ("leaf", None)
        if (
            self._fns
            and expr.value not in self._leaves[-1]
            and self.facts.leaves.module_leaf(expr.value, self._fns[-1])
        ):
            return ("leaf", None)  # a module-level weight updated in a function
        return None

    def _check(self, target: cst.BaseExpression, node: cst.CSTNode) -> None:
        leaf = self._leaf(target, node)
        if leaf is None:
            return
        if self.facts.grad_mode.mode_at(node) is not GradMode.ENABLED or self._method_called_without_grad(node):
            return
        line = node
        while line is not None and not isinstance(line, cst.SimpleStatementLine):
            line = self.parent(line)
        if line is None or id(line) in self._reported_lines:
            return
        kind, loop = leaf
        if loop is not None and id(loop) in self._wrapped_loops:
            return
        self._reported_lines.add(id(line))
        manual = kind == "param" or _mentions_grad(line)
        fix = None
        if manual:
            if loop is not None and self._only_updates(loop):
                self._wrapped_loops.add(id(loop))
                fix = self._wrap([loop])
            else:
                fix = self._wrap(self._run_of_updates(line))
        self.report(node, fix=fix)

    def _method_called_without_grad(self, node: cst.CSTNode) -> bool:
        fn = self.parent(node)
        while fn is not None and not isinstance(fn, cst.FunctionDef):
            fn = self.parent(fn)
        grad = self.facts.grad_mode
        return fn is not None and (grad.method_called_without_grad(fn) or grad.loader_called_without_grad(fn))

    def _run_of_updates(self, line: cst.SimpleStatementLine) -> list[cst.BaseStatement]:
        """``line`` and the lines right after it that also update leaves in
        place (``a -= lr * a.grad; b -= lr * b.grad``): one ``with`` for all."""
        located = self.facts.blocks.locate(line)
        if located is None:
            return [line]
        body, i = located
        run: list[cst.BaseStatement] = [line]
        for stmt in body[i + 1 :]:
            if not (isinstance(stmt, cst.SimpleStatementLine) and all(self._updates_leaf(s) for s in stmt.body)):
                break
            run.append(stmt)
        return run

    def _updates_leaf(self, small: cst.BaseSmallStatement) -> bool:
        if isinstance(small, cst.AugAssign):
            target = small.target.value if isinstance(small.target, cst.Subscript) else small.target
            return self._leaf(target) is not None
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            func = small.value.func
            return (
                isinstance(func, cst.Attribute)
                and is_inplace_method(func.attr.value)
                and self._leaf(func.value) is not None
            )
        return False

    def _only_updates(self, loop: cst.For) -> bool:
        """Every statement of the parameter loop updates a parameter or
        handles ``.grad``: nothing in it needs autograd."""
        names = {name for name, _ in parameter_loop_targets(loop.target, loop.iter)}
        visitor = _OnlyUpdates(names)
        loop.body.visit(visitor)
        return visitor.ok

    def _wrap(self, statements: list[cst.BaseStatement]) -> Fix:
        torch = self.facts.names.local_name_for("torch")
        item = cst.Call(cst.parse_expression(f"{torch or 'torch'}.no_grad"))
        first, rest = statements[0], statements[1:]
        wrapped = wrap_in_with(first, item)
        wrapped = wrapped.with_changes(body=wrapped.body.with_changes(body=[*wrapped.body.body, *rest]))
        replacements = ((first, wrapped), *((s, cst.RemoveFromParent()) for s in rest))
        return Fix(
            "Wrap the update in `with torch.no_grad():`",
            replacements,  # type: ignore[arg-type]
            Safety.SAFE,
            imports=() if torch else ("torch",),
        )

    valid = [
        Valid(
            """\
import copy
import torch
G = Generator(z_dim=512).train().requires_grad_(False).to("cuda")
G_ema = copy.deepcopy(G).eval()
def accumulate(beta):
    for p_ema, p in zip(G_ema.parameters(), G.parameters()):
        p_ema.copy_(p.lerp(p_ema, beta))
""",
            "the EMA copy of a generator built frozen (StyleGAN's shape): no parameter of G_ema requires grad",
        ),
        Valid(
            """\
import copy
import torch.nn as nn
class Wrapper(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.avg = copy.deepcopy(net)
        self.avg.requires_grad_(False)
    def update_average(self, decay):
        for pa, p in zip(self.avg.block.parameters(), self.net.block.parameters()):
            pa.mul_(decay).add_(p.detach(), alpha=1 - decay)
""",
            "a part of a parent frozen whole",
        ),
        Valid(
            """\
import copy
def no_grad_params(module):
    for p in module.parameters():
        p.requires_grad_(False)
def make_average(model, decay):
    avg = copy.deepcopy(model)
    no_grad_params(avg)
    for pa, p in zip(avg.parameters(), model.parameters()):
        pa.mul_(decay).add_(p.detach(), alpha=1 - decay)
    return avg
""",
            "a helper of this module turned requires_grad off before the write",
        ),
        Valid(
            """\
import copy
import torch
class ShadowEMA:
    def __init__(self, model, decay=0.999):
        self.shadow = copy.deepcopy(model)
        self.decay = decay
    def update(self, model):
        for s, p in zip(self.shadow.parameters(), model.parameters()):
            s.mul_(self.decay).add_(p, alpha=1 - self.decay)
def train_step(model, ema, loss, optimizer):
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        ema.update(model)
""",
            "the method is only ever called under torch.no_grad() in this module",
        ),
        Valid(
            """\
import copy
def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag
def make_and_update(model):
    ema = copy.deepcopy(model)
    requires_grad(ema, False)
    for e_p, p in zip(ema.parameters(), model.parameters()):
        e_p.mul_(0.99).add_(p.detach(), alpha=0.01)
    return ema
""",
            "an EMA copy frozen through DiT's requires_grad(ema, False) helper",
        ),
        Valid(
            """\
import copy
import torch
class EMAHandler:
    def __init__(self, model, momentum=0.999):
        self.model = model
        self.ema_model = copy.deepcopy(model)
        for param in self.ema_model.parameters():
            param.detach_()
    def update(self, momentum):
        for ema_p, model_p in zip(self.ema_model.parameters(), self.model.parameters()):
            ema_p.mul_(1.0 - momentum).add_(model_p.data, alpha=momentum)
""",
            "detach_() froze the EMA copy's parameters",
        ),
        Valid(
            """\
import torch
loss.backward()
with torch.no_grad():
    for p in model.parameters():
        p -= lr * p.grad
        p.grad.zero_()
""",
            "manual SGD under no_grad",
        ),
        Valid(
            """\
for p in model.parameters():
    p.data.add_(p.grad.data, alpha=-lr)
    p.grad.data.zero_()
""",
            "updates through .data do not involve autograd",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def reset_parameters(self):
        for p in self.parameters():
            nn.init.normal_(p, std=0.02)
""",
            "torch.nn.init.*_ run under no_grad themselves",
        ),
        Valid(
            """\
import torch
@torch.no_grad()
def sgd_step(params, lr):
    for p in params:
        p.add_(p.grad, alpha=-lr)

@torch.no_grad()
def update_ema(ema, model, decay):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p, alpha=1 - decay)
""",
            "decorated with torch.no_grad()",
        ),
        Valid(
            """\
import torch
x = torch.randn(8, 3)
buf = torch.zeros(3)
buf += x.mean(0)
x[0] = 1.0
""",
            "tensors that do not require grad",
        ),
        Valid(
            """\
import copy
ema = copy.deepcopy(model)
ema.requires_grad_(False)
for e, p in zip(ema.parameters(), model.parameters()):
    e.mul_(0.999).add_(p.detach(), alpha=0.001)
""",
            "the updated model is frozen",
        ),
        Valid(
            """\
import copy
ema = copy.deepcopy(model).eval().requires_grad_(False)
for e, p in zip(ema.parameters(), model.parameters()):
    e.lerp_(p.detach(), 0.001)
""",
            "the EMA copy is frozen where it is made",
        ),
        Valid(
            """\
import torch
w = torch.randn(3, requires_grad=True)
w2 = w.clone()
w2 += 1
""",
            "the tensor was cloned first",
        ),
        Valid(
            """\
import torch
w = torch.randn(3, 1, requires_grad=True)
def sgd_step(lr):
    w.data -= lr * w.grad.data
    w.grad.data.zero_()
def nudge(w, delta):
    w.add_(delta)
params = [w]
def sgd(params, lr):
    for p in params:
        p -= lr * p.grad
with torch.no_grad():
    sgd(params, 0.1)
nudge(torch.zeros(3, 1), 1.0)
""",
            "w.data updates are legal; a parameter shadows the module weight; the list is updated under no_grad",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
from treelstm import TreeModel
model = TreeModel(100, 300)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
emb = torch.load("glove.pth")
model.emb.weight.data.copy_(emb)
with torch.no_grad():
    model.emb.weight[0].zero_()
model.fc.weight.detach().mul_(0.5)
w = model.fc.weight[:, 0]
w2 = model.fc.weight.clone()
w2[0] = 1.0
""",
            "through .data, under no_grad, on a detached view, or on a clone",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Encoder(nn.Module):
    def __init__(self, vocab, dim, freeze):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        if freeze:
            self.emb.weight.requires_grad = False
model = Encoder(100, 300, True)
model.emb.weight.copy_(torch.load("glove.pth"))
""",
            "the file freezes that weight (the load only works frozen)",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
def fuse_conv_and_bn(conv, bn):
    fused = nn.Conv2d(conv.in_channels, conv.out_channels, 1).requires_grad_(False)
    fused.weight.copy_(conv.weight.view(conv.out_channels, -1))
    fused.bias.copy_(bn.bias)
    return fused
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.register_buffer("weight", torch.ones(8))
    @torch.no_grad()
    def reset(self, w):
        self.conv.weight.copy_(w)
    def scale(self):
        self.weight[0] = 2.0
criterion = nn.CrossEntropyLoss(weight=torch.ones(10))
criterion.weight[0] = 2.0
""",
            "a layer built frozen (YOLOv5's fuse), a no_grad method, a buffer, a loss's class weights",
        ),
        Valid(
            """\
def load_embeddings(model, emb):
    model.emb.weight.copy_(emb)
""",
            "the argument is not known here: only its name says it is a module",
        ),
    ]
    invalid = [
        Invalid(
            """\
import copy
def make_average(model, decay):
    avg = copy.deepcopy(model)
    model.requires_grad_(False)
    for pa, p in zip(avg.parameters(), model.parameters()):
        pa.mul_(decay).add_(p.detach(), alpha=1 - decay)
    return avg
""",
            """\
import copy
import torch
def make_average(model, decay):
    avg = copy.deepcopy(model)
    model.requires_grad_(False)
    with torch.no_grad():
        for pa, p in zip(avg.parameters(), model.parameters()):
            pa.mul_(decay).add_(p.detach(), alpha=1 - decay)
    return avg
""",
        ),
        Invalid(
            """\
import torch
for x, y in loader:
    loss = criterion(model(x), y)
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p -= learning_rate * p.grad
""",
            """\
import torch
for x, y in loader:
    loss = criterion(model(x), y)
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= learning_rate * p.grad
""",
        ),
        Invalid(
            """\
import torch as T
w = T.randn(3, 1, requires_grad=True)
b = T.zeros(1, requires_grad=True)
for step in range(100):
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    # gradient step
    w.sub_(lr * w.grad)
    b -= lr * b.grad  # bias
    w.grad.zero_()
    b.grad.zero_()
""",
            """\
import torch as T
w = T.randn(3, 1, requires_grad=True)
b = T.zeros(1, requires_grad=True)
for step in range(100):
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    # gradient step
    with T.no_grad():
        w.sub_(lr * w.grad)
        b -= lr * b.grad  # bias
    w.grad.zero_()
    b.grad.zero_()
""",
            count=2,
        ),
        Invalid(
            """\
def sgd(model, lr):
    for name, param in model.named_parameters():
        if param.grad is None:
            continue
        param.add_(param.grad, alpha=-lr)
""",
            """\
import torch
def sgd(model, lr):
    with torch.no_grad():
        for name, param in model.named_parameters():
            if param.grad is None:
                continue
            param.add_(param.grad, alpha=-lr)
""",
        ),
        Invalid(
            """\
import torch.nn as nn
weight = nn.Parameter(torch.randn(4, 4))
weight[0] = 0.0
""",
            None,
        ),
        Invalid(
            """\
import torch
w = torch.randn(3, 1, requires_grad=True)
def sgd_step(lr):
    w.sub_(lr * w.grad)
    w.grad.zero_()
for x, y in data:
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    sgd_step(0.01)
""",
            """\
import torch
w = torch.randn(3, 1, requires_grad=True)
def sgd_step(lr):
    with torch.no_grad():
        w.sub_(lr * w.grad)
    w.grad.zero_()
for x, y in data:
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    sgd_step(0.01)
""",
        ),
        Invalid(
            """\
import torch
W = torch.zeros(784, 10, requires_grad=True)
b = torch.zeros(10, requires_grad=True)
def update(lr):
    global W, b
    W -= lr * W.grad
    b.data -= lr * b.grad.data
""",
            """\
import torch
W = torch.zeros(784, 10, requires_grad=True)
b = torch.zeros(10, requires_grad=True)
def update(lr):
    global W, b
    with torch.no_grad():
        W -= lr * W.grad
    b.data -= lr * b.grad.data
""",
        ),
        Invalid(
            """\
import torch
def make_params():
    return [torch.randn(3, requires_grad=True), torch.zeros(1, requires_grad=True)]
params = make_params()
def sgd(params, lr):
    for p in params:
        p -= lr * p.grad
        p.grad.zero_()
for x, y in data:
    loss = model_fn(params, x, y)
    loss.backward()
    sgd(params, 0.1)
""",
            """\
import torch
def make_params():
    return [torch.randn(3, requires_grad=True), torch.zeros(1, requires_grad=True)]
params = make_params()
def sgd(params, lr):
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad.zero_()
for x, y in data:
    loss = model_fn(params, x, y)
    loss.backward()
    sgd(params, 0.1)
""",
        ),
        Invalid(
            """\
import torch
from treelstm import TreeModel
model = TreeModel(100, 300)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
emb = torch.load("glove.pth")
model.emb.weight.copy_(emb)
""",
            None,
        ),
        Invalid(
            """\
import torch.nn as nn
class Block(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.layers = nn.ModuleList([nn.Conv2d(8, 8, 3) for _ in range(n)])
    def transform(self, other):
        for i in range(len(self.layers)):
            self.layers[i].weight[:, :, :, :] = other.layers[i][0].weight
            self.layers[i].bias[:] = other.layers[i][0].bias
""",
            None,
            count=2,
        ),
        Invalid(
            """\
from transformers import BertForMaskedLM
model = BertForMaskedLM.from_pretrained("bert-base-uncased")
model.eval()
def edit(kn_bag, delta):
    for layer, pos in kn_bag:
        model.bert.encoder.layer[layer].output.dense.weight[:, pos] -= delta
""",
            None,
        ),
    ]
