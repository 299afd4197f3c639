"""MEM202 no-grad-without-eval."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.autograd.grad_mode import GradMode
from memlint.analysis.scope.bound_targets import bound_targets
from memlint.analysis.scope.names import dotted_name
from memlint.analysis.training.loops import is_eval_name
from memlint.analysis.training.step_passes import in_every_step
from memlint.analysis.training.target_passes import makes_training_targets
from memlint.fix.statement_edits import statement
from memlint.rule import Fix, Invalid, Rule, Safety, Valid
from memlint.vocabulary.tokens import SAMPLE_FUNCTION_TOKENS, name_tokens

_FLAGGED = ("train-trained", "default-trained", "default-fresh")
_SAMPLER_MESSAGE = (
    "`{fn}` runs `{model}` under no_grad while it is still in training mode: its dropout and batch-norm"
    " layers behave as in training on the sampled batch"
)


def _binds(node: cst.CSTNode, model: str) -> bool:
    """Whether ``node`` assigns ``model`` or a name it hangs from (``m``,
    ``self.net`` for ``self.net.encoder``)."""
    for target in bound_targets(node):
        name = dotted_name(target)
        if name is not None and (model == name or model.startswith(name + ".")):
            return True
    return False


class NoGradWithoutEval(Rule):
    """
    ## What it does
    Flags an evaluation loop under `torch.no_grad()` (or `inference_mode`, or a
    decorated function) whose model is still in training mode: the last switch
    before it was `model.train()` followed by training, or the model was never
    switched to `model.eval()` since it was built (here, by a factory of this
    module, or as an attribute of a plain class).

    ## Why it matters
    `no_grad()` only stops autograd; it does not change how layers behave.
    In training mode dropout keeps dropping activations and batch norm
    normalises with the statistics of each validation batch and updates its
    running statistics with validation data. Validation metrics come out
    noisy and wrong, and the running statistics the model will be saved with
    are contaminated by the validation set.

    ## Example
    ```python
    for epoch in range(epochs):
        model.train()
        train_one_epoch(model, train_loader)
        with torch.no_grad():
            for x, y in val_loader:
                val_loss += criterion(model(x), y).item()
    ```

    ## Use instead
    ```python
        model.eval()
        with torch.no_grad():
            ...
    ```

    ## Fix safety
    Unsafe: `model.eval()` changes the numbers the loop produces (that is the
    point), and leaves the model in eval mode afterwards, so a training phase
    that follows needs `model.train()` (MEM203 checks that).

    ## When it stays silent
    A `.train()` right before the loop with no training in between is deliberate
    (Monte-Carlo dropout, batch-norm recalibration) and not reported, nor is a
    loop over no data that runs in every iteration of a training loop, before
    that iteration's backward (UA-MT's Monte-Carlo teacher: T noisy passes that
    make the step's targets), nor is a module we cannot follow (an EMA copy, a
    model loaded elsewhere), nor a model whose alias or part was switched
    (`model_without_ddp = model.module` then `model_without_ddp.eval()`), nor
    batch-norm recalibration after `reset_running_stats()` (Precise-BN,
    `update_bn`), nor a model with no dropout and no batch norm: a class that
    keeps the module it is handed (`self.net = net`) is judged with the call's
    argument (`TemporalShift(nn.Sequential())` holds neither).

    ## Details
    A model from a factory of this module counts when every return of the
    factory hands back a model it built and never switched (`model =
    get_model(path)`, not `return Net().eval()`; returns in the `else` of, or
    after, `if torch.cuda.is_available(): return model.cuda()` run only on a
    machine without a GPU and are not read). An attribute a plain class builds
    (`self.G = Generator()`) counts when no code of the project ever switches it
    and it is read in a method entered from outside the class (StarGAN's
    `Solver.test`, called from main.py).

    A helper that evaluates the model it is handed is judged by its callers, in
    this module or another (`validate(model, val_loader)` right after a training
    phase in `train.py`), and the message names them. A sampler with no loop (a
    GAN's `sample_images`: one forward over a validation batch under `no_grad`)
    is reported when the class of its generator is known to hold dropout or
    batch norm; it gets no fix, since `G.eval()` alone would leave the generator
    in eval mode for the training that calls it.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.eval
    - https://pytorch.org/docs/stable/notes/autograd.html#locally-disable-grad-doc
    """

    code = "MEM202"
    name = "no-grad-without-eval"
    message = "evaluation under no_grad with `{model}` still in training mode: dropout and batch-norm statistics behave as in training"
    fix_safety = Safety.UNSAFE

    # Callers in other modules (project/, the card's reads_project): a helper
    # whose every caller elsewhere hands it a model still in training mode is reported.
    project_facts = (
        "The mode of the models the callers of a module-level function hand it, wherever they are in the project: "
        "an evaluation helper under `no_grad` with no `.eval()` of its own is reported when every caller (in this "
        "module or another) calls it after `model.train()` and a training phase, and says where "
        '("called in training mode from train.py:58"); a caller that calls `model.eval()` first, hands the model '
        "to a function that may switch its mode, or whose mode it cannot tell keeps it silent."
    )

    def visit_For(self, node: cst.For) -> None:
        self._check(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        """A sampler with no loop (``sample_images``): every forward of it runs
        without grad, on models whose class holds batch norm or dropout and
        that are in training mode where it is called."""
        facts = self.facts
        loops = facts.loops
        name = node.name.value
        if not (name_tokens(name) & SAMPLE_FUNCTION_TOKENS or is_eval_name(name)) or loops.serves_forward(node):
            return
        if name.startswith("test_"):
            return  # a unit test
        scope_facts = loops.scope_facts(node)
        if scope_facts is None or not scope_facts.model_calls or loops.scope_loops(node):
            return  # no forward, or loops (reported, or not, by _check)
        if loops.trains(node) or loops.needs_grad(node):
            return
        grad = facts.grad_mode
        calls = scope_facts.model_calls
        if not all(grad.mode_at(c) is GradMode.DISABLED for c in calls):
            return
        receivers = frozenset(dotted_name(_module_of(c.func)) for c in calls)
        if None in receivers or any(e.kind == "unknown" for e in loops.mode_events(node)):
            return
        if not all(facts.objects.mode_dependent(r, node) is True for r in receivers):  # type: ignore[arg-type]
            return  # only a class known to hold batch norm or dropout: eval() changes its output
        first = min(calls, key=loops.pos)
        if loops.mode_before(first, receivers) not in _FLAGGED:
            return
        if self._resets_running_stats(node, loops.pos(first)):
            return
        model = sorted(receivers)[0]  # type: ignore[type-var]
        message = _SAMPLER_MESSAGE.format(fn=name, model=model) + self._callers_note(node, receivers)
        self.report(node, message=message)

    def visit_While(self, node: cst.While) -> None:
        self._check(node)

    def _qualifies(self, info) -> bool:
        return info.calls_model and not info.trains and not info.needs_grad and self._grad_off(info)

    def _grad_off(self, info) -> bool:
        """The loop runs under no_grad, or opens it in its body around every
        model call (``for x, y in loader: with torch.no_grad(): ...``)."""
        grad = self.facts.grad_mode
        if grad.mode_at(info.node) is GradMode.DISABLED:
            return True
        return bool(info.model_calls) and all(grad.mode_at(c) is GradMode.DISABLED for c in info.model_calls)

    def _check(self, node: cst.For | cst.While) -> None:
        facts = self.facts
        loops = facts.loops
        info = loops.info(node)
        if info is None or not info.model_calls or not self._qualifies(info):
            return
        parent = info.parent
        while parent is not None:
            if self._qualifies(parent):
                return  # reported on the outer loop
            parent = parent.parent
        if in_every_step(info, loops):
            return  # the training step's own passes (a Monte-Carlo teacher): train mode is the method's
        if isinstance(info.scope, cst.FunctionDef) and makes_training_targets(
            info.scope, facts.calls, loops, facts.objects, facts.project
        ):
            return  # the helper's result is the training loss's targets (pseudo-labels): part of training
        receivers = {dotted_name(_module_of(c.func)) for c in info.model_calls}
        if None in receivers:
            return
        state = loops.mode_before(node, frozenset(receivers))  # type: ignore[arg-type]
        if state not in _FLAGGED or self._recalibrates_batch_norm(info):
            return
        if all(facts.objects.mode_dependent(r, node) is False for r in receivers):  # type: ignore[arg-type]
            return  # no dropout, no batch norm: both modes compute the same
        model = sorted(receivers)[0]  # type: ignore[type-var]
        fix = None
        anchor = facts.grad_mode.disabling_context(node)
        if anchor is None or loops.scope_of(anchor) is not info.scope:
            anchor = node
        # A model bound inside the anchor (``for k in ...: m = make(); with
        # torch.no_grad(): m(x)``) does not exist yet where the call would go.
        if len(receivers) == 1 and not _binds(anchor, model):  # type: ignore[arg-type]
            line = statement(f"{model}.eval()", self.context.module)
            line = line.with_changes(leading_lines=anchor.leading_lines)
            new = cst.FlattenSentinel([line, anchor.with_changes(leading_lines=[])])
            fix = Fix(f"Call `{model}.eval()` before evaluating", ((anchor, new),), Safety.UNSAFE)
        message = self.message.format(model=model) + self._callers_note(info.scope, frozenset(receivers))  # type: ignore[arg-type]
        self.report(node, message=message, fix=fix)

    def _callers_note(self, scope, receivers: frozenset) -> str:
        """Where the project calls the helper in training mode from, when
        callers in other modules decided its model's mode."""
        if not isinstance(scope, cst.FunctionDef):
            return ""
        sites = [c for c, state in self.facts.loops.external_modes(scope, receivers) if state != "unknown"]
        if not sites:
            return self._method_callers_note(scope)
        where = ", ".join(c.where() for c in sites[:3]) + (", ..." if len(sites) > 3 else "")  # type: ignore[attr-defined]
        return f" (called in training mode from {where})"

    def _method_callers_note(self, method: cst.FunctionDef) -> str:
        """Where other modules call the method on an instance of its class
        (``solver = Solver(...); solver.test()`` in main.py)."""
        project = self.facts.project
        cls = self.facts.calls.class_of.get(method)
        if project is None or cls is None:
            return ""
        sites = project.method_callers_of(f"{cls.name.value}.{method.name.value}")
        if not sites:
            return ""
        where = ", ".join(sites[:3]) + (", ..." if len(sites) > 3 else "")
        return f" (`{method.name.value}` is called from {where})"

    def _recalibrates_batch_norm(self, info) -> bool:
        """Precise-BN / ``update_bn``: running statistics reset before the
        loop, then re-estimated in train mode on purpose."""
        return self._resets_running_stats(info.scope, info.start)

    def _resets_running_stats(self, scope, before) -> bool:
        loops = self.facts.loops
        return any(
            isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "reset_running_stats"
            and loops.pos(call) < before
            for call in self.facts.calls.calls_in.get(scope, ())
        )

    valid = [
        Valid(
            """\
import torch
import torch.nn as nn
class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 3, 3), nn.BatchNorm2d(3))
    def forward(self, x):
        return self.net(x)
class Solver(object):
    def __init__(self, loader):
        self.loader = loader
        self.build_model()
    def build_model(self):
        self.G = Generator()
        self.opt = torch.optim.Adam(self.G.parameters(), 1e-4)
        self.G.to("cuda")
    def restore(self):
        self.G.load_state_dict(torch.load("G.ckpt", map_location="cpu"))
    def set_eval(self):
        self.G.eval()
    def test(self):
        self.restore()
        with torch.no_grad():
            for x in self.loader:
                self.save(self.G(x))
""",
            "a method of the class switches `self.G`: which mode `test` finds depends on the calls",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 3, 3), nn.BatchNorm2d(3))
    def forward(self, x):
        return self.net(x)
class Solver(object):
    def __init__(self, loader):
        self.loader = loader
        self.build_model()
    def build_model(self):
        self.G = Generator()
        self.opt = torch.optim.Adam(self.G.parameters(), 1e-4)
        self.G.to("cuda")
    def restore(self):
        self.G.load_state_dict(torch.load("G.ckpt", map_location="cpu"))
    def train(self):
        for i, x in enumerate(self.loader):
            loss = self.G(x).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            if i % 100 == 0:
                with torch.no_grad():
                    for c in range(3):
                        self.save(self.G(x + c))
    def save(self, out):
        print(out.shape)
""",
            "a preview inside the training loop: training resumes at once, so the generator stays in train mode on purpose",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 3, 3), nn.BatchNorm2d(3))
    def forward(self, x):
        return self.net(x)
class Solver(Base):
    def __init__(self, loader):
        self.loader = loader
        self.build_model()
    def build_model(self):
        self.G = Generator()
        self.opt = torch.optim.Adam(self.G.parameters(), 1e-4)
        self.G.to("cuda")
    def restore(self):
        self.G.load_state_dict(torch.load("G.ckpt", map_location="cpu"))
    def test(self):
        self.restore()
        with torch.no_grad():
            for x in self.loader:
                self.save(self.G(x))
""",
            "a class with a base: the base may switch `self.G`",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 3, 3), nn.BatchNorm2d(3))
    def forward(self, x):
        return self.net(x)
