"""MEM404 optimizer-step-before-shared-backward."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider

from memlint.analysis.autograd.grad_mode import GradMode
from memlint.analysis.autograd.graph_reach import calls_module, graph_calls
from memlint.analysis.training.inlined_verbs import inlined, where
from memlint.analysis.training.training_verbs import Verb, VerbKind
from memlint.rule import Invalid, Rule, Safety, Valid

# A GAN whose critic and generator updates sit in two guarded branches of one
# iteration, both through `fake_score`. Whether the generator's backward can
# follow the critic's step in the same iteration is all the examples below
# differ in: the generator's guard, and whether the critic's branch ends the
# iteration.
_TWO_BRANCHES = """\
import torch
G, D = Generator(), Discriminator()
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4)
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)
step = 0
for x, real in loader:
    step += 1
    fake = G(x)
    real_score = D(real)
    fake_score = D(fake)
    if step % d_every == 0:
        d_loss = (fake_score - real_score).mean()
        d_loss.backward(retain_graph=True)
        opt_d.step()
{end_critic}    if {generator_guard}:
        g_loss = -fake_score.mean()
        g_loss.backward()
        opt_g.step()
"""

# A pix2pix/CycleGAN-style model: forward() stores the generator's output on
# `self`, each backward_*() method reads it, optimize_parameters() runs them.
_PIX2PIX = """\
import torch
class Pix2Pix:
    def __init__(self, netG, netD):
        self.netG = netG
        self.netD = netD
        self.optimizer_G = torch.optim.Adam(self.netG.parameters())
        self.optimizer_D = torch.optim.Adam(self.netD.parameters())
    def forward(self):
        self.fake_B = self.netG(self.real_A)
    def backward_G(self):
        self.loss_G = -self.netD(self.fake_B).mean()
        self.loss_G.backward(retain_graph=True)
    def backward_D(self):
        pred_fake = self.netD({fake})
        self.loss_D = pred_fake.mean() - self.netD(self.real_B).mean()
        self.loss_D.backward()
    def optimize_parameters(self):
{order}"""
_G_THEN_D = """\
        self.forward()
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()
{again}        self.optimizer_D.zero_grad()
        self.backward_D()
        self.optimizer_D.step()
