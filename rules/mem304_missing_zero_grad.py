"""MEM304 missing-zero-grad."""

from __future__ import annotations

import re

import libcst as cst

from memlint.analysis.scope.names import dotted_name
from memlint.analysis.scope.option_defaults import OptionDefaults
from memlint.analysis.training.training_verbs import VerbKind
from memlint.parse.traversal import visit_fast
from memlint.rule import Invalid, Rule, Safety, Valid
from memlint.vocabulary.kinds import Kind

# ``reset_grad()``, ``zero_grads(params)``, ``clear_grad(model)``: helpers we
# cannot see into that clear gradients by their name.
_CLEARING_CALL = re.compile(r"(zero|reset|clear|free|set_to_none).*grad|grad.*(zero|reset|clear)", re.I)


class _AssignsTo(cst.CSTVisitor):
    """Assignment targets spelled ``key``."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, key: str | None) -> None:
        super().__init__()
        self.key = key
        self.found: list[cst.AssignTarget] = []

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if dotted_name(node.target) == self.key:
            self.found.append(node)


class _ClearingCalls(cst.CSTVisitor):
    """Calls of a function whose name says it clears gradients."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self) -> None:
        super().__init__()
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        last = (dotted_name(node.func) or "").rsplit(".", 1)[-1]
        # ``x.zero_grad()`` itself is a verb, paired per optimizer above.
        if last != "zero_grad" and _CLEARING_CALL.search(last):
            self.found.append(node)


class _Handed(cst.CSTVisitor):
    """A call other than ``skip`` with ``key`` among its arguments."""

    # A module-level class, not one per call: see _ClearingCalls.
    def __init__(self, key: str | None, skip: cst.CSTNode) -> None:
        super().__init__()
        self.key = key
        self.skip = skip
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        if node is not self.skip and any(dotted_name(a.value) == self.key for a in node.args):
            self.found = True


# An optimizer's step: its own ``opt.step()``, or a call of another module's
# function that only steps it (``utils.optimizer_step(opt)``).
_STEPS = (VerbKind.STEP, VerbKind.HELPER_STEP)
# A clear: its own ``opt.zero_grad()``, or code of another module that may
# clear what the call hands it (``trades_loss(model, x, y, optimizer)``, an
# inherited ``self.standard_loss(x, y)``: project/zeroed_grads.py).
_CLEARS = (VerbKind.ZERO_GRAD, VerbKind.HELPER_ZERO_GRAD)


