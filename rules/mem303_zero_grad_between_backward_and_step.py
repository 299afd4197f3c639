"""MEM303 zero-grad-between-backward-and-step."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider

from memlint.analysis.training.inlined_verbs import inlined, where
from memlint.analysis.training.training_verbs import Verb, VerbKind
from memlint.fix.statement_edits import StatementEdits, bare, call_statement_only
from memlint.parse.traversal import visit_fast
from memlint.rule import Fix, Invalid, Rule, Safety, Valid


class _GradWrites(cst.CSTVisitor):
    """Assignments of something other than None to a ``.grad``."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self) -> None:
        super().__init__()
        self.found: list[cst.Assign] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(isinstance(t.target, cst.Attribute) and t.target.attr.value == "grad" for t in node.targets) and not (
            isinstance(node.value, cst.Name) and node.value.value == "None"
        ):
            self.found.append(node)


class ZeroGradBetweenBackwardAndStep(Rule):
    """
    ## What it does
    Flags `zero_grad()` that runs after the backward and before the
    optimizer step of the same iteration: `loss.backward();
    optimizer.zero_grad(); optimizer.step()`.

    ## Why it matters
    The step sees cleared gradients (zeros, or `None` with `set_to_none`),
    so the parameters never move, or move only by weight decay and
    momentum. The loss stays flat, and the forward and backward passes of
    every iteration are wasted. Nothing crashes.

    ## Example
    ```python
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
    ```

    ## Use instead
    ```python
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    ```

    ## Fix safety
    Unsafe: the fix moves `zero_grad()` to just before the backward, which
    changes what is trained (that is the point). zero_grad and step are paired
    per optimizer: in a GAN, clearing one network's gradients between the
    other's backward and step is correct and stays silent, as does a
    `model.zero_grad()` of a model the stepped optimizer does not own (also
    through `itertools.chain(...)` or a list of parameters), and gradient
    surgery that writes `p.grad = ...` after the clear.

    ## When it stays silent
    A step split across methods (`train_step()` backpropagates, the loop calling
    it clears and steps) is read as one iteration when each helper runs its
    verbs once per call (no loop of its own, no early `return`), and so is a
    function of another module of the project (`engine.backward(loss, opt)`)
    whose verbs sit in its straight-line code on the parameters the call hands
    over; the message names the helpers (and their files) and the lines calling
    them, with no fix. When the backward is not in the same block as the
    `zero_grad()` (e.g. it is in a helper function) no fix is offered.

    ## References
    - https://pytorch.org/tutorials/beginner/basics/optimization_tutorial.html#optimization-loop
    - https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html
    """

    code = "MEM303"
    name = "zero-grad-between-backward-and-step"
    message = "zero_grad() between backward() and step(): the step sees no gradients"
    fix_safety = Safety.UNSAFE
    project_facts = (
        "Training steps split across modules: a loop that calls a straight-line function of another project "
        "module (`engine.backward_and_clear(loss, optimizer)`) is read with that function's `zero_grad()`, "
        "`backward()` and `step()` in order, each mapped onto what the call hands over; a helper with a branch, "
        "loop, `try`, early return or a call into its own module is not read, and nothing is claimed. The "
        "message names the helper and its file; no fix is offered across modules."
    )

    def visit_Module(self, node: cst.Module) -> None:
        verbs = self.facts.verbs
        reported: set[int] = set()
        # Each region (a loop's iteration, a function's straight-line code)
        # with the local functions it calls read at their call
        # (inlined_verbs.py): ``train_step()`` backpropagates, the loop
        # calling it then clears and steps.
        regions = {id(r): r for r in (verbs.region(v) for v in verbs.verbs)}
        for region in regions.values():
            is_loop = isinstance(region, (cst.For, cst.While))
            flat = inlined(verbs, region)
            for step in flat:
                if step.kind is VerbKind.STEP and not step.closure and step.loop is (region if is_loop else None):
                    self._check(region if is_loop else None, region, flat, step, reported)

    def _check(self, since, region: cst.CSTNode, flat: list[Verb], step: Verb, reported: set[int]) -> None:
        verbs = self.facts.verbs
        steps = [v for v in flat if v.kind is VerbKind.STEP]
        zeros = [
            z
            for z in flat
            if z.kind is VerbKind.ZERO_GRAD and verbs.dominates(z, step, since) and verbs.pairs(z, step, steps) is True
        ]
        if not zeros:
            return
        zero = zeros[-1]
        if id(zero.call) in reported:
            return
        between = [v for v in flat if zero.index < v.index < step.index]
        if any(v.kind is VerbKind.BACKWARD for v in verbs.reached(between)):
            return
        if self._grads_written(region, zero, step):
            return
        earlier = [v for v in flat if v.index < zero.index]
        # The backwards since the last step of this optimizer.
        last_step = max((v.index for v in earlier if v.kind is VerbKind.STEP and v.target == step.target), default=-1)
        backwards = [v for v in earlier if v.kind is VerbKind.BACKWARD and v.index > last_step]
        if not backwards:
            return
        reported.add(id(zero.call))
        backward = backwards[0]
        if zero.via is None and step.via is None and backward.via is None:
            self.report(zero.call, fix=self._fix(region, zero, backward))
            return
        # Split across functions: no fix (moving a statement into another
        # function changes what its other callers do).
        where_ = (where(backward, self._line), where(zero, self._line), where(step, self._line))
        self.report(zero.call, message=self.message + " (backward() {}; zero_grad() {}; step() {})".format(*where_))

    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def _grads_written(self, region: cst.CSTNode, zero: Verb, step: Verb) -> bool:
        """``p.grad = merged`` between the clear and the step (gradient
        surgery, PCGrad): the step applies the gradients written by hand.
        Across functions, any such write in the region or in the functions
        of the clear and the step counts."""
        pos = self.facts.calls.pos
        writes = _GradWrites()
        visit_fast(region, writes)
        if zero.via is None and step.via is None:
            after, before = pos(zero.call), pos(step.call)
            return any(after < pos(node) < before for node in writes.found)
        for verb in (zero, step):
            if verb.via is not None:
                visit_fast(verb.scope, writes)
        return bool(writes.found)

    def _fix(self, region: cst.CSTNode, zero: Verb, backward: Verb) -> Fix | None:
        if not call_statement_only(zero.line, zero.call) or backward.line is None:
            return None
        block = self.parent(zero.line)
        # The statement of the zero_grad's block that holds the backward.
        anchor: cst.CSTNode | None = backward.line
        while anchor is not None and self.parent(anchor) is not block:
            anchor = self.parent(anchor)
        if anchor is None:
            return None
        edits = StatementEdits()
        edits.remove(zero.line, block)
        edits.insert_before(anchor, bare(zero.line))
        root = block if isinstance(block, cst.IndentedBlock) else region
        return Fix("Move `zero_grad()` before the backward", ((root, edits.apply(root)),), Safety.UNSAFE)

    valid = [
        Valid(
            """\
import torch
class GAN:
    def __init__(self, G, D):
        self.G, self.D = G, D
        self.opt_G = torch.optim.Adam(G.parameters())
        self.opt_D = torch.optim.Adam(D.parameters())
    def backward_D(self, real, fake):
        loss_D = self.D(fake.detach()).mean() - self.D(real).mean()
        loss_D.backward()
    def optimize(self, loader):
        for real, z in loader:
            fake = self.G(z)
            self.backward_D(real, fake)
            self.opt_G.zero_grad()
            self.opt_D.step()
""",
            "the helper backpropagates the critic; the clear between is the generator's optimizer",
        ),
        Valid(
            """\
import torch
def pcgrad_step(model, optimizer, losses):
    params = list(model.parameters())
    grads = []
    for loss in losses:
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        grads.append([p.grad.clone() for p in params])
    merged = [sum(gs) for gs in zip(*grads)]
    optimizer.zero_grad(set_to_none=True)
    for p, g in zip(params, merged):
        p.grad = g
    optimizer.step()
""",
            "gradient surgery: the step applies gradients written by hand after the clear",
        ),
        Valid(
            """\
import itertools
import torch
def train_cycle(G_AB, G_BA, D_A, loader):
    optimizer_G = torch.optim.Adam(itertools.chain(G_AB.parameters(), G_BA.parameters()), lr=2e-4)
    for real_A, real_B in loader:
        optimizer_G.zero_grad()
        loss = (D_A(G_BA(real_B)) - 1).pow(2).mean()
        loss.backward()
        D_A.zero_grad()
        optimizer_G.step()
def train_generator(netG, netD, loader):
    g_params = list(netG.parameters())
    optimizer_g = torch.optim.Adam(g_params, lr=2e-4)
    for z in loader:
        optimizer_g.zero_grad()
        (-netD(netG(z)).mean()).backward()
        netD.zero_grad()
        optimizer_g.step()
""",
            "the discriminator's gradients are cleared, not the stepped optimizer's",
        ),
        Valid(
            """\
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
""",
            "zero_grad before the backward",
        ),
        Valid(
            """\
import torch.optim as optim
optimizerD = optim.Adam(netD.parameters(), lr=2e-4)
optimizerG = optim.Adam(netG.parameters(), lr=2e-4)
for real, _ in dataloader:
    netD.zero_grad()
    errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
    errD.backward()
    netG.zero_grad()
    optimizerD.step()
    errG = criterion(netD(fake), ones)
    errG.backward()
    optimizerG.step()
""",
            "GAN: the zero_grad between D's backward and step clears G, paired per optimizer",
        ),
        Valid(
            """\
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
            "zero_grad after the step",
        ),
        Valid(
            """\
for x, y in loader:
    def closure():
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        return loss
    optimizer.step(closure)
""",
            "LBFGS closure",
        ),
        Valid(
            """\
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / accum
    loss.backward()
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            "accumulation with zero_grad after the guarded step",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch.nn.functional as F
class Trainer:
    def __init__(self, model, optimizer, loader):
        self.model, self.optimizer, self.loader = model, optimizer, loader
    def train_step(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        return loss.item()
    def fit(self):
        for x, y in self.loader:
            self.train_step(x, y)
            self.optimizer.zero_grad()
            self.optimizer.step()
""",
            None,
        ),
        Invalid(
            """\
import torch
class Trainer:
    def __init__(self, model, loader):
        self.model, self.loader = model, loader
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    def reset(self):
        self.optimizer.zero_grad()
    def update(self):
        self.reset()
        self.optimizer.step()
    def fit(self):
        for x in self.loader:
            self.model(x).mean().backward()
            self.update()
""",
            None,
        ),
        Invalid(
            """\
for x, y in loader:
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
""",
            """\
for x, y in loader:
    out = model(x)
    loss = criterion(out, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        ),
        Invalid(
            """\
import torch
def train_step(model, batch, optimizer, scaler):
    with torch.autocast("cuda"):
        loss = model(**batch).loss
    # backward pass
    scaler.scale(loss).backward()
    optimizer.zero_grad(set_to_none=True)
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
""",
            """\
import torch
def train_step(model, batch, optimizer, scaler):
    with torch.autocast("cuda"):
        loss = model(**batch).loss
    # backward pass
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
""",
        ),
        Invalid(
            """\
for epoch in range(10):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
    model.zero_grad()
    optimizer.step()
""",
            """\
for epoch in range(10):
    model.zero_grad()
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
    optimizer.step()
""",
        ),
    ]