class Solver(object):
    def __init__(self, loader):
        self.loader = loader
        self.build_model()
    def build_model(self):
        self.G = Generator()
        self.opt = torch.optim.Adam(self.G.parameters(), 1e-4)
        self.G.to("cuda")
    def restore(self):
        self.G.load_state_dict(torch.load("G.ckpt", map_location="cpu"))
    def test(self):
        self.restore()
        with torch.no_grad():
            for x in self.loader:
                self.save(self.G(x))
solver = Solver(loader)
solver.G.eval()
solver.test()
""",
            "the module switches `solver.G` before calling `test`",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
from torchvision.utils import save_image
class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 64, 3), nn.ReLU(), nn.Conv2d(64, 3, 3), nn.Tanh())
    def forward(self, x):
        return self.net(x)
G = Generator()
D = nn.Sequential(nn.Conv2d(3, 1, 4))
opt_G = torch.optim.Adam(G.parameters(), lr=2e-4)
@torch.no_grad()
def sample_images(step):
    real_A = next(iter(val_dataloader))["A"]
    fake_B = G(real_A)
    save_image(torch.cat((real_A, fake_B), -1), f"images/{step}.png")
for epoch in range(200):
    for i, batch in enumerate(dataloader):
        opt_G.zero_grad()
        D(G(batch["A"])).mean().backward()
        opt_G.step()
        if i % 100 == 0:
            sample_images(i)
""",
            "a sampler whose generator has no dropout or batch norm: eval() changes nothing",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