"""
_D_THEN_G = """\
        self.forward()
        self.optimizer_D.zero_grad()
        self.backward_D()
        self.optimizer_D.step()
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()
"""


class OptimizerStepBeforeSharedBackward(Rule):
    """
    ## What it does
    Flags `opt.step()` when a graph built earlier through the parameters
    `opt` owns is backpropagated after the step, in the same iteration: the
    classic GAN that computes the generator loss on `D(fake)` before
    `opt_d.step()` and calls `g_loss.backward()` after it.

    ## Why it matters
    Optimizers update parameters in place. The graph built before the step
    saved those parameters for its backward (a linear layer needs its weight
    to pass the gradient to its input), and autograd checks their version
    counters: since torch 1.5 the later backward fails with "one of the
    variables needed for gradient computation has been modified by an
    inplace operation". Before 1.5 it silently computed the gradients with
    the new weights.

    ## Example
    ```python
    fake = G(z)
    d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)
    g_loss = bce(D(fake), ones)          # graph through D's weights
    opt_d.zero_grad(); d_loss.backward(); opt_d.step()   # D's weights change
    opt_g.zero_grad(); g_loss.backward(); opt_g.step()   # RuntimeError
    ```

    ## Use instead
    Compute the second loss after the step (`g_loss = bce(D(fake), ones)`
    right before `g_loss.backward()`), or run every backward before the
    first step.

    ## Fix safety
    No fix: recomputing the loss after the step changes what is computed (the
    generator then sees the updated discriminator, as in the PyTorch DCGAN
    example), while moving the step changes the update order. Only graphs this
    function builds are followed, through local names to their last assignment
    (a name unpacked from a call, `D_fake, D_code = D(G_)`, runs back through
    that call; the optimizer may be built in another method, `self.opt =
    Adam(self.G.parameters())` in `__init__`).

    ## When it stays silent
    A step split across methods (pix2pix/CycleGAN: `forward()` stores
    `self.fake_B = self.netG(self.real_A)`, `optimize_parameters()` steps
    `optimizer_G` and then calls `backward_D()`, whose loss reads `self.fake_B`
    without `.detach()`) is followed from the backward's method to the
    `self.<attr>` it reads and never assigns, and from there to its assignment
    in a method run before the step, or, when none of those assigns it, in the
    one other method of the class that does (DRIT's `forward()`, run by the
    training script before `update_EG()`; `__init__` left out); an attribute a
    method run after the step assigns again is fresh. A loss summed with `+=`
    runs back through each part, and parts unpacked from `torch.split` or
    `.chunk` through the tensor split. A loss recomputed after the step, a graph cut with
    `.detach()` (`D(fake.detach())`), optimizers whose parameters the graph does
    not reach, calls under `torch.no_grad()`, a step and a backward that need
    not run in the same iteration (exclusive branches, a branch that may
    `continue`, two independent `if`s unless both test `i % n == 0` on one
    counter, which holds for both at a multiple of both periods), losses handed
    to another function to backpropagate, and optimizers whose parameters cannot
    be told (passed in from elsewhere) are not reported.

    ## References
    - https://github.com/pytorch/pytorch/issues/39141
    - https://pytorch.org/tutorials/beginner/dcgan_faces_tutorial.html
    - https://pytorch.org/docs/stable/autograd.html#in-place-correctness-checks
    """

    code = "MEM404"
    name = "optimizer-step-before-shared-backward"
    message = (
        "optimizer step between building a graph through its parameters and the backward through that graph: "
        "a RuntimeError (modified by an inplace operation) since torch 1.5"
    )
    detail = (
        "`{step}` updates the weights of `{module}` in place, but `{backward}` later backpropagates through a graph "
        "built with them before the step: a RuntimeError (modified by an inplace operation) since torch 1.5"
    )
    fix_safety = Safety.NONE

    def visit_Module(self, node: cst.Module) -> None:
        verbs = self.facts.verbs
        for step in verbs.verbs:
            if step.kind is VerbKind.STEP and not step.closure and step.target:
                if not self._check(step):
                    self._check_methods(step)

    def _check(self, step: Verb) -> bool:
        facts = self.facts
        verbs = facts.verbs
        owners = verbs.optimizer_modules(step.target or "", step.scope)
        if not owners:
            return False  # which parameters it owns cannot be told
        region = verbs.region(step)
        since = region if isinstance(region, (cst.For, cst.While)) else None
        calls = facts.calls
        at = calls.pos(step.call)
        for backward in verbs.in_region(region):
            if (
                backward.kind is not VerbKind.BACKWARD
                or backward.loss is None
                or backward.scope is not step.scope
                or verbs.region(backward) is not region
                or not (
                    verbs.dominates(step, backward, since)
                    or verbs.follows(step, backward, since)
                    or verbs.co_occur(step, backward, since)
                )
            ):
                continue
            graph = graph_calls(
                backward.loss, step.scope, facts.bindings, calls.pos, calls.end, facts.objects.is_model_call
            )
            for call in graph:
                if calls.pos(call) >= at or facts.grad_mode.mode_at(call) is not GradMode.ENABLED:
                    continue
                module = next((o for o in sorted(owners) if calls_module(call, o)), None)
                if module is not None:
                    code = self.context.module.code_for_node
                    self.report(
                        step.call,
                        message=self.detail.format(step=code(step.call), module=module, backward=code(backward.call)),
                    )
                    return True
        return False

    def _check_methods(self, step: Verb) -> None:
        """A step split across methods (pix2pix/CycleGAN): ``forward()``
        stores ``self.fake_B = self.netG(self.real_A)``, the region steps
        ``optimizer_G`` and then calls ``backward_D()``, whose loss reads
        ``self.fake_B`` without ``.detach()``. Each backward a local method
        runs after the step (inlined_verbs.py) is followed back to the
        ``self.<attr>`` its method never assigns, and each of those to its
        last assignment in a method the region called before the step; an
        attribute some method called between the step and the backward
        assigns again (a fresh forward) is not followed."""
        facts = self.facts
        verbs = facts.verbs
        if step.via is not None or not isinstance(step.scope, cst.FunctionDef):
            return
        owners = verbs.optimizer_modules(step.target or "", step.scope)
        if not owners:
            return
        region = verbs.region(step)
        since = region if isinstance(region, (cst.For, cst.While)) else None
        flat = inlined(verbs, region)
        at = next((v for v in flat if v.call is step.call and v.via is None), None)
        if at is None:
            return
        calls = facts.calls
        for backward in flat:
            if (
                backward.kind is not VerbKind.BACKWARD
                or backward.via is None
                or backward.loss is None
                or backward.index < at.index
                or not (verbs.dominates(at, backward, since) or verbs.follows(at, backward, since))
            ):
                continue
            attrs: list[str] = []
            graph_calls(
                backward.loss,
                backward.scope,
                facts.bindings,
                calls.pos,
                calls.end,
                facts.objects.is_model_call,
                outside=attrs,
            )
            before = {fn for fn in _entered(flat, 0, at.index) if fn is not backward.scope}
            between = _entered(flat, at.index + 1, backward.index + 1)
            outer = self._outer_methods(step.scope, _entered(flat, 0, len(flat)))
            for attr in dict.fromkeys(attrs):
                if any(facts.bindings.binds_in(attr, fn) for fn in between):
                    continue  # assigned again after the step: a fresh graph
                module = self._built_through(attr, before, owners)
                if module is None and not any(facts.bindings.binds_in(attr, fn) for fn in before):
                    # Set by a method the region does not run (DRIT's ``forward()``,
                    # called by the training script before ``update_EG()``): it ran
                    # before the region, so before the step.
                    module = self._built_through(attr, outer, owners)
                if module is not None:
                    code = self.context.module.code_for_node
                    message = self.detail.format(step=code(step.call), module=module, backward=code(backward.call))
                    self.report(step.call, message=f"{message} (`{attr}`, {where(backward, self._line)})")
                    return

    def _outer_methods(self, scope: cst.FunctionDef, entered: set[cst.FunctionDef]) -> set[cst.FunctionDef]:
        """The methods of ``scope``'s class that the region neither is nor
        runs, nor may run through a helper (``self.prepare()`` calling
        ``self.forward()`` after the step would build a fresh graph),
        ``__init__`` left out (its ``self.fake = None`` builds nothing)."""
        block = self.parent(scope)
        cls = self.parent(block) if block is not None else None
        if not isinstance(cls, cst.ClassDef):
            return set()
        left_out = {scope, *entered, *self.facts.calls.reachable(scope)}
        return {
            fn
            for fn in cls.body.body
            if isinstance(fn, cst.FunctionDef) and fn not in left_out and fn.name.value != "__init__"
        }

    def _built_through(self, attr: str, methods: set[cst.FunctionDef], owners: set[str]) -> str | None:
        """The owner module whose forward the last assignment of ``attr`` in
        one of ``methods`` runs with grad on; None when none does, or when
        several of them assign it (which ran last is not read here)."""
        facts = self.facts
        assigning = [fn for fn in methods if facts.bindings.binds_in(attr, fn)]
        if len(assigning) != 1:
            return None
        fn = assigning[0]
        calls = facts.calls
        values = _assigned(facts, attr, fn)
        if not values:
            return None
        value = max(values, key=calls.pos)  # type: ignore[arg-type]
        graph = graph_calls(value, fn, facts.bindings, calls.pos, calls.end, facts.objects.is_model_call)  # type: ignore[arg-type]
        for call in graph:
            if facts.grad_mode.mode_at(call) is not GradMode.ENABLED:
                continue
            module = next((o for o in sorted(owners) if calls_module(call, o)), None)
            if module is not None:
                return module
        return None

    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    # The GAN examples repeat the same update lines (zero_grad, backward,
    # step) on purpose: each is a whole program the rule reads on its own,
    # and where those lines sit (which graph, which branch, before or after
    # which step) is what each one tests. Those that differ in one guard
    # only share _TWO_BRANCHES.
    valid = [
        Valid(
            """\
