"""MEM101 tensor-accumulated-across-iterations."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from memlint.analysis.autograd.grad_mode import GradMode
from memlint.analysis.scope.names import dotted_name
from memlint.fix.expr_edits import call_method
from memlint.rule import Fix, Invalid, Rule, Safety, Valid


class TensorAccumulatedAcrossIterations(Rule):
    """
    ## What it does
    Flags `total += loss`, `total = total + loss`, running averages such as
    `avg = 0.9 * avg + 0.1 * loss` and dicts of losses rebuilt as
    `totals = {k: totals[k] + losses[k] for k in totals}` inside a loop over batches, where `loss`
    still carries autograd history and `total` lives on after the iteration.

    ## Why it matters
    A tensor with history keeps its whole computation graph alive. Adding it
    to an accumulator that survives the iteration chains every batch's graph
    to the next: the saved activations of all batches stay in memory until
    the accumulator dies, so memory grows with every step until it runs out.
    This is the first entry of the PyTorch FAQ on memory.

    ## Example
    ```python
    total_loss = 0
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss
    print(total_loss / len(loader))
    ```

    ## Use instead
    ```python
        total_loss += loss.item()
    ```
    or `loss.detach()` when the accumulator must stay a tensor.

    ## Fix safety
    Safe. The fix writes `.item()` when every later use of the accumulator is
    numeric (printing, formatting, division, comparison, `float()`), so the
    value becomes a Python number; otherwise `.detach()`, which keeps it a
    tensor and the program working. The accumulated values are the same.
    Accumulators that are backpropagated later on purpose (`total.backward()`:
    multi-task losses, unrolled RNNs, meta-learning), also through a function
    of the same module that backpropagates what it is passed, are not
    reported; nor is recurrent state the model reads back in the next step
    (`self.weights_cum += weights` fed into `self.cell(x + self.weights_cum, h)`),
    which MEM104 judges. Nor is the output of a model called after
    `model.eval()` whose `forward`, in eval mode, returns only what it
    computed under `torch.no_grad()` (a detector's `predict()` branch).

    ## References
    - https://pytorch.org/docs/stable/notes/faq.html#my-model-reports-cuda-runtime-error-2-out-of-memory
    """

    code = "MEM101"
    name = "tensor-accumulated-across-iterations"
    message = (
        "`{acc}` accumulates a tensor that carries autograd history across iterations; every batch's graph stays alive"
    )
    fix_safety = Safety.SAFE

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if not isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
            return
        if _is_container(node.value):
            return  # ``outs += [out]`` is MEM102's
        self._check(node, node.target, node.value, exclude=None)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        target = node.targets[0].target
        key = dotted_name(target)
        if key is None:
            return
        if _rebuilds_entries(node.value, key):
            # ``totals = {k: totals[k] + losses[k] for k in totals}``: each
            # entry stays a tensor (the dict may be reduced across ranks).
            self._check(node, target, node.value.value, exclude=key, tensor=True)  # type: ignore[attr-defined]
            return
        if not _accumulates(node.value, key):
            return
        self._check(node, target, node.value, exclude=key)

    def _check(
        self,
        stmt: cst.CSTNode,
        target: cst.BaseExpression,
        value: cst.BaseExpression,
        exclude: str | None,
        tensor: bool = False,
    ) -> None:
        # ``stats["loss"] += loss``: the dict is what outlives the iteration.
        container = target.value if isinstance(target, cst.Subscript) and exclude is None else target
        key = dotted_name(container)
        if key is None:
            return
        facts = self.facts
        if facts.grad_mode.mode_at(stmt) is not GradMode.ENABLED:
            return  # the sum is computed without recording
        terms = facts.history.history_terms(value, exclude=exclude)
        if not terms:
            return
        loop = facts.loops.carried_across(key, stmt)
        if loop is None and not facts.loops.carried_by_framework(key, stmt):
            return
        scope = facts.loops.scope_of(stmt)
        usage = facts.usage
        if usage.reaches_backward(key, scope):
            return  # backpropagated on purpose later
        if usage.feeds_model(key, scope, skip=stmt):
            return  # recurrent state (cumulative attention, a running memory) read back by the model
        if loop is not None and loop.role is None and usage.reaches_return(key, scope):
            return  # a summed loss handed back to a caller that may backpropagate it
        numeric = (
            not tensor
            and loop is not None
            and container is target
            and "." not in key
            and usage.numeric_uses_only(key, scope, facts.loops.pos(loop.node), skip=stmt)
        )
        values = [facts.history.value(t) for t in terms]
        method = "item" if numeric and all(v is not None and v.scalar for v in values) else "detach"
        fix = Fix(
            f"Accumulate `.{method}()` instead of the tensor",
            tuple((t, call_method(t, method)) for t in terms),
            Safety.SAFE,
        )
        self.report(stmt, message=self.message.format(acc=self.context.module.code_for_node(target)), fix=fix)

    valid = [
        Valid(
            """\
import torch
import torch.nn as nn


def accuracy(output, target):
    return [output.argmax(1).eq(target).float().sum()]


class AAM(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.ce = nn.CrossEntropyLoss()

    def forward(self, x, label):
        output = self.fc(x)
        loss = self.ce(output, label)
        prec = accuracy(output.detach(), label.detach())[0]
        return loss, prec


def train(net, loader, optimizer):
    criterion = AAM().cuda()
    top1 = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss, prec = criterion.forward(net(x), y)
        loss.backward()
        optimizer.step()
        top1 += prec
    return top1
""",
            "the second element of a loss class's returned tuple is computed from detached values"
            " (ECAPA-TDNN's `accuracy(output.detach(), label.detach())`), called as `criterion.forward(...)`",
        ),
        Valid(
            """\
import torch
def train(netG, netsD, optimizersD, optimizerG, loader, disc_loss, gen_loss):
    for imgs in loader:
        fake = netG(imgs)
        errD_total = 0
        for i in range(len(netsD)):
            netsD[i].zero_grad()
            errD = disc_loss(netsD[i], imgs, fake.detach())
            errD.backward()
            optimizersD[i].step()
            errD_total += errD
        netG.zero_grad()
        errG = gen_loss(netsD, fake)
        errG.backward()
        optimizerG.step()
        print(errD_total)
""",
            "a total reset at each training step and summed over its discriminators (a counted loop within the "
            "step): it lives one step, not across the batches",
        ),
        Valid(
            """\
import torch
def validate(model_d, loader, names):
    for fake, real in loader:
        with torch.no_grad():
            disc_fake, disc_real = model_d(fake), model_d(real)
        gap = 0.0
        for (_, score_fake), (_, score_real) in zip(disc_fake, disc_real):
            gap += (score_real - score_fake).mean()
        total = 0.0
        for name, (x, y) in zip(names, loader):
            total += x.sum()
        print(gap.item(), total.item())
""",
            "zip over outputs computed under no_grad, or over a loader's batches: no history to keep",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(8, 8)
        self.attention = nn.Linear(8, 8)
    def reset(self, x):
        self.h = torch.zeros_like(x)
        self.weights_cum = torch.zeros_like(x)
    def step(self, x):
        self.h = self.cell(x + self.weights_cum, self.h)
        self.weights = torch.softmax(self.attention(self.h), dim=1)
        self.weights_cum += self.weights
        return self.h
    def forward(self, inputs):
        self.reset(inputs[:, 0])
        return torch.stack([self.step(x) for x in inputs.unbind(1)], 1)
    def inference(self, x, max_steps=100):
        self.reset(x)
        outs = []
        while True:
            x = self.step(x)
            outs.append(x.detach())
            if len(outs) == max_steps:
                break
        return outs
""",
            "`self.weights_cum` is recurrent state (cumulative attention) that the model reads back in the "
            "next step: it is part of the graph on purpose, and `.detach()` would change training's gradients",
        ),
        Valid(
            """\
import torch
class Trainer:
    def _train_batch(self, src, tgt, model):
        loss = self.loss
        loss.reset()
        for step, out in enumerate(model(src, tgt)):
            loss.eval_batch(out, tgt[:, step])
        model.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.get_loss()
    def train(self, loader, model):
        total = 0
        for src, tgt in loader:
            total += self._train_batch(src, tgt, model)
""",
            "`loss` is a loss-tracking object (no tensor has `reset` or `eval_batch`): its own `backward` "
            "says nothing about what `get_loss()` returns",
        ),
        Valid(
            """\
import torch
from utils.loss import ComputeLoss
compute_loss = ComputeLoss(model)
mloss = torch.zeros(3)
for i, (imgs, targets) in enumerate(loader):
    loss, loss_items = compute_loss(model(imgs), targets)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    mloss = (mloss * i + loss_items) / (i + 1)
""",
            "a loss object's tuple: only the loss is known to carry history, its logged parts are returned detached",
        ),
        Valid(
            """\
import torch.nn.functional as F
def backprop_and_step(opt, loss):
    opt.zero_grad()
    loss.backward()
    opt.step()
def train(model, loader, opt, k=4):
    chunk_loss = 0
    for i, (x, y) in enumerate(loader):
        chunk_loss = chunk_loss + F.cross_entropy(model(x), y)
        if (i + 1) % k == 0:
            backprop_and_step(opt, chunk_loss / k)
            chunk_loss = 0
""",
            "the sum is backpropagated by a helper of this module, on purpose",
        ),
        Valid(
            """\
import torch
total = 0.0
for x, y in loader:
    loss = criterion(model(x), y).item()
    total += loss
    correct = 0
    running = float(criterion(model(x), y))
    total += running
""",
            "the value is already a number (`.item()`, `float()`)",
        ),
        Valid(
            """\
import torch
total = 0
with torch.no_grad():
    for x, y in val_loader:
        loss = criterion(model(x), y)
        total += loss
print(total)
""",
            "under torch.no_grad()",
        ),
        Valid(
            """\
import torch
@torch.inference_mode()
def evaluate(model, loader):
    total = 0
    for x, y in loader:
        total += criterion(model(x), y)
    return total / len(loader)
""",
            "in a function decorated with inference_mode",
        ),
        Valid(
            """\
import torch
def evaluate(model, loader):
    total = 0
    for x, y in loader:
        total += criterion(model(x), y)
    return total
with torch.no_grad():
    print(evaluate(model, val_loader))
""",
            "a function only ever called under no_grad",
        ),
        Valid(
            """\
import torch
for batch in loader:
    total = 0
    for head in heads:
        total += criterion(head(model(batch.x)), batch.y)
    total.backward()
    optimizer.step()
""",
            "the accumulator is backpropagated later on purpose (multi-loss)",
        ),
        Valid(
            """\
import torch
for src, tgt in loader:
    hidden = encoder(src)
    loss = 0
    for t in range(tgt.size(0)):
        out, hidden = decoder(tgt[t], hidden)
        loss += criterion(out, tgt[t])
    loss.backward()
    optimizer.step()
""",
            "an unrolled RNN loss, re-initialised per batch and backpropagated",
        ),
        Valid(
            """\
import torch
for epoch in range(10):
    for x, y in loader:
        batch_loss = 0
        batch_loss += criterion(model(x), y)
        batch_loss.backward()
""",
            "the accumulator is re-initialised each iteration",
        ),
        Valid(
            """\
import torch
correct = 0
for x, y in loader:
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
    correct += (out.argmax(1) == y).sum()
    seen = 0
    seen += y.size(0)
""",
            "integer metrics such as (pred == y).sum() carry no history",
        ),
        Valid(
            """\
import torch
outs = []
for x, y in loader:
    parts = []
    parts += [model(x)]
    loss = criterion(torch.cat(parts), y)
    loss.backward()
""",
            "the list is built and consumed within one iteration",
        ),
        Valid(
            """\
import torch
total = 0
for real in loader:
    fake = G(noise())
    loss_d = criterion(D(fake), zeros) + criterion(D(real), ones)
    loss_d.backward(retain_graph=True)
    loss_g = criterion(D(fake), ones)
    loss_g.backward()
    total += loss_d.item() + loss_g.item()
""",
            "a second backward through a shared graph (GAN), numbers accumulated",
        ),
        Valid(
            """\
import torch
def compute_loss(model, batch):
    total = 0
    for name in ("a", "b"):
        total += criterion(model(batch[name]), batch["y"])
    return total
""",
            "a summed loss returned to a caller that backpropagates it",
        ),
        Valid(
            """\
import torch
for tasks in task_loader:
    meta_loss = 0.0
    for support, query in tasks:
        fast = adapt(model, support)
        meta_loss += criterion(model(query.x, fast), query.y)
    meta_loss.backward()
    meta_opt.step()
    values = []
    values += criterion(model(query.x), query.y).tolist()
""",
            "meta-learning: the summed query loss is backpropagated; `.tolist()` gives numbers",
        ),
        Valid(
            """\
import torch
from engine import train_step
total = 0.0
for batch in loader:
    loss = train_step(model, batch, optimizer)
    total += loss
print(total / len(loader))
""",
            "the loss comes from a helper of another file and nothing here backpropagates it: it may be a number",
        ),
        Valid(
            """\
import torch
from losses import compute_loss
total = 0.0
for batch in loader:
    loss = compute_loss(model, batch)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    total += loss.item()
    loss = compute_loss(model, batch)
print(total / len(loader))
""",
            "a later backward proves the loss carries history, and the number is accumulated",
        ),
        Valid(
            """\
import torch
from utils.loss import ComputeLoss
compute_loss = ComputeLoss(model)
mloss = torch.zeros(3)
for i, (imgs, targets) in enumerate(loader):
    loss, loss_items = compute_loss(model(imgs), targets)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    mloss = (mloss * i + loss_items) / (i + 1)
""",
            "what a project's loss returns after the loss (yolov5's items) is usually detached: cannot tell",
        ),
        Valid(
            """\
import torch
from utils.losses import Criterion
criterion = Criterion(args)
totals = {k: 0.0 for k in criterion.losses}
for x, y in loader:
    losses = criterion(model(x), y)
    sum(losses.values()).backward()
    optimizer.step()
    totals = {k: totals[k] + losses[k].item() for k in totals}
    counts = {k: counts[k] + 1 for k in counts}
""",
            "a dict of losses rebuilt from numbers; a dict of counts",
        ),
        Valid(
            """\
import torch
def train(model, loader, criterion, optimizer):
    train_loss = 0.0
    for batch in loader:
        loss_dict = criterion(model(batch["img"]), batch)
        optimizer.zero_grad()
        loss_dict["loss"].backward()
        optimizer.step()
        for key, value in loss_dict.items():
            loss_dict[key] = value.item()
        train_loss += loss_dict["loss"]
    return train_loss
""",
            "every value of the dict replaced by a number in a loop over its own items (DBNet's trainer)",
        ),
        Valid(
            """\
import torch
def run_epoch(loader, model, criterion):
    loss_sum = 0
    for x, y in loader:
        loss = criterion(model(x), y)
        loss_sum += len(x) * loss
    print(loss_sum / len(loader))
def main(model, loader, criterion):
    run_epoch(loader, model, criterion)
    with torch.no_grad():
        run_epoch(loader, model, criterion)
""",
            "called once with grad on and once under no_grad, but nothing in it backpropagates: which mode "
            "records is not known (an evaluation left without no_grad is MEM201's)",
        ),
        Valid(
            """\
import torch
def run_epoch(loader, model, criterion, optimizer):
    loss_sum = 0
    for x, y in loader:
        loss = criterion(model(x), y)
        if model.training:
            loss.backward()
            optimizer.step()
        loss_sum += len(x) * loss
    print(loss_sum / len(loader))
def main(model, loader, criterion, optimizer):
    with torch.no_grad():
        run_epoch(loader, model, criterion, optimizer)
""",
            "a function that can backpropagate, but every call runs it under no_grad",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class VoxelNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    def predict(self, x, preds):
        return preds.sigmoid().sum()
    def forward(self, x):
        preds = self.fc(x)
        if self.training:
            return preds.sum()
        else:
            with torch.no_grad():
                res = self.predict(x, preds)
            return res
def train(loader, eval_loader):
    net = VoxelNet()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for x in loader:
        loss = net(x)
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()
    total = 0
    for example in eval_loader:
        total += net(example)
    return total
""",
            "a model whose `forward` returns, in eval mode, only what it computed under `torch.no_grad()`,"
            " called after `net.eval()`: its output carries no history (SECOND's `VoxelNet`)",
        ),
        Valid(
            """\
import torch
import torchbiomed.loss as bioloss
def test_dice(model, loader):
    model.eval()
    dice = 0
    for data, target in loader:
        output = model(data)
        dice += bioloss.dice_error(output, target)
    return dice / len(loader)
""",
            "a function of a third-party package whose name merely starts with `torch` (torchbiomed) is not torch:"
            " what it returns is not known (a metric may take the argmax first)",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch
import torch.nn as nn
class VoxelNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    def predict(self, x, preds):
        return preds.sigmoid().sum()
    def forward(self, x):
        preds = self.fc(x)
        if self.training:
            return preds.sum()
        else:
            with torch.no_grad():
                res = self.predict(x, preds)
            return res + preds.sum()
def train(loader, eval_loader):
    net = VoxelNet()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for x in loader:
        loss = net(x)
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()
    total = 0
    for example in eval_loader:
        total += net(example)
    return total
""",
            """\
import torch
import torch.nn as nn
class VoxelNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    def predict(self, x, preds):
        return preds.sigmoid().sum()
    def forward(self, x):
        preds = self.fc(x)
        if self.training:
            return preds.sum()
        else:
            with torch.no_grad():
                res = self.predict(x, preds)
            return res + preds.sum()
def train(loader, eval_loader):
    net = VoxelNet()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for x in loader:
        loss = net(x)
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()
    total = 0
    for example in eval_loader:
        total += net(example).detach()
    return total
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn


def accuracy(output, target):
    return [output.argmax(1).eq(target).float().sum()]


class AAM(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.ce = nn.CrossEntropyLoss()

    def forward(self, x, label):
        output = self.fc(x)
        loss = self.ce(output, label)
        prec = accuracy(output, label)[0]
        return loss, prec


def train(net, loader, optimizer):
    criterion = AAM().cuda()
    top1 = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss, prec = criterion.forward(net(x), y)
        loss.backward()
        optimizer.step()
        top1 += prec
    return top1
""",
            """\
import torch
import torch.nn as nn


def accuracy(output, target):
    return [output.argmax(1).eq(target).float().sum()]


class AAM(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.ce = nn.CrossEntropyLoss()

    def forward(self, x, label):
        output = self.fc(x)
        loss = self.ce(output, label)
        prec = accuracy(output, label)[0]
        return loss, prec


def train(net, loader, optimizer):
    criterion = AAM().cuda()
    top1 = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss, prec = criterion.forward(net(x), y)
        loss.backward()
        optimizer.step()
        top1 += prec.detach()
    return top1
""",
        ),
        Invalid(
            """\
import torch
def train(model, loader, val_loader, criterion, optimizer):
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        val_loss = 0
        for step in range(len(val_loader)):
            vx, vy = next(iter(val_loader))
            val_loss += criterion(model(vx), vy)
        print(val_loss)
""",
            """\
import torch
def train(model, loader, val_loader, criterion, optimizer):
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        val_loss = 0
        for step in range(len(val_loader)):
            vx, vy = next(iter(val_loader))
            val_loss += criterion(model(vx), vy).item()
        print(val_loss)
""",
        ),
        Invalid(
            """\
import torch
def train(model, loader, criterion, optimizer):
    train_loss = 0.0
    for batch in loader:
        loss_dict = criterion(model(batch["img"]), batch)
        optimizer.zero_grad()
        loss_dict["loss"].backward()
        optimizer.step()
        for key, value in loss_dict.items():
            if key == "loss":
                continue
            loss_dict[key] = value.item()
        train_loss += loss_dict["loss"]
    return train_loss
""",
            """\
import torch
def train(model, loader, criterion, optimizer):
    train_loss = 0.0
    for batch in loader:
        loss_dict = criterion(model(batch["img"]), batch)
        optimizer.zero_grad()
        loss_dict["loss"].backward()
        optimizer.step()
        for key, value in loss_dict.items():
            if key == "loss":
                continue
            loss_dict[key] = value.item()
        train_loss += loss_dict["loss"].detach()
    return train_loss
""",
        ),
        Invalid(
            """\
import torch
import torch.nn.functional as F
def train(net, env, opt, episodes):
    ep_value_loss = 0.0
    for episode in range(episodes):
        obs, done = env.reset(), False
        values, rewards = [], []
        while not done:
            probs, value = net(torch.as_tensor(obs))
            obs, reward, done = env.step(probs.argmax().item())
            values.append(value.squeeze(-1))
            rewards.append(reward)
        value_loss = F.smooth_l1_loss(torch.stack(values), returns_of(rewards))
        opt.zero_grad()
        value_loss.backward()
        opt.step()
        ep_value_loss += value_loss
    return ep_value_loss / episodes
""",
            """\
import torch
import torch.nn.functional as F
def train(net, env, opt, episodes):
    ep_value_loss = 0.0
    for episode in range(episodes):
        obs, done = env.reset(), False
        values, rewards = [], []
        while not done:
            probs, value = net(torch.as_tensor(obs))
            obs, reward, done = env.step(probs.argmax().item())
            values.append(value.squeeze(-1))
            rewards.append(reward)
        value_loss = F.smooth_l1_loss(torch.stack(values), returns_of(rewards))
        opt.zero_grad()
        value_loss.backward()
        opt.step()
        ep_value_loss += value_loss.detach()
    return ep_value_loss / episodes
""",
        ),
        Invalid(
            """\
import torch
def train_epoch(model, optimizer, train_dl, progress):
    avg_loss = 0.0
    for step, batch in enumerate(train_dl):
        loss = model(**batch).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        avg_loss = (avg_loss * step + loss) / (step + 1)
        progress.set_postfix(loss=f"{avg_loss:.4f}")
""",
            """\
import torch
def train_epoch(model, optimizer, train_dl, progress):
    avg_loss = 0.0
    for step, batch in enumerate(train_dl):
        loss = model(**batch).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        avg_loss = (avg_loss * step + loss.item()) / (step + 1)
        progress.set_postfix(loss=f"{avg_loss:.4f}")
""",
        ),
        Invalid(
            """\
import torch
loss_ema = None
for x, y in loader:
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    loss_ema = loss if loss_ema is None else 0.98 * loss_ema + 0.02 * loss
print(f"loss {loss_ema:.4f}")
""",
            """\
import torch
loss_ema = None
for x, y in loader:
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    loss_ema = loss.item() if loss_ema is None else 0.98 * loss_ema + 0.02 * loss.item()
print(f"loss {loss_ema:.4f}")
""",
        ),
        Invalid(
            """\
import torch
total_loss = 0
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total_loss += loss  # running total
print(f"loss {total_loss / len(loader):.3f}")
""",
            """\
import torch
total_loss = 0
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total_loss += loss.item()  # running total
print(f"loss {total_loss / len(loader):.3f}")
""",
        ),
        Invalid(
            """\
import torch
def train_epoch(model, loader, optimizer):
    epoch_loss = 0
    for batch in loader:
        outputs = model(**batch)
        outputs.loss.backward()
        optimizer.step()
        epoch_loss = epoch_loss + outputs.loss * batch["input_ids"].size(0)
    return epoch_loss / len(loader.dataset)
""",
            """\
import torch
def train_epoch(model, loader, optimizer):
    epoch_loss = 0
    for batch in loader:
        outputs = model(**batch)
        outputs.loss.backward()
        optimizer.step()
        epoch_loss = epoch_loss + outputs.loss.detach() * batch["input_ids"].size(0)
    return epoch_loss / len(loader.dataset)
""",
        ),
        Invalid(
            """\
import torch
smooth = 0.0
for step, (x, y) in enumerate(train_loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    smooth = 0.98 * smooth + 0.02 * loss
    if smooth < 0.1:
        break
""",
            """\
import torch
smooth = 0.0
for step, (x, y) in enumerate(train_loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    smooth = 0.98 * smooth + 0.02 * loss.item()
    if smooth < 0.1:
        break
""",
        ),
        Invalid(
            """\
import torch
import torch.nn.functional as F
class Trainer:
    def fit(self, loader):
        for x, y in loader:
            loss = F.cross_entropy(self.model(x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            self.epoch_loss += loss
""",
            """\
import torch
import torch.nn.functional as F
class Trainer:
    def fit(self, loader):
        for x, y in loader:
            loss = F.cross_entropy(self.model(x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            self.epoch_loss += loss.detach()
""",
        ),
        Invalid(
            """\
import torch
from losses import compute_loss
def train(model, loader, optimizer):
    running = 0.0
    for batch in loader:
        loss = compute_loss(model, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss
    return running / len(loader)
""",
            """\
import torch
from losses import compute_loss
def train(model, loader, optimizer):
    running = 0.0
    for batch in loader:
        loss = compute_loss(model, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.detach()
    return running / len(loader)
""",
        ),
        Invalid(
            """\
import torch
import torchvision
model = torchvision.models.resnet18(weights="DEFAULT")
model.fc = torch.nn.Linear(512, 10)
crit = torch.nn.CrossEntropyLoss()
epoch_loss = 0
for x, y in loader:
    optimizer.zero_grad()
    loss = crit.forward(model(x), y)
    accelerator.backward(loss)
    optimizer.step()
    epoch_loss += loss
print(f"loss {epoch_loss / len(loader):.3f}")
""",
            """\
import torch
import torchvision
model = torchvision.models.resnet18(weights="DEFAULT")
model.fc = torch.nn.Linear(512, 10)
crit = torch.nn.CrossEntropyLoss()
epoch_loss = 0
for x, y in loader:
    optimizer.zero_grad()
    loss = crit.forward(model(x), y)
    accelerator.backward(loss)
    optimizer.step()
    epoch_loss += loss.item()
print(f"loss {epoch_loss / len(loader):.3f}")
""",
        ),
        Invalid(
            """\
import torch
from models import build_model
model = build_model("resnet50")
total = 0
for batch in loader:
    loss = model.training_step(batch)
    total = total + loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(total / len(loader))
""",
            """\
import torch
from models import build_model
model = build_model("resnet50")
total = 0
for batch in loader:
    loss = model.training_step(batch)
    total = total + loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(total / len(loader))
""",
        ),
        Invalid(
            """\
import torch
def train_gan(netG, netD, optD, optG, crit, loader):
    g_running = 0.0
    for real in loader:
        fake = netG(torch.randn(real.size(0), 100))
        optD.zero_grad()
        errD = crit(netD(real), ones) + crit(netD(fake.detach()), zeros)
        errD.backward()
        optD.step()
        optG.zero_grad()
        errG = crit(netD(fake), ones)
        errG.backward()
        optG.step()
        g_running += errG
    return g_running / len(loader)
""",
            """\
import torch
def train_gan(netG, netD, optD, optG, crit, loader):
    g_running = 0.0
    for real in loader:
        fake = netG(torch.randn(real.size(0), 100))
        optD.zero_grad()
        errD = crit(netD(real), ones) + crit(netD(fake.detach()), zeros)
        errD.backward()
        optD.step()
        optG.zero_grad()
        errG = crit(netD(fake), ones)
        errG.backward()
        optG.step()
        g_running += errG.detach()
    return g_running / len(loader)
""",
        ),
        Invalid(
            """\
import pytorch_lightning as pl
class LitClassifier(pl.LightningModule):
    def __init__(self, backbone, criterion):
        super().__init__()
        self.backbone = backbone
        self.criterion = criterion
        self.running_loss = 0.0
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self.criterion(self.backbone(x), y)
        self.running_loss += loss
        return {"loss": loss}
    def on_train_epoch_end(self):
        self.log("train_loss", self.running_loss / self.trainer.num_training_batches)
        self.running_loss = 0.0
""",
            """\
import pytorch_lightning as pl
class LitClassifier(pl.LightningModule):
    def __init__(self, backbone, criterion):
        super().__init__()
        self.backbone = backbone
        self.criterion = criterion
        self.running_loss = 0.0
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self.criterion(self.backbone(x), y)
        self.running_loss += loss.detach()
        return {"loss": loss}
    def on_train_epoch_end(self):
        self.log("train_loss", self.running_loss / self.trainer.num_training_batches)
        self.running_loss = 0.0
""",
        ),
        Invalid(
            """\
import torch
import torchvision
model = torchvision.models.resnet18(pretrained=True)
for p in model.parameters():
    p.requires_grad = False
model.fc = torch.nn.Linear(512, 10)
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.fc.parameters(), lr=0.01)
running_loss = 0.0
for inputs, labels in loader:
    optimizer.zero_grad()
    outputs = model(inputs)
    loss = criterion(outputs, labels)
    loss.backward()
    optimizer.step()
    running_loss += loss * inputs.size(0)
print(running_loss / len(loader.dataset))
""",
            """\
import torch
import torchvision
model = torchvision.models.resnet18(pretrained=True)
for p in model.parameters():
    p.requires_grad = False
model.fc = torch.nn.Linear(512, 10)
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.fc.parameters(), lr=0.01)
running_loss = 0.0
for inputs, labels in loader:
    optimizer.zero_grad()
    outputs = model(inputs)
    loss = criterion(outputs, labels)
    loss.backward()
    optimizer.step()
    running_loss += loss.item() * inputs.size(0)
print(running_loss / len(loader.dataset))
""",
        ),
        Invalid(
            """\
import torch
from utils.losses import Criterion
criterion = Criterion(args)
for epoch in range(epochs):
    totals = {k: torch.tensor(0.0) for k in criterion.losses}
    for x, y in loader:
        optimizer.zero_grad()
        losses = criterion(model(x), y)
        sum(losses.values()).backward()
        optimizer.step()
        totals = {k: totals[k] + losses[k] * x.size(0) for k in totals.keys()}
    print({k: v.item() / len(loader.dataset) for k, v in totals.items()})
""",
            """\
import torch
from utils.losses import Criterion
criterion = Criterion(args)
for epoch in range(epochs):
    totals = {k: torch.tensor(0.0) for k in criterion.losses}
    for x, y in loader:
        optimizer.zero_grad()
        losses = criterion(model(x), y)
        sum(losses.values()).backward()
        optimizer.step()
        totals = {k: totals[k] + losses[k].detach() * x.size(0) for k in totals.keys()}
    print({k: v.item() / len(loader.dataset) for k, v in totals.items()})
""",
        ),
        Invalid(
            """\
import torch
def train(model_g, model_d, loader, optim_d, rep):
    for mel, audio in loader:
        fake = model_g(mel).detach()
        loss_d_sum = 0.0
        for _ in range(rep):
            optim_d.zero_grad()
            disc_fake, disc_real = model_d(fake), model_d(audio)
            loss_d = 0.0
            for (_, score_fake), (_, score_real) in zip(disc_fake, disc_real):
                loss_d += torch.mean((score_real - 1.0) ** 2) + torch.mean(score_fake**2)
            loss_d.backward()
            optim_d.step()
            loss_d_sum += loss_d
        print(loss_d_sum.item() / rep)
""",
            """\
import torch
def train(model_g, model_d, loader, optim_d, rep):
    for mel, audio in loader:
        fake = model_g(mel).detach()
        loss_d_sum = 0.0
        for _ in range(rep):
            optim_d.zero_grad()
            disc_fake, disc_real = model_d(fake), model_d(audio)
            loss_d = 0.0
            for (_, score_fake), (_, score_real) in zip(disc_fake, disc_real):
                loss_d += torch.mean((score_real - 1.0) ** 2) + torch.mean(score_fake**2)
            loss_d.backward()
            optim_d.step()
            loss_d_sum += loss_d.detach()
        print(loss_d_sum.item() / rep)
""",
        ),
        Invalid(
            """\
import torch
def run_epoch(loader, model, criterion, optimizer):
    loss_sum = 0
    for x, y in loader:
        loss = criterion(model(x), y)
        if model.training:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        loss_sum += len(x) * loss
    print(loss_sum / len(loader))
def main(model, train_loader, val_loader, criterion, optimizer):
    for epoch in range(10):
        model.train()
        run_epoch(train_loader, model, criterion, optimizer)
        with torch.no_grad():
            model.eval()
            run_epoch(val_loader, model, criterion, optimizer)
""",
            """\
import torch
def run_epoch(loader, model, criterion, optimizer):
    loss_sum = 0
    for x, y in loader:
        loss = criterion(model(x), y)
        if model.training:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        loss_sum += len(x) * loss.item()
    print(loss_sum / len(loader))
def main(model, train_loader, val_loader, criterion, optimizer):
    for epoch in range(10):
        model.train()
        run_epoch(train_loader, model, criterion, optimizer)
        with torch.no_grad():
            model.eval()
            run_epoch(val_loader, model, criterion, optimizer)
""",
        ),
        Invalid(
            """\
import torch
import torchvision
def test_boxes(model, loader):
    model.eval()
    total = 0
    for images, boxes in loader:
        features = model(images)
        total += torchvision.ops.roi_align(features, boxes, 7).mean()
    print(total)
""",
            """\
import torch
import torchvision
def test_boxes(model, loader):
    model.eval()
    total = 0
    for images, boxes in loader:
        features = model(images)
        total += torchvision.ops.roi_align(features, boxes, 7).mean().item()
    print(total)
""",
        ),
    ]


