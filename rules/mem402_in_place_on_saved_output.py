"""MEM402 in-place-on-saved-output."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.autograd.activations import (
    function_saves_output,
    inplace_arg,
    inplace_function_target,
    module_saves_output,
    nn_class,
    runs_inplace,
    sequential_elements,
    unpacked_layers,
)
from memlint.analysis.autograd.grad_mode import GradMode
from memlint.analysis.autograd.history import H
from memlint.analysis.scope.names import flat_targets
from memlint.analysis.training.loops import ends_with_jump
from memlint.analysis.training.training_verbs import VerbKind
from memlint.rule import Fix, Invalid, Rule, Safety, Valid
from memlint.vocabulary.ops import is_inplace_method


class _Scope:
    def __init__(self, node: cst.CSTNode) -> None:
        self.node = node
        # name -> (statement line that assigned it, the call that saved its output)
        self.saved: dict[str, tuple[cst.CSTNode, cst.Call]] = {}
        self.params: set[str] = set()
        self.assigned: set[str] = set()
        if isinstance(node, cst.FunctionDef):
            p = node.params
            self.params = {x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)}


def _training_test(test: cst.BaseExpression) -> bool | None:
    """True for ``self.training``, False for ``not self.training``."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _training_test(test.expression)
        return None if inner is None else not inner
    if (
        isinstance(test, cst.Attribute)
        and test.attr.value == "training"
        and isinstance(test.value, cst.Name)
        and test.value.value == "self"
    ):
        return True
    return None


def _leaves_when_training(stmt: cst.CSTNode) -> bool:
    """``if self.training: return ...``: what follows runs only in inference."""
    return (
        isinstance(stmt, cst.If)
        and stmt.orelse is None
        and _training_test(stmt.test) is True
        and ends_with_jump(stmt.body, (cst.Return, cst.Raise))
    )