from torchvision.utils import save_image
class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 64, 3), nn.BatchNorm2d(64), nn.ReLU(), nn.Conv2d(64, 3, 3), nn.Tanh())
    def forward(self, x):
        return self.net(x)
G = Generator()
D = nn.Sequential(nn.Conv2d(3, 1, 4))
opt_G = torch.optim.Adam(G.parameters(), lr=2e-4)
@torch.no_grad()
def sample_images(step):
    real_A = next(iter(val_dataloader))["A"]
    G.eval()
    fake_B = G(real_A)
    G.train()
    save_image(torch.cat((real_A, fake_B), -1), f"images/{step}.png")
for epoch in range(200):
    for i, batch in enumerate(dataloader):
        opt_G.zero_grad()
        D(G(batch["A"])).mean().backward()
        opt_G.step()
        if i % 100 == 0:
            sample_images(i)
""",
            "the sampler switches the generator to eval and back",
        ),
        Valid(
            """\
import torch
from torchvision.utils import save_image
@torch.no_grad()
def sample_images(G, step):
    real_A = next(iter(val_dataloader))["A"]
    fake_B = G(real_A)
    save_image(torch.cat((real_A, fake_B), -1), f"images/{step}.png")
""",
            "a sampler handed a generator of unknown class by callers we cannot see",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
from torchvision.utils import save_image
class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 64, 3), nn.BatchNorm2d(64), nn.ReLU(), nn.Conv2d(64, 3, 3), nn.Tanh())
    def forward(self, x):
        return self.net(x)
G = Generator()
D = nn.Sequential(nn.Conv2d(3, 1, 4))
opt_G = torch.optim.Adam(G.parameters(), lr=2e-4)
@torch.no_grad()
def sample_images(step):
    real_A = next(iter(val_dataloader))["A"]
    G.train()  # dropout as noise, as pix2pix samples
    fake_B = G(real_A)
    save_image(torch.cat((real_A, fake_B), -1), f"images/{step}.png")
for epoch in range(200):
    for i, batch in enumerate(dataloader):
        opt_G.zero_grad()
        D(G(batch["A"])).mean().backward()
        opt_G.step()
        if i % 100 == 0:
            sample_images(i)
""",
            "train mode right before sampling, on purpose (dropout as noise)",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
