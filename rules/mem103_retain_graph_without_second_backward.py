"""MEM103 retain-graph-without-second-backward."""

from __future__ import annotations

import re

import libcst as cst

from memlint.analysis.autograd.retained_sites import RetainedSites
from memlint.analysis.autograd.settings_callers import settled_by_callers
from memlint.fix.call_args import keyword_arg, remove_arg
from memlint.rule import Fix, Invalid, Rule, Safety, Valid

# A Grad-CAM helper that backpropagates once per call; the examples below
# differ only in how it is called.
_CAM = """\
import numpy as np

class CAM:
    def __init__(self, model):
        self.model = model
    def generate(self, image, k):
        out = self.model(image)
        out[0, k].backward(retain_graph=True)
        return np.abs(self.model.grads.numpy())
"""
_CAM_FIXED = _CAM.replace("backward(retain_graph=True)", "backward()")


# GANomaly's split update (``optimize_params``): ``backward_d``'s loss is built
# in ``forward_d`` from a buffer filled under ``no_grad`` and the detached fake,
# so it runs through nothing ``backward_g`` retained (analysis/autograd/method_graphs.py).
_GAN = """\
import torch


class GAN:
    def __init__(self, netg, netd):
        self.netg = netg
        self.netd = netd
        self.input = torch.empty(4, 3)
        self.real = torch.ones(4)
        self.opt_g = torch.optim.Adam(netg.parameters())
        self.opt_d = torch.optim.Adam(netd.parameters())

    def set_input(self, batch):
        with torch.no_grad():
            self.input.resize_(batch.size()).copy_(batch)

    def forward_g(self):
        self.fake = self.netg(self.input)

    def forward_d(self):
        self.pred_real = self.netd(self.input)
        self.pred_fake = self.netd(self.fake.detach())

    def backward_g(self):
        self.err_g = (self.netd(self.fake) - self.real).pow(2).mean()
        self.err_g.backward(retain_graph=True)

    def backward_d(self):
        self.err_d = (self.pred_real - self.real).pow(2).mean() + self.pred_fake.pow(2).mean()
        self.err_d.backward()

    def optimize(self):
        self.forward_g()
        self.forward_d()
        self.opt_g.zero_grad()
        self.backward_g()
        self.opt_g.step()
        self.opt_d.zero_grad()
        self.backward_d()
        self.opt_d.step()
"""


# A gradient penalty on a new leaf (``Variable`` detaches what it wraps): its
# graph runs through ``D`` and that leaf only; the examples differ after it.
_GP = """\
import torch
from torch.autograd import Variable


def penalty(D, real):
    x = Variable(real, requires_grad=True)
    grads = torch.autograd.grad(D(x).sum(), x, create_graph=True, retain_graph=True)[0]
    loss = (grads.norm(2, dim=1) - 1).pow(2).mean()
    loss.backward(retain_graph=True)
    return loss.item()
"""