import torch
import torch.nn.functional as F
G, D = Generator(), Discriminator()
opt_d = torch.optim.Adam(D.parameters())
opt_g = torch.optim.Adam(G.parameters())
for real in loader:
    fake, _ = G(torch.randn(8, 512))
    real_pred = D(real)
    d_loss = F.softplus(D(fake.detach())).mean() + F.softplus(-real_pred).mean()
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    p = tuner.tune(real_pred)
    fake, _ = G(torch.randn(8, 512))
    fake, _ = augment(fake, p)
    g_loss = F.softplus(-D(fake)).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
""",
            "StyleGAN2's adaptive augmentation: `augment` is no model, so what it unpacks is not followed into `p` (a probability tuned on the critic's score)",
        ),
        Valid(
            """\
import torch
class InfoGAN:
    def __init__(self, G, D):
        self.G, self.D = G, D
        self.G_optimizer = torch.optim.Adam(self.G.parameters(), lr=2e-4)
    def train(self, loader):
        for z, code in loader:
            self.G_optimizer.zero_grad()
            G_ = self.G(z)
            D_fake, D_code = self.D(G_)
            G_loss = -D_fake.mean()
            G_loss.backward(retain_graph=True)
            self.G_optimizer.step()
            D_fake, D_code = self.D(self.G(z))
            info_loss = (D_code - code).pow(2).mean()
            info_loss.backward()
