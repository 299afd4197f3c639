"""MEM702 empty-cache-in-loop."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import dotted_name
from memlint.analysis.training.chunk_loops import chunk_loop_around
from memlint.analysis.training.loops import is_emptiness_test
from memlint.analysis.training.module_loops import iterates_layers
from memlint.analysis.training.retry_loops import retries_on_oom
from memlint.analysis.training.step_loops import steps_each_iteration
from memlint.parse.traversal import visit_fast
from memlint.rule import Fix, Invalid, Rule, Safety, Valid


def _frees(stmt: cst.CSTNode) -> bool:
    """A ``del`` or ``gc.collect()`` line."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        if isinstance(small, cst.Del):
            return True
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            func = small.value.func
            if isinstance(func, cst.Attribute) and func.attr.value == "collect":
                return True
    return False


def _main_guard(test: cst.BaseExpression) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    if not isinstance(test.comparisons[0].operator, cst.Equal):
        return False
    sides = (test.left, test.comparisons[0].comparator)
    names = [e for e in sides if isinstance(e, cst.Name) and e.value == "__name__"]
    strings = [e for e in sides if isinstance(e, cst.SimpleString) and e.evaluated_value == "__main__"]
    return len(names) == 1 and len(strings) == 1


def _first_iteration_test(test: cst.BaseExpression, loop: cst.CSTNode) -> bool:
    """``m == 0`` with ``m`` the variable of ``loop`` (``for m in range(n):``):
    its ``else`` runs on every iteration but the first, no throttle."""
    if not isinstance(loop, cst.For) or not isinstance(loop.target, cst.Name):
        return False
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    if not isinstance(test.comparisons[0].operator, cst.Equal):
        return False
    sides = (test.left, test.comparisons[0].comparator)
    names = [e for e in sides if isinstance(e, cst.Name) and e.value == loop.target.value]
    zeros = [e for e in sides if isinstance(e, cst.Integer) and e.evaluated_value == 0]
    return len(names) == 1 and len(zeros) == 1


class _CalledNames(cst.CSTVisitor):
    """The plain names called in a block (``func(*args)``)."""

    def __init__(self) -> None:
        self.called: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self.called.add(node.func.value)


def _runs_handed_callable(scope: cst.CSTNode, body: cst.BaseSuite) -> bool:
    """The loop body calls a parameter of its function (``func(*func_args)``
    in ``def benchmark(name, n, func, func_args)``): what each iteration
    runs, a step or a whole pass, is the caller's choice and not known here."""
    if not isinstance(scope, cst.FunctionDef):
        return False
    params = scope.params
    names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    if not names:
        return False
    calls = _CalledNames()
    visit_fast(body, calls)
    return bool(calls.called & names)


# Methods that run a whole training or experiment on the object they are called on.
_RUNS = frozenset({"train", "fit", "run"})


def _builds_and_runs(body: cst.BaseSuite) -> bool:
    """The loop body builds an object of a class (``exp = Exp(args)``, a
    capitalised callee) and then runs it (``exp.train(setting)``, with an
    argument that is no ``True``/``False``: ``model.train(False)`` only
    switches a mode): each iteration is a whole experiment, not a batch."""
    built: set[str] = set()
    for line in getattr(body, "body", ()):
        for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
            value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
            if not isinstance(value, cst.Call):
                continue
            if isinstance(small, cst.Assign):
                target = small.targets[0].target if len(small.targets) == 1 else None
                callee = dotted_name(value.func) or ""
                if isinstance(target, cst.Name) and callee.rsplit(".", 1)[-1][:1].isupper():
                    built.add(target.value)
                continue
            func = value.func
            if (
                isinstance(func, cst.Attribute)
                and isinstance(func.value, cst.Name)
                and func.value.value in built
                and func.attr.value in _RUNS
                and value.args
                and not all(isinstance(a.value, cst.Name) and a.value.value in ("True", "False") for a in value.args)
            ):
                return True
    return False