from torchvision.utils import save_image
class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 64, 3), nn.BatchNorm2d(64), nn.ReLU(), nn.Conv2d(64, 3, 3), nn.Tanh())
    def forward(self, x):
        return self.net(x)
G = Generator()
D = nn.Sequential(nn.Conv2d(3, 1, 4))
opt_G = torch.optim.Adam(G.parameters(), lr=2e-4)
def sample_images(step):
    real_A = next(iter(val_dataloader))["A"]
    fake_B = G(real_A)
    save_image(torch.cat((real_A, fake_B), -1), f"images/{step}.png")
for epoch in range(200):
    for i, batch in enumerate(dataloader):
        opt_G.zero_grad()
        D(G(batch["A"])).mean().backward()
        opt_G.step()
        if i % 100 == 0:
            sample_images(i)
""",
            "a sampler with grad on: not an evaluation under no_grad (MEM201's concern)",
        ),
        Valid(
            """\
import torch
from torch import nn
import torch.nn.functional as F
class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 10)
    def forward(self, x):
        return F.log_softmax(self.fc1(x), dim=1)
model = Classifier()
optimizer = torch.optim.Adam(model.parameters())
for e in range(3):
    for images, labels in trainloader:
        optimizer.zero_grad()
        F.nll_loss(model(images), labels).backward()
        optimizer.step()
    with torch.no_grad():
        for images, labels in testloader:
            ps = model(images)