class RetainGraphWithoutSecondBackward(Rule):
    """
    ## What it does
    Flags `loss.backward(retain_graph=True)` and `torch.autograd.grad(...,
    retain_graph=True)` when nothing later in the same iteration backpropagates
    through that graph again (a later backward anywhere in an enclosing
    iteration counts: `for l in losses[:-1]: l.backward(retain_graph=True)` then
    `losses[-1].backward()`).

    ## Why it matters
    `retain_graph=True` keeps every buffer the backward pass needed (the saved
    activations) alive after it ran, so they are freed only when the graph
    itself dies. With no second backward they are simply kept for nothing, and
    when the loss is referenced from the next iteration (a carried hidden
    state) the retained graphs pile up batch after batch. It is often added to
    silence "Trying to backward through the graph a second time", which hides
    the real bug (see MEM104).

    ## Example
    ```python
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward(retain_graph=True)
        optimizer.step()
    ```

    ## Use instead
    ```python
        loss.backward()
    ```

    ## Fix safety
    Unsafe: the fix drops the argument. If some code the analysis cannot see
    backpropagates through the same graph again (a caller in another module, a
    hook), that code would then fail with "Trying to backward through the
    graph a second time".

    ## Details
    A helper that backpropagates once per call (saliency, Grad-CAM) is reported
    when its graph dies with it, or when every call of it in the module
    (`cam.generate_cam(img)` on a local `cam = GradCam(model)` included) is
    followed by nothing that could backpropagate through what it was given, or,
    when its module never calls it, when every other module of the project that
    builds its class (`cam = GradCAM(model)` in main.py) uses the instance only
    to call it, on values fresh at that call (a name bound in the loop around
    it, read nowhere after it), in a scope with no backward, and no module
    subclasses the class. Later backwards are followed through the values they
    were computed from, so a GAN that rebuilds the generator's pass (`G_ =
    self.G(z_)` again) before the generator's loss does not count as a second
    backward through the discriminator's retained graph; a name assigned on some
    paths only (`if gpu: z_ = z_.cuda()`) counts as holding no graph only when
    every value it may hold has none. `Variable(x, requires_grad=True)` is a new
    leaf (the legacy constructor detaches `x`), so a gradient penalty on it builds
    its graph in the helper. When the graph also reads parameters and the helper
    is called only from other modules, it is reported when every caller passes
    each of them a literal or a settings value (`self.config.lambdaGP`), or a local
    name whose graph dies after the call: nothing later in the calling function
    backpropagates, and nothing of that graph is kept, returned or read again.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html
    """

    code = "MEM103"
    name = "retain-graph-without-second-backward"
    message = (
        "`retain_graph=True` but nothing backpropagates through this graph again; its buffers are kept for nothing"
    )
    fix_safety = Safety.UNSAFE
    project_facts = (
        "The modules that build a class whose method backpropagates with `retain_graph=True` when its own "
        "module never calls it (a Grad-CAM class in cam.py, built in main.py): reported when every other "
        "module of the project builds it only as a closed instance (bound once, used only to call it, on "
        "values fresh at that call, in a scope with no backward) and no module subclasses it; the message "
        'names where ("its class is built only at main.py:7"). A function (not called in its own module) '
        "whose retained graph is built in it from leaves, modules and its parameters: reported when every "
        "caller in another module passes each parameter the graph reads a literal or a settings value "
        "(`self.config.lambdaGP`), or a local name whose graph dies in the calling function after the call "
        "(no later backward there, nothing of it kept or returned); the message names the callers."
    )

    def visit_Call(self, node: cst.Call) -> None:
        arg = keyword_arg(node, "retain_graph")
        if arg is None or not (isinstance(arg.value, cst.Name) and arg.value.value == "True"):
            return
        create = keyword_arg(node, "create_graph")
        if create is not None and not (isinstance(create.value, cst.Name) and create.value.value == "False"):
            return  # higher-order gradients need the graph
        facts = self.facts
        if not facts.objects.is_backward_call(node):
            return
        if facts.recurrent.states_around(node):
            return  # a carried hidden state backpropagates through old graphs (MEM104)
        loops = facts.loops
        if any(facts.recurrent.carries_call_results(outer) for outer in loops.enclosing_loops(node) or []):
            return  # last iteration's output feeds this one: the next backward may reach this graph
        loop = loops.loop_of(node)
        scope = loops.scope_of(node)
        message = None
        sites = RetainedSites(facts)
        # ``for l in losses[:-1]: l.backward(retain_graph=True)`` then
        # ``losses[-1].backward()``: later in an enclosing iteration counts.
        if any(sites.later_backward(node, scope, outer) for outer in loops.enclosing_loops(node) or [None]):
            return
        if loop is not None:
            if not sites.graph_built_in(node, loop):
                return  # the same graph is backpropagated on every pass of this loop
        elif isinstance(scope, cst.FunctionDef) and not (
            sites.graph.dies_in(node, scope) or sites.graph.built_here(node, scope)
        ):
            calls = sites.sites(scope)
            if not calls:
                built = self._built_elsewhere(scope)
                settled = () if built else settled_by_callers(facts, node, scope)
                if not (built or settled):
                    return
                where = ", ".join((built or settled)[:3]) + (", ..." if len(built or settled) > 3 else "")
                if built:
                    message = f"{self.message} (its class is built only at {where}: no caller backpropagates again)"
                else:
                    message = f"{self.message} (the graph is built here; no caller backpropagates again: {where})"
            elif not all(sites.done_after(site, scope, retained=node) for site in calls):
                return
        fix = Fix("Drop `retain_graph=True`", ((node, remove_arg(node, arg)),), Safety.UNSAFE)
        self.report(node, message=message, fix=fix)

    def _built_elsewhere(self, method: cst.FunctionDef) -> tuple[str, ...]:
        """Where other modules build the method's class, when every one of
        them builds a closed instance (project/closed_instances.py: used
        only to call it, on fresh values kept nowhere, in a scope with no
        backward) and this module neither calls the method nor names the
        class again (a factory here could hand an instance anywhere)."""
        facts = self.facts
        project = facts.project
        cls = facts.calls.class_of.get(method)
        if project is None or cls is None or cls not in self.context.module.body:
            return ()
        if method in facts.calls.escapes or facts.instance_calls.sites(method) != []:
            return ()
        name = cls.name.value
        if len(re.findall(rf"(?<!super\()\b{re.escape(name)}\b", self.context.source)) != 1:
            return ()
        return project.closed_class(name)

    valid = [
        Valid(
            _GP.replace("return loss.item()", "return loss"),
            "the penalty is returned: a caller may backpropagate it again",
        ),
        Valid(
            _GP.replace(
                "    return loss.item()",
                "    extra = torch.autograd.grad(loss, list(D.parameters()))\n    return loss.item(), extra",
            ),
            "`autograd.grad` differentiates the same loss again after the retained backward",
        ),
        Valid(
            _GP.replace(
                "    loss.backward(retain_graph=True)\n",
                "    for _ in range(2):\n        loss.backward(retain_graph=True)\n",
            ),
            "a loop backpropagates the same graph on every pass",
        ),
        Valid(
            _GP.replace("Variable(real, requires_grad=True)", "real.requires_grad_()"),
            "the graph runs through the caller's tensor, which may carry history the caller backpropagates again",
        ),
        Valid(
            """\
import torch
import torch.nn.functional as F
def trades(model, x, steps):
    p_nat = F.softmax(model(x), dim=1)
    delta = torch.zeros_like(x, requires_grad=True)
    for _ in range(steps):
        loss = F.kl_div(F.log_softmax(model(x + delta), dim=1), p_nat)
        loss.backward(retain_graph=True)
        delta.data.add_(delta.grad.sign())
    return delta
""",
            "every pass backpropagates again through p_nat's graph, built once before the loop",
        ),
        Valid(
            """\
import torch
class GAN:
    def train(self, loader):
        for x_, _ in loader:
            z_ = torch.rand(x_.size(0), 62)
            if self.gpu_mode:
                x_, z_ = x_.cuda(), z_.cuda()
            if self.refine:
                z_ = self.encoder(x_)
            self.D_optimizer.zero_grad()
            G_ = self.G(z_)
            D_loss = self.D(x_).mean() - self.D(G_).mean()
            self.hist.append(D_loss.item())
            D_loss.backward(retain_graph=True)
            self.D_optimizer.step()
            self.G_optimizer.zero_grad()
            G_ = self.G(z_)
            G_loss = -self.D(G_).mean()
            G_loss.backward()
            self.G_optimizer.step()
""",
            "the noise may come from the encoder on some paths: both generator passes then share its graph",
        ),
        Valid(
            """\
import torch.nn.functional as F
def train(model, loader, opt):
    for x, y in loader:
        out = model(x)
        losses = [F.cross_entropy(out, y), out.pow(2).mean()]
        opt.zero_grad()
        for l in losses[:-1]:
            l.backward(retain_graph=True)
        losses[-1].backward()
        opt.step()
""",
            "every retained graph is backpropagated again after the inner loop",
        ),
        Valid(
            """\
import torch
for real, _ in loader:
    fake = netG(torch.randn(64, 100))
    errD = criterion(netD(real), ones) + criterion(netD(fake), zeros)
    errD.backward(retain_graph=True)
    optD.step()
    errG = criterion(netD(fake), ones)
    errG.backward()
    optG.step()
""",
            "a second backward through the shared graph (GAN)",
        ),
        Valid(
            """\
import torch
for x, y in loader:
    out = model(x)
    loss_a = crit_a(out, y)
    loss_b = crit_b(out, y)
    loss_a.backward(retain_graph=True)
    loss_b.backward()
    optimizer.step()
""",
            "multi-loss: two backward calls through one graph",
        ),
        Valid(
            """\
import torch
x = torch.randn(3, requires_grad=True)
y = model(x)
for i in range(3):
    y[i].backward(retain_graph=True)
    print(x.grad)
""",
            "the same graph is backpropagated on every pass of the loop",
        ),
        Valid(
            """\
import torch
for x, y in loader:
    loss = criterion(model(x), y)
    (g,) = torch.autograd.grad(loss, x, retain_graph=True, create_graph=True)
    (loss + g.pow(2).sum()).backward()
""",
            "gradient penalty: create_graph needs the graph",
        ),
        Valid(
            """\
import torch
hidden = model.init_hidden(32)
for x, y in loader:
    out, hidden = model(x, hidden)
    loss = criterion(out, y)
    loss.backward(retain_graph=True)
    optimizer.step()
""",
            "a carried hidden state makes the next backward go through this graph (MEM104 reports it)",
        ),
        Valid(
            """\
import torch
for dialogue in loader:
    for turn, batch in enumerate(dialogue):
        if turn:
            batch["state"] = out["state"]
        out = model(batch)
        loss = criterion(out["logits"], batch["y"])
        loss.backward(retain_graph=True)
        collect(model)
        optimizer.zero_grad()
""",
            "the previous turn's output feeds this turn's batch: the next backward goes through this graph",
        ),
        Valid(
            """\
import torch
def saliency(model, image, label):
    image = image.clone().requires_grad_(True)
    logits = model(image.unsqueeze(0))
    logits[0, label].backward(retain_graph=True)
    return image.grad.abs(), logits
""",
            "the helper returns the output: a caller may backpropagate through the graph again",
        ),
        Valid(
            """\
import torch
for x, y in loader:
    feats = encoder(x)
    loss1 = crit(head1(feats), y)
    loss1.backward(retain_graph=True)
    loss2 = crit(head2(feats + noise), y)
    loss2.backward()
    optimizer.step()
""",
            "the second loss shares feats with the first: one graph, two backwards",
        ),
        Valid(
            """\
import torch
def explain(model, x, target):
    out = model(x)
    out[0, target].backward(retain_graph=True)
    return x.grad
for batch in loader:
    feats = backbone(batch)
    attribution = explain(head, feats, 0)
    feats.sum().backward()
""",
            "the caller passes features with history and backpropagates through them afterwards",
        ),
        Valid(
            """\
import torch
import torch.nn.functional as F
class Agent:
    def __init__(self):
        self.actor = Actor()
        self.critic = Critic()
    def learn(self, batch):
        state = torch.tensor(batch["s"])
        actions, log_probs = self.actor.sample(state)
        q = self.critic(state, actions)
        value_loss = F.mse_loss(q, log_probs.detach())
        value_loss.backward(retain_graph=True)
        actor_loss = (log_probs - self.critic(state, actions)).mean()
        actor_loss.backward()
""",
            "the actor loss reuses the sampled actions: it backpropagates through the retained graph",
        ),
        Valid(
            """\
import torch
import torch.nn.functional as F
class Agent:
    def __init__(self):
        self.actor = Actor()
        self.critic = Critic()
    def learn(self, batch, refresh):
        state = torch.tensor(batch["s"])
        actions, log_probs = self.actor.sample(state)
        value_loss = F.mse_loss(self.critic(state, actions), log_probs.detach())
        value_loss.backward(retain_graph=True)
        if refresh:
            actions, log_probs = self.actor.sample(state)
        actor_loss = (log_probs - self.critic(state, actions)).mean()
        actor_loss.backward()
""",
            "the actions are resampled only on some paths: the later loss may reuse the retained graph",
        ),
        Valid(
            """\
import torch
class GAN:
    def update(self, fake):
        d_loss = self.D(fake).mean()
        d_loss.backward(retain_graph=True)
        self.opt_d.step()
        g_loss = -self.D(fake).mean()
        g_loss.backward()
""",
            "both losses go back through the caller's `fake`: one graph, two backwards",
        ),
        Valid(
            """\
import torch
import torch.nn.functional as F
class Agent:
    def learn(self, s, a, r):
        q = self.critic(s, a)
        self.last_q = q
        q_loss = F.mse_loss(q, r)
        q_loss.backward(retain_graph=True)
        pi_loss = -self.score(self.last_q).mean()
        pi_loss.backward()
""",
            "the first graph is stored on an attribute the later loss reads",
        ),
        Valid(
            """\
import torch.nn.functional as F
for s, a, r in loader:
    v = value_net(s)
    q = q_net(s, a)
    v_loss = F.mse_loss(v, q)
    v_loss.backward(retain_graph=True)
    q_loss = F.mse_loss(q, r)
    q_loss.backward()
""",
            "the value target is not detached: the Q loss backpropagates through the retained q",
        ),
        Valid(
            """\
import numpy as np
class GuidedBackprop:
    def __init__(self, model):
        self.model = model
    def forward(self, x):
        self.last_output = self.model(x)
        return self.last_output
    def __call__(self, image, target=None):
        image = image.requires_grad_(True)
        output = self.forward(image)
        if target is None:
            target = np.argmax(output.cpu().data.numpy())
        output[0, target].backward(retain_graph=True)
        output = image.grad.cpu().numpy()
        return output[0]
""",
            "the forward helper keeps its output on `self`: later code may backpropagate through it",
        ),
        Valid(
            """\
import numpy as np
class GuidedBackprop:
    def __init__(self, model):
        self.model = model
    def forward(self, x):
        return self.model(x)
    def __call__(self, image, target=None):
        image = image.requires_grad_(True)
        output = self.forward(image)
        if target is None:
            target = np.argmax(output.cpu().data.numpy())
        output[0, target].backward(retain_graph=True)
        if self.as_numpy:
            output = image.grad.cpu().numpy()
        self.cache.append(output)
""",
            "the output is replaced only on some paths and then stored",
        ),
        Valid(
            _CAM
            + """\
feats = backbone(x)
cam = CAM(head)
heat = cam.generate(feats, 0)
feats.sum().backward()
""",
            "the caller backpropagates through the features it handed to the method afterwards",
        ),
        Valid(
            _CAM
            + """\
cam = CAM(net)
heat = cam.generate(img, 0)
explain_all(cam, batches)
""",
            "the instance is handed to code that may call the method again on tensors with history",
        ),
        Valid(
            _CAM
            + """\
class TwoStage(CAM):
    def generate(self, image, k):
        feats = self.stem(image)
        heat = super().generate(feats, k)
        feats.sum().backward()
        return heat
plain = CAM(net)
heat = plain.generate(photo, 0)
staged = TwoStage(net)
staged_heat = staged.generate(scan, 0)
""",
            "a subclass's override calls the method and backpropagates again through what it passed to it",
        ),
        Valid(
            _CAM
            + """\
cam = CAM(net)
if fine_tune:
    cam = Trainer(net)
cam.generate(img, 0)
""",
            "the name is rebound to an object of another class: its method is unknown",
        ),
        Valid(
            _CAM
            + """\
def explain(head, feats):
    cam = CAM(head)
    cam.generate(feats, 0)
    return feats
for x in loader:
    out = explain(head, backbone(x))
    out.sum().backward()
""",
            "the caller returns the features it passed, and its caller backpropagates through them",
        ),
        Valid(
            _CAM
            + """\
def explain(head, feats):
    cam = CAM(head)
    cam.generate(feats, 0)
for x in loader:
    feats = backbone(x)
    explain(head, feats)
    feats.sum().backward()
""",
            "the features come from the caller's caller, which backpropagates through them afterwards",
        ),
        Valid(
            _CAM
            + """\
feats = backbone(x)
cam = CAM(head)
for k in range(3):
    heat = cam.generate(feats, k)
    save(heat)
""",
            "every iteration hands the same features to the method: each call backpropagates through their graph again",
        ),
        Valid(
            _CAM
            + """\
feats = backbone(x)
first, second = feats[:1], feats[1:]
cam = CAM(head)
save(cam.generate(first, 0))
save(cam.generate(second, 1))
""",
            "the second call backpropagates through the backbone's graph, shared with what the first call got",
        ),
        Valid(
            _GAN.replace("self.netd(self.fake.detach())", "self.netd(self.fake)"),
            "the later method's loss runs through `self.fake`, part of the graph `backward_g` retained",
        ),
        Valid(
            _GAN.replace(
                "        self.fake = self.netg(self.input)\n",
                "        h = self.netg(self.input)\n        self.fake = h * 2\n        self.shadow = h + 1\n",
            ).replace("self.netd(self.fake.detach())", "self.netd(self.shadow)"),
            "`self.shadow` and `self.fake` come from the same forward `h`: both graphs run through it",
        ),
        Valid(
            _GAN.replace("        with torch.no_grad():\n            self.input", "        self.input"),
            "the buffer is filled in place with grad on from a batch that may carry history, shared by both graphs",
        ),
        Valid(
            _GAN.replace("self.pred_real = self.netd(self.input)", "self.pred_real = self.netd(self.noise)"),
            "`self.noise` is assigned nowhere in the class: what it holds is not known",
        ),
        Valid(
            _GAN.replace("class GAN:", "from base import Base\n\n\nclass GAN(Base):"),
            "an imported base class may assign the attributes the later loss reads",
        ),
        Valid(
            """\
import torch


def train(model_a, model_b, loader, optimizer, criterion_a, criterion_b, meter, log):
    for inputs, targets in loader:
        outputs_a = model_a(inputs)[1]
        outputs_b = model_b(inputs)[1].detach()
        loss_mse = criterion_a(outputs_a, outputs_b)
        optimizer.zero_grad()
        loss_mse.backward(retain_graph=True)
        outputs_a = model_a(inputs)[0]
        loss_cls = criterion_b(outputs_a, targets)
        loss_cls.backward()
        (loss_cls + loss_mse).backward()
        optimizer.step()
        meter.update(loss_mse.data, inputs.size(0))
        log(outputs_a, targets)
        print("{loss_mse.avg}".format(loss_mse=meter))
""",
            "the sum of both losses is backpropagated again, through the retained graph",
        ),
        Valid(
            """\
import torch


def train(model_a, model_b, loader, optimizer, criterion_a, criterion_b, meter, log):
    for inputs, targets in loader:
        outputs_a = model_a(inputs)[1]
        outputs_b = model_b(inputs)[1].detach()
        loss_mse = criterion_a(outputs_a, outputs_b)
        optimizer.zero_grad()
        loss_mse.backward(retain_graph=True)
        log(outputs_a, targets)
        outputs_a = model_a(inputs)[0]
        loss_cls = criterion_b(outputs_a, targets)
        loss_cls.backward()
        optimizer.step()
        meter.update(loss_mse.data, inputs.size(0))
        log(outputs_a, targets)
        print("{loss_mse.avg}".format(loss_mse=meter))
""",
            "the retained graph's output goes to an unknown call before the name is bound anew",
        ),
        Valid(
            """\
import torch


def train(model_a, model_b, loader, optimizer, criterion_a, criterion_b, meter, log):
    for inputs, targets in loader:
        outputs_a = model_a(inputs)[1]
        outputs_b = model_b(inputs)[1].detach()
        loss_mse = criterion_a(outputs_a, outputs_b)
        optimizer.zero_grad()
        loss_mse.backward(retain_graph=True)
        if targets is not None:
            outputs_a = model_a(inputs)[0]
        loss_cls = criterion_b(outputs_a, targets)
        loss_cls.backward()
        optimizer.step()
        meter.update(loss_mse.data, inputs.size(0))
        log(outputs_a, targets)
        print("{loss_mse.avg}".format(loss_mse=meter))
""",
            "bound anew on one path only: the second loss may run through the retained graph",
        ),
    ]
    invalid = [
        Invalid(_GP, _GP.replace("loss.backward(retain_graph=True)", "loss.backward()")),
        Invalid(
            """\
import torch
def reinforce(policy, optimizer, steps, returns):
    log_prob = [policy(s).log_softmax(-1)[a] for s, a in steps]
    for i in range(len(returns)):
        optimizer.zero_grad()
        loss = -log_prob[i] * returns[i]
        loss.backward(retain_graph=True)
        optimizer.step()
""",
            """\
import torch
def reinforce(policy, optimizer, steps, returns):
    log_prob = [policy(s).log_softmax(-1)[a] for s, a in steps]
    for i in range(len(returns)):
        optimizer.zero_grad()
        loss = -log_prob[i] * returns[i]
        loss.backward()
        optimizer.step()
""",
        ),
        Invalid(
            """\
import torch
import torch.nn.functional as F
def trades(model, x, steps):
    p_nat = F.softmax(model(x), dim=1).detach()
    delta = torch.zeros_like(x, requires_grad=True)
    for _ in range(steps):
        p_adv = F.log_softmax(model(x + delta), dim=1)
        loss = F.kl_div(p_adv, F.softmax(model(x), dim=1))
        loss.backward(retain_graph=True)
        delta.data.add_(delta.grad.sign())
    return delta
""",
            """\
import torch
import torch.nn.functional as F
def trades(model, x, steps):
    p_nat = F.softmax(model(x), dim=1).detach()
    delta = torch.zeros_like(x, requires_grad=True)
    for _ in range(steps):
        p_adv = F.log_softmax(model(x + delta), dim=1)
        loss = F.kl_div(p_adv, F.softmax(model(x), dim=1))
        loss.backward()
        delta.data.add_(delta.grad.sign())
    return delta
""",
        ),
        Invalid(
            """\
import torch
class GAN:
    def train(self, loader):
        for x_, _ in loader:
            z_ = torch.rand(x_.size(0), 62)
            if self.gpu_mode:
                x_, z_ = x_.cuda(), z_.cuda()
            self.D_optimizer.zero_grad()
            G_ = self.G(z_)
            D_loss = self.D(x_).mean() - self.D(G_).mean()
            self.hist.append(D_loss.item())
            D_loss.backward(retain_graph=True)
            self.D_optimizer.step()
            self.G_optimizer.zero_grad()
            G_ = self.G(z_)
            G_loss = -self.D(G_).mean()
            G_loss.backward()
            self.G_optimizer.step()
""",
            """\
import torch
class GAN:
    def train(self, loader):
        for x_, _ in loader:
            z_ = torch.rand(x_.size(0), 62)
            if self.gpu_mode:
                x_, z_ = x_.cuda(), z_.cuda()
            self.D_optimizer.zero_grad()
            G_ = self.G(z_)
            D_loss = self.D(x_).mean() - self.D(G_).mean()
            self.hist.append(D_loss.item())
            D_loss.backward()
            self.D_optimizer.step()
            self.G_optimizer.zero_grad()
            G_ = self.G(z_)
            G_loss = -self.D(G_).mean()
            G_loss.backward()
            self.G_optimizer.step()
""",
        ),
        Invalid(
            """\
import torch
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward(retain_graph=True)
    optimizer.step()
""",
            """\
import torch
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
""",
        ),
        Invalid(
            """\
import torch
def train_step(model, batch, opt):
    out = model(batch["x"])
    loss = (out - batch["y"]).pow(2).mean()
    grads = torch.autograd.grad(loss, list(model.parameters()),
                                retain_graph=True)
    for p, g in zip(model.parameters(), grads):
        p.grad = g
    opt.step()
for batch in loader:
    train_step(model, batch, opt)
""",
            """\
import torch
def train_step(model, batch, opt):
    out = model(batch["x"])
    loss = (out - batch["y"]).pow(2).mean()
    grads = torch.autograd.grad(loss, list(model.parameters()))
    for p, g in zip(model.parameters(), grads):
        p.grad = g
    opt.step()
for batch in loader:
    train_step(model, batch, opt)
""",
        ),
        Invalid(
            """\
import torch
from losses import compute_loss
for batch in loader:
    optimizer.zero_grad()
    loss = compute_loss(model, batch)
    loss.backward(retain_graph=True)
    optimizer.step()
""",
            """\
import torch
from losses import compute_loss
for batch in loader:
    optimizer.zero_grad()
    loss = compute_loss(model, batch)
    loss.backward()
    optimizer.step()
""",
        ),
        Invalid(
            """\
import torch
def saliency(model, image, label):
    image = image.clone().requires_grad_(True)
    logits = model(image.unsqueeze(0))
    logits[0, label].backward(retain_graph=True)
    return image.grad.abs().max(dim=0)[0]
""",
            """\
import torch
def saliency(model, image, label):
    image = image.clone().requires_grad_(True)
    logits = model(image.unsqueeze(0))
    logits[0, label].backward()
    return image.grad.abs().max(dim=0)[0]
""",
        ),
        Invalid(
            """\
import torch
for x, y in loader:
    out = model(x)
    loss1 = crit(out, y)
    loss1.backward(retain_graph=True)
    out2 = model(x + noise)
    loss2 = crit(out2, y)
    loss2.backward()
    optimizer.step()
""",
            """\
import torch
for x, y in loader:
    out = model(x)
    loss1 = crit(out, y)
    loss1.backward()
    out2 = model(x + noise)
    loss2 = crit(out2, y)
    loss2.backward()
    optimizer.step()
""",
        ),
        Invalid(
            """\
import torch
import torch.nn.functional as F
class Agent:
    def __init__(self):
        self.actor = Actor()
        self.critic = Critic()
    def learn(self, batch):
        state = torch.tensor(batch["s"])
        actions, log_probs = self.actor.sample(state)
        q = self.critic(state, actions)
        value_loss = F.mse_loss(q, log_probs.detach())
        value_loss.backward(retain_graph=True)
        actions, log_probs = self.actor.sample(state)
        actor_loss = (log_probs - self.critic(state, actions)).mean()
        actor_loss.backward()
""",
            """\
import torch
import torch.nn.functional as F
class Agent:
    def __init__(self):
        self.actor = Actor()
        self.critic = Critic()
    def learn(self, batch):
        state = torch.tensor(batch["s"])
        actions, log_probs = self.actor.sample(state)
        q = self.critic(state, actions)
        value_loss = F.mse_loss(q, log_probs.detach())
        value_loss.backward()
        actions, log_probs = self.actor.sample(state)
        actor_loss = (log_probs - self.critic(state, actions)).mean()
        actor_loss.backward()
""",
        ),
        Invalid(
            """\
import torch.nn.functional as F
for s, a, r in loader:
    v = value_net(s)
    q = q_net(s, a)
    v_loss = F.mse_loss(v, q.detach())
    v_loss.backward(retain_graph=True)
    q_loss = F.mse_loss(q, r)
    q_loss.backward()
""",
            """\
import torch.nn.functional as F
for s, a, r in loader:
    v = value_net(s)
    q = q_net(s, a)
    v_loss = F.mse_loss(v, q.detach())
    v_loss.backward()
    q_loss = F.mse_loss(q, r)
    q_loss.backward()
""",
        ),
        Invalid(
            """\
import numpy as np
class GuidedBackprop:
    def __init__(self, model):
        self.model = model
    def forward(self, x):
        return self.model(x)
    def __call__(self, image, target=None):
        image = image.requires_grad_(True)
        output = self.forward(image)
        if target is None:
            target = np.argmax(output.cpu().data.numpy())
        output[0, target].backward(retain_graph=True)
        output = image.grad.cpu().numpy()
        return output[0]
""",
            """\
import numpy as np
class GuidedBackprop:
    def __init__(self, model):
        self.model = model
    def forward(self, x):
        return self.model(x)
    def __call__(self, image, target=None):
        image = image.requires_grad_(True)
        output = self.forward(image)
        if target is None:
            target = np.argmax(output.cpu().data.numpy())
        output[0, target].backward()
        output = image.grad.cpu().numpy()
        return output[0]
""",
        ),
        Invalid(
            _CAM
            + """\
if __name__ == "__main__":
    cam = CAM(net)
    heat = cam.generate(img, 0)
    save(heat)
""",
            _CAM_FIXED
            + """\
if __name__ == "__main__":
    cam = CAM(net)
    heat = cam.generate(img, 0)
    save(heat)
""",
        ),
        Invalid(
            _CAM
            + """\
def explain(net, path):
    cam = CAM(net)
    return cam.generate(load(path), 0)
for path in paths:
    save(explain(net, path))
""",
            _CAM_FIXED
            + """\
def explain(net, path):
    cam = CAM(net)
    return cam.generate(load(path), 0)
for path in paths:
    save(explain(net, path))
""",
        ),
        Invalid(
            """\
class Trainer:
    def step(self, batch):
        self.optimizer.zero_grad()
        loss = self.model(batch).sum()
        loss.backward(retain_graph=True)
        self.optimizer.step()
        return loss.item()
    def fit(self, batches):
        seen, total = 0, 0.0
        for batch in batches:
            score = self.step(batch)
            total = total + score * len(batch)
            seen = seen + len(batch)
            print(total / seen, batch.shape)
""",
            """\
class Trainer:
    def step(self, batch):
        self.optimizer.zero_grad()
        loss = self.model(batch).sum()
        loss.backward()
        self.optimizer.step()
        return loss.item()
    def fit(self, batches):
        seen, total = 0, 0.0
        for batch in batches:
            score = self.step(batch)
            total = total + score * len(batch)
            seen = seen + len(batch)
            print(total / seen, batch.shape)
""",
        ),
        Invalid(
            _GAN,
            _GAN.replace("self.err_g.backward(retain_graph=True)", "self.err_g.backward()"),
        ),
        Invalid(
            """\
import torch


def train(model_a, model_b, loader, optimizer, criterion_a, criterion_b, meter, log):
    for inputs, targets in loader:
        outputs_a = model_a(inputs)[1]
        outputs_b = model_b(inputs)[1].detach()
        loss_mse = criterion_a(outputs_a, outputs_b)
        optimizer.zero_grad()
        loss_mse.backward(retain_graph=True)
        outputs_a = model_a(inputs)[0]
        loss_cls = criterion_b(outputs_a, targets)
        loss_cls.backward()
        optimizer.step()
        meter.update(loss_mse.data, inputs.size(0))
        log(outputs_a, targets)
        print("{loss_mse.avg}".format(loss_mse=meter))
""",
            """\
import torch


def train(model_a, model_b, loader, optimizer, criterion_a, criterion_b, meter, log):
    for inputs, targets in loader:
        outputs_a = model_a(inputs)[1]
        outputs_b = model_b(inputs)[1].detach()
        loss_mse = criterion_a(outputs_a, outputs_b)
        optimizer.zero_grad()
        loss_mse.backward()
        outputs_a = model_a(inputs)[0]
        loss_cls = criterion_b(outputs_a, targets)
        loss_cls.backward()
        optimizer.step()
        meter.update(loss_mse.data, inputs.size(0))
        log(outputs_a, targets)
        print("{loss_mse.avg}".format(loss_mse=meter))
""",
        ),
    ]
