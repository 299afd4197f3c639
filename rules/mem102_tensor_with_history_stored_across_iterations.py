"""MEM102 tensor-with-history-stored-across-iterations."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import dotted_name
from memlint.analysis.training.containers import holds_entries, overwrites_one_slot
from memlint.analysis.training.freed_steps import freed_in_step
from memlint.fix.expr_edits import call_method
from memlint.parse.traversal import visit_fast
from memlint.rule import Fix, Invalid, Rule, Safety, Valid
from memlint.vocabulary.tokens import DATA_TOKENS
from memlint.vocabulary.trackers import KEYWORDS, keyword_names

_ADDERS = frozenset({"append", "extend", "insert", "appendleft", "add"})
# Methods of a tracker object that may keep what they are given (project/trackers.py).
_TRACKER_METHODS = frozenset({"update", "add", "append", "record", "accumulate"})
_TRACKER_MESSAGE = (
    "`{call}` keeps a tensor that carries autograd history across iterations: `{cls}.{method}` ({where})"
    " adds it to `self.{attr}`, so every batch's graph stays alive"
)
# Builders of containers whose adders keep the value itself (compared by
# their last dotted part: collections.deque, omegaconf's ListConfig).
_CONTAINERS = frozenset({"list", "set", "dict", "tuple", "deque", "defaultdict", "OrderedDict", "ListConfig"})


class _ForwardsReading(cst.CSTVisitor):
    """Model calls with an argument that is ``key`` (or an expression of it)."""

    def __init__(self, key: str, is_model_call) -> None:
        super().__init__()
        self.key = key
        self.is_model_call = is_model_call
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        if any(self.key in _names_of(a.value) for a in node.args) and self.is_model_call(node):
            self.found.append(node)


class _RecurrentOutputs(cst.CSTVisitor):
    """Names bound by a recurrent step: ``out, h = cell(x, h)``, an
    assignment whose call is handed a name the same assignment rebinds, or
    one the loop body rebinds from what the step returned (``out, gate =
    self.decode(inp)`` ... ``inp = out``: an autoregressive decoder feeding
    each frame back as the next step's input)."""

    def __init__(self) -> None:
        self.steps: list[tuple[set[str], set[str]]] = []  # (names bound, names handed)
        self.fed_back: list[tuple[str, set[str]]] = []  # ``inp = out[:, -1]``: the name, the output it reads

    @property
    def found(self) -> set[str]:
        found: set[str] = set()
        for targets, handed in self.steps:
            if targets & handed or any(name in handed and read & targets for name, read in self.fed_back):
                found |= targets
        return found

    def visit_Assign(self, node: cst.Assign) -> None:
        targets: set[str] = set()
        todo: list[cst.BaseExpression] = [t.target for t in node.targets]
        while todo:
            target = todo.pop()
            if isinstance(target, (cst.Tuple, cst.List)):
                todo.extend(e.value for e in target.elements)
            elif isinstance(target, cst.Name):
                targets.add(target.value)
        if isinstance(node.value, cst.Call):
            self.steps.append((targets, {a.value.value for a in node.value.args if isinstance(a.value, cst.Name)}))
        # The output itself or a view of it, not a value computed from it
        # (``state = env_step(logits)``: an environment's state carries no graph).
        source = _stored_name(node.value)
        if source is not None and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.fed_back.append((node.targets[0].target.value, {source.value}))


def _stored_name(value: cst.BaseExpression) -> cst.Name | None:
    """The name a stored value is read from: ``frame`` for ``frame``,
    ``frame.squeeze(1)``, ``frame[:, 0]`` (a view or a method of it)."""
    while True:
        if isinstance(value, cst.Name):
            return value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
            value = value.func.value
        elif isinstance(value, cst.Subscript):
            value = value.value
        else:
            return None


def _names_of(expr: cst.BaseExpression) -> set[str]:
    if isinstance(expr, cst.Name):
        return {expr.value}
    key = dotted_name(expr)
    if key is not None:
        return {key.split(".")[0]}
    if isinstance(expr, cst.Subscript):
        return _names_of(expr.value)
    return set()


class TensorWithHistoryStoredAcrossIterations(Rule):
    """
    ## What it does
    Flags `outs.append(out)`, `d[k] = out`, `lst += [out]`,
    `self.buf.append(out)` and `preds = torch.cat((preds, out))` inside a
    loop over batches, where `out` carries autograd history and the container
    outlives the iteration.

    ## Why it matters
    Each stored tensor keeps its computation graph, and with it the
    activations of the forward pass that produced it. Collecting outputs,
    losses or logits for later (metrics, plots, an epoch summary) this way keeps
    every batch's graph in memory: memory grows linearly with the number of
    batches, and evaluation of a large set runs out of memory.

    ## Example
    ```python
    all_logits = []
    for x, _ in loader:
        all_logits.append(model(x))
    ```

    ## Use instead
    ```python
        all_logits.append(model(x).detach())
    ```
    (or evaluate under `torch.no_grad()`, see MEM201).

    Not reported: the outputs of a recurrent step (`frame, h = decoder(x,
    h)`) stored over a loop that counts steps (`range`) or runs `while` and
    trains nothing: the steps of one input, whose chained state keeps every
    step's graph whatever the list holds. Nor a value stored at a time step
    of one batch (`for t in range(x.size(1))`) whose graph a `backward()`
    of the same step, after the store, runs through and frees (pymarl's
    per-step critic): the stored tensor keeps only its own storage.

    ## Fix safety
    Safe: `.detach()` shares storage with the original tensor and has the same
    values; only the graph is dropped. A stored dict or list of losses (an
    `output` whose `output["loss"]` is backpropagated) is reported without a
    fix: it has no `.detach()`.

    ## When it stays silent
    Containers that are later backpropagated through (REINFORCE's saved
    log-probabilities, a loss summed over chunks) are not reported, unless only
    added to in the loop and detached by their first use after it (`values =
    torch.cat(values).detach()`, the graphs were kept for nothing), nor values
    handed to the `add` of a tracker object (`Averager()`), whose method may
    keep only a number (a tracker whose `update`/`add` keeps the very tensor it
    is given, `self.sum += val * n`, is reported at the call, whichever module
    of the project defines it), nor the outputs of a frozen model (RULES.md,
    "Frozen means": also frozen in one chained statement,
    `model.eval().requires_grad_(False)`, or a copy of a frozen model) fed
    inputs without history, nor a slot overwritten every iteration:
    `loss_dict["d"] = d_loss` under a constant key (a literal, or a name bound
    only to one) keeps one value at a time, as `self.last_loss = loss` does
    (`d[step] = out`, `d[f"{i}"] = out` and `d[k].append(out)` grow and are
    reported), nor an element of a model's tuple that its class's `forward`
    builds fresh in every tuple it returns (`return loss,
    torch.Tensor(parts).cuda()`: a number, `.item()`, `.detach()`, a torch
    constructor without `requires_grad`), its other returns being one tensor
    (`torch.cat`). Nor a list built in a loop over the task's classes (`for c in
    classes_to_create:` after `.eval()`, named for classes and no data): one
    entry per class, the result being built, not the graphs of past batches.

    ## References
    - https://pytorch.org/docs/stable/notes/faq.html#my-model-reports-cuda-runtime-error-2-out-of-memory
    """

    code = "MEM102"
    name = "tensor-with-history-stored-across-iterations"
    message = (
        "`{container}` keeps a tensor that carries autograd history across iterations; every batch's graph stays alive"
    )
    fix_safety = Safety.SAFE

    project_facts = (
        "Tracker classes of any module of the project: `losses.update(loss, n)` in a training loop is reported when "
        "the class `losses` is built from (`AverageMeter`, in this module or another) keeps the tensor its "
        "`update`/`add` is given (`self.sum += val * n`, `self.values.append(val)`) with nothing in the method that "
        "may turn it into a number or detach it, and the message names the line that keeps it "
        '("`AverageMeter.update` (utils.py:14) adds it to `self.sum`"); a tracker that stores `.item()`, '
        "`float(val)` or `val.detach()`, or one whose method cannot be read, keeps it silent. "
        "A `**kwargs` tracker (`update(self, batch=1, **kwargs)` doing `self.sum[k] += kwargs[k]`) keeps each "
        "keyword argument that names none of its parameters (`avg.update(cls_loss=loss)`). "
        "Model classes of any module: `loss, parts = model(x, y)` where every binding of `model` builds one class "
        "(`DataParallel(model)` of it too) whose `forward` returns `parts` fresh (JDE's `Darknet`, models.py) "
        "keeps `parts` free of history. `self.model.forward(x)` whose every project class (from the owner's "
        "construction sites) decorates `forward` with `no_grad`/`inference_mode` returns no history. "
        "Methods of any module's classes: `criterion.show_dice(preds, y)`, where every class the project gives "
        "`criterion` ends the method in `return 1 - self.dice_loss(inputs, t)` (the attribute's forward, with "
        "grad on, on its parameters as they came in), carries the history of the arguments bound there."
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or not node.args:
            return
        if func.attr.value not in _ADDERS and func.attr.value not in _TRACKER_METHODS:
            return
        stmt = self.parent(node)
        if not isinstance(stmt, cst.Expr):
            return
        if func.attr.value in _TRACKER_METHODS:
            scope = self.facts.loops.scope_of(stmt)
            kept = self.facts.tensor_trackers.kept(func.value, func.attr.value, scope)
            if kept is not None:
                self._check_tracker(node, stmt, kept)
                return
        if func.attr.value not in _ADDERS:
            return
        if self._user_object(func.value, stmt):
            return
        value = node.args[-1].value
        self._check(stmt, func.value, value, whole_value=func.attr.value != "extend")

    def _check_tracker(self, call: cst.Call, stmt: cst.CSTNode, kept) -> None:
        """``losses.update(loss, n)`` where ``AverageMeter.update`` (in this
        module or another) adds its ``val`` to ``self.sum``: the tracker
        keeps the loss's graph, and chains each batch's onto the last."""
        positional = [a for a in call.args if a.keyword is None]
        if any(a.star for a in call.args):
            return  # ``update(*vals)``: which argument lands where is unknown
        if kept.position == KEYWORDS:
            value = _kept_keywords(call, kept.param)
            if value is None:
                return
        else:
            if kept.position < len(positional):
                arg = positional[kept.position]
            else:
                arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == kept.param), None)
            if arg is None:
                return
            value = arg.value
        receiver = dotted_name(call.func.value)  # type: ignore[attr-defined]
        message = _TRACKER_MESSAGE.format(
            call=f"{receiver}.{kept.method}",
            cls=kept.cls.rsplit(".", 1)[-1],
            method=kept.method,
            where=kept.where,
            attr=kept.attr,
        )
        self._check(stmt, call.func.value, value, whole_value=True, message=message)  # type: ignore[attr-defined]

    def _user_object(self, receiver: cst.BaseExpression, stmt: cst.CSTNode) -> bool:
        """``loss_avg = Averager()`` then ``loss_avg.add(cost)``: the receiver
        is built by a class that is not a container, so what ``add`` keeps is
        unknown (a meter may store ``v.data.sum()``)."""
        key = dotted_name(receiver)
        if key is None:
            return False
        names = self.facts.bindings.constructors(key, self.facts.loops.scope_of(stmt))
        return bool(names) and not any(n.rsplit(".", 1)[-1] in _CONTAINERS for n in names)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        target = node.targets[0].target
        if isinstance(target, cst.Subscript):
            facts = self.facts
            if overwrites_one_slot(target, node.value, facts.loops.scope_of(node), facts.bindings, facts.calls.owner):
                return  # ``loss_dict["d"] = d_loss``: one value per slot, replaced each iteration
            self._check(node, target.value, node.value, whole_value=True)
        elif isinstance(node.value, cst.Call) and self._concatenates(node.value, target):
            # ``preds = torch.cat((preds, out))``
            parts = node.value.args[0].value
            key = dotted_name(target)
            others = [el for el in parts.elements if dotted_name(el.value) != key]  # type: ignore[attr-defined]
            self._check(node, target, parts.with_changes(elements=others), whole_value=True)
        elif isinstance(node.value, cst.BinaryOperation) and isinstance(node.value.operator, cst.Add):
            # ``lst = lst + [out]``
            key = dotted_name(target)
            if key is not None and dotted_name(node.value.left) == key and isinstance(node.value.right, cst.List):
                self._check(node, target, node.value.right, whole_value=False)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.AddAssign) and isinstance(node.value, (cst.List, cst.Tuple)):
            self._check(node, node.target, node.value, whole_value=False)

    def _feeds_forward_after(self, key: str, loop, scope) -> bool:
        """``encoder_outputs[ei] = out`` over the time steps of one input, then
        ``decoder(x, h, encoder_outputs)``: a local buffer filled by a loop that
        neither trains nor iterates over data, and read by a later forward of
        the same call, holds that forward's own inputs; it dies with the call
        (evaluating with grad on is MEM201's finding, not this one)."""
        if loop.trains or loop.data_tokens & DATA_TOKENS or not isinstance(scope, cst.FunctionDef):
            return False
        if "." in key or self.facts.loops.outlives_call(key, scope):
            return False
        finder = _ForwardsReading(key, self.facts.objects.is_model_call)
        visit_fast(scope.body, finder)
        end = self.facts.usage.pos(loop.node)
        # A forward after the loop's start and outside it (``pos`` is the start).
        return any(
            self.facts.usage.pos(call) > end and not self.facts.loops.in_loop_body(call, loop) for call in finder.found
        )

    def _recurrent_step(self, value: cst.BaseExpression, loop) -> bool:
        """``frames, scores, hidden = self.decoder(x, hidden)`` then
        ``outputs.append(frames)`` in a loop that trains nothing and counts
        steps (``range``) or runs ``while`` (WaveRNN's Tacotron.generate): the steps of one input,
        chained through the state each step hands to the next, which keeps
        every step's graph alive whatever the list holds (running it with
        grad on is MEM201's finding, not this one)."""
        # ``frames += [frame.squeeze(1)]``: each element stored.
        values = [e.value for e in value.elements] if isinstance(value, (cst.List, cst.Tuple)) else [value]
        names = [_stored_name(v) for v in values]
        if loop.trains or not values or None in names:
            return False
        node = loop.node
        # Counted steps (``range(0, steps, r)``) or ``while``: no data is iterated.
        if isinstance(node, cst.For):
            it = node.iter
            if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range"):
                return False
        finder = _RecurrentOutputs()
        visit_fast(loop.node.body, finder)
        found = finder.found
        return all(name is not None and name.value in found for name in names)

    def _detached_after(self, key: str, loop, scope) -> bool:
        """``values.append(model(x))`` in the loop, and its first use after
        the loop is ``values = torch.cat(values).detach()`` (Mario PPO): the
        name's graph is dropped there, so the backward the scope reaches
        through ``values`` reads the detached copy, not the list (the
        analysis is by name, not by binding). Inside the loop the list may
        only be added to: a REINFORCE list read there stays silent."""
        if "." in key:
            return False
        usage = self.facts.usage
        start = usage.pos(loop.node)
        after: list[cst.CSTNode] = []
        for node in usage.reads(key, scope):
            if self._inside(node, loop.node):
                attr = self.parent(node)
                if not (isinstance(attr, cst.Attribute) and attr.attr.value in _ADDERS):
                    return False  # read in the loop: it may feed a loss there
                if not isinstance(self.parent(attr), cst.Call):
                    return False
            elif usage.pos(node) > start:
                after.append(node)
        if not after:
            return False
        first = min(after, key=usage.pos)
        stmt = self.parent(first)
        while stmt is not None and not isinstance(stmt, cst.BaseSmallStatement):
            stmt = self.parent(stmt)
        if not (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and dotted_name(stmt.targets[0].target) == key):
            return False
        value = stmt.value
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)):
            return False
        if value.func.attr.value != "detach" or value.args:
            return False
        # Every use of the name in the statement: its target, or inside what is detached.
        receiver = value.func.value
        uses = [n for n in after if self._inside(n, stmt)]
        return all(n is stmt.targets[0].target or self._inside(n, receiver) for n in uses)

    def _inside(self, node: cst.CSTNode, outer: cst.CSTNode) -> bool:
        cur: cst.CSTNode | None = node
        while cur is not None:
            if cur is outer:
                return True
            cur = self.parent(cur)
        return False

    def _concatenates(self, call: cst.Call, target: cst.BaseExpression) -> bool:
        qn = self.facts.names.call_name(call) or ""
        if qn not in ("torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.vstack", "torch.hstack"):
            return False
        if not call.args or not isinstance(call.args[0].value, (cst.List, cst.Tuple)):
            return False
        key = dotted_name(target)
        return key is not None and any(dotted_name(el.value) == key for el in call.args[0].value.elements)

    def _check(
        self,
        stmt: cst.CSTNode,
        container: cst.BaseExpression,
        value: cst.BaseExpression,
        whole_value: bool,
        message: str | None = None,
    ) -> None:
        while isinstance(container, cst.Subscript):
            container = container.value  # ``history["train_loss"].append(loss)``
        key = dotted_name(container)
        if key is None:
            return
        facts = self.facts
        terms = _terms(value, facts.history.carries_history)
        if not terms:
            return
        loop = facts.loops.carried_across(key, stmt)
        if loop is None and not facts.loops.carried_by_framework(key, stmt):
            return
        scope = facts.loops.scope_of(stmt)
        if facts.usage.reaches_backward(key, scope) and not (
            loop is not None and self._detached_after(key, loop, scope)
        ):
            return
        if loop is not None and loop.role is None and facts.usage.reaches_return(key, scope):
            return
        if loop is not None and self._feeds_forward_after(key, loop, scope):
            return
        if loop is not None and self._recurrent_step(value, loop):
            return
        if loop is not None and freed_in_step(
            stmt, value, loop.node, scope, facts.bindings, facts.calls, facts.objects.is_model_call
        ):
            return  # a time step of one batch whose backward frees the stored graph (pymarl's COMA critic)
        fixable = (
            all(not isinstance(t, (cst.List, cst.Tuple)) for t in terms)
            and (whole_value or value is not terms[0])
            # ``outs.append(output)`` with ``output["loss"]`` read: a dict has no ``.detach()``
            and not any(holds_entries(t, scope, facts.bindings) for t in terms)
        )
        fix = None
        if fixable:
            fix = Fix("Store `.detach()`ed tensors", tuple((t, call_method(t, "detach")) for t in terms), Safety.SAFE)
        self.report(stmt, message=message or self.message.format(container=key), fix=fix)

    valid = [
        Valid(
            """\
import torch
def class_prototypes(encoder, features_of, n_classes):
    encoder.eval()
    prototypes = []
    for c in range(n_classes):
        prototypes.append(encoder(features_of(c)).mean(dim=0))
    return torch.stack(prototypes)
""",
            "one prototype per class of the task, in a loop over classes, not batches: the list is the result",
        ),
        Valid(
            """\
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.prenet = nn.Linear(4, 4)
        self.proj = nn.Linear(4, 4)
        self.gate = nn.Linear(4, 1)

    def decode(self, x):
        return self.proj(x), self.gate(x), x

    def inference(self, memory):
        decoder_input = memory[:, 0]
        mel_outputs, gate_outputs = [], []
        while True:
            decoder_input = self.prenet(decoder_input)
            mel_output, gate_output, alignment = self.decode(decoder_input)
            mel_outputs += [mel_output.squeeze(1)]
            gate_outputs += [gate_output]
            if torch.sigmoid(gate_output.data) > 0.5:
                break
            decoder_input = mel_output
        return torch.stack(mel_outputs), torch.stack(gate_outputs)
""",
            "an autoregressive decoder's frames: each step's output is fed back as the next step's input,"
            " so the chain keeps every step's graph whatever the lists hold (mellotron's Decoder.inference)",
        ),
        Valid(
            """\
import torch


def smart():
    def d(fn):
        return torch.inference_mode()(fn)

    return d


@smart()
def run(model, loader):
    model.eval()
    outs = []
    for x in loader:
        outs.append(model(x))
    return outs
""",
            "`run` is decorated by a factory of the module's own that applies `torch.inference_mode()`: "
            "its outputs carry no history",
        ),
        Valid(
            """\
import torch
def train(model, loader, optimizer, criterion, args):
    for imgs, boxes in loader:
        out = model(imgs)
        loss = criterion(out, boxes)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        pred_coord = torch.zeros(args.batch_size, 4)
        for ii in range(args.batch_size):
            pred_coord[ii, 0] = torch.sigmoid(out[ii, 0])
        print(pred_coord.sum().item())
""",
            "a buffer made anew at each training step and written per sample of the batch: it lives one step",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
import torch.nn.functional as F
class Meta(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x, y):
        logits = self.fc(x)
        loss = F.cross_entropy(logits, y)
        acc = (logits.argmax(dim=1) == y).float().mean().item()
        return loss, acc
def train(loader):
    model = Meta().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    accs = []
    for x, y in loader:
        loss, acc = model(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        accs.append(acc)
""",
            "few-shot-meta-baseline's MetaBaseline: the forward binds `acc` only to an `.item()` and returns it "
            "second; only the loss carries history",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
    def forward(self, x, y):
        loss = ((self.fc(x) - y) ** 2).mean()
        parts = {"loss": loss.item(), "box": loss.item()}
        return loss, torch.Tensor(list(parts.values())).cuda()
def train(loader):
    model = torch.nn.DataParallel(Net()).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    running = []
    for x, y in loader:
        loss, components = model(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        running.append(components[0])
""",
            "JDE: the forward's second element is a tensor the legacy constructor builds fresh from `.item()` "
            "floats (no graph, whatever it is given); only the loss, the first element, carries history",
        ),
        Valid(
            """\
import torch
def generate(decoder, x, hidden, steps=200):
    frames, scores = [], []
    for t in range(steps):
        frame, score, hidden = decoder(x, hidden)
        frames.append(frame)
        scores.append(score)
        x = frame
    return torch.cat(frames), torch.cat(scores)
""",
            "the steps of one input, chained through the state each step hands to the next: the chain keeps the graph",
        ),
        Valid(
            """\
import torch
def evaluate(encoder, decoder, seq, max_length=10):
    hidden = encoder.init_hidden()
    encoder_outputs = torch.zeros(max_length, encoder.hidden_size)
    for ei in range(seq.size(1)):
        encoder_output, hidden = encoder(seq[:, ei], hidden)
        encoder_outputs[ei] = encoder_output[0][0]
    words = []
    for di in range(max_length):
        out, hidden, attn = decoder(token, hidden, encoder_outputs)
        words.append(out.argmax().item())
    return words
""",
            "a buffer filled over the time steps of one input and read by a later forward of the same call",
        ),
        Valid(
            """\
import torch
class AverageMeter(object):
    def __init__(self):
        self.sum = 0
        self.count = 0
    def update(self, val, n=1):
        self.val = val
        self.sum += val.item() * n
        self.count += n
        self.avg = self.sum / self.count
def train(model, loader, optimizer, criterion):
    losses = AverageMeter()
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.update(loss, x.size(0))
""",
            "the tracker's update stores `val.item()`: a number",
        ),
        Valid(
            """\
import torch
class AverageMeter(object):
    def __init__(self):
        self.sum = {}
        self.count = {}
    def update(self, batch=1, **kwargs):
        for k in kwargs:
            if k not in self.sum:
                self.sum[k] = 0
                self.count[k] = 0
            self.sum[k] += float(kwargs[k])
            self.count[k] += batch
def train(model, loader, optimizer, criterion):
    avg = AverageMeter()
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        avg.update(batch=x.size(0), cls_loss=loss)
""",
            "the tracker sums `float(kwargs[k])`: numbers",
        ),
        Valid(
            """\
import torch
class AverageMeter(object):
    def __init__(self):
        self.sum = {}
        self.count = {}
    def update(self, batch=1, **kwargs):
        for k in kwargs:
            if k not in self.sum:
                self.sum[k] = 0
                self.count[k] = 0
            self.sum[k] += kwargs[k]
            self.count[k] += batch
def train(model, loader, optimizer, criterion):
    avg = AverageMeter()
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        avg.update(batch=loss, cls_loss=loss.item())
""",
            "`batch` names a parameter the tracker only counts with; the keyword it sums is a number",
        ),
        Valid(
            """\
import torch
class AverageMeter(object):
    def __init__(self):
        self.sum = 0
        self.count = 0
    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count
def train(model, loader, optimizer, criterion):
    losses = AverageMeter()
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.update(loss.item(), x.size(0))
        last = AverageMeter()
        last.update(loss)
""",
            "the loss is handed over as a number; a tracker built afresh in each iteration keeps one graph at most",
        ),
        Valid(
            """\
import torch
D_KEY = "loss_d"
def train_gan(G, D, opt_g, opt_d, loader, crit):
    loss_dict = {}
    for real in loader:
        fake = G(torch.randn(real.size(0), 64))
        d_loss = crit(D(real), 1.0) + crit(D(fake.detach()), 0.0)
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = crit(D(fake), 1.0)
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
        loss_dict[D_KEY] = d_loss
        loss_dict["g"] = g_loss
        loss_dict["parts"][0] = g_loss
    return loss_dict
class Trainer:
    def fit(self, loader):
        for x, y in loader:
            loss = self.crit(self.model(x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            self.last_loss = loss
            self.logs[-1] = loss
""",
            "a slot under a constant key, or an attribute, overwritten every iteration: one value at a time",
        ),
        Valid(
            """\
import torch
def predict(model, loader, device):
    model.eval().requires_grad_(False)
    outputs = []
    for x, _ in loader:
        outputs.append(model(x.to(device)))
    return outputs
""",
            "the model is frozen in one chained statement: its outputs carry no history",
        ),
        Valid(
            """\
import torch
from utils import Averager
loss_avg = Averager()
for image, text in loader:
    cost = criterion(model(image), text)
    model.zero_grad()
    cost.backward()
    optimizer.step()
    loss_avg.add(cost)
""",
            "a meter of the project's own class: what its add keeps is unknown (often v.data.sum())",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
import torch.nn.functional as F
class FrozenEncoder(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder
    @torch.no_grad()
    def forward(self, x):
        return self.encoder(x)
def train(model, encoder, loader, opt):
    feat_net = FrozenEncoder(encoder)
    top5, bank = [], []
    for x, y in loader:
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        top5.append(logits.topk(5, dim=1).indices)
        bank.append(feat_net(x))
    return top5, bank
""",
            "topk indices are integers; a module whose forward runs under no_grad",
        ),
        Valid(
            """\
import torch
losses = []
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    losses.append(loss.item())
    preds = []
    preds.append(model(x).detach().cpu())
""",
            "the value is already a number or detached",
        ),
        Valid(
            """\
import torch
outs = []
model.eval()
with torch.no_grad():
    for x, _ in test_loader:
        outs.append(model(x))
""",
            "the code runs under torch.no_grad()",
        ),
        Valid(
            """\
import torch
for x, y in loader:
    chunks = []
    for part in x.split(4):
        chunks.append(model(part))
    loss = criterion(torch.cat(chunks), y)
    loss.backward()
""",
            "the list is built and consumed within one iteration",
        ),
        Valid(
            """\
import torch
def update(model, opt, states):
    values = []
    for s in states:
        values.append(model(s))
    loss = torch.cat(values).pow(2).mean()
    values = torch.cat(values).detach()
    opt.zero_grad()
    loss.backward()
    return values
""",
            "the list's first use after the loop keeps its graph for the backward; only a later one detaches it",
        ),
        Valid(
            """\
import torch
saved_log_probs = []
rewards = []
state = env.reset()
for step in range(1000):
    log_prob = policy(state).log_softmax(-1)[0]
    saved_log_probs.append(log_prob)
    state, reward, done = env.step(0)
    rewards.append(reward)
    if done:
        break
loss = -torch.stack(saved_log_probs).sum()
loss.backward()
""",
            "the container is backpropagated through later on purpose (REINFORCE)",
        ),
        Valid(
            """\
import torch
correct = []
for x, y in loader:
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    correct.append((out.argmax(1) == y).sum())
""",
            "integer metrics carry no history",
        ),
        Valid(
            """\
import torch
class Decoder(torch.nn.Module):
    def forward(self, x, h):
        outputs = []
        for t in range(x.size(0)):
            h = self.cell(x[t], h)
            outputs.append(h)
        return torch.stack(outputs)
""",
            "a time-step loop inside forward: the outputs feed the loss",
        ),
        Valid(
            """\
import torch
@torch.inference_mode()
def predict(model, loader):
    outs = []
    for x in loader:
        outs.append(model(x))
    return torch.cat(outs)
""",
            "in a function decorated with inference_mode",
        ),
        Valid(
            """\
import torch
d_losses = []
for real in loader:
    fake = G(noise())
    loss_d = criterion(D(fake), zeros) + criterion(D(real), ones)
    loss_d.backward(retain_graph=True)
    criterion(D(fake), ones).backward()
    d_losses.append(float(loss_d))
""",
            "a second backward through a shared graph (GAN), numbers stored",
        ),
        Valid(
            """\
import torch
def train_gan(netG, netD, optD, optG, crit, loader):
    G_losses = []
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
        G_losses.append(errG.item())
    return G_losses
""",
            "a GAN loop with short names that stores numbers for plotting",
        ),
        Valid(
            """\
import torch
import pytorch_lightning as pl
class GAN(pl.LightningModule):
    def __init__(self, generator, discriminator):
        super().__init__()
        self.generator = generator
        self.discriminator = discriminator
        self.automatic_optimization = False
        self.g_losses = []
    def training_step(self, batch, batch_idx):
        g_loss = self.generator_step(batch)
        self.g_losses.append(g_loss)
        return g_loss
""",
            "manual optimization: what training_step returns is not backpropagated, so nothing proves the loss carries history",
        ),
        Valid(
            """\
import torch
import lightning as L
class LitModel(L.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.train_losses = []
        self.val_outputs = []
    def training_step(self, batch, batch_idx):
        loss = self.net.compute_loss(batch)
        self.train_losses.append(loss.detach())
        return loss
    def validation_step(self, batch, batch_idx):
        self.val_outputs.append(self.net.compute_loss(batch))
    def on_validation_epoch_end(self):
        self.log("val_loss", torch.stack(self.val_outputs).mean())
        self.val_outputs.clear()
""",
            "Lightning: detached training losses; validation_step runs under no_grad",
        ),
        Valid(
            """\
import torch
from utils import Averager
loss_avg = Averager()
for image, text in loader:
    cost = criterion(model(image), text)
    model.zero_grad()
    cost.backward()
    optimizer.step()
    loss_avg.add(cost)
print(loss_avg.val())
""",
            "a tracker object of another module: its add() may keep only `.data.sum()`",
        ),
        Valid(
            """\
import torch
epoch_logs = []
for i, batch in enumerate(loader):
    optimizer.zero_grad()
    output = module.training_step(batch, i)
    output["loss"].backward()
    optimizer.step()
    epoch_logs.append({k: v.item() for k, v in output.items()})
""",
            "the dict of losses is turned into numbers before it is kept",
        ),
        Valid(
            """\
import torch
for i, batch in enumerate(loader):
    outputs = []
    output = module.training_step(batch, i)
    output["loss"].backward()
    optimizer.step()
    outputs.append(output)
    module.log_step(outputs)
""",
            "the list is rebuilt every step",
        ),
        Valid(
            """\
import torch
import torch.nn as nn
import lightning as L
class Ensemble(L.LightningModule):
    def __init__(self, heads):
        super().__init__()
        self.heads = nn.ModuleList(heads)
        self.sample_preds = []
    def _predict(self, x):
        return torch.stack([h(x) for h in self.heads], 1).mean(1)
    def training_step(self, batch, batch_idx):
        x, y = batch
        for i in range(x.size(0)):
            self.sample_preds.append(self._predict(x[i]))
        loss = torch.stack(self.sample_preds).sub(y).pow(2).mean()
        self.sample_preds.clear()
        return loss
    def validation_step(self, batch, batch_idx):
        x, y = batch
        for i in range(x.size(0)):
            self.sample_preds.append(self._predict(x[i]))
""",
            "Lightning: a per-sample list cleared within the step; validation_step runs under no_grad",
        ),
        Valid(
            """\
import torch as th
class Learner:
    def train_critic(self, batch, rewards, actions, bs):
        q_vals = th.zeros(bs, rewards.size(1), self.n_actions)
        for t in reversed(range(rewards.size(1))):
            q_t = self.critic(batch, t)
            q_vals[:, t] = q_t.view(bs, self.n_actions)
            q_taken = th.gather(q_t, dim=1, index=actions[:, t]).squeeze(1)
            loss = ((q_taken - rewards[:, t]) ** 2).sum()
            self.critic_optimiser.zero_grad()
            loss.backward()
            self.critic_optimiser.step()
        return q_vals
""",
            "pymarl's COMA critic: one step per time step of one batch, whose backward frees the stored graph",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.gate = nn.Linear(4, 1)

    def decode(self, x):
        return self.proj(x), self.gate(x)

    def inference(self, memory):
        mel_outputs = []
        for i in range(memory.size(1)):
            mel_output, gate_output = self.decode(memory[:, i])
            mel_outputs += [mel_output.squeeze(1)]
        return torch.stack(mel_outputs)
""",
            """\
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.gate = nn.Linear(4, 1)

    def decode(self, x):
        return self.proj(x), self.gate(x)

    def inference(self, memory):
        mel_outputs = []
        for i in range(memory.size(1)):
            mel_output, gate_output = self.decode(memory[:, i])
            mel_outputs += [mel_output.squeeze(1).detach()]
        return torch.stack(mel_outputs)
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Learner(object):
    def __init__(self):
        self.model = nn.Linear(4, 2)
    def infer(self, faces):
        embs = []
        for img in faces:
            embs.append(self.model(img.unsqueeze(0)))
        return torch.cat(embs), embs
""",
            """\
import torch
import torch.nn as nn
class Learner(object):
    def __init__(self):
        self.model = nn.Linear(4, 2)
    def infer(self, faces):
        embs = []
        for img in faces:
            embs.append(self.model(img.unsqueeze(0)).detach())
        return torch.cat(embs), embs
""",
        ),
        Invalid(
            """\
import torch
def predict(model, loader):
    outs = []
    for x in loader:
        outs.append(model(x))
    return torch.cat(outs)
""",
            """\
import torch
def predict(model, loader):
    outs = []
    for x in loader:
        outs.append(model(x).detach())
    return torch.cat(outs)
""",
        ),
        Invalid(
            """\
import torch
def train(model, loader, optimizer, criterion, epochs):
    for epoch in range(epochs):
        preds = torch.zeros(100, 4)
        for i in range(100):
            x, y = loader.sample()
            out = model(x)
            loss = criterion(out, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            preds[i] = out
""",
            """\
import torch
def train(model, loader, optimizer, criterion, epochs):
    for epoch in range(epochs):
        preds = torch.zeros(100, 4)
        for i in range(100):
            x, y = loader.sample()
            out = model(x)
            loss = criterion(out, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            preds[i] = out.detach()
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
import torch.nn.functional as F
class Meta(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x, y):
        logits = self.fc(x)
        loss = F.cross_entropy(logits, y)
        acc = (logits.argmax(dim=1) == y).float().mean().item()
        if self.training:
            acc = logits.softmax(dim=1).max(dim=1)[0].mean()
        return loss, acc
def train(loader):
    model = Meta().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    accs = []
    for x, y in loader:
        loss, acc = model(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        accs.append(acc)
""",
            """\
import torch
import torch.nn as nn
import torch.nn.functional as F
class Meta(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x, y):
        logits = self.fc(x)
        loss = F.cross_entropy(logits, y)
        acc = (logits.argmax(dim=1) == y).float().mean().item()
        if self.training:
            acc = logits.softmax(dim=1).max(dim=1)[0].mean()
        return loss, acc
def train(loader):
    model = Meta().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    accs = []
    for x, y in loader:
        loss, acc = model(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        accs.append(acc.detach())
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
    def forward(self, x, y):
        loss = ((self.fc(x) - y) ** 2).mean()
        return loss, torch.stack([loss, loss * 2])
def train(loader):
    model = torch.nn.DataParallel(Net()).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    running = []
    for x, y in loader:
        loss, components = model(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        running.append(components[0])
""",
            """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
    def forward(self, x, y):
        loss = ((self.fc(x) - y) ** 2).mean()
        return loss, torch.stack([loss, loss * 2])
def train(loader):
    model = torch.nn.DataParallel(Net()).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    running = []
    for x, y in loader:
        loss, components = model(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        running.append(components[0].detach())
""",
        ),
        Invalid(
            """\
import torch
def train(model, loader, hidden):
    outputs = []
    for x, y in loader:
        out, hidden = model(x, hidden.detach())
        outputs.append(out)
        out.sum().backward()
""",
            """\
import torch
def train(model, loader, hidden):
    outputs = []
    for x, y in loader:
        out, hidden = model(x, hidden.detach())
        outputs.append(out.detach())
        out.sum().backward()
""",
        ),
        Invalid(
            """\
import torch
def rollout(model, optimizer, opt, state, returns):
    while True:
        values = []
        for _ in range(opt.num_local_steps):
            logits, value = model(state)
            values.append(value.squeeze())
            state = env_step(logits)
        values = torch.cat(values).detach()
        for _ in range(opt.num_epochs):
            _, v = model(state)
            loss = (returns - values - v).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
""",
            """\
import torch
def rollout(model, optimizer, opt, state, returns):
    while True:
        values = []
        for _ in range(opt.num_local_steps):
            logits, value = model(state)
            values.append(value.squeeze().detach())
            state = env_step(logits)
        values = torch.cat(values).detach()
        for _ in range(opt.num_epochs):
            _, v = model(state)
            loss = (returns - values - v).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
""",
        ),
        Invalid(
            """\
import torch
class AverageMeter(object):
    def __init__(self):
        self.sum = 0
        self.count = 0
    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count
def train(model, loader, optimizer, criterion):
    losses = AverageMeter()
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.update(loss, x.size(0))
    print(losses.avg)
""",
            """\
import torch
class AverageMeter(object):
    def __init__(self):
        self.sum = 0
        self.count = 0
    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count
def train(model, loader, optimizer, criterion):
    losses = AverageMeter()
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.update(loss.detach(), x.size(0))
    print(losses.avg)
""",
        ),
        Invalid(
            """\
import torch
class AverageMeter(object):
    def __init__(self):
        self.sum = {}
        self.count = {}
    def update(self, batch=1, **kwargs):
        for k in kwargs:
            if k not in self.sum:
                self.sum[k] = 0
                self.count[k] = 0
            self.sum[k] += kwargs[k]
            self.count[k] += batch
def train(model, loader, optimizer, criterion):
    avg = AverageMeter()
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        avg.update(batch=x.size(0), cls_loss=loss, lr=0.1)
""",
            """\
import torch
class AverageMeter(object):
    def __init__(self):
        self.sum = {}
        self.count = {}
    def update(self, batch=1, **kwargs):
        for k in kwargs:
            if k not in self.sum:
                self.sum[k] = 0
                self.count[k] = 0
            self.sum[k] += kwargs[k]
            self.count[k] += batch
def train(model, loader, optimizer, criterion):
    avg = AverageMeter()
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        avg.update(batch=x.size(0), cls_loss=loss.detach(), lr=0.1)
""",
        ),
        Invalid(
            """\
import torch
def train(model, loader, optimizer, criterion):
    logs = {}
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        tag = "step"
        tag = tag + str(i)
        logs[f"step{i}"] = loss
        logs[tag] = loss
    return logs
""",
            """\
import torch
def train(model, loader, optimizer, criterion):
    logs = {}
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        tag = "step"
        tag = tag + str(i)
        logs[f"step{i}"] = loss.detach()
        logs[tag] = loss.detach()
    return logs
""",
            count=2,
        ),
        Invalid(
            """\
import torch
seen = set()
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    seen.add(loss)
""",
            """\
import torch
seen = set()
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    seen.add(loss.detach())
""",
        ),
        Invalid(
            """\
import torch
from torch.distributions import Categorical
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
entropies = []
for episode in range(1000):
    state, done, log_probs, rewards = env.reset(), False, [], []
    while not done:
        dist = Categorical(policy(torch.from_numpy(state).float()))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        entropies += [dist.entropy()]
        state, reward, done = env.step(action.item())
        rewards.append(reward)
    loss = -(torch.stack(log_probs) * returns_of(rewards)).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            """\
import torch
from torch.distributions import Categorical
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
entropies = []
for episode in range(1000):
    state, done, log_probs, rewards = env.reset(), False, [], []
    while not done:
        dist = Categorical(policy(torch.from_numpy(state).float()))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        entropies += [dist.entropy().detach()]
        state, reward, done = env.step(action.item())
        rewards.append(reward)
    loss = -(torch.stack(log_probs) * returns_of(rewards)).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        ),
        Invalid(
            """\
import torch
epoch_summary = {}
for epoch in range(epochs):
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    epoch_summary[epoch] = loss
""",
            """\
import torch
epoch_summary = {}
for epoch in range(epochs):
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    epoch_summary[epoch] = loss.detach()
""",
        ),
        Invalid(
            """\
import torch
history = {"train_loss": []}
for x, y in loader:
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    history["train_loss"].append(loss)
""",
            """\
import torch
history = {"train_loss": []}
for x, y in loader:
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    history["train_loss"].append(loss.detach())
""",
        ),
        Invalid(
            """\
import torch
all_logits = []
model.eval()
for x, _ in val_loader:
    logits = model(x)
    all_logits.append(logits)  # for the confusion matrix
""",
            """\
import torch
all_logits = []
model.eval()
for x, _ in val_loader:
    logits = model(x)
    all_logits.append(logits.detach())  # for the confusion matrix
""",
        ),
        Invalid(
            """\
import torch
history = {}
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    history[step] = loss
""",
            """\
import torch
history = {}
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    history[step] = loss.detach()
""",
        ),
        Invalid(
            """\
import torch
class Trainer:
    def train(self, loader):
        for x, y in loader:
            out = self.model(x)
            loss = self.criterion(out, y)
            loss.backward()
            self.optimizer.step()
            self.losses += [loss]
""",
            """\
import torch
class Trainer:
    def train(self, loader):
        for x, y in loader:
            out = self.model(x)
            loss = self.criterion(out, y)
            loss.backward()
            self.optimizer.step()
            self.losses += [loss.detach()]
""",
        ),
        Invalid(
            """\
import torch
all_preds = torch.tensor([])
for step, (x, y) in enumerate(train_loader):
    out = model(x)
    criterion(out, y).backward()
    optimizer.step()
    all_preds = torch.cat((all_preds, out), dim=0)
""",
            """\
import torch
all_preds = torch.tensor([])
for step, (x, y) in enumerate(train_loader):
    out = model(x)
    criterion(out, y).backward()
    optimizer.step()
    all_preds = torch.cat((all_preds, out.detach()), dim=0)
""",
        ),
        Invalid(
            """\
import torch
preds = []
def predict(model, loader):
    model.eval()
    for x in loader:
        preds.append((torch.sigmoid(model(x)), x.shape[0]))
""",
            """\
import torch
preds = []
def predict(model, loader):
    model.eval()
    for x in loader:
        preds.append((torch.sigmoid(model(x)).detach(), x.shape[0]))
""",
        ),
        Invalid(
            """\
import torch
class Trainer:
    def train_epoch(self, loader):
        losses = []
        for batch in loader:
            loss = self.compute_loss(batch)
            self.optimizer.zero_grad()
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            losses.append(loss)
        return torch.stack(losses).mean().item()
""",
            """\
import torch
class Trainer:
    def train_epoch(self, loader):
        losses = []
        for batch in loader:
            loss = self.compute_loss(batch)
            self.optimizer.zero_grad()
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            losses.append(loss.detach())
        return torch.stack(losses).mean().item()
""",
        ),
        Invalid(
            """\
import torch
def train(gen, disc, opt_gen, opt_disc, loader, epochs):
    g_hist = []
    for epoch in range(epochs):
        for real in loader:
            noise = torch.randn(real.size(0), 64)
            fake = gen(noise)
            lossD = (torch.relu(1 - disc(real)).mean() + torch.relu(1 + disc(fake.detach())).mean())
            opt_disc.zero_grad()
            lossD.backward()
            opt_disc.step()
            lossG = -disc(fake).mean()
            opt_gen.zero_grad()
            lossG.backward()
            opt_gen.step()
        g_hist.append(lossG)
    return g_hist
""",
            """\
import torch
def train(gen, disc, opt_gen, opt_disc, loader, epochs):
    g_hist = []
    for epoch in range(epochs):
        for real in loader:
            noise = torch.randn(real.size(0), 64)
            fake = gen(noise)
            lossD = (torch.relu(1 - disc(real)).mean() + torch.relu(1 + disc(fake.detach())).mean())
            opt_disc.zero_grad()
            lossD.backward()
            opt_disc.step()
            lossG = -disc(fake).mean()
            opt_gen.zero_grad()
            lossG.backward()
            opt_gen.step()
        g_hist.append(lossG.detach())
    return g_hist
""",
        ),
        Invalid(
            """\
import torch
import lightning as L
class LitModel(L.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.train_losses = []
    def training_step(self, batch, batch_idx):
        loss = self.net.compute_loss(batch)
        self.train_losses.append(loss)
        return loss
    def on_train_epoch_end(self):
        self.log("train_loss", torch.stack(self.train_losses).mean())
        self.train_losses.clear()
""",
            """\
import torch
import lightning as L
class LitModel(L.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.train_losses = []
    def training_step(self, batch, batch_idx):
        loss = self.net.compute_loss(batch)
        self.train_losses.append(loss.detach())
        return loss
    def on_train_epoch_end(self):
        self.log("train_loss", torch.stack(self.train_losses).mean())
        self.train_losses.clear()
""",
        ),
        Invalid(
            """\
import torch
class Trainer:
    def __init__(self, model, opt, crit):
        self.model, self.opt, self.crit = model, opt, crit
        self.train_losses = []
    def train_step(self, x, y):
        self.opt.zero_grad()
        loss = self.crit(self.model(x), y)
        loss.backward()
        self.opt.step()
        self.train_losses.append(loss)
    def on_epoch_end(self):
        avg = torch.stack(self.train_losses).mean()
        self.train_losses = []
        return avg.item()
    def fit(self, loader, epochs):
        for epoch in range(epochs):
            for x, y in loader:
                self.train_step(x, y)
            print(self.on_epoch_end())
""",
            """\
import torch
class Trainer:
    def __init__(self, model, opt, crit):
        self.model, self.opt, self.crit = model, opt, crit
        self.train_losses = []
    def train_step(self, x, y):
        self.opt.zero_grad()
        loss = self.crit(self.model(x), y)
        loss.backward()
        self.opt.step()
        self.train_losses.append(loss.detach())
    def on_epoch_end(self):
        avg = torch.stack(self.train_losses).mean()
        self.train_losses = []
        return avg.item()
    def fit(self, loader, epochs):
        for epoch in range(epochs):
            for x, y in loader:
                self.train_step(x, y)
            print(self.on_epoch_end())
""",
        ),
        Invalid(
            """\
import torch
def train(module, loader, optimizer):
    outputs = []
    for i, batch in enumerate(loader):
        optimizer.zero_grad()
        output = module.training_step(batch, i)
        output["loss"].backward()
        optimizer.step()
        outputs.append(output)
    return module.training_epoch_end(outputs)
""",
            None,
        ),
        Invalid(
            """\
import torch
def train_epoch(model, loader, optimizer, compute_losses):
    epoch_loss = []
    for batch in loader:
        optimizer.zero_grad()
        loss = compute_losses(model, batch)
        loss["total"] = loss["ego"] + 0.5 * loss["neighbors"]
        loss["total"].backward()
        optimizer.step()
        epoch_loss.append(loss)
    return {k: sum(d[k].item() for d in epoch_loss) / len(epoch_loss) for k in epoch_loss[0]}
""",
            None,
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
import lightning as L
class Ensemble(L.LightningModule):
    def __init__(self, heads):
        super().__init__()
        self.heads = nn.ModuleList(heads)
        self.train_preds = []
    def _predict(self, x):
        return torch.stack([h(x) for h in self.heads], 1).mean(1)
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = (self._predict(x) - y).pow(2).mean()
        for i in range(x.size(0)):
            pred = self._predict(x[i]).clamp_(min=0.0)
            self.train_preds.append(pred)
        return loss
    def on_train_epoch_end(self):
        self.log("pred_mean", torch.cat(self.train_preds).mean())
        self.train_preds.clear()
""",
            """\
import torch
import torch.nn as nn
import lightning as L
class Ensemble(L.LightningModule):
    def __init__(self, heads):
        super().__init__()
        self.heads = nn.ModuleList(heads)
        self.train_preds = []
    def _predict(self, x):
        return torch.stack([h(x) for h in self.heads], 1).mean(1)
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = (self._predict(x) - y).pow(2).mean()
        for i in range(x.size(0)):
            pred = self._predict(x[i]).clamp_(min=0.0)
            self.train_preds.append(pred.detach())
        return loss
    def on_train_epoch_end(self):
        self.log("pred_mean", torch.cat(self.train_preds).mean())
        self.train_preds.clear()
""",
        ),
    ]


def _kept_keywords(call: cst.Call, param: str) -> cst.Tuple | None:
    """The keyword arguments of ``avg.update(batch=n, cls_loss=cls_loss)``
    that land in the tracker's ``**kwargs`` (those naming none of its
    parameters), as one tuple whose elements are the call's own nodes."""
    _, named = keyword_names(param)
    kept = [cst.Element(a.value) for a in call.args if a.keyword is not None and a.keyword.value not in named]
    return cst.Tuple(kept) if kept else None


def _terms(value: cst.BaseExpression, has_history) -> list[cst.BaseExpression]:
    """History-carrying parts of a stored value, looking into tuple, list
    and dict displays: ``(out, y)`` -> ``[out]``."""
    if isinstance(value, (cst.Tuple, cst.List, cst.Set)):
        out: list[cst.BaseExpression] = []
        for el in value.elements:
            if isinstance(el, cst.StarredElement):
                if has_history(el.value):
                    return [value]
                continue
            out.extend(_terms(el.value, has_history))
        return out
    if isinstance(value, cst.Dict):
        out = []
        for el in value.elements:
            if isinstance(el, cst.DictElement):
                out.extend(_terms(el.value, has_history))
            elif has_history(el.value):
                return [value]
        return out
    return [value] if has_history(value) else []