class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 10)
        self.dropout = nn.Dropout(p=0.2)
    def forward(self, x):
        return F.log_softmax(self.dropout(self.fc1(x)), dim=1)
model = Classifier()
model.load_state_dict(torch.load("classifier.pt", map_location="cpu"))
model.eval()
with torch.no_grad():
    ps = model(next(iter(testloader))[0])
""",
            "a notebook: the class in effect where the model is built has no dropout; a later cell redefines it",
        ),
        Valid(
            """\
import numpy as np
import torch
import torch.nn as nn
def layer_init(layer, std=np.sqrt(2)):
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, 0.0)
    return layer
class QNetwork(nn.Module):
    def __init__(self, n_obs, n_actions):
        super().__init__()
        self.network = nn.Sequential(
            layer_init(nn.Linear(n_obs, 64)),
            nn.LayerNorm(64),
            nn.ReLU(),
            layer_init(nn.Linear(64, n_actions)),
        )
    def forward(self, x):
        return self.network(x)
class RecurrentQNetwork(QNetwork):
    def __init__(self, n_obs, n_actions):
        super().__init__(n_obs, n_actions)
        self.lstm = nn.LSTM(n_obs, n_obs, num_layers=2, dropout=0.0)
def train(env, n_obs, n_actions, iterations, num_steps, gamma=0.99):
    q_network = QNetwork(n_obs, n_actions)
    target_network = RecurrentQNetwork(n_obs, n_actions)
    optimizer = torch.optim.Adam(q_network.parameters(), lr=2.5e-4)
    obs = torch.as_tensor(env.reset())
    for iteration in range(iterations):
        observations, targets = [], []
        for step in range(num_steps):
            with torch.no_grad():
                action = q_network(obs).argmax().item()
                next_obs, reward = env.step(action)
                next_obs = torch.as_tensor(next_obs)
                targets.append(reward + gamma * target_network(next_obs).max())
            observations.append(obs)
            obs = next_obs
        loss = (q_network(torch.stack(observations)).max(1).values - torch.stack(targets)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
            "no mode-dependent layer (Linear, LayerNorm, an LSTM with dropout=0, a helper that inits a layer): eval() changes nothing",
        ),
        Valid(
            """\
import torch
import torch.nn.functional as F
def val(net, data_loader):
    correct = 0
    net.eval()
    for data, target in data_loader:
        with torch.no_grad():
            output = net(data)
            correct += (output.argmax(1) == target).sum().item()
    return correct
def train(net, optimizer, data_loader, val_loader, epochs):
    for e in range(epochs):
        net.train()
        for data, target in data_loader:
            optimizer.zero_grad()
            F.cross_entropy(net(data), target).backward()
            optimizer.step()
        val_acc = val(net, val_loader)
""",
            "net.eval() before a loop that opens no_grad in its body",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
def finish(model, train_loader, opt, epochs=10):
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None
    with torch.no_grad():
        for x, _ in train_loader:
            model(x)
    model.eval()
""",
            "batch-norm statistics reset and re-estimated in train mode on purpose (Precise-BN)",
        ),
        Valid(
            """\
import torch
import torch.nn.functional as F
def fit(model, train_loader, val_loader, opt, epochs):
    model_without_ddp = model.module
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model_without_ddp.eval()
        with torch.no_grad():
            for x, y in val_loader:
                model(x)
""",
            "the DDP wrapper's inner module, an alias of the model, is put in eval mode",
        ),
        Valid(
            """\
import torch
for epoch in range(3):
    model.train()
    for x, y in train_loader:
        criterion(model(x), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        for x, y in val_loader:
            model(x)
""",
            "model.eval() before the evaluation",
        ),
        Valid(
            """\
import torch
def mc_predict(model, x, n=20):
    model.train()  # keep dropout on: Monte-Carlo dropout
    with torch.no_grad():
        for _ in range(n):
            model(x)
""",
            "MC-dropout on purpose",
        ),
        Valid(
            """\
import torch
for epoch in range(3):
    model.train()
    for x, y in train_loader:
        criterion(model(x), y).backward()
        optimizer.step()
        ema.update(model)
    with torch.no_grad():
        for x, y in val_loader:
            ema_model(x)
""",
            "a different module being evaluated (an EMA copy)",
        ),
        Valid(
            """\
import torch
def evaluate(model, loader):
    with torch.no_grad():
        for x, y in loader:
            model(x)
""",
            "the caller is not in this module: it may have called eval()",
        ),
        Valid(
            """\
import torch
def saliency(model, loader):
    model.train()
    for x, y in loader:
        with torch.enable_grad():
            x.requires_grad_()
            model(x).sum().backward()
""",
            "code that needs gradients",
        ),
        Valid(
            """\
import torch
import pytorch_lightning as pl
class Net(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        for x in batch:
            self.model(x)
""",
            "Lightning switches to eval mode itself",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.drop = nn.Dropout(0.5)
    def forward(self, x):
        return self.drop(self.fc(x))
def get_model(path):
    model = Net()
    model.load_state_dict(torch.load(path, map_location="cpu"))
    model.eval()
    if torch.cuda.is_available():
        return model.cuda()
    model.eval()
    return model
def predict(model, loader):
    with torch.no_grad():
        for x in loader:
            print(model(x).sum().item())
net = get_model("m.pt")
predict(net, [torch.zeros(1, 4)])
""",
            "the factory switches its model to eval before the GPU path returns it",
        ),
        Valid(
            """\
import torch
from torch import nn
class TemporalShift(nn.Module):
    def __init__(self, net, n_segment=3):
        super().__init__()
        self.net = net
        self.n_segment = n_segment
    def forward(self, x):
        return self.net(torch.roll(x, 1, 0))
tsm = TemporalShift(nn.Sequential(), n_segment=8)
with torch.no_grad():
    for i in range(10):
        y = tsm(torch.rand(16, 3, 8, 8))
""",
            "TSM's self-test: a class that keeps the module it is handed, here an empty `nn.Sequential()`: "
            "no dropout, no batch norm, so eval() changes nothing",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.1)
    def forward(self, x):
        return self.drop(self.fc(x))
def _make_tower():
    return Tower().eval()
def test_two_paths_agree():
    for pool in ("eos", "mean"):
        m = _make_tower()
        with torch.no_grad():
            new = m(torch.ones(2, 4))
            old = m.forward(torch.ones(2, 4))
        assert torch.equal(new, old)
""",
            "open_clip's tests: the factory hands back its model switched to eval (`Tower().eval()`)",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(4, 2), nn.Dropout(0.5))
ema_model = nn.Sequential(nn.Linear(4, 2), nn.Dropout(0.5))
model.train()
ema_model.train()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x in loader:
    out = model(x)
    preds = torch.zeros(8, x.shape[0], 2)
    for i in range(8):
        with torch.no_grad():
            preds[i] = ema_model(x + 0.1 * torch.randn_like(x))
    uncertainty = preds.var(0)
    loss = (out.softmax(1) * uncertainty).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            "UA-MT's Monte-Carlo teacher: T noisy passes in every training step, before its backward (train mode on purpose)",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Dropout(0.5))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
def pseudo_labels(model, loader):
    labels = []
    for x, _, _ in loader:
        labels.append(model(x).argmax(1))
    return torch.cat(labels)
def train(loader):
    model.train()
    targets = None
    for i, (x, _, index) in enumerate(loader):
        if i % 100 == 0:
            with torch.no_grad():
                targets = pseudo_labels(model, loader)
        loss = criterion(model(x), targets[index])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
            "a helper whose result the training loop binds and feeds to its loss, before that iteration's backward:"
            " its passes make the step's targets (self-label's pseudo-labels), not an evaluation",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch


def inference():
    def decorate(fn):
        return torch.inference_mode()(fn)

    return decorate


@inference()
def evaluate(model, loader):
    for x, y in loader:
        print(model(x).argmax(1))


def main(model, loader, val_loader, opt):
    for epoch in range(10):
        model.train()
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        evaluate(model, val_loader)
""",
            """\
import torch


def inference():
    def decorate(fn):
        return torch.inference_mode()(fn)

    return decorate


@inference()
def evaluate(model, loader):
    model.eval()
    for x, y in loader:
        print(model(x).argmax(1))


def main(model, loader, val_loader, opt):
    for epoch in range(10):
        model.train()
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        evaluate(model, val_loader)
""",
        ),
        Invalid(
            """\
import torch
for epoch in range(3):
    model.train()
    for i, (x, y) in enumerate(train_loader):
        criterion(model(x), y).backward()
        optimizer.step()
        if i % 100 == 0:
            with torch.no_grad():
                for vx, vy in val_loader:
                    model(vx)
""",
            """\
import torch
for epoch in range(3):
    model.train()
    for i, (x, y) in enumerate(train_loader):
        criterion(model(x), y).backward()
        optimizer.step()
        if i % 100 == 0:
            model.eval()
            with torch.no_grad():
                for vx, vy in val_loader:
                    model(vx)
""",
        ),
        Invalid(
            """\
import torch
model.train()
for step in range(100):
    with torch.no_grad():
        for i in range(4):
            model(fixed_batch)
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
""",
            """\
import torch
model.train()
for step in range(100):
    model.eval()
    with torch.no_grad():
        for i in range(4):
            model(fixed_batch)
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
""",
        ),
        Invalid(
            """\
import torch
from torch import nn
class TemporalShift(nn.Module):
    def __init__(self, net, n_segment=3):
        super().__init__()
        self.net = net
        self.n_segment = n_segment
    def forward(self, x):
        return self.net(torch.roll(x, 1, 0))
tsm = TemporalShift(nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3)), n_segment=8)
with torch.no_grad():
    for i in range(10):
        y = tsm(torch.rand(16, 3, 8, 8))
""",
            """\
import torch
from torch import nn
class TemporalShift(nn.Module):
    def __init__(self, net, n_segment=3):
        super().__init__()
        self.net = net
        self.n_segment = n_segment
    def forward(self, x):
        return self.net(torch.roll(x, 1, 0))
tsm = TemporalShift(nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3)), n_segment=8)
tsm.eval()
with torch.no_grad():
    for i in range(10):
        y = tsm(torch.rand(16, 3, 8, 8))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 3, 3), nn.BatchNorm2d(3))
    def forward(self, x):
        return self.net(x)
class Solver(object):
    def __init__(self, loader):
        self.loader = loader
        self.build_model()
    def build_model(self):
        self.G = Generator()
        self.opt = torch.optim.Adam(self.G.parameters(), 1e-4)
        self.G.to("cuda")
    def restore(self):
        self.G.load_state_dict(torch.load("G.ckpt", map_location="cpu"))
    def save(self, out):
        print(out.shape)
    def test(self):
        self.restore()
        with torch.no_grad():
            for x in self.loader:
                self.save(self.G(x))
""",
            """\
import torch
import torch.nn as nn
class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 3, 3), nn.BatchNorm2d(3))
    def forward(self, x):
        return self.net(x)
class Solver(object):
    def __init__(self, loader):
        self.loader = loader
        self.build_model()
    def build_model(self):
        self.G = Generator()
        self.opt = torch.optim.Adam(self.G.parameters(), 1e-4)
        self.G.to("cuda")
    def restore(self):
        self.G.load_state_dict(torch.load("G.ckpt", map_location="cpu"))
    def save(self, out):
        print(out.shape)
    def test(self):
        self.restore()
        self.G.eval()
        with torch.no_grad():
            for x in self.loader:
                self.save(self.G(x))
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
from torchvision.utils import save_image
class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 64, 3), nn.BatchNorm2d(64), nn.ReLU(), nn.Conv2d(64, 3, 3), nn.Tanh())
    def forward(self, x):
        return self.net(x)
G = Generator()
D = nn.Sequential(nn.Conv2d(3, 1, 4))
opt_G = torch.optim.Adam(G.parameters(), lr=2e-4)
@torch.no_grad()
def sample_images(step):
    real_A = next(iter(val_dataloader))["A"]
    fake_B = G(real_A)
    save_image(torch.cat((real_A, fake_B), -1), f"images/{step}.png")
for epoch in range(200):
    for i, batch in enumerate(dataloader):
        opt_G.zero_grad()
        D(G(batch["A"])).mean().backward()
        opt_G.step()
        if i % 100 == 0:
            sample_images(i)
""",
            None,
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.1)
    def forward(self, x):
        return self.drop(self.fc(x))
def compare():
    for k in range(3):
        m = Tower()
        with torch.no_grad():
            a = m(torch.ones(2, 4))
            b = m(torch.ones(2, 4))
        assert torch.equal(a, b)
""",
            None,  # `m` is bound inside the loop: `m.eval()` before it would name nothing
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(16, 4, dropout=0.1)
        self.head = nn.Linear(16, 2)
    def forward(self, x):
        return self.head(self.attn(x, x, x)[0])
policy = Policy()
for epoch in range(10):
    policy.train()
    for x, y in train_loader:
        criterion(policy(x), y).backward()
        optimizer.step()
    with torch.no_grad():
        for x, y in val_loader:
            policy(x)
""",
            """\
import torch
import torch.nn as nn
class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(16, 4, dropout=0.1)
        self.head = nn.Linear(16, 2)
    def forward(self, x):
        return self.head(self.attn(x, x, x)[0])
policy = Policy()
for epoch in range(10):
    policy.train()
    for x, y in train_loader:
        criterion(policy(x), y).backward()
        optimizer.step()
    policy.eval()
    with torch.no_grad():
        for x, y in val_loader:
            policy(x)
""",
        ),
        Invalid(
            """\
import torch
import torch.nn.functional as F
def val(net, data_loader):
    correct = 0
    for data, target in data_loader:
        with torch.no_grad():
            output = net(data)
            correct += (output.argmax(1) == target).sum().item()
    return correct
def train(net, optimizer, data_loader, val_loader, epochs):
    for e in range(epochs):
        net.train()
        for data, target in data_loader:
            optimizer.zero_grad()
            F.cross_entropy(net(data), target).backward()
            optimizer.step()
        val_acc = val(net, val_loader)
""",
            """\
import torch
import torch.nn.functional as F
def val(net, data_loader):
    correct = 0
    net.eval()
    for data, target in data_loader:
        with torch.no_grad():
            output = net(data)
            correct += (output.argmax(1) == target).sum().item()
    return correct
def train(net, optimizer, data_loader, val_loader, epochs):
    for e in range(epochs):
        net.train()
        for data, target in data_loader:
            optimizer.zero_grad()
            F.cross_entropy(net(data), target).backward()
            optimizer.step()
        val_acc = val(net, val_loader)
""",
        ),
        Invalid(
            """\
import torch
for epoch in range(3):
    model.train()
    for x, y in train_loader:
        criterion(model(x), y).backward()
        optimizer.step()
    # validation
    with torch.no_grad():
        for x, y in val_loader:
            model(x)
""",
            """\
import torch
for epoch in range(3):
    model.train()
    for x, y in train_loader:
        criterion(model(x), y).backward()
        optimizer.step()
    # validation
    model.eval()
    with torch.no_grad():
        for x, y in val_loader:
            model(x)
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
net.load_state_dict(torch.load("net.pt"))
with torch.no_grad():
    for x in test_loader:
        print(net(x).argmax(1))
""",
            """\
import torch
import torch.nn as nn
net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
net.load_state_dict(torch.load("net.pt"))
net.eval()
with torch.no_grad():
    for x in test_loader:
        print(net(x).argmax(1))
""",
        ),
        Invalid(
            """\
import torch
@torch.no_grad()
def validate(model, loader):
    for x, y in loader:
        model(x)
def fit(model, loader):
    for epoch in range(5):
        model.train()
        for x, y in loader:
            criterion(model(x), y).backward()
            opt.step()
        validate(model, loader)
""",
            """\
import torch
@torch.no_grad()
def validate(model, loader):
    model.eval()
    for x, y in loader:
        model(x)
def fit(model, loader):
    for epoch in range(5):
        model.train()
        for x, y in loader:
            criterion(model(x), y).backward()
            opt.step()
        validate(model, loader)
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.drop = nn.Dropout(0.5)
    def forward(self, x):
        return self.drop(self.fc(x))
def get_model(path):
    model = Net()
    model.load_state_dict(torch.load(path, map_location="cpu"))
    if torch.cuda.is_available():
        return model.cuda()
    model.eval()
    return model
def predict(model, loader):
    with torch.no_grad():
        for x in loader:
            print(model(x).sum().item())
net = get_model("m.pt")
predict(net, [torch.zeros(1, 4)])
""",
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.drop = nn.Dropout(0.5)
    def forward(self, x):
        return self.drop(self.fc(x))
def get_model(path):
    model = Net()
    model.load_state_dict(torch.load(path, map_location="cpu"))
    if torch.cuda.is_available():
        return model.cuda()
    model.eval()
    return model
def predict(model, loader):
    model.eval()
    with torch.no_grad():
        for x in loader:
            print(model(x).sum().item())
net = get_model("m.pt")
predict(net, [torch.zeros(1, 4)])
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Dropout(0.5))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
def pseudo_labels(model, loader):
    labels = []
    for x, _, _ in loader:
        labels.append(model(x).argmax(1))
    return torch.cat(labels)
def train(loader):
    model.train()
    targets = None
    for i, (x, _, index) in enumerate(loader):
        if i % 100 == 0:
            with torch.no_grad():
                agreement = pseudo_labels(model, loader)
                print(agreement)
        loss = criterion(model(x), index)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
            """\
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Dropout(0.5))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
def pseudo_labels(model, loader):
    labels = []
    model.eval()
    for x, _, _ in loader:
        labels.append(model(x).argmax(1))
    return torch.cat(labels)
def train(loader):
    model.train()
    targets = None
    for i, (x, _, index) in enumerate(loader):
        if i % 100 == 0:
            with torch.no_grad():
                agreement = pseudo_labels(model, loader)
                print(agreement)
        loss = criterion(model(x), index)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        ),
    ]


def _module_of(func: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(func, cst.Attribute) and func.attr.value in ("forward", "__call__"):
        return func.value
    return func