def _is_container(value: cst.BaseExpression) -> bool:
    return isinstance(value, (cst.List, cst.Tuple, cst.ListComp, cst.Set, cst.Dict))


def _rebuilds_entries(value: cst.BaseExpression, key: str) -> bool:
    """``{k: key[k] + x for k in ...}``: a dict rebuilt from its own entries plus new values."""
    if not isinstance(value, cst.DictComp) or value.for_in.inner_for_in is not None:
        return False
    index = dotted_name(value.for_in.target)
    if index is None or dotted_name(value.key) != index:
        return False

    def is_entry(e: cst.BaseExpression) -> bool:
        return (
            isinstance(e, cst.Subscript)
            and dotted_name(e.value) == key
            and len(e.slice) == 1
            and isinstance(e.slice[0].slice, cst.Index)
            and dotted_name(e.slice[0].slice.value) == index
        )

    return _accumulates(value.value, key, is_entry)


def _additive_leaves(e: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The terms of a sum, left to right: ``a``, ``b * c``, ``d`` for ``a + b * c - d``."""
    # Module level, not nested in _accumulates: a nested function that calls
    # itself is a reference cycle through its own closure cell.
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, (cst.Add, cst.Subtract)):
        yield from _additive_leaves(e.left)
        yield from _additive_leaves(e.right)
    else:
        yield e


def _accumulates(value: cst.BaseExpression, key: str, is_acc=None) -> bool:
    """``value`` adds to ``key``: ``key + x``, ``x + key``, ``a * key + b * x``,
    ``(key * n + x) / (n + 1)``, or one branch of ``loss if ema is None
    else 0.98 * ema + 0.02 * loss``."""
    if is_acc is None:

        def is_acc(e: cst.BaseExpression) -> bool:
            return dotted_name(e) == key

    if isinstance(value, cst.IfExp):
        return _accumulates(value.body, key, is_acc) or _accumulates(value.orelse, key, is_acc)
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Divide):
        return _accumulates(value.left, key, is_acc)  # a running mean: ``(avg * step + loss) / (step + 1)``
    if not isinstance(value, cst.BinaryOperation) or not isinstance(value.operator, (cst.Add, cst.Subtract)):
        return False

    for leaf in _additive_leaves(value):
        if is_acc(leaf):
            return True
        if (
            isinstance(leaf, cst.BinaryOperation)
            and isinstance(leaf.operator, cst.Multiply)
            and (is_acc(leaf.left) or is_acc(leaf.right))
        ):
            return True
    return False