""",
            "the code head's outputs are unpacked again from a forward run after the step",
        ),
        Valid(
            """\
import torch
G, D = Generator(), Discriminator()
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4)
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)
for real in loader:
    fake = G(torch.randn(real.size(0), 100))
    d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = bce(D(fake), ones)
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
""",
            "the generator loss is computed after the discriminator's step (the DCGAN example)",
        ),
        Valid(
            """\
import torch
G, D = Generator(), Discriminator()
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4)
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)
for real in loader:
    fake = G(torch.randn(real.size(0), 100))
    d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)
    g_loss = bce(D(fake), ones)
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
""",
            "D(fake.detach()): the discriminator's graph does not reach the generator stepped before it",
        ),
        Valid(
            """\
import torch
opt_a = torch.optim.SGD(model_a.parameters(), lr=0.1)
opt_b = torch.optim.SGD(model_b.parameters(), lr=0.1)
for x, y in loader:
    loss_a = crit(model_a(x), y)
    loss_b = crit(model_b(x), y)
    opt_a.zero_grad()
    loss_a.backward()
    opt_a.step()
    opt_b.zero_grad()
    loss_b.backward()
    opt_b.step()
""",
            "two optimizers over disjoint models whose graphs share nothing",
        ),
        Valid(
            """\
import torch
opt_d = torch.optim.Adam(D.parameters())
opt_g = torch.optim.Adam(G.parameters())
for i, real in enumerate(loader):
    fake = G(z)
    with torch.no_grad():
        score = D(fake)
    d_loss = D(fake.detach()).mean() - D(real).mean()
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    if i % 5 == 0:
        g_loss = -D(fake).mean() + 0 * score.mean()
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
""",
            "a WGAN critic loop: the generator loss is recomputed after the critic's step; the score under no_grad has no graph",
        ),
        Valid(
            """\
import torch
opt_g = torch.optim.Adam(G.parameters())
def step(real, fake, opt_d):
    g_loss = bce(D(fake), ones)
    d_loss = bce(D(real), ones)
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss.backward()
""",
            "an optimizer passed in: which parameters it owns cannot be told",
        ),
        Valid(
            """\
import torch
opt_d = torch.optim.Adam(D.parameters())
opt_g = torch.optim.Adam(G.parameters())
for real in loader:
    fake = G(z)
    g_loss = bce(D(fake), ones)
    d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)
    if warmup:
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
    else:
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
""",
            "the step and the later backward never run in the same iteration",
        ),
        Valid(
            """\
import torch
opt_d = torch.optim.Adam(D.parameters())
opt_g = torch.optim.Adam(G.parameters())
for i, real in enumerate(loader):
    fake = G(z)
    d_loss = D(fake.detach()).mean() - D(real).mean()
    g_loss = -D(fake).mean()
    if i % n_critic:
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        continue
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
""",
            "the critic's step is followed by `continue`: the generator's backward never runs after it",
        ),
        Valid(
            """\
import torch
opt_d = torch.optim.Adam(D.parameters())
opt_g = torch.optim.Adam(G.parameters())
for it, real in enumerate(loader):
    fake = G(z)
    fake_score = D(fake)
    if phase == "critic":
        opt_d.zero_grad()
        (fake_score.mean() - D(real).mean()).backward(retain_graph=True)
        opt_d.step()
    if phase == "generator":
        opt_g.zero_grad()
        (-fake_score.mean()).backward()
        opt_g.step()
