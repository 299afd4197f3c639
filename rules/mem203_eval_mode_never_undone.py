"""MEM203 eval-mode-never-undone."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.autograd.grad_mode import GradMode
from memlint.analysis.scope.names import dotted_name
from memlint.analysis.training.loops import ends_with_jump, is_eval_name
from memlint.fix.statement_edits import statement
from memlint.rule import Fix, Invalid, Rule, Safety, Valid


def _last_iteration_test(test: cst.BaseExpression, target: cst.BaseExpression) -> bool:
    """``epoch == epochs - 1`` or ``epoch + 1 == epochs`` for loop variable ``epoch``."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return False
    if not isinstance(test.comparisons[0].operator, cst.Equal) or not isinstance(target, cst.Name):
        return False
    name = target.value
    sides = (test.left, test.comparisons[0].comparator)
    for side, other in (sides, sides[::-1]):
        if isinstance(side, cst.Name) and side.value == name:
            return _plus_minus_one(other, cst.Subtract)
        if (
            isinstance(side, cst.BinaryOperation)
            and isinstance(side.operator, cst.Add)
            and isinstance(side.left, cst.Name)
            and side.left.value == name
            and isinstance(side.right, cst.Integer)
            and side.right.value == "1"
        ):
            return True
    return False


def _plus_minus_one(expr: cst.BaseExpression, op: type) -> bool:
    return (
        isinstance(expr, cst.BinaryOperation)
        and isinstance(expr.operator, op)
        and isinstance(expr.right, cst.Integer)
        and expr.right.value == "1"
    )


