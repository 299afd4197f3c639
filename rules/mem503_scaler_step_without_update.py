"""MEM503 scaler-step-without-update."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import dotted_name
from memlint.analysis.training.training_verbs import VerbKind
from memlint.fix.statement_edits import StatementEdits, statement
from memlint.rule import Fix, Invalid, Rule, Safety, Valid


def _last_part(text: str | None) -> str:
    return (text or "").rsplit(".", 1)[-1]


class _HandedToUnknown(cst.CSTVisitor):
    """Calls of a function not defined here that are handed ``scaler``."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, calls, scaler: str) -> None:
        super().__init__()
        self.calls = calls
        self.scaler = scaler
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        if self.calls.resolve(node) is not None:
            return
        if any(dotted_name(a.value) == self.scaler for a in node.args):
            self.found.append(node)


class ScalerStepWithoutUpdate(Rule):
    """
    ## What it does
    Flags `scaler.step(optimizer)` in a loop (or in a method such as
    `train_step` that a batch loop calls) when nothing that runs with the
    loop ever calls the GradScaler's `update()`: not the function itself,
    the functions it calls, nor (for `self.scaler`) another method of its
    class.

    ## Why it matters
    `GradScaler.step` records that it ran for this optimizer; only
    `update()` resets that state. The second iteration therefore raises
    `RuntimeError: step() has already been called since the last update()`
    after a full forward and backward. Without `update()` the loss scale
    would never adapt either: a scale that overflows keeps every step
    skipped.

    ## Example
    ```python
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda"):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
    ```

    ## Use instead
    ```python
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    ```

    ## Fix safety
    Safe: the fix inserts `scaler.update()` right after the last
    `scaler.step(...)` of the loop (one update per iteration, also with
    several optimizers). Silent for `GradScaler(enabled=False)` (update is a
    no-op then), when the scaler is updated by what the function calls, by
    another method of the same class (`self.scaler`), anywhere in the module
    for a module-level scaler, when the scaler is handed to a function
    this module does not define, and for a helper that loops over optimizers
    (`for opt in optimizers: scaler.step(opt)`) whose caller updates.

    ## References
    - https://pytorch.org/docs/stable/amp.html#torch.cuda.amp.GradScaler.update
    - https://pytorch.org/docs/stable/notes/amp_examples.html#typical-mixed-precision-training
    """

    code = "MEM503"
    name = "scaler-step-without-update"
    message = "scaler.step() without scaler.update(): the second step raises a RuntimeError"
    fix_safety = Safety.SAFE

    def visit_Module(self, node: cst.Module) -> None:
        verbs = self.facts.verbs
        updated = {_last_part(v.scaler) for v in verbs.verbs if v.kind is VerbKind.UPDATE}
        seen_loops: set[int] = set()
        loops = self.facts.loops
        for step in verbs.verbs:
            if step.kind is not VerbKind.STEP or step.scaler is None:
                continue
            # A ``train_step`` method with no loop of its own, called once per batch.
            per_batch = (
                step.loop is None and isinstance(step.scope, cst.FunctionDef) and loops.per_iteration(step.scope)
            )
            if step.loop is None and (not per_batch or _last_part(step.scaler) in updated):
                continue  # the caller's loop may update it
            reached = verbs.reached(verbs.in_scope(step.scope))
            if any(v.kind is VerbKind.UPDATE and v.scaler == step.scaler for v in reached):
                continue
            if step.scaler.startswith("self."):
                # ``self.scaler`` is updated by a method of the same class.
                cls = self._class_of(step.scope)
                if any(
                    v.kind is VerbKind.UPDATE and v.scaler == step.scaler and self._class_of(v.scope) is cls
                    for v in verbs.verbs
                ):
                    continue
            elif not self._is_local(step.scaler, step.scope) and _last_part(step.scaler) in updated:
                continue
            if verbs.scaler_disabled(step.scaler, step.scope):
                continue
            if self._steps_each_optimizer(step) and (
                _last_part(step.scaler) in updated or self._is_parameter(step.scaler, step.scope)
            ):
                continue  # ``for opt in optimizers: scaler.step(opt)``: updated once after it, by its caller
            region = step.loop if step.loop is not None else step.scope
            if id(region) in seen_loops or self._handed_away(node, step.scaler):
                continue
            seen_loops.add(id(region))
            body = verbs.in_loop(step.loop) if step.loop is not None else verbs.in_scope(step.scope)
            same = [v for v in body if v.kind is VerbKind.STEP and v.scaler == step.scaler]
            last = same[-1]
            self.report(last.call, fix=self._fix(node, region, last))

    def _class_of(self, scope: cst.CSTNode) -> cst.ClassDef | None:
        calls = self.facts.calls
        method = calls.method_owner(scope) if isinstance(scope, cst.FunctionDef) else None
        return calls.class_of.get(method) if method is not None else None

    @staticmethod
    def _steps_each_optimizer(step) -> bool:
        loop = step.loop
        return isinstance(loop, cst.For) and step.target is not None and dotted_name(loop.target) == step.target

    @staticmethod
    def _is_parameter(scaler: str, scope: cst.CSTNode) -> bool:
        if not isinstance(scope, cst.FunctionDef):
            return False
        p = scope.params
        return scaler in {x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)}

    def _is_local(self, scaler: str, scope: cst.CSTNode) -> bool:
        """A plain name that the function binds (parameter or assignment)."""
        if "." in scaler or not isinstance(scope, cst.FunctionDef):
            return False
        return self._is_parameter(scaler, scope) or self.facts.bindings.binds_in(scaler, scope)

    def _handed_away(self, module: cst.Module, scaler: str) -> bool:
        """The scaler is passed to a function defined elsewhere, which may update it."""
        memo = self.__dict__.setdefault("_handed_memo", {})  # one walk of the module per scaler, not per step
        if scaler not in memo:
            memo[scaler] = self._walk_handed_away(module, scaler)
        return memo[scaler]

    def _walk_handed_away(self, module: cst.Module, scaler: str) -> bool:
        visitor = _HandedToUnknown(self.facts.calls, scaler)
        module.visit(visitor)
        return bool(visitor.found)

    def _fix(self, module: cst.Module, loop: cst.CSTNode, last) -> Fix | None:
        if last.line is None:
            return None
        edits = StatementEdits()
        edits.insert_after(last.line, statement(f"{last.scaler}.update()", module))
        return Fix(f"Call `{last.scaler}.update()` after the step", ((loop, edits.apply(loop)),))

    valid = [
        Valid(
            """\
import torch
def train_step(model, x, y, optimizer, scaler):
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        loss = model(x, y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
def train(model, loader, optimizer):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        train_step(model, x, y, optimizer, scaler)
        scaler.update()
""",
            "a per-batch helper steps; the loop that calls it updates",
        ),
        Valid(
            """\
import torch
def step_all(scaler, optimizers):
    for opt in optimizers:
        scaler.step(opt)
def train(model, loader, opt_a, opt_b):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        opt_a.zero_grad()
        opt_b.zero_grad()
        with torch.autocast("cuda"):
            loss = model(x, y)
        scaler.scale(loss).backward()
        step_all(scaler, [opt_a, opt_b])
        scaler.update()
""",
            "a helper steps each optimizer; its caller updates once per iteration",
        ),
        Valid(
            """\
import torch
scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    with torch.autocast("cuda"):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
""",
            "updated every iteration",
        ),
        Valid(
            """\
import torch
scaler = torch.cuda.amp.GradScaler(enabled=False)
for x, y in loader:
    scaler.scale(criterion(model(x), y)).backward()
    scaler.step(optimizer)
    optimizer.zero_grad()
""",
            "GradScaler(enabled=False): step without update is a plain step",
        ),
        Valid(
            """\
import torch
scaler = torch.amp.GradScaler("cuda")
for real, _ in loader:
    scaler.scale(loss_d).backward()
    scaler.step(opt_d)
    scaler.scale(loss_g).backward()
    scaler.step(opt_g)
    scaler.update()
""",
            "several optimizers with one update()",
        ),
        Valid(
            """\
import torch
class Trainer:
    def __init__(self):
        self.scaler = torch.amp.GradScaler("cuda")

    def step(self, loss, optimizers):
        self.scaler.scale(loss).backward()
        for opt in optimizers:
            self.scaler.step(opt)
        self.after_step()

    def after_step(self):
        self.scaler.update()
""",
            "update() in another method",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch
class Trainer:
    def __init__(self, model, loader):
        self.model, self.loader = model, loader
        self.optimizer = torch.optim.AdamW(model.parameters())
        self.scaler = torch.amp.GradScaler("cuda")
    def train_step(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast("cuda"):
            loss = self.model(x, y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
    def train_epoch(self):
        for x, y in self.loader:
            self.train_step(x, y)
""",
            """\
import torch
class Trainer:
    def __init__(self, model, loader):
        self.model, self.loader = model, loader
        self.optimizer = torch.optim.AdamW(model.parameters())
        self.scaler = torch.amp.GradScaler("cuda")
    def train_step(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast("cuda"):
            loss = self.model(x, y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
    def train_epoch(self):
        for x, y in self.loader:
            self.train_step(x, y)
""",
        ),
        Invalid(
            """\
import torch
scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)  # apply
    scheduler.step()
""",
            """\
import torch
scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)  # apply
    scaler.update()
    scheduler.step()
""",
        ),
        Invalid(
            """\
from torch.cuda.amp import GradScaler
def train(model, loader, opt_g, opt_d, accum):
    scaler = GradScaler()
    for i, batch in enumerate(loader):
        scaler.scale(model(batch)).backward()
        if (i + 1) % accum == 0:
            scaler.step(opt_d)
            scaler.step(opt_g)
            opt_d.zero_grad()
            opt_g.zero_grad()
""",
            """\
from torch.cuda.amp import GradScaler
def train(model, loader, opt_g, opt_d, accum):
    scaler = GradScaler()
    for i, batch in enumerate(loader):
        scaler.scale(model(batch)).backward()
        if (i + 1) % accum == 0:
            scaler.step(opt_d)
            scaler.step(opt_g)
            scaler.update()
            opt_d.zero_grad()
            opt_g.zero_grad()
""",
        ),
    ]