""",
            "two independent branches whose conditions may exclude each other: cannot tell",
        ),
        Valid(
            _TWO_BRANCHES.format(end_critic="", generator_guard="step % d_every == 1"),
            "`step % d_every == 1` and `== 0`: not both in one iteration when the periods are equal; cannot be told",
        ),
        Valid(
            _TWO_BRANCHES.format(end_critic="", generator_guard="epoch % g_every == 0"),
            "two different counters: whether both branches run together cannot be told",
        ),
        Valid(
            _TWO_BRANCHES.format(end_critic="        continue\n", generator_guard="step % g_every == 0"),
            "the discriminator branch ends the iteration: the generator backward never follows its step",
        ),
        Valid(
            _PIX2PIX.format(fake="self.fake_B.detach()", order=_D_THEN_G),
            "pix2pix: the discriminator's loss detaches the stored fake; the generator's runs a fresh netD forward after its step",
        ),
        Valid(
            _PIX2PIX.format(fake="self.fake_B", order=_D_THEN_G),
            "the discriminator's loss reaches netG through the stored fake, but optimizer_D owns netD only (netD runs again after its step)",
        ),
        Valid(
            _PIX2PIX.format(fake="self.fake_B.detach()", order=_G_THEN_D.format(again="")),
            "generator first: the discriminator's loss detaches the fake built before the generator's step",
        ),
        Valid(
            _PIX2PIX.format(fake="self.fake_B", order=_G_THEN_D.format(again="        self.forward()\n")),
            "forward() runs again after the generator's step: the discriminator's loss reads a fresh fake",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch
class InfoGAN:
    def __init__(self, G, D):
        self.G, self.D = G, D
        self.G_optimizer = torch.optim.Adam(self.G.parameters(), lr=2e-4)
    def train(self, loader):
        for z, code in loader:
            self.G_optimizer.zero_grad()
            G_ = self.G(z)
            D_fake, D_code = self.D(G_)
            G_loss = -D_fake.mean()
            G_loss.backward(retain_graph=True)
            self.G_optimizer.step()
            info_loss = (D_code - code).pow(2).mean()
            info_loss.backward()
""",
            None,
        ),
        Invalid(
            _TWO_BRANCHES.format(end_critic="", generator_guard="step % g_every == 0"),
            None,
        ),
        Invalid(
            """\
import itertools
import torch
ge_chain = itertools.chain(generator.parameters(), encoder.parameters())
optimizer_GE = torch.optim.Adam(ge_chain, lr=1e-4)
optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=1e-4)
for i, (imgs, _) in enumerate(dataloader):
    gen_imgs = generator(zn, zc)
    D_gen = discriminator(gen_imgs)
    D_real = discriminator(imgs)
    if i % n_skip_iter == 0:
        ge_loss = torch.mean(D_gen) + zn_loss(encoder(gen_imgs), zn)
        optimizer_GE.zero_grad()
        ge_loss.backward(retain_graph=True)
        optimizer_GE.step()
    d_loss = torch.mean(D_real) - torch.mean(D_gen)
    optimizer_D.zero_grad()
    d_loss.backward()
    optimizer_D.step()
""",
            None,
        ),
        Invalid(
            """\
import torch
G, D = Generator(), Discriminator()
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4)
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)
for real in loader:
    fake = G(torch.randn(real.size(0), 100))
    d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)
    g_loss = bce(D(fake), ones)
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
""",
            None,
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
netG = Generator()
netD = Discriminator()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4)
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4)
criterion = nn.BCELoss()
def train_step(real, noise):
    fake = netG(noise)
    output_real = netD(real).view(-1)
    output_fake = netD(fake).view(-1)
    errD = criterion(output_real, ones) + criterion(output_fake, zeros)
    netD.zero_grad()
    errD.backward(retain_graph=True)
    optimizerD.step()
    errG = criterion(output_fake, ones)
    netG.zero_grad()
    errG.backward()
    optimizerG.step()
""",
            None,
        ),
        Invalid(
            """\
import torch
opt_g = torch.optim.RMSprop(G.parameters(), lr=5e-5)
opt_d = torch.optim.RMSprop(D.parameters(), lr=5e-5)
for real in loader:
    fake = G(z)
    g_loss = -D(fake).mean()
    opt_g.zero_grad()
    g_loss.backward(retain_graph=True)
    opt_g.step()
    d_loss = D(fake).mean() - D(real).mean()
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
""",
            None,
        ),
        Invalid(
            """\