class MissingZeroGrad(Rule):
    """
    ## What it does
    Flags an optimizer step in a loop that runs a backward and a step every
    iteration but never clears that optimizer's gradients: no
    `optimizer.zero_grad()`, no `model.zero_grad()`, no `p.grad = None`.

    ## Why it matters
    `backward()` adds to `.grad`. Without clearing, every step applies the
    sum of all gradients since the loop began: updates grow each iteration,
    training diverges or behaves as a wildly wrong learning rate. Nothing
    crashes.

    ## Example
    ```python
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    ## Use instead
    ```python
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    ## Fix safety
    No fix: where the gradients should be cleared depends on whether
    accumulation was meant. A step split across functions (`train_step`
    backpropagates and steps, a loop of another function of the module calls it
    once per iteration) is judged on that loop.

    ## When it stays silent
    Any clearing in the loop counts, also in local functions it calls and
    helpers named for it (`reset_grad()`), in a function of another module that
    clears the optimizer the loop hands it, and in a method inherited from a
    class of another module of the project that clears `self.optimizer`;
    zero_grad and step are paired per optimizer, so a GAN that clears only one
    network's optimizer is reported for the other, and an optimizer over several
    networks' parameters (`Adam(chain(G.parameters(), D.parameters()))`) counts
    as cleared when the zero_grad of others clears every one of them.
    LBFGS-style `step(closure)`, framework engines (DeepSpeed, Lightning) and
    full-batch accumulation with one step after the loop are left alone, and so
    is a parameter named like an optimizer that a caller in the file fills with
    an instance of its own plain class (`ema_optimizer = WeightEMA(model,
    ema_model)`, a class on no base but `object`): no torch optimizer. A loop
    `for j in range(args.n)` whose `--n` option defaults to 1 (declared once in
    the module, `args` parsed there) runs once per iteration of the loop around
    it unless the command line says otherwise: its steps are judged with that
    loop's clears.

    ## References
    - https://pytorch.org/tutorials/recipes/recipes/zeroing_out_gradients.html
    """

    code = "MEM304"
    name = "missing-zero-grad"
    message = (
        "backward() and step() run every iteration but the gradients are never cleared: they accumulate across steps"
    )
    fix_safety = Safety.NONE

    project_facts = (
        "Step helpers of other modules of the project: `utils.optimizer_step(optimizer)` in a training loop is the "
        "loop's step when that function only steps the optimizer it is handed (`optimizer.step()`, or "
        "`scaler.step(optimizer)` and `scaler.update()`, with gradient clipping at most: nothing that may clear "
        "the gradients), and the message names the line that steps. A loop that hands the optimizer to any other "
        "call stays silent (it may clear the gradients). Clears in other modules: a function of another module "
        "that calls `zero_grad()` on the optimizer a loop hands it (`trades_loss(model, x, y, optimizer)`), and a "
        "method inherited from a project class of another module that clears `self.<attr>` "
        "(`self.standard_loss(x, y)` of `Trainer`, starting with `self.optimizer.zero_grad()`), count as the loop's "
        "clear, also reached through a method of the loop's own class."
    )

    def visit_Module(self, node: cst.Module) -> None:
        self._options: OptionDefaults | None = None
        verbs = self.facts.verbs
        for step in verbs.verbs:
            if step.kind not in _STEPS or step.closure:
                continue
            loop = None
            for i, candidate in reversed(list(enumerate(step.loops))):
                if i and self._runs_once(candidate):
                    continue  # ``for j in range(args.num_split)``, 1 by default: judged on the loop around it
                if any(v.kind is VerbKind.BACKWARD for v in verbs.reached(verbs.in_loop(candidate))):
                    loop = candidate
                    break
            if loop is None:
                continue
            if self._built_in(loop, step.target):
                continue  # a fresh optimizer per iteration: a numeric check, not a training loop
            in_loop = verbs.reached(verbs.in_loop(loop))
            steps = [v for v in in_loop if v.kind in _STEPS]
            if any(v.kind in _CLEARS and verbs.pairs(v, step, steps) is not False for v in in_loop):
                continue
            if self._cleared_by_others(step, in_loop):
                continue
            if self._clearing_helper(loop, [v for v in in_loop if v.kind is VerbKind.CALL]):
                continue
            if step.helper:
                if self._handed_elsewhere(loop, step):
                    continue  # another call may clear what it is handed
                name = self.context.module.code_for_node(step.call.func)  # type: ignore[attr-defined]
                self.report(step.call, message=f"{self.message} (`{name}` steps `{step.target}`, {step.helper})")
                continue
            self.report(step.call)
        self._steps_in_helpers()

    def _steps_in_helpers(self) -> None:
        """A training step split across functions: ``train_step`` runs the
        backward and the step with no loop of its own, and a loop of
        another function of this module calls it once per iteration
        (``for x, y in loader: self.train_step(x, y)``). Judged on the loop:
        every verb it reaches through the functions it calls."""
        verbs = self.facts.verbs
        reported: set[int] = set()
        for call in verbs.verbs:
            if call.kind is not VerbKind.CALL or call.callee is None or not call.loops:
                continue
            loop = call.loops[-1]
            in_loop = verbs.reached(verbs.in_loop(loop))
            if not any(v.kind is VerbKind.BACKWARD for v in in_loop):
                continue
            steps = [v for v in in_loop if v.kind is VerbKind.STEP]
            for step in steps:
                if step.loops or step.closure or id(step.call) in reported:
                    continue  # a step in a loop of its own function is judged there
                if self._built_in(loop, step.target):
                    continue
                if any(v.kind in _CLEARS and verbs.pairs(v, step, steps) is not False for v in in_loop):
                    continue
                if self._cleared_by_others(step, in_loop):
                    continue
                if self._clearing_helper(loop, [v for v in in_loop if v.kind is VerbKind.CALL]):
                    continue
                reported.add(id(step.call))
                helper = step.scope.name.value if isinstance(step.scope, cst.FunctionDef) else "its function"
                caller = call.scope.name.value if isinstance(call.scope, cst.FunctionDef) else "the module"
                note = f" (`{helper}` runs once per iteration of a loop in `{caller}`)"
                self.report(step.call, message=self.message + note)

    def _runs_once(self, loop: cst.CSTNode) -> bool:
        """``loop`` runs once per iteration of the loop around it unless the
        command line says otherwise (option_defaults.py): its steps are
        judged with that loop's clears."""
        if self._options is None:
            self._options = OptionDefaults(self.facts.options)
        return self._options.runs_once_by_default(loop)

    def _cleared_by_others(self, step, in_loop) -> bool:
        """``info_opt = Adam(chain(G.parameters(), D.parameters()))`` steps
        while ``G_opt.zero_grad()`` and ``D_opt.zero_grad()`` (or
        ``G.zero_grad()``...) run in the same iteration: every module whose
        parameters the optimizer owns is cleared by another's zero_grad."""
        verbs = self.facts.verbs
        owners = verbs.optimizer_modules(step.target or "", step.scope)
        if not owners:
            return False
        cleared: set[str] = set()
        for verb in in_loop:
            if verb.kind not in _CLEARS or verb.target is None:
                continue
            if verb.target_kind is Kind.OPTIMIZER:
                cleared |= verbs.optimizer_modules(verb.target, verb.scope) or set()
            elif verb.target_kind is Kind.MODULE:
                cleared.add(verb.target)
        return all(any(o == c or o.startswith(c + ".") for c in cleared) for o in owners)

    def _handed_elsewhere(self, loop: cst.CSTNode, step) -> bool:
        """Another call in the loop is handed the optimizer a helper steps."""
        visitor = _Handed(step.target, step.call)
        visit_fast(loop, visitor)
        return visitor.found

    def _built_in(self, loop: cst.CSTNode, optimizer: str | None) -> bool:
        visitor = _AssignsTo(optimizer)
        visit_fast(loop, visitor)
        return bool(visitor.found)

    def _clearing_helper(self, loop: cst.CSTNode, local_calls) -> bool:
        visitor = _ClearingCalls()
        visit_fast(loop, visitor)
        for call in local_calls:
            if call.callee is not None:
                visit_fast(call.callee, visitor)
        return bool(visitor.found)

    valid = [
        Valid(
            """\
import torch
class WeightEMA(object):
    def __init__(self, model, ema_model, alpha=0.999):
        self.params = list(model.state_dict().values())
        self.ema_params = list(ema_model.state_dict().values())
        self.alpha = alpha
    def step(self):
        for param, ema_param in zip(self.params, self.ema_params):
            ema_param.mul_(self.alpha).add_(param * (1 - self.alpha))
def train(loader, model, optimizer, ema_optimizer):
    for x, y in loader:
        loss = model(x).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema_optimizer.step()
def main(model, ema_model, loader):
    optimizer = torch.optim.Adam(model.parameters())
    ema_optimizer = WeightEMA(model, ema_model)
    train(loader, model, optimizer, ema_optimizer)
""",
            "a parameter named like an optimizer that its caller fills with a plain object of the file (an EMA of the weights)",
        ),
        Valid(
            """\
import torch.nn.functional as F
class Trainer:
    def __init__(self, model, optimizer, loader):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
    def train_step(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return loss.item()
    def fit(self):
        for x, y in self.loader:
            self.optimizer.zero_grad()
            self.train_step(x, y)
""",
            "the loop that calls the step helper clears the optimizer's gradients each iteration",
        ),
        Valid(
            """\
import torch.nn.functional as F
class Trainer:
    def __init__(self, model, optimizer, loader):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
    def train_step(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        self.model.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()
    def fit(self):
        for x, y in self.loader:
            self.train_step(x, y)
""",
            "the step helper clears the model's gradients itself",
        ),
        Valid(
            """\
for x, y in loader:
    optimizer.zero_grad(set_to_none=True)
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
""",
            "cleared every iteration",
        ),
        Valid(
            """\
import torch.optim as optim
optimizer = optim.LBFGS(model.parameters())
for epoch in range(20):
    def closure():
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        return loss
    optimizer.step(closure)
""",
            "LBFGS step(closure): the closure clears the gradients",
        ),
        Valid(
            """\
for step, batch in enumerate(loader):
    loss = model_engine(batch)
    model_engine.backward(loss)
    model_engine.step()
""",
            "DeepSpeed engine clears gradients itself",
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
            "deliberate full-batch accumulation with one step per epoch",
        ),
        Valid(
            """\
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    for p in model.parameters():
        p.grad = None
""",
            "gradients set to None by hand",
        ),
        Valid(
            """\
def reset_grad():
    g_optimizer.zero_grad()
    d_optimizer.zero_grad()

for images, _ in data_loader:
    d_loss = criterion(D(images), real_labels)
    reset_grad()
    d_loss.backward()
    d_optimizer.step()
    g_loss = criterion(D(G(z)), real_labels)
    reset_grad()
    g_loss.backward()
    g_optimizer.step()
""",
            "GAN clearing both optimizers through a local helper",
        ),
        Valid(
            """\
import torch
opt_body = torch.optim.AdamW(model.parameters())
opt_heads = torch.optim.AdamW(heads.parameters())
optimizers = [opt_body, opt_heads]
for x, y in loader:
    for opt in optimizers:
        opt.zero_grad(set_to_none=True)
    loss = criterion(heads(model(x)), y)
    loss.backward()
    opt_body.step()
    opt_heads.step()
""",
            "each optimizer of a list cleared in an inner loop",
        ),
        Valid(
            """\
import torch
enc_opt = torch.optim.Adam(model.encoder.parameters())
dec_opt = torch.optim.Adam(model.decoder.parameters())
for x in loader:
    model.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), x)
    loss.backward()
    enc_opt.step()
    dec_opt.step()
""",
            "model.zero_grad() clears the parameters of both sub-module optimizers",
        ),
        Valid(
            """\
import itertools
import torch
class InfoGAN:
    def __init__(self, G, D):
        self.G, self.D = G, D
        self.G_opt = torch.optim.Adam(self.G.parameters())
        self.D_opt = torch.optim.Adam(self.D.parameters())
        self.info_opt = torch.optim.Adam(itertools.chain(self.G.parameters(), self.D.parameters()))
    def train(self, loader):
        for x, z in loader:
            self.D_opt.zero_grad()
            d_loss = self.D(x).mean() - self.D(self.G(z).detach()).mean()
            d_loss.backward()
            self.D_opt.step()
            self.G_opt.zero_grad()
            g_loss = -self.D(self.G(z)).mean()
            g_loss.backward(retain_graph=True)
            self.G_opt.step()
            info_loss = self.D(self.G(z)).var()
            info_loss.backward()
            self.info_opt.step()
""",
            "the optimizer over G's and D's parameters is cleared by the two others' zero_grad every iteration",
        ),
        Valid(
            """\
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument("--num_split", type=int, default=1)
args = parser.parse_args()
def train(model, optimizer, loader):
    for x, y in loader:
        model.zero_grad()
        for j in range(args.num_split):
            loss = (model(x[j::args.num_split]) - y[j::args.num_split]).pow(2).mean()
            loss.backward()
            optimizer.step()
""",
            "the inner loop runs once per batch unless --num_split says otherwise: the batch loop's zero_grad clears it",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch
class WeightEMA(object):
    def __init__(self, model, ema_model):
        self.params = list(model.state_dict().values())
    def step(self):
        pass
def train(loader, model, optimizer, ema_optimizer):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
        ema_optimizer.step()
def main(model, ema_model, loader):
    optimizer = torch.optim.Adam(model.parameters())
    ema_optimizer = WeightEMA(model, ema_model)
    train(loader, model, optimizer, ema_optimizer)
""",
            None,
        ),
        Invalid(
            """\
import itertools
import torch
G_opt = torch.optim.Adam(G.parameters())
info_opt = torch.optim.Adam(itertools.chain(G.parameters(), Q.parameters()))
for x, z in loader:
    G_opt.zero_grad()
    g_loss = -D(G(z)).mean()
    g_loss.backward(retain_graph=True)
    G_opt.step()
    info_loss = Q(G(z)).var()
    info_loss.backward()
    info_opt.step()
""",
        ),
        Invalid(
            """\
import torch.nn.functional as F
class Trainer:
    def __init__(self, model, optimizer, loader):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
    def train_step(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return loss.item()
    def fit(self):
        for x, y in self.loader:
            self.train_step(x, y)
""",
            None,
        ),
        Invalid(
            """\
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
""",
        ),
        Invalid(
            """\
import torch.optim as optim
opt_d = optim.Adam(D.parameters())
opt_g = optim.Adam(G.parameters())
for real in loader:
    opt_d.zero_grad()
    loss_d = bce(D(real), ones) + bce(D(G(noise()).detach()), zeros)
    loss_d.backward()
    opt_d.step()
    loss_g = bce(D(G(noise())), ones)
    loss_g.backward()
    opt_g.step()
""",
        ),
        Invalid(
            """\
def train(model, optimizer, loader, scaler):
    optimizer.zero_grad()
    for batch in loader:
        loss = model(**batch).loss
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        ),
        Invalid(
            """\
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument("--num_split", type=int, default=2)
args = parser.parse_args()
def train(model, optimizer, loader):
    for x, y in loader:
        model.zero_grad()
        for j in range(args.num_split):
            loss = (model(x[j::args.num_split]) - y[j::args.num_split]).pow(2).mean()
            loss.backward()
            optimizer.step()
""",
            None,
        ),
    ]