class InPlaceOnSavedOutput(Rule):
    """
    ## What it does
    Flags an in-place operation on the output of an op whose backward needs
    that output: an `inplace=True` activation right after `nn.Sigmoid()`,
    `nn.Tanh()`, `nn.ReLU()`, `nn.Softmax()` (or an in-place ReLU/ELU/
    LeakyReLU) in `nn.Sequential`, or `h = torch.sigmoid(z); h += 1`,
    `h.mul_(...)`, `h[mask] = 0`, `F.relu(h, inplace=True)` on such a value
    in forward (or a helper it calls, such as `reparameterize`) or training
    code.

    ## Why it matters
    sigmoid, tanh, exp, sqrt, reciprocal, relu, softmax and log_softmax
    compute their gradient from their own output, which autograd keeps.
    Overwriting it in place makes the backward fail with `RuntimeError: one
    of the variables needed for gradient computation has been modified by an
    inplace operation` after the forward has already spent its time and
    memory. The in-place op saved nothing: the output had to stay alive
    anyway.

    ## Example
    ```python
    head = nn.Sequential(nn.Linear(512, 256), nn.Tanh(), nn.ReLU(inplace=True))
    ```

    ## Use instead
    ```python
    head = nn.Sequential(nn.Linear(512, 256), nn.Tanh(), nn.ReLU(inplace=False))
    ```

    ## Fix safety
    Safe for the module flag: `inplace=False` computes the same values and lets
    the backward run. Operators (`+=`, `.mul_()`, `x[i] = ...`) are reported
    without a fix: use the out-of-place form (`h = h + 1`) or clone first.

    ## When it stays silent
    Silent when the value was cloned, under `no_grad`, for ops that save their
    input rather than output (Linear, Conv, BatchNorm, GELU, SiLU, ELU, ReLU6),
    residual adds on BatchNorm output, when the input is plain data that does
    not require grad (`torch.arange` and settings such as `self.sigma = sigma`
    with a number default), on a forward's inference path (`if self.training:
    return logits` before it, or the `else`/`elif` of `if self.training:`),
    when the name was rebound first (`w, idx = torch.topk(w, k)`), inside a
    custom `torch.autograd.Function` (its `forward` runs without grad), and in
    training code when no later backward goes through the changed tensor
    (predictions thresholded for a metric, or after the backward ran).

    ## References
    - https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd
    - https://github.com/pytorch/pytorch/blob/main/tools/autograd/derivatives.yaml
    """

    code = "MEM402"
    name = "in-place-on-saved-output"
    message = "in-place operation on an output that autograd saved for the backward: the backward raises a RuntimeError"
    fix_safety = Safety.SAFE

    def __init__(self, context) -> None:
        super().__init__(context)
        self._scopes: list[_Scope] = [_Scope(context.module)]

    # == nn.Sequential ======================================================
    def visit_Call(self, node: cst.Call) -> None:
        names = self.facts.names
        elements = sequential_elements(node, names)
        if elements is None and node.args and node.args[0].star == "*" and isinstance(node.args[0].value, cst.Name):
            # ``layers = [nn.ReLU(), nn.Dropout(p, inplace=True)]; nn.Sequential(*layers)``
            scope = self._scopes[-1].node
            assigned = self.facts.bindings.values_in(node.args[0].value.value, scope)
            elements = unpacked_layers(node, names, scope, assigned)
        if elements is not None:
            for prev, cur in zip(elements, elements[1:]):
                cls = nn_class(cur, names)
                if cls is None or not runs_inplace(cur, cls) or not module_saves_output(prev, names):  # type: ignore[arg-type]
                    continue
                arg = inplace_arg(cur, cls)  # type: ignore[arg-type]
                fix = Fix("Set `inplace=False`", ((arg, arg.with_changes(value=cst.Name("False"))),))  # type: ignore[union-attr]
                message = f"`{cls}(inplace=True)` overwrites the output the previous module saved for its backward"
                self.report(arg, message=message, fix=fix)  # type: ignore[arg-type]
            return
        target = inplace_function_target(node, names)
        if target is None and isinstance(node.func, cst.Attribute) and is_inplace_method(node.func.attr.value):
            target = node.func.value
        if target is not None:
            self._check(target, node)

    # == operators in forward/training code ==================================
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(_Scope(node))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scopes.pop()

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        tgt = node.target
        self._check(tgt.value if isinstance(tgt, cst.Subscript) else tgt, node)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Subscript):
                self._check(t.target.value, node)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        # Bindings change after the right-hand side ran (``h = F.relu(h, inplace=True)``).
        scope = self._scopes[-1]
        for t in original_node.targets:
            if not isinstance(t.target, cst.Name):
                self._rebind(t.target)  # ``w, idx = torch.topk(w, k)``: w is topk's output now
                continue
            name = t.target.value
            value = original_node.value
            if function_saves_output(value, self.facts.names) and self._needs_grad(value):  # type: ignore[arg-type]
                line = self.parent(original_node)
                scope.saved[name] = (line, value)  # type: ignore[assignment]
            else:
                scope.saved.pop(name, None)
            scope.assigned.add(name)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        if original_node.value is not None:
            self._rebind(original_node.target)

    def visit_For(self, node: cst.For) -> None:
        self._rebind(node.target)

    def _rebind(self, target: cst.BaseExpression) -> None:
        scope = self._scopes[-1]
        for el in flat_targets(target):
            if isinstance(el, cst.Name):
                scope.saved.pop(el.value, None)
                scope.assigned.add(el.value)

    def _needs_grad(self, call: cst.Call) -> bool:
        """The op's input requires grad: it carries history, or (in
        ``forward``) it is computed from something other than a raw argument."""
        if call.args and call.args[0].keyword is None:
            arg = call.args[0].value
        elif isinstance(call.func, cst.Attribute):
            arg = call.func.value
        else:
            return False
        value = self.facts.history.value(arg)
        if value is not None and value.h is H.YES:
            return True
        if value is not None and value.h is H.NO:
            return False
        scope = self._scopes[-1]
        if not self._is_forward(scope):
            return False
        if isinstance(arg, cst.Name) and arg.value in scope.params and arg.value not in scope.assigned:
            return False  # the raw input of forward: often plain data
        return True

    def _is_forward(self, scope: _Scope) -> bool:
        """``forward``, or a helper it calls (``reparameterize``)."""
        return isinstance(scope.node, cst.FunctionDef) and self.facts.loops.serves_forward(scope.node)

    def _in_training_code(self, scope: _Scope) -> bool:
        if self._is_forward(scope):
            return True
        return any(v.kind is VerbKind.BACKWARD for v in self.facts.verbs.in_scope(scope.node))  # type: ignore[arg-type]

    def _backpropagated_later(self, name: str, node: cst.CSTNode, scope: _Scope) -> bool:
        """A backward runs after ``node`` in the same function, through ``name``."""
        pos = self.facts.calls.pos
        at = pos(node)
        later = any(
            v.kind is VerbKind.BACKWARD and pos(v.call) > at
            for v in self.facts.verbs.in_scope(scope.node)  # type: ignore[arg-type]
        )
        return later and self.facts.usage.reaches_backward(name, scope.node)  # type: ignore[arg-type]

    def _inference_path(self, node: cst.CSTNode, scope: _Scope) -> bool:
        """``node`` runs only when the model is not training: under
        ``if not self.training:``, in the ``else``/``elif`` of ``if
        self.training:``, or after ``if self.training: return ...``."""
        cur, child = self.parent(node), node
        while cur is not None and cur is not scope.node:
            if isinstance(cur, cst.If) and child is cur.body and _training_test(cur.test) is False:
                return True
            if isinstance(cur, cst.If) and child is cur.orelse and _training_test(cur.test) is True:
                return True
            if isinstance(cur, cst.IndentedBlock) and self.facts.blocks.any_before(child, _leaves_when_training):
                return True
            cur, child = self.parent(cur), cur
        return False

    def _check(self, target: cst.BaseExpression, node: cst.CSTNode) -> None:
        if not isinstance(target, cst.Name):
            return
        scope = self._scopes[-1]
        entry = scope.saved.get(target.value)
        if entry is None:
            return
        line, producer = entry
        if not self._in_training_code(scope) or self.facts.grad_mode.mode_at(node) is not GradMode.ENABLED:
            return
        if not self._is_forward(scope) and not self._backpropagated_later(target.value, node, scope):
            return  # thresholding predictions for a metric, or after the backward ran
        if self._inference_path(node, scope):
            return
        # The in-place op must run after the assignment, not in another branch.
        block = self.parent(line)
        cur = self.parent(node)
        while cur is not None and cur is not block:
            cur = self.parent(cur)
        if cur is None:
            return
        del scope.saved[target.value]
        op = self.context.module.code_for_node(producer.func)
        self.report(
            node,
            message=f"in-place operation on `{target.value}`, the output of `{op}(...)` that autograd saved "
            "for the backward: the backward raises a RuntimeError",
        )

    valid = [
        Valid(
            """\
import torch.nn as nn
def head(d, p, extra):
    layers = [nn.ReLU(), nn.Dropout(p, inplace=True)]
    layers.insert(1, nn.Linear(d, d))
    return nn.Sequential(*layers)
def tail(d, p, extra):
    layers = [nn.ReLU(), nn.Dropout(p, inplace=True)]
    extra(layers)
    return nn.Sequential(*layers)
def branch(d, p, deep):
    layers = [nn.ReLU(), nn.Dropout(p, inplace=True)]
    if deep:
        layers = [nn.ReLU(), nn.Linear(d, d), nn.Dropout(p, inplace=True)]
    return nn.Sequential(*layers)
""",
            "a list of layers whose order is not the display's: an insert, a helper that may change it, a "
            "second binding; only a list bound once and added to at its end is read",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
import torch.nn.functional as F
class GaussianBlur(nn.Module):
    def __init__(self, size=11, sigma=1.5):
        super().__init__()
        self.size, self.sigma = size, sigma
    def forward(self, img):
        coords = torch.arange(self.size, dtype=img.dtype, device=img.device) - self.size // 2
        g = torch.exp(-(coords ** 2) / (2 * self.sigma ** 2))
        g /= g.sum()
        return F.conv2d(img, (g[:, None] * g[None, :]).expand(img.size(1), 1, self.size, self.size))
""",
            "a kernel built from torch.arange and plain-number settings carries no history",
        ),
        Valid(
            """\
import torch.nn as nn
class Detector(nn.Module):
    def forward(self, feats):
        logits = self.cls(feats)
        if self.training:
            return logits
        scores = logits.sigmoid()
        scores[scores < self.thresh] = 0.0
        return scores
""",
            "post-processing on the inference path only (after `if self.training: return`)",
        ),
        Valid(
            """\
import torch.nn as nn
class Head(nn.Module):
    def forward(self, x):
        p = self.conv(x).view(x.size(0), 3, -1)
        if self.training:
            out = p
        elif self.export:
            out = p.sigmoid()
        else:
            out = p.sigmoid()
            out[..., :2] *= self.stride
        return out
""",
            "the in-place scaling sits in the `else` of an `if self.training:` chain: inference only",
        ),
        Valid(
            """\
import torch
import torch.nn.functional as F
def train(model, loader, optimizer, threshold=0.5):
    for x, y in loader:
        logits = model(x)
        probs = torch.sigmoid(logits)
        probs[probs < threshold] = 0.0
        loss = F.binary_cross_entropy_with_logits(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        outputs = torch.sigmoid(model(x))
        loss2 = F.binary_cross_entropy(outputs, y)
        loss2.backward()
        optimizer.step()
        outputs[outputs >= 0.5] = 1
""",
            "the changed tensor never reaches the loss, or changes after the backward",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
import torch.nn.functional as F
class Router(nn.Module):
    def forward(self, hidden_states):
        routing_weights = F.softmax(self.gate(hidden_states), dim=1)
        routing_weights, experts = torch.topk(routing_weights, self.top_k, dim=-1)
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        return routing_weights, experts
class XSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, mask, dim):
        output = x.masked_fill(~mask, torch.finfo(x.dtype).min)
        output = torch.softmax(output, dim)
        output.masked_fill_(~mask, 0)
        ctx.save_for_backward(output)
        return output
""",
            "rebound to topk's output first; a custom Function's forward runs with grad off",
        ),
        Valid(
            """\
import torch.nn as nn
block = nn.Sequential(nn.Conv2d(3, 64, 3), nn.BatchNorm2d(64), nn.ReLU(inplace=True), nn.MaxPool2d(2))
head = nn.Sequential(nn.Linear(64, 64), nn.GELU(), nn.Dropout(0.1, inplace=True))
""",
            "Conv/BatchNorm/GELU save their input, not their output",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Gate(nn.Module):
    def forward(self, x):
        h = torch.sigmoid(self.fc(x)).clone()
        h += 1
        g = torch.sigmoid(self.gate(x))
        g = g * 2
        return h * g
""",
            "cloned first; out-of-place arithmetic",
        ),
        Valid(
            """\
import torch
@torch.no_grad()
def postprocess(logits):
    probs = torch.softmax(logits, dim=-1)
    probs[probs < 0.1] = 0
    probs /= probs.sum(-1, keepdim=True)
    return probs
""",
            "under no_grad nothing is saved",
        ),
        Valid(
            """\
import torch.nn as nn
class BasicBlock(nn.Module):
    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)
""",
            "residual add on BatchNorm output",
        ),
        Valid(
            """\
import torch
def make_mask(raw):
    m = torch.sigmoid(raw)
    m[m < 0.5] = 0
    return m
""",
            "plain data that does not require grad, no training here",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch.nn as nn
from torch.nn.utils import weight_norm
class Classifier(nn.Module):
    def __init__(self, d_in, d_hid, d_out, p):
        super().__init__()
        layers = [
            weight_norm(nn.Linear(d_in, d_hid), dim=None),
            nn.ReLU(),
            nn.Dropout(p, inplace=True),
            weight_norm(nn.Linear(d_hid, d_out), dim=None),
        ]
        self.main = nn.Sequential(*layers)
    def forward(self, x):
        return self.main(x)
""",
            """\
import torch.nn as nn
from torch.nn.utils import weight_norm
class Classifier(nn.Module):
    def __init__(self, d_in, d_hid, d_out, p):
        super().__init__()
        layers = [
            weight_norm(nn.Linear(d_in, d_hid), dim=None),
            nn.ReLU(),
            nn.Dropout(p, inplace=False),
            weight_norm(nn.Linear(d_hid, d_out), dim=None),
        ]
        self.main = nn.Sequential(*layers)
    def forward(self, x):
        return self.main(x)
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class VAE(nn.Module):
    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        std.mul_(torch.randn_like(std))
        return mu + std
    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=1)
        return self.dec(self.reparameterize(mu, logvar))
""",
            None,
        ),
        Invalid(
            """\
import torch.nn as nn
head = nn.Sequential(nn.Linear(512, 256), nn.Tanh(), nn.ReLU(inplace=True), nn.Linear(256, 10))
""",
            """\
import torch.nn as nn
head = nn.Sequential(nn.Linear(512, 256), nn.Tanh(), nn.ReLU(inplace=False), nn.Linear(256, 10))
""",
        ),
        Invalid(
            """\
from collections import OrderedDict
from torch import nn
features = nn.Sequential(OrderedDict([
    ("fc", nn.Linear(100, 100)),
    ("act", nn.ReLU()),
    ("drop", nn.Dropout(0.5, True)),
]))
""",
            """\
from collections import OrderedDict
from torch import nn
features = nn.Sequential(OrderedDict([
    ("fc", nn.Linear(100, 100)),
    ("act", nn.ReLU()),
    ("drop", nn.Dropout(0.5, False)),
]))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Attention(nn.Module):
    def forward(self, q, k, v, mask):
        scores = q @ k.transpose(-2, -1)
        attn = scores.softmax(dim=-1)
        attn *= mask
        return attn @ v
""",
            None,
        ),
        Invalid(
            """\
import torch
import torch.nn.functional as F
for x, y in loader:
    h = torch.sigmoid(model(x))
    F.relu(h, inplace=True)
    loss = criterion(h, y)
    loss.backward()
""",
            None,
        ),
    ]