import torch
scaler = torch.amp.GradScaler("cuda")
opt_d = torch.optim.Adam(self_d.parameters())
opt_g = torch.optim.Adam(self_g.parameters())
for real in loader:
    fake = self_g(z)
    logits_fake = self_d.forward(fake)
    d_loss = bce(self_d(real), ones) + bce(logits_fake, zeros)
    opt_d.zero_grad()
    scaler.scale(d_loss).backward(retain_graph=True)
    scaler.step(opt_d)
    g_loss = bce(logits_fake, ones)
    opt_g.zero_grad()
    scaler.scale(g_loss).backward()
    scaler.step(opt_g)
    scaler.update()
""",
            None,
        ),
        Invalid(
            _PIX2PIX.format(fake="self.fake_B", order=_G_THEN_D.format(again="")),
            None,
        ),
        Invalid(
            """\
import torch
class Translator:
    def __init__(self, gen, dis):
        self.gen, self.dis = gen, dis
        self.gen_opt = torch.optim.Adam(self.gen.parameters())
    def forward(self, content, style):
        out = self.gen(torch.cat((content, content), 0), torch.cat((style, torch.randn_like(style)), 0))
        self.fake, self.fake_random = out.chunk(2)
    def update_G(self, target):
        self.gen_opt.zero_grad()
        loss = (self.fake - target).abs().mean()
        loss.backward(retain_graph=True)
        self.gen_opt.step()
        self.gen_opt.zero_grad()
        self.backward_random()
        self.gen_opt.step()
    def backward_random(self):
        loss = 0
        loss += -self.dis(self.fake_random).mean()
        loss.backward()
""",
            None,
        ),
        Invalid(
            """\
import torch
class GAN:
    def __init__(self, netG, netD):
        self.netG, self.netD = netG, netD
        self.opt_G = torch.optim.Adam(self.netG.parameters())
        self.opt_D = torch.optim.Adam(self.netD.parameters())
    def forward(self, z):
        self.fake = self.netG(z)
    def backward_D(self, real):
        self.pred_fake = self.netD(self.fake.detach())
        loss_D = self.pred_fake.mean() - self.netD(real).mean()
        loss_D.backward(retain_graph=True)
    def backward_G(self):
        loss_G = -self.pred_fake.mean()
        loss_G.backward()
    def step(self, z, real):
        self.forward(z)
        self.opt_D.zero_grad()
        self.backward_D(real)
        self.opt_D.step()
        self.opt_G.zero_grad()
        self.backward_G()
        self.opt_G.step()
""",
            None,
        ),
    ]


def _assigned(facts, attr: str, fn: cst.FunctionDef) -> list[cst.BaseExpression] | None:
    """What ``fn`` assigns to ``attr``; an unpacked one (``self.fake_a, self.fake_b
    = torch.split(out, n)``) as the call it unpacks, when that call is a
    model's or splits one tensor. None when some assignment cannot be read."""
    values = facts.bindings.values_in(attr, fn)
    unknown = sum(v is None for v in values)
    if not unknown:
        return values
    unpacked = facts.bindings.unpacked_in(attr, fn)
    if len(unpacked) != unknown or not all(facts.objects.is_model_call(c) or _splits(c, facts) for c in unpacked):
        return None
    return [*(v for v in values if v is not None), *unpacked]


def _splits(call: cst.Call, facts) -> bool:
    """``torch.split(x, n)``, ``x.chunk(2)``: each part is a view of one tensor."""
    func = call.func
    if facts.names.call_name(call) in _SPLIT_FUNCTIONS:
        return True
    return isinstance(func, cst.Attribute) and func.attr.value in _SPLIT_METHODS


_SPLIT_FUNCTIONS = frozenset({"torch.split", "torch.chunk", "torch.unbind", "torch.tensor_split"})
_SPLIT_METHODS = frozenset({"split", "chunk", "unbind", "tensor_split"})


def _entered(flat: list[Verb], start: int, stop: int) -> set[cst.FunctionDef]:
    """The local functions the verbs ``flat[start:stop]`` run in or call:
    the scopes of inlined copies and the callees of calls left whole."""
    out: set[cst.FunctionDef] = set()
    for verb in flat[start:stop]:
        if verb.via is not None and isinstance(verb.scope, cst.FunctionDef):
            out.add(verb.scope)
        if verb.kind is VerbKind.CALL and verb.callee is not None:
            out.add(verb.callee)
    return out