class EmptyCacheInLoop(Rule):
    """
    ## What it does
    Flags `torch.cuda.empty_cache()` called on every iteration of a loop
    over batches or steps (not of an epoch, fold, model or experiment loop,
    whose iterations each run whole passes over the data).

    ## Why it matters
    `empty_cache()` only returns *unused* cached blocks to the driver; memory
    held by live tensors is not freed, so it never prevents an out-of-memory
    error caused by a leak. It synchronises the device and forces the caching
    allocator to call `cudaMalloc` again on the next step, which slows every
    iteration and fragments memory.

    ## Example
    ```python
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        torch.cuda.empty_cache()
    ```

    ## Use instead
    Remove the call from the loop; find what keeps tensors alive instead
    (see MEM101, MEM102).

    ## Fix safety
    Safe: removing the call never changes results. When it was the loop's only
    statement the body becomes `pass`.

    ## When it stays silent
    Calls inside an `except` handler (after catching an OOM), a `finally` block,
    or under an `if` (throttled by a step counter; the `else` of an emptiness
    test such as `if num_gt == 0:`, or of a first-iteration test of the loop's own
    variable, `if m == 0:`, is the ordinary path and is not a guard) are
    left alone, and so are calls right after a `del` or `gc.collect()` in the
    same block (memory was just released on purpose), unless the loop's own body
    steps the optimizer (each iteration is one training step, and what was
    released is that step's garbage), and loops whose iterations each run a
    whole training or evaluation: epochs, folds, models, checkpoints,
    configurations, seeds, or a call of a method that runs a whole pass over
    data on every call wherever the project defines it for what its receiver
    holds (an RL agent's `agent.collect_samples(n)` in another module, rolling a
    policy out for a batch of environment steps) (a validation pass called only
    every N steps, `if step % N == 0: validate()`, does not make a step loop one
    of those). Neither is an out-of-memory retry loop, whose iterations are
    attempts, not batches (`while True:` or `for attempt in range(3):` around a
    `try` that leaves the loop on success and an `except` that catches the
    out-of-memory error and shrinks the batch): clearing the cache before the
    next attempt is its purpose. Nor is a loop over a model's layers (`for i in
    range(len(layers)):`, `for m in model.modules():`, its iterable named for
    layers, modules, blocks or convolutions and not for data): one iteration
    per layer of a search over the architecture, not per batch.

    A loop over the chunks of one input tensor (`for c in torch.split(rays,
    chunk_size):`, or `range(len(...))` of a name or a dict filled with such
    splits), and any loop nested in it that runs no whole pass, is per-batch
    work whatever its names say (`ray_batch_split`, `models['cascade_level']`),
    and a `del` before the call does not make it deliberate there: what was
    freed is one chunk's garbage.

    ## References
    - https://pytorch.org/docs/stable/notes/cuda.html#memory-management
    """

    code = "MEM702"
    name = "empty-cache-in-loop"
    message = "torch.cuda.empty_cache() inside a loop frees nothing held by live tensors and slows every step"
    fix_safety = Safety.SAFE
    project_facts = (
        "Which methods of classes defined in other modules run a whole pass over data per call (one of "
        "their loops names data in its header or backpropagates, or a function or `self` method of their "
        "module that they call does: an RL agent's `agent.collect_samples(n)` rollout): a loop calling "
        "one on an object typed as that class is an epoch or episode loop, not a batch loop, and its "
        "`empty_cache()` is not reported."
    )

    def _guarded(self, line: cst.SimpleStatementLine, loop: cst.CSTNode) -> bool:
        """Under an ``if`` (``if step % 100 == 0:``, ``if self.cpu_cache:``
        around the loop), an ``except`` (after an OOM) or a ``finally`` in its
        own function: the deliberate uses. The ``else`` of an emptiness test
        (``if num_gt == 0: ... else:``) is the ordinary path, run on nearly
        every iteration; a script's ``if __name__ == "__main__":`` only says
        the script runs, and guards nothing."""
        child: cst.CSTNode = line
        cur = self.parent(line)
        while cur is not None and not isinstance(cur, (cst.FunctionDef, cst.Module)):
            if isinstance(cur, (cst.ExceptHandler, cst.Finally)):
                return True
            if (
                isinstance(cur, cst.If)
                and not (child is cur.orelse and is_emptiness_test(cur.test))
                and not (child is cur.orelse and _first_iteration_test(cur.test, loop))
                and not (child is cur.body and _main_guard(cur.test))
            ):
                return True
            child, cur = cur, self.parent(cur)
        return False

    def _chunk_loop(self, loop):
        """The loop over the chunks of one input tensor that ``loop`` is or
        sits in (chunk_loops.py), when neither it nor a loop between runs a
        whole pass over data: each iteration is part of one input's work, so
        neither a name (``ray_batch_split``, ``models['cascade_level']``)
        nor a ``del`` before the call makes the call deliberate."""
        loops = self.facts.loops
        chunk = chunk_loop_around(loops, loop)
        cur = loop
        while chunk is not None and cur is not None:
            if loops.runs_whole_passes(cur):
                return None
            if cur is chunk:
                break
            cur = cur.parent
        return chunk

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if len(node.body) != 1:
            return
        stmt = node.body[0]
        if not isinstance(stmt, cst.Expr) or not isinstance(stmt.value, cst.Call):
            return
        if self.facts.names.call_name(stmt.value) != "torch.cuda.empty_cache":
            return
        loops = self.facts.loops
        loop = loops.loop_of(stmt.value)  # in its own function: a def in a loop body is not run by the loop
        if loop is None or self._guarded(node, loop.node):
            return
        chunk = self._chunk_loop(loop)
        if (loops.outer_loop(loop) and chunk is None) or _builds_and_runs(loop.node.body):
            return  # once per epoch, fold, model or experiment: freeing the cache there is deliberate
        if iterates_layers(loop.node, loop.data_tokens):
            return  # once per layer of a search over the model's layers: a count the architecture fixes
        if retries_on_oom(loop.node, self.facts.names):
            return  # each iteration is an attempt after an out-of-memory error, not a batch
        if not loop.is_batch_loop and _runs_handed_callable(loop.scope, loop.node.body):
            return  # a loop over no data running a callable handed in: what it runs is not known
        block = self.parent(node)
        if self.facts.blocks.any_before(node, _frees) and chunk is None and not steps_each_iteration(loops, loop):
            # ``del model; gc.collect(); empty_cache()`` once per model: the cache
            # now holds what was freed. In a loop that steps the optimizer on
            # every iteration, what was freed is one step's garbage.
            return
        if isinstance(block, cst.IndentedBlock) and len(block.body) == 1:
            replacement = node.with_changes(body=[cst.Pass()])
        else:
            replacement = cst.RemoveFromParent()
        self.report(stmt, fix=Fix("Remove `torch.cuda.empty_cache()` from the loop", ((node, replacement),)))

    valid = [
        Valid(
            """\
import torch
def prune(model, layers, images, score):
    model.eval()
    with torch.no_grad():
        for i in range(len(layers)):
            torch.cuda.empty_cache()
            layers[i].out_channels -= 8
            score[i] = model(images).mean().item()
            layers[i].out_channels += 8
""",
            "one iteration per layer of a search over the model's layers, not per batch",
        ),
        Valid(
            """\
import torch
def render(model, rays, chunk_size):
    outs = []
    for chunk in torch.split(rays, chunk_size):
        try:
            with torch.no_grad():
                outs.append(model(chunk).cpu())
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            outs.append(model.cpu()(chunk.cpu()))
    return outs
def levels(models, rays, chunk_size):
    for chunk in torch.split(rays, chunk_size):
        for m in range(len(models)):
            if m == 0:
                torch.cuda.empty_cache()
            models[m](chunk)
def run_splits(run_epoch):
    for split in "train,val".split(","):
        run_epoch(split)
        torch.cuda.empty_cache()
""",
            "after catching an OOM in a chunk loop; on the first level of each chunk only (the body of `if m == 0:`); a loop over a string's split, not a tensor's chunks, named for dataset splits",
        ),
        Valid(
            """\
import torch
if __name__ == "__main__":
    model = torch.load("model.pt").cuda().eval()
    loader = torch.utils.data.DataLoader(torch.load("test.pt"))
    for step, (x, y) in enumerate(loader):
        with torch.no_grad():
            out = model(x.cuda())
        if step % 100 == 0:
            torch.cuda.empty_cache()
""",
            'throttled by an `if` inside the loop; the script\'s `if __name__ == "__main__":` around it '
            "does not make the call unthrottled",
        ),
        Valid(
            """\
import torch
def reconstruct(net, feats, cpu_cache):
    if cpu_cache:
        outputs = []
        for i in range(feats.shape[1]):
            hr = net(feats[:, i].cuda()).cpu()
            outputs.append(hr)
            torch.cuda.empty_cache()
        return torch.cat(outputs, 1)
    return net(feats)
""",
            "a low-memory mode chosen by an `if` around the loop (each frame moved to the CPU, then the "
            "cache freed): deliberate",
        ),
        Valid(
            """\
import gc
import torch
@torch.no_grad()
def predict_all(model, paths, load, save):
    for path in paths:
        out = model(load(path))
        save(out)
        del out
        gc.collect()
        torch.cuda.empty_cache()
def fine_tune_each(make_model, tasks, optimizer_for):
    for task in tasks:
        model = make_model()
        optimizer = optimizer_for(model)
        for x, y in task.loader:
            model(x).sum().backward()
            optimizer.step()
        del model, optimizer
        gc.collect()
        torch.cuda.empty_cache()
""",
            "after a del and gc.collect() in a loop whose own body steps no optimizer (one per input, one per task)",
        ),
        Valid(
            """\
import torch
def train(model, optimizer, scheduler, loader, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            model(x).sum().backward()
            optimizer.step()
        scheduler.step()
        torch.cuda.empty_cache()
""",
            "the optimizer steps inside the batch loop and only the scheduler after it: an epoch loop",
        ),
        Valid(
            """\
import torch


def validate(model, val_loader):
    model.eval()
    with torch.no_grad():
        for x, y in val_loader:
            model(x)


def repeat(model, val_loader, times):
    for i in range(times):
        validate(model, val_loader)
        torch.cuda.empty_cache()
""",
            "each iteration runs a whole pass of a function looping over a validation loader",
        ),
        Valid(
            """\
import torch
from exp.exp_informer import Exp_Informer
for ii in range(args.itr):
    setting = "{}_{}".format(args.model, ii)
    exp = Exp_Informer(args)
    exp.train(setting)
    exp.test(setting)
    torch.cuda.empty_cache()
""",
            "each iteration builds and runs a whole experiment (a loop over experiments)",
        ),
        Valid(
            """\
import torch
def largest_batch(run, batch_size):
    while True:
        torch.cuda.empty_cache()
        try:
            out = run(batch_size)
            break
        except RuntimeError as e:
            if "out of memory" not in str(e):
                raise
            batch_size //= 2
    return out, batch_size
def generate(model, prompts, tries=3):
    for attempt in range(tries):
        try:
            with torch.no_grad():
                return model(prompts)
        except torch.cuda.OutOfMemoryError:
            prompts = prompts[: len(prompts) // 2]
        torch.cuda.empty_cache()
""",
            "an out-of-memory retry loop: each iteration is an attempt, left on the first success",
        ),
        Valid(
            """\
import gc
import torch
def cross_validate(folds, make_model, train, evaluate):
    scores = []
    for fold, (train_loader, val_loader) in enumerate(folds):
        model = make_model()
        train(model, train_loader)
        scores.append(evaluate(model, val_loader))
        del model
        gc.collect()
        torch.cuda.empty_cache()
    return scores
def fit(model, loader, optimizer, train_one_epoch, epochs=90):
    for epoch in range(epochs):
        train_one_epoch(model, loader, optimizer)
        torch.cuda.empty_cache()
@torch.no_grad()
def ensemble(paths, build_model, predict):
    outs = []
    for path in paths:
        model = build_model()
        model.load_state_dict(torch.load(path, map_location="cpu"))
        outs.append(predict(model.cuda()))
        del model
        torch.cuda.empty_cache()
    return torch.stack(outs).mean(0)
def sweep(configs, run):
    for cfg in configs:
        try:
            run(cfg)
        finally:
            torch.cuda.empty_cache()
""",
            "once per fold, epoch, model or experiment; after a del; in a finally block",
        ),
        Valid(
            """\
import torch
for epoch in range(3):
    train_one_epoch()
torch.cuda.empty_cache()
""",
            "outside any loop",
        ),
        Valid(
            """\
import torch
for step, batch in enumerate(loader):
    try:
        train_step(batch)
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
""",
            "after catching an OOM",
        ),
        Valid(
            """\
import torch
for step, batch in enumerate(loader):
    train_step(batch)
    if step % 1000 == 0:
        torch.cuda.empty_cache()
""",
            "throttled by a step counter",
        ),
        Valid(
            """\
import mylib as torch2
for batch in loader:
    torch2.cuda.empty_cache()
""",
            "not torch",
        ),
        Valid(
            """\
import torch
def get_losses(outputs, nlabel, assign, limit):
    for batch_idx in range(outputs.shape[0]):
        if nlabel[batch_idx] == 0:
            torch.cuda.empty_cache()
            continue
        if torch.cuda.memory_reserved() < limit:
            assign(batch_idx)
        else:
            torch.cuda.empty_cache()
def cleanup():
    torch.cuda.empty_cache()
def fit(model, loader, train_one_epoch, epochs):
    for epoch in range(epochs):
        train_one_epoch(model, loader)
        cleanup()
""",
            "in the branch of an emptiness test, the else of a memory threshold, a cleanup function run per epoch",
        ),
        Valid(
            """\
import time
import torch
def benchmark(name, n, func, func_args):
    total = 0.0
    for i in range(n):
        torch.cuda.empty_cache()
        start = time.time()
        func(*func_args)
        total += time.time() - start
    return total / n
""",
            "a loop over no data running a callable handed in: a whole run or a step, the caller decides",
        ),
        Valid(
            """\
import torch
def evaluate(model, val_loader):
    with torch.no_grad():
        for x, y in val_loader:
            model(x)
def train_pass(model, train_loader, optimizer):
    for x, y in train_loader:
        model(x).sum().backward()
        optimizer.step()
def run(model, train_loader, val_loader, optimizer, rounds):
    for r in range(rounds):
        train_pass(model, train_loader, optimizer)
        if r % 5 == 0:
            evaluate(model, val_loader)
        torch.cuda.empty_cache()
""",
            "each iteration runs a whole training pass; only the evaluation beside it is periodic",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch
def render(models, rays, chunk_size):
    chunks = torch.split(rays, chunk_size)
    outs = []
    for s in range(len(chunks)):
        for m in range(models["levels"]):
            if m == 0:
                depth = torch.linspace(0.0, 1.0, 64)
            else:
                depth = resample(depth)
                torch.cuda.empty_cache()
            with torch.no_grad():
                out = models[m](chunks[s], depth)
            outs.append(out.cpu())
            del out
            torch.cuda.empty_cache()
    return outs
""",
            """\
import torch
def render(models, rays, chunk_size):
    chunks = torch.split(rays, chunk_size)
    outs = []
    for s in range(len(chunks)):
        for m in range(models["levels"]):
            if m == 0:
                depth = torch.linspace(0.0, 1.0, 64)
            else:
                depth = resample(depth)
            with torch.no_grad():
                out = models[m](chunks[s], depth)
            outs.append(out.cpu())
            del out
    return outs
""",
            count=2,
        ),
        Invalid(
            """\
import torch
from tqdm import tqdm
if __name__ == "__main__":
    model = torch.load("model.pt").cuda().eval()
    loader = torch.utils.data.DataLoader(torch.load("test.pt"))
    with tqdm(total=len(loader)) as pbar:
        for x, y in loader:
            with torch.no_grad():
                out = model(x.cuda())
            torch.cuda.empty_cache()
            pbar.update()
""",
            """\
import torch
from tqdm import tqdm
if __name__ == "__main__":
    model = torch.load("model.pt").cuda().eval()
    loader = torch.utils.data.DataLoader(torch.load("test.pt"))
    with tqdm(total=len(loader)) as pbar:
        for x, y in loader:
            with torch.no_grad():
                out = model(x.cuda())
            pbar.update()
""",
        ),
        # ``gc.collect()`` first does not make a step loop's call deliberate.
        Invalid(
            """\
import gc
import torch
def train_epoch(model, optimizer, loader):
    for x, y in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
        gc.collect()
        torch.cuda.empty_cache()
""",
            """\
import gc
import torch
def train_epoch(model, optimizer, loader):
    for x, y in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
        gc.collect()
""",
        ),
        # Gradient accumulation: the inner loop backpropagates micro-batches,
        # the outer one steps the optimizer once per iteration: a step loop.
        Invalid(
            """\
import torch
def train_epoch(model, optimizer, loader, iter_size):
    data_iter = iter(loader)
    for step in range(len(loader) // iter_size):
        optimizer.zero_grad()
        for i in range(iter_size):
            x, y = next(data_iter)
            loss = model(x).sum() / iter_size
            loss.backward()
        optimizer.step()
        torch.cuda.empty_cache()
""",
            """\
import torch
def train_epoch(model, optimizer, loader, iter_size):
    data_iter = iter(loader)
    for step in range(len(loader) // iter_size):
        optimizer.zero_grad()
        for i in range(iter_size):
            x, y = next(data_iter)
            loss = model(x).sum() / iter_size
            loss.backward()
        optimizer.step()
""",
        ),
        Invalid(
            """\
import torch
class Solver:
    def exec(self):
        while self.step < self.max_step:
            for data in self.tr_set:
                loss = self.model(data).mean()
                loss.backward()
                self.optimizer.step()
                self.step += 1
                if self.step == 1 or self.step % self.valid_step == 0:
                    self.validate()
                torch.cuda.empty_cache()
    def validate(self):
        with torch.no_grad():
            for i, data in enumerate(self.dv_loader):
                self.model(data)
""",
            """\
import torch
class Solver:
    def exec(self):
        while self.step < self.max_step:
            for data in self.tr_set:
                loss = self.model(data).mean()
                loss.backward()
                self.optimizer.step()
                self.step += 1
                if self.step == 1 or self.step % self.valid_step == 0:
                    self.validate()
    def validate(self):
        with torch.no_grad():
            for i, data in enumerate(self.dv_loader):
                self.model(data)
""",
        ),
        Invalid(
            """\
import torch
def train(model, loader, step_fn):
    for batch in loader:
        step_fn(model, batch)
        torch.cuda.empty_cache()
""",
            """\
import torch
def train(model, loader, step_fn):
    for batch in loader:
        step_fn(model, batch)
""",
        ),
        Invalid(
            """\
import torch
for batch in loader:
    model = Net()
    model.train(True)
    loss = model(batch).sum()
    loss.backward()
    torch.cuda.empty_cache()
""",
            """\
import torch
for batch in loader:
    model = Net()
    model.train(True)
    loss = model(batch).sum()
    loss.backward()
""",
        ),
        Invalid(
            """\
import torch
def train(model, loader, optimizer):
    for batch in loader:
        try:
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()
        except torch.cuda.OutOfMemoryError:
            continue
        torch.cuda.empty_cache()
""",
            """\
import torch
def train(model, loader, optimizer):
    for batch in loader:
        try:
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()
        except torch.cuda.OutOfMemoryError:
            continue
""",
        ),
        Invalid(
            """\
import torch
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    torch.cuda.empty_cache()  # free memory
    print(loss.item())
""",
            """\
import torch
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    print(loss.item())
""",
        ),
        Invalid(
            """\
from torch.cuda import empty_cache
while True:
    empty_cache()
""",
            """\
from torch.cuda import empty_cache
while True:
    pass
""",
        ),
        Invalid(
            """\
import torch as T
def train(loader):
    for batch in loader:
        step(batch)
        T.cuda.empty_cache()
""",
            """\
import torch as T
def train(loader):
    for batch in loader:
        step(batch)
""",
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Head(nn.Module):
    def get_losses(self, outputs, labels, nlabel):
        num_fg = 0.0
        for batch_idx in range(outputs.shape[0]):
            num_gt = int(nlabel[batch_idx])
            if num_gt == 0:
                fg_mask = outputs.new_zeros(outputs.shape[1]).bool()
            else:
                try:
                    fg_mask, num_fg_img = self.get_assignments(batch_idx, labels)
                except RuntimeError:
                    torch.cuda.empty_cache()
                    fg_mask, num_fg_img = self.get_assignments(batch_idx, labels, "cpu")
                torch.cuda.empty_cache()
                num_fg += num_fg_img
        return num_fg
""",
            """\
import torch
import torch.nn as nn
class Head(nn.Module):
    def get_losses(self, outputs, labels, nlabel):
        num_fg = 0.0
        for batch_idx in range(outputs.shape[0]):
            num_gt = int(nlabel[batch_idx])
            if num_gt == 0:
                fg_mask = outputs.new_zeros(outputs.shape[1]).bool()
            else:
                try:
                    fg_mask, num_fg_img = self.get_assignments(batch_idx, labels)
                except RuntimeError:
                    torch.cuda.empty_cache()
                    fg_mask, num_fg_img = self.get_assignments(batch_idx, labels, "cpu")
                num_fg += num_fg_img
        return num_fg
""",
        ),
        Invalid(
            """\
import torch


class MscEval:
    def __init__(self, scales, crop):
        self.scales = scales
        self.crop = crop

    def crop_eval(self, net, im):
        n_h, n_w = im.shape[2] // self.crop, im.shape[3] // self.crop
        prob = torch.zeros_like(im)
        for i in range(n_h):
            for j in range(n_w):
                part = im[:, :, i * self.crop : (i + 1) * self.crop, j * self.crop : (j + 1) * self.crop]
                prob[:, :, i * self.crop : (i + 1) * self.crop, j * self.crop : (j + 1) * self.crop] = net(part)
        return prob

    @torch.no_grad()
    def __call__(self, net, dl):
        for imgs, label in dl:
            probs = torch.zeros_like(imgs)
            for sc in self.scales:
                probs += self.crop_eval(net, imgs * sc)
            torch.cuda.empty_cache()
""",
            """\
import torch


class MscEval:
    def __init__(self, scales, crop):
        self.scales = scales
        self.crop = crop

    def crop_eval(self, net, im):
        n_h, n_w = im.shape[2] // self.crop, im.shape[3] // self.crop
        prob = torch.zeros_like(im)
        for i in range(n_h):
            for j in range(n_w):
                part = im[:, :, i * self.crop : (i + 1) * self.crop, j * self.crop : (j + 1) * self.crop]
                prob[:, :, i * self.crop : (i + 1) * self.crop, j * self.crop : (j + 1) * self.crop] = net(part)
        return prob

    @torch.no_grad()
    def __call__(self, net, dl):
        for imgs, label in dl:
            probs = torch.zeros_like(imgs)
            for sc in self.scales:
                probs += self.crop_eval(net, imgs * sc)
""",
        ),
    ]