class EvalModeNeverUndone(Rule):
    """
    ## What it does
    Flags `model.eval()` inside an epoch (or step) loop that also trains the
    model, when nothing in the loop ever calls `model.train()` again. The
    switch and the training may sit in functions of other modules
    (`evaluate(model, val_loader)` of `engine.py` calling `model.eval()`).

    ## Why it matters
    After the first validation the model stays in eval mode, and every later
    epoch trains with dropout off and batch norm frozen on its running
    statistics. Training quietly degrades (overfitting, worse accuracy, BN
    statistics that never adapt), with no error anywhere.

    ## Example
    ```python
    model.train()
    for epoch in range(epochs):
        for x, y in train_loader:
            ...
        model.eval()
        validate(model)
    ```

    ## Use instead
    ```python
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            ...
    ```

    ## Fix safety
    Unsafe: `model.train()` is inserted at the start of the training phase of
    the loop; it changes the results of every epoch after the first (that is the
    point). A `.train()` anywhere in the loop, also inside a function it calls
    (of this module or another one of the project), counts as undoing the
    switch; a function of another module that hands the model on to code the
    project's summaries cannot list keeps the loop silent.

    ## When it stays silent
    Silent when the switch sits in a branch that ends the loop (`break`,
    `return`) or runs only on the last iteration (`if epoch == epochs - 1:`),
    and when `model.eval()` comes before the training phase with nothing
    evaluated in between (a linear probe that keeps frozen batch-norm
    statistics; a `validate(model)` there is the evaluation itself, and is
    reported when the model is known to hold dropout or batch norm), when the
    model is already in eval mode as the loop starts (unless that was for an
    evaluation right before it, a baseline), for a module the loop only runs
    under `no_grad` (a DQN target network, an EMA copy), and when the loop's
    optimizer holds only tensors it made (`Adam([latent])`, a code fitted to a
    frozen decoder: no module is trained).

    ## References
    - https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.train
    """

    code = "MEM203"
    name = "eval-mode-never-undone"
    message = "`{model}.eval()` inside the training loop is never undone: the next epochs train in eval mode"
    fix_safety = Safety.UNSAFE

    # Functions of other modules (project/): ``evaluate(model)`` of
    # ``engine.py`` that switches its model to eval, ``train_one_epoch``
    # that trains it, read as if they were this module's.
    project_facts = (
        "The mode switches and training of the functions it calls, wherever they are in the project: "
        "`evaluate(model, loader)` of another module that calls `model.eval()` switches the caller's `model`, "
        "`train_one_epoch(model, ...)` that steps an optimizer is a training phase, and one that calls "
        "`model.train()` undoes the switch. A function of another module that hands the model on to code it "
        "cannot read keeps the loop silent."
    )

    def __init__(self, context) -> None:
        super().__init__(context)
        self._reported: set[int] = set()

    def visit_For(self, node: cst.For) -> None:
        self._check(node)

    def visit_While(self, node: cst.While) -> None:
        self._check(node)

    def _findings(self, info):
        """(eval event, first training phase) pairs that break ``info``."""
        loops = self.facts.loops
        if not loops.loop_steps(info):
            return []  # nothing here updates weights
        events = [e for e in loops.mode_events(info.scope) if info.contains(e.pos)]
        if any(e.kind in ("train", "unknown") for e in events):
            return []
        out = []
        for e in events:
            if e.kind != "eval" or e.receiver is None:
                continue
            if self._rebuilt_in(info, e.receiver):
                continue  # a fresh model each iteration (folds, experiments)
            if self._no_training_after(info, e.node):
                continue
            phases = [
                p
                for p in events
                if p.kind == "training-phase" and p.node is not info.node and p.trains_module(e.receiver)
            ]
            grad = self.facts.grad_mode
            if self._teacher_only(info, e.receiver):
                # ``swa_model`` (an EMA copy) run only under no_grad, and the
                # phases may train "any" module only because they are handed
                # others (``ODFA(model, x)``): none of them trains it.
                phases = [p for p in phases if e.receiver in p.receivers or _hands(p, e.receiver)]
            # Called with grad on in this loop: a target network or an EMA copy
            # only ever run under no_grad is not what the loop trains.
            direct = any(loops.loop_of(c) is info and self._steps_a_module(c, info) for c in info.step_calls) and any(
                _callee(c) == e.receiver and grad.mode_at(c) is not GradMode.DISABLED
                for c in info.model_calls
                if loops.loop_of(c) is info
            )
            if loops.mode_before(info.node, frozenset({e.receiver})) == "eval" and not self._evaluated_before(
                info, e.receiver
            ):
                continue  # in eval mode before the loop too: trained in eval mode on purpose
            first_eval = next(x for x in events if x.kind == "eval" and x.receiver == e.receiver)
            if not direct and phases and self._trains_in_eval_on_purpose(info, first_eval, phases):
                continue
            if phases or direct:
                out.append((e, phases[0] if phases and not direct else None))
        return out

    def _steps_a_module(self, step: cst.Call, info) -> bool:
        """``step`` may update some module's weights: not the step of an
        optimizer over tensors made here (a latent code fitted to a frozen
        decoder, which is in eval mode on purpose)."""
        opt = step.func.value if isinstance(step.func, cst.Attribute) else None
        return not (isinstance(opt, cst.Name) and self.facts.tensor_optimizers.steps_no_module(opt.value, info.scope))

    def _teacher_only(self, info, receiver: str) -> bool:
        """``receiver`` is run in this loop, and only under ``no_grad``."""
        runs = [c for c in info.model_calls if _callee(c) == receiver]
        grad = self.facts.grad_mode
        return bool(runs) and all(grad.mode_at(c) is GradMode.DISABLED for c in runs)

    def _evaluated_before(self, info, receiver: str) -> bool:
        """``model.eval(); evaluate(model)`` (a baseline) right before the
        loop: the eval mode was for that evaluation, not for training."""
        before = [
            e
            for e in self.facts.loops.mode_events(info.scope)
            if e.kind == "eval" and e.receiver == receiver and e.pos < info.start
        ]
        return bool(before) and self._evaluates_between(info.scope, before[-1].pos, info.start)

    def _trains_in_eval_on_purpose(self, info, event, phases) -> bool:
        """``model.eval()`` right before every training phase, with nothing
        evaluated in between: a linear probe keeping frozen batch-norm
        statistics, not a validation that forgot ``.train()``. A switch
        made by calling a function named for evaluation (``validate(model)``
        at the top of the epoch) is that evaluation's, not a probe's, when
        the model is known to compute differently in the two modes (dropout,
        batch norm). One whose layers cannot be read (a parameter, a class
        of another module: mode dependence is a fact of this module only)
        may compute the same in both (weight-norm vocoders): silent."""
        if _evaluation_call(event.node) and self.facts.objects.mode_dependent(event.receiver, info.node) is True:
            return False
        first = min(p.pos for p in phases)
        return event.pos < first and not self._evaluates_between(info.scope, event.pos, first)

    def _evaluates_between(self, scope, start, end) -> bool:
        """An evaluation loop, or a call of a function named for evaluation,
        between the two positions of ``scope``."""
        loops = self.facts.loops
        return any(start < other.start < end and other.role == "eval" for other in loops.scope_loops(scope)) or any(
            start < loops.pos(c) < end and is_eval_name((dotted_name(c.func) or "").rsplit(".", 1)[-1])
            for c in self.facts.calls.calls_in.get(scope, ())
        )

    def _no_training_after(self, info, call: cst.Call) -> bool:
        """The ``eval()`` sits in a branch of the loop that ends it (``break``,
        ``return``) or runs only on its last iteration (``if epoch ==
        epochs - 1:``): no training follows."""
        parents = self.facts.loops.parents
        cur = parents.get(call)
        while cur is not None and cur is not info.node:
            if isinstance(cur, cst.If):
                if ends_with_jump(cur.body, (cst.Break, cst.Return)):
                    return True
                if isinstance(info.node, cst.For) and _last_iteration_test(cur.test, info.node.target):
                    return True
            cur = parents.get(cur)
        return False

    def _rebuilt_in(self, info, receiver: str) -> bool:
        index = self.facts.recurrent._index(info.scope)
        return any(info.contains(b.pos) and b.kind == "assign" for b in index.get(receiver, ()))

    def _check(self, node: cst.For | cst.While) -> None:
        loops = self.facts.loops
        info = loops.info(node)
        if info is None:
            return
        for event, phase in self._findings(info):
            if id(event.node) in self._reported:
                continue
            inner = [
                other
                for other in loops.scope_loops(info.scope)
                if other is not info and info.contains(other.start) and other.contains(event.pos)
            ]
            if any(any(e.node is event.node for e, _ in self._findings(o)) for o in inner):
                continue  # reported for the innermost loop
            self._reported.add(id(event.node))
            message = self.message.format(model=event.receiver)
            external = self.facts.loops.external_callee(event.node) if isinstance(event.node, cst.Call) else None
            if external is not None:
                message += f" (`{dotted_name(event.node.func)}` of another module calls `.eval()` on it)"  # type: ignore[attr-defined]
            self.report(
                event.node,
                message=message,
                fix=self._fix(info, phase, event.receiver),
            )

    def _fix(self, info, phase, model: str) -> Fix | None:
        body = info.node.body
        if not isinstance(body, cst.IndentedBlock):
            return None
        line = statement(f"{model}.train()", self.context.module)
        if phase is None:
            new_body = body.with_changes(body=[line, *body.body])
            return Fix(f"Call `{model}.train()` at the start of each iteration", ((body, new_body),), Safety.UNSAFE)
        anchor = _top_statement(phase.node, body, self.facts.loops.parents)
        if anchor is None:
            return None
        line = line.with_changes(leading_lines=anchor.leading_lines)
        new = cst.FlattenSentinel([line, anchor.with_changes(leading_lines=[])])
        return Fix(f"Call `{model}.train()` before the training phase", ((anchor, new),), Safety.UNSAFE)

    valid = [
        Valid(
            """\
import torch
def fit_code(decoder, points, target, steps, size):
    code = torch.zeros(1, size).normal_(std=0.01).cuda()
    code.requires_grad = True
    optimizer = torch.optim.Adam([code], lr=1e-3)
    for step in range(steps):
        decoder.eval()
        optimizer.zero_grad()
        loss = (decoder(torch.cat([code.expand(len(points), -1), points], 1)) - target).abs().mean()
        loss.backward()
        optimizer.step()
    return code
""",
            "the optimizer holds only the latent code made here: the decoder is not trained, eval mode on purpose",
        ),
        Valid(
            """\
import torch
def validate(net, loader):
    net.eval()
    with torch.no_grad():
        return sum(net(x).sum().item() for x, _ in loader)
def train_one_epoch(net, loader, opt):
    net.train()
    for x, y in loader:
        loss = criterion(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
def fit(net, loader, val_loader, opt, epochs):
    for epoch in range(epochs):
        validate(net, val_loader)
        train_one_epoch(net, loader, opt)
""",
            "a validation at the top of the epoch, undone by the training function's own `net.train()`",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Vocoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.utils.weight_norm(nn.Conv1d(80, 1, 7, padding=3))
    def forward(self, x):
        return self.conv(x)
def validate(net, loader):
    net.eval()
    for x, y in loader:
        print(net(x).sum().item())
def fit(loader, val_loader, epochs):
    net = Vocoder()
    opt = torch.optim.Adam(net.parameters())
    net.train()
    for epoch in range(epochs):
        if epoch % 5 == 0:
            with torch.no_grad():
                validate(net, val_loader)
        for x, y in loader:
            loss = criterion(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
""",
            "a validation at the top of the epoch, but the model holds no dropout or batch norm: train and eval mode "
            "compute the same (and a model whose layers cannot be read stays silent too)",
        ),
        Valid(
            """\
import torch
import torch.nn.functional as F
def dqn(policy_net, target_net, replay, optimizer, num_steps, sync_every=1000):
    for step in range(num_steps):
        s, a, r, s2, d = replay.sample(64)
        with torch.no_grad():
            target = r + 0.99 * (1 - d) * target_net(s2).max(1).values
        q = policy_net(s).gather(1, a[:, None]).squeeze(1)
        loss = F.smooth_l1_loss(q, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % sync_every == 0:
            target_net.load_state_dict(policy_net.state_dict())
            target_net.eval()
""",
            "a DQN target network, only run under no_grad, is not what the loop trains",
        ),
        Valid(
            """\
import torch
import torch.nn.functional as F
def linear_probe(model, train_loader, val_loader, optimizer, epochs):
    model.requires_grad_(False)
    model.fc.requires_grad_(True)
    model.eval()  # frozen backbone: keep BN running statistics
    for epoch in range(epochs):
        for x, y in train_loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            print(sum((model(x).argmax(1) == y).sum().item() for x, y in val_loader))
""",
            "in eval mode before the loop as well: a linear probe trains in eval mode on purpose",
        ),
        Valid(
            """\
import torch
def train(train_loader, model, criterion, optimizer):
    model.eval()
    for images, target in train_loader:
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
def validate(val_loader, model):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in val_loader)
def main(model, train_loader, val_loader, criterion, optimizer, epochs):
    for epoch in range(epochs):
        train(train_loader, model, criterion, optimizer)
        print(epoch, validate(val_loader, model))
""",
            "MoCo-style train() that calls model.eval() before every training phase",
        ),
        Valid(
            """\
import torch
def train(model, loader, test_loader, opt, epochs=30):
    model.train()
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        if epoch == epochs - 1:
            model.eval()
            with torch.no_grad():
                acc = sum((model(x).argmax(1) == y).sum().item() for x, y in test_loader)
            print("final test acc", acc)
    return model
""",
            "eval() only on the last epoch: no training follows",
        ),
        Valid(
            """\
import torch
def train(model, loader, test_loader, opt, max_epochs=100, tol=1e-4):
    model.train()
    prev = float("inf")
    for epoch in range(max_epochs):
        total = 0.0
        for x, y in loader:
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            total += loss.item()
        if abs(prev - total) < tol:
            model.eval()
            with torch.no_grad():
                print(sum(torch.nn.functional.mse_loss(model(x), y).item() for x, y in test_loader))
            break
        prev = total
    return model
""",
            "the branch that calls eval() ends the loop with break",
        ),
        Valid(
            """\
import torch
def linear_probe(model, train_loader, optimizer, criterion, epochs):
    for epoch in range(epochs):
        model.eval()  # keep the frozen backbone's batch-norm statistics
        for images, target in train_loader:
            loss = criterion(model(images), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
""",
            "a linear probe puts the model in eval mode before every training phase on purpose",
        ),
        Valid(
            """\
import torch
import torch.nn.functional as F
def fit(model, train_loader, val_loader, opt, epochs):
    for epoch in range(epochs):
        torch.nn.Module.train(model)
        for x, y in train_loader:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            print(sum((model(x).argmax(1) == y).sum().item() for x, y in val_loader))
""",
            "train mode restored through the unbound nn.Module.train(model)",
        ),
        Valid(
            """\
import torch
for epoch in range(10):
    model.train()
    for x, y in train_loader:
        criterion(model(x), y).backward()
        optimizer.step()
    model.eval()
    evaluate(model, val_loader)
""",
            "model.train() at the start of each epoch",
        ),
        Valid(
            """\
import torch
def train_one_epoch(model, loader):
    model.train()
    for x, y in loader:
        criterion(model(x), y).backward()
        optimizer.step()
for epoch in range(10):
    train_one_epoch(model, train_loader)
    model.eval()
    evaluate(model, val_loader)
""",
            "the training function switches back to train mode itself",
        ),
        Valid(
            """\
import torch
for epoch in range(10):
    for x, y in train_loader:
        criterion(model(x), y).backward()
        optimizer.step()
ema_model.eval()
evaluate(ema_model, val_loader)
""",
            "eval() after the training loop, not inside it",
        ),
        Valid(
            """\
import torch
for epoch in range(10):
    for x, y in train_loader:
        criterion(model(x), y).backward()
        optimizer.step()
    ema_model.eval()
    evaluate(ema_model, val_loader)
""",
            "a different module being evaluated (an EMA copy)",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
for lr in (0.1, 0.01):
    model = nn.Sequential(nn.Linear(2, 2), nn.Dropout())
    for x, y in train_loader:
        criterion(model(x), y).backward()
        optimizer.step()
    model.eval()
""",
            "loops over models or experiments: a fresh model each iteration",
        ),
        Valid(
            """\
import torch
for epoch in range(10):
    model.train(epoch < 5)
    for x, y in train_loader:
        criterion(model(x), y).backward()
        optimizer.step()
    model.eval()
""",
            "the mode is set from a flag we cannot read",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch
def fit(model, train_loader, val_loader, optimizer, criterion, epochs):
    model.eval()
    print("baseline", evaluate(model, val_loader))
    for epoch in range(epochs):
        for images, target in train_loader:
            loss = criterion(model(images), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        print(epoch, evaluate(model, val_loader))
""",
            """\
import torch
def fit(model, train_loader, val_loader, optimizer, criterion, epochs):
    model.eval()
    print("baseline", evaluate(model, val_loader))
    for epoch in range(epochs):
        model.train()
        for images, target in train_loader:
            loss = criterion(model(images), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        print(epoch, evaluate(model, val_loader))
""",
        ),
        Invalid(
            """\
import torch
model = GPT(config)
optimizer = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), "cuda")


@torch.no_grad()
def estimate_loss():
    model.eval()
    losses = torch.zeros(200)
    for k in range(200):
        X, Y = get_batch("val")
        logits, loss = model(X, Y)
        losses[k] = loss.item()
    return losses.mean()


for iter_num in range(max_iters):
    if iter_num % 250 == 0:
        print(iter_num, estimate_loss())
    X, Y = get_batch("train")
    logits, loss = model(X, Y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
""",
            """\
import torch
model = GPT(config)
optimizer = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), "cuda")


@torch.no_grad()
def estimate_loss():
    model.eval()
    losses = torch.zeros(200)
    for k in range(200):
        X, Y = get_batch("val")
        logits, loss = model(X, Y)
        losses[k] = loss.item()
    return losses.mean()


for iter_num in range(max_iters):
    model.train()
    if iter_num % 250 == 0:
        print(iter_num, estimate_loss())
    X, Y = get_batch("train")
    logits, loss = model(X, Y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
""",
        ),
        Invalid(
            """\
import torch
def fit(model, train_loader, val_loader, optimizer, criterion, epochs):
    for epoch in range(epochs):
        model.eval()
        with torch.no_grad():
            for images, target in val_loader:
                print(criterion(model(images), target).item())
        for images, target in train_loader:
            loss = criterion(model(images), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
""",
            """\
import torch
def fit(model, train_loader, val_loader, optimizer, criterion, epochs):
    for epoch in range(epochs):
        model.eval()
        with torch.no_grad():
            for images, target in val_loader:
                print(criterion(model(images), target).item())
        model.train()
        for images, target in train_loader:
            loss = criterion(model(images), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
""",
        ),
        Invalid(
            """\
import torch
model.train()
for epoch in range(10):
    # train
    for x, y in train_loader:
        criterion(model(x), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        evaluate(model, val_loader)
""",
            """\
import torch
model.train()
for epoch in range(10):
    # train
    model.train()
    for x, y in train_loader:
        criterion(model(x), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        evaluate(model, val_loader)
""",
        ),
        Invalid(
            """\
import torch
def validate(net, loader):
    net.eval()
    with torch.no_grad():
        for x, y in loader:
            net(x)
def fit(net, loader, opt):
    for step, (x, y) in enumerate(loader):
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
        if step % 100 == 0:
            validate(net, val_loader)
""",
            """\
import torch
def validate(net, loader):
    net.eval()
    with torch.no_grad():
        for x, y in loader:
            net(x)
def fit(net, loader, opt):
    for step, (x, y) in enumerate(loader):
        net.train()
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
        if step % 100 == 0:
            validate(net, val_loader)
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.2))
    def forward(self, x):
        return self.body(x)
def validate(net, loader):
    net.eval()
    for x, y in loader:
        print(net(x).sum().item())
def fit(loader, val_loader, epochs):
    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    net.train()
    for epoch in range(epochs):
        if epoch % 5 == 0:
            with torch.no_grad():
                validate(net, val_loader)
        for x, y in loader:
            loss = criterion(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
""",
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.2))
    def forward(self, x):
        return self.body(x)
def validate(net, loader):
    net.eval()
    for x, y in loader:
        print(net(x).sum().item())
def fit(loader, val_loader, epochs):
    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    net.train()
    for epoch in range(epochs):
        if epoch % 5 == 0:
            with torch.no_grad():
                validate(net, val_loader)
        net.train()
        for x, y in loader:
            loss = criterion(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
""",
        ),
    ]


def _evaluation_call(node: cst.CSTNode) -> bool:
    """``validate(hp, model, loader)``: a call of a function named for
    evaluation (its switch to eval mode rides on the call), not the
    ``model.eval()`` switch itself."""
    if not isinstance(node, cst.Call):
        return False
    name = (dotted_name(node.func) or "").rsplit(".", 1)[-1]
    return name not in ("eval", "train") and is_eval_name(name)


def _hands(event, receiver: str) -> bool:
    """The phase is a call that is handed ``receiver`` (or a part of it) as an argument."""
    node = event.node
    if not isinstance(node, cst.Call):
        return True  # a loop of this scope: judged as before
    for arg in node.args:
        name = dotted_name(arg.value)
        if name is None or name == receiver or name.startswith(receiver + ".") or receiver.startswith(name + "."):
            return True
    return False


def _callee(call: cst.Call) -> str | None:
    from memlint.analysis.scope.names import dotted_name

    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("forward", "__call__"):
        func = func.value
    return dotted_name(func)


def _top_statement(node: cst.CSTNode, body: cst.IndentedBlock, parents) -> cst.BaseStatement | None:
    """The statement of ``body`` that contains ``node``."""
    cur: cst.CSTNode | None = node
    while cur is not None:
        parent = parents.get(cur)
        if parent is body:
            return cur  # type: ignore[return-value]
        cur = parent
    return None
