"""MEM104 hidden-state-carried-across-batches."""

from __future__ import annotations

import libcst as cst

from memlint.fix.statement_edits import statement
from memlint.rule import Fix, Invalid, Rule, Safety, Valid


class HiddenStateCarriedAcrossBatches(Rule):
    """
    ## What it does
    Flags an RNN/LSTM hidden state (or any model output) that a training loop
    feeds back into the model on the next batch without `.detach()`:
    `out, hidden = model(x, hidden)` with nothing cutting `hidden` from the
    previous batch's graph.

    ## Why it matters
    The new hidden state is computed from the old one, so each batch's graph
    is linked to the previous batch's: the graph, and the activations it
    saves, grows with every batch. Backward then has to go through all earlier
    batches, which fails with "Trying to backward through the graph a second
    time" — often "fixed" with `retain_graph=True`, which makes memory and
    time per step grow without bound. Truncated backpropagation through time
    detaches the state at each batch boundary.

    ## Example
    ```python
    hidden = model.init_hidden(batch_size)
    for x, y in loader:
        out, hidden = model(x, hidden)
        loss = criterion(out, y)
        loss.backward(retain_graph=True)
        optimizer.step()
    ```

    ## Use instead
    ```python
    for x, y in loader:
        hidden = tuple(s.detach() for s in hidden) if isinstance(hidden, tuple) else hidden.detach()
        out, hidden = model(x, hidden)
    ```

    ## Fix safety
    Unsafe: detaching changes the gradients (they no longer flow into earlier
    batches), which is the intended truncated BPTT but a change in results.
    The fix detaches at the top of the iteration; a state that starts as
    `None` gets no fix. Silent when the loop detaches the state itself:
    `h = h.detach()`, `torch.detach(h)`, `state[0].detach_()`,
    `repackage_hidden(h)`.

    ## References
    - https://github.com/pytorch/examples/blob/main/word_language_model/main.py (`repackage_hidden`)
    - https://discuss.pytorch.org/t/solved-why-we-need-to-detach-variable-which-contains-hidden-representation/1426
    """

    code = "MEM104"
    name = "hidden-state-carried-across-batches"
    message = (
        "`{names}` is fed back into the model on the next batch without `.detach()`; the graph grows across all batches"
    )
    fix_safety = Safety.UNSAFE

    def _check(self, node: cst.For | cst.While) -> None:
        facts = self.facts
        info = facts.loops.info(node)
        if info is None or not info.trains:
            return
        states = facts.recurrent.carried_states(info)
        if not states:
            return
        by_call: dict[int, list] = {}
        for state in states:
            by_call.setdefault(id(state.feed), []).append(state)
        for group in by_call.values():
            names = ", ".join(s.key for s in group)
            lines = [self._detach_line(s) for s in group]
            fix = None
            if all(line is not None for line in lines) and isinstance(node.body, cst.IndentedBlock):
                module = self.context.module
                new_stmts = [statement(line, module) for line in lines]  # type: ignore[arg-type]
                new_body = node.body.with_changes(body=[*new_stmts, *node.body.body])
                fix = Fix(f"Detach `{names}` at the start of each iteration", ((node.body, new_body),), Safety.UNSAFE)
            self.report(group[0].feed, message=self.message.format(names=names), fix=fix)

    def visit_For(self, node: cst.For) -> None:
        self._check(node)

    def visit_While(self, node: cst.While) -> None:
        self._check(node)

    def _detach_line(self, state) -> str | None:
        form = self.facts.recurrent.init_form(state)
        k = state.key
        if form == "tensor":
            return f"{k} = {k}.detach()"
        if form == "tuple":
            return f"{k} = tuple(s.detach() for s in {k})"
        if form == "unknown":
            return f"{k} = tuple(s.detach() for s in {k}) if isinstance({k}, tuple) else {k}.detach()"
        return None

    valid = [
        Valid(
            """\
import torch
import torch.nn as nn
def train(model: nn.LSTM, loader, opt, crit):
    state = None
    for x, y in loader:
        if state is not None:
            state[0].detach_()
            state[1].detach_()
        out, state = model(x, state)
        loss = crit(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
def train_policy(model, loader, opt):
    h = model.initial(16)
    for obs, act in loader:
        out, h = model(obs, h)
        loss = out.pow(2).mean()
        opt.zero_grad(); loss.backward(); opt.step()
        h = torch.detach(h)
""",
            "the (h, c) state detached in place; torch.detach() in function form",
        ),
        Valid(
            """\
import torch
hidden = model.init_hidden(32)
for x, y in loader:
    hidden = repackage_hidden(hidden)
    out, hidden = model(x, hidden)
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
""",
            "the state is detached at the top of the iteration (repackage_hidden)",
        ),
        Valid(
            """\
import torch
for x, y in loader:
    hidden = model.init_hidden(x.size(0))
    out, hidden = model(x, hidden)
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
""",
            "the state is re-initialised each iteration",
        ),
        Valid(
            """\
import torch
h = torch.zeros(1, 32, 64)
with torch.no_grad():
    for x in test_loader:
        out, h = model(x, h)
""",
            "under torch.no_grad(): the state carries no history",
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
            "backpropagation through time within one batch (unrolled RNN) is the point",
        ),
        Valid(
            """\
import torch
h = torch.zeros(1, 32, 64)
for x, y in loader:
    out, h_new = model(x, h.detach())
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
    h = h_new
""",
            "the state is detached where it is fed in",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch
import model as lm
model = lm.RNNModel("LSTM", ntokens, 200, 200, 2)
def train(lr):
    hidden = model.init_hidden(20)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
""",
            """\
import torch
import model as lm
model = lm.RNNModel("LSTM", ntokens, 200, 200, 2)
def train(lr):
    hidden = model.init_hidden(20)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        hidden = tuple(s.detach() for s in hidden) if isinstance(hidden, tuple) else hidden.detach()
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
rnn = nn.GRU(10, 20)
h = torch.zeros(1, 4, 20)
for x, y in loader:
    # one step of truncated BPTT
    out, h = rnn(x, h)
    loss = criterion(out, y)
    loss.backward(retain_graph=True)
    optimizer.step()
""",
            """\
import torch
import torch.nn as nn
rnn = nn.GRU(10, 20)
h = torch.zeros(1, 4, 20)
for x, y in loader:
    h = h.detach()
    # one step of truncated BPTT
    out, h = rnn(x, h)
    loss = criterion(out, y)
    loss.backward(retain_graph=True)
    optimizer.step()
""",
        ),
        Invalid(
            """\
import torch
def train(model, loader, optimizer):
    hidden = model.init_hidden(32)
    for x, y in loader:
        optimizer.zero_grad()
        output, hidden = model(x, hidden)
        loss = criterion(output, y)
        loss.backward(retain_graph=True)
        optimizer.step()
""",
            """\
import torch
def train(model, loader, optimizer):
    hidden = model.init_hidden(32)
    for x, y in loader:
        hidden = tuple(s.detach() for s in hidden) if isinstance(hidden, tuple) else hidden.detach()
        optimizer.zero_grad()
        output, hidden = model(x, hidden)
        loss = criterion(output, y)
        loss.backward(retain_graph=True)
        optimizer.step()
""",
        ),
        Invalid(
            """\
import torch
state = (torch.zeros(2, 8, 64), torch.zeros(2, 8, 64))
for step, (x, y) in enumerate(loader):
    out, state = lstm(x, state)
    loss = criterion(out, y)
    loss.backward(retain_graph=True)
    optimizer.step()
""",
            """\
import torch
state = (torch.zeros(2, 8, 64), torch.zeros(2, 8, 64))
for step, (x, y) in enumerate(loader):
    state = tuple(s.detach() for s in state)
    out, state = lstm(x, state)
    loss = criterion(out, y)
    loss.backward(retain_graph=True)
    optimizer.step()
""",
        ),
    ]
