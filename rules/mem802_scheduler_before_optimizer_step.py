"""MEM802 scheduler-before-optimizer-step."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.bindings import unwrap_pass_through
from memlint.analysis.scope.keyed_bindings import keyed_values
from memlint.analysis.scope.names import dotted_name
from memlint.analysis.scope.own_returns import own_returns
from memlint.analysis.training.engine_hooks import runs_before_step
from memlint.analysis.training.ignite_events import runs_before_process
from memlint.analysis.training.loops import jumps
from memlint.analysis.training.namespace_schedulers import namespace_constructors
from memlint.analysis.training.test_code import in_test_function
from memlint.analysis.training.training_verbs import Verb, VerbKind
from memlint.analysis.training.version_guards import runs_only_on_torch_before
from memlint.fix.statement_edits import StatementEdits, bare, call_statement_only
from memlint.parse.traversal import visit_fast
from memlint.rule import Fix, Invalid, Rule, Safety, Valid
from memlint.rule.migrations import written_before
from memlint.vocabulary.kinds import Kind
from memlint.vocabulary.tokens import name_tokens

# Since torch 1.1 a scheduler's step() moves to the next value (before, the
# epoch's first step set the rate for that epoch: stepping first was right).
_NEXT_VALUE_SINCE = "1.1"
# Packages whose schedulers take the optimizer first.
_LIBRARY_SCHEDULERS = ("torch.optim.lr_scheduler.", "transformers.", "diffusers.")
_NEXT_VALUE_TUPLE = (1, 1, 0)
# Where an engine runs a hook before its optimizer step (project/engine_hooks.py).
_PLACES = {"epoch_start": "start of each epoch", "iteration_start": "start of each iteration"}
# Words of a bare test that counts calls or iterations (``if epoch:``): a
# branch that may skip the first one.
_COUNTER_WORDS = frozenset(
    {
        "epoch",
        "epochs",
        "step",
        "steps",
        "iter",
        "iters",
        "iteration",
        "it",
        "i",
        "n",
        "count",
        "counter",
        "idx",
        "index",
        "batch",
        "resume",
        "resumed",
        "start",
        "started",
        "warm",
        "warmup",
        "first",
        "initialized",
    }
)


def _comparisons(test: cst.BaseExpression) -> list[cst.Comparison]:
    if isinstance(test, cst.Comparison):
        return [test]
    if isinstance(test, cst.BooleanOperation):
        return _comparisons(test.left) + _comparisons(test.right)
    if isinstance(test, cst.UnaryOperation):
        return _comparisons(test.expression)
    return []


def _above_literal(comp: cst.Comparison) -> bool:
    """``epoch > 5``, ``epoch >= 3`` (or ``5 < epoch``): a counter from 0
    fails it the first time. A bound that is not a non-negative literal
    (``epoch > cfg.START``, ``epoch > -1``) proves nothing."""
    if len(comp.comparisons) != 1:
        return False
    op, right, left = comp.comparisons[0].operator, comp.comparisons[0].comparator, comp.left
    if isinstance(op, (cst.LessThan, cst.LessThanEqual)):
        left, right = right, left
        op = cst.GreaterThan() if isinstance(op, cst.LessThan) else cst.GreaterThanEqual()
    if isinstance(left, cst.Integer) or not isinstance(right, cst.Integer):
        return False
    bound = right.evaluated_value
    return isinstance(bound, int) and (bound >= 0 if isinstance(op, cst.GreaterThan) else bound >= 1)


class _TrainingCallsHanded(cst.CSTVisitor):
    """Calls of a function not defined here, named for training, handed
    ``optimizer`` (or, when it is None, any optimizer); not inside defs."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, objects, calls, optimizer: str | None, methods: dict[tuple[str, str], str]) -> None:
        super().__init__()
        self.objects = objects
        self.calls = calls
        self.optimizer = optimizer
        self.found: list[cst.Call] = []
        # Typed receivers' methods and what they step (MEM802._object_calls),
        # and the (receiver, steps) of the calls of them met.
        self.methods = methods
        self.object_steps: list[tuple[str, str, str]] = []

    def visit_Call(self, node: cst.Call) -> None:
        if self.calls.resolve(node) is not None:
            return
        func = node.func
        if self.methods and isinstance(func, cst.Attribute):
            receiver = dotted_name(func.value)
            kinds = self.methods.get((receiver or "", func.attr.value))
            if kinds:
                self.object_steps.append((receiver or "", func.attr.value, kinds))
        name = (dotted_name(node.func) or "").rsplit(".", 1)[-1]
        if not name_tokens(name) & {"train", "fit"}:
            return
        optimizer = self.optimizer
        for arg in node.args:
            text = dotted_name(arg.value)
            if text is not None and (
                text == optimizer or (optimizer is None and self.objects.kind_of(arg.value) is Kind.OPTIMIZER)
            ):
                self.found.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False


class SchedulerBeforeOptimizerStep(Rule):
    """
    ## What it does
    Flags `scheduler.step()` that runs before `optimizer.step()` in the same
    iteration: at the top of the epoch loop before the batch loop (or before a
    `train()` call that steps), above the optimizer step in the batch loop, or
    at the top of a function (`train_one_epoch`) before the loop that steps the
    optimizer, whoever calls it.

    ## Why it matters
    Since PyTorch 1.1 a scheduler's `step()` moves to the *next* learning
    rate. Stepping it first skips the first value of the schedule: a warmup
    never starts at its initial rate, a `StepLR` decays one epoch early, and
    a per-batch `OneCycleLR` runs shifted by one step. PyTorch
    warns once ("Detected call of `lr_scheduler.step()` before
    `optimizer.step()`"), easy to miss in a log.

    ## Example
    ```python
    for epoch in range(epochs):
        scheduler.step()
        train(model, loader, optimizer)
    ```

    ## Use instead
    ```python
    for epoch in range(epochs):
        train(model, loader, optimizer)
        scheduler.step()
    ```

    ## Fix safety
    Unsafe: the fix moves `scheduler.step()` right after the statement that
    steps the optimizer (the inner loop, the `train(...)` call, or the step
    itself), which shifts the whole schedule by one (that is the point). When
    the scheduler sits in a branch (`if phase == "train":`) and the optimizer
    steps after that branch, it is reported without a fix.

    ## When it stays silent
    Left alone: home-made scheduler classes (which may set the rate for the
    coming step; a subclass of a torch scheduler that keeps torch's `step()` is
    a torch scheduler, in this module or another of the project), schedulers
    stepped after an inner loop that steps the optimizer, under a condition that
    skips the first iteration (`if epoch > 0:`; in a function stepping first,
    also a bare counter test, `if epoch:`, or an `else`), in a project written
    for a torch before 1.1, where stepping first was the documented order: its
    ceiling is below 1.1 (`torch<1.1`), or it pins one (`torch==1.0.0` in
    `requirements.txt` or a conda environment file, even beside a wider
    `setup.py` range; with several pins the newest counts); also a step in a
    branch only such a torch takes, see "Facts from other modules"), in a unit
    test (a `test_*` function of a `test_*.py` or `*_test.py` file: it checks
    the schedule, it trains nothing), fast-forwarded in a branch that ends the
    iteration (`continue`), with an epoch argument (timm), and optimizer steps
    hidden in functions this module does not define, unless the function is
    named for training and handed the optimizer (`train_one_epoch(model, loader,
    optimizer)`) or a method of a project trainer built with the optimizer that
    steps it (see "Facts from other modules"). Schedulers are paired with the
    optimizer they were built on.

    ## Details
    It is also reported in an ignite handler fired before the engine's process
    function (`@trainer.on(Events.EPOCH_STARTED)`, `Events.ITERATION_STARTED`,
    or `add_event_handler`) when that process function provably steps the
    optimizer: `Engine(update)` with `update` a function of this module that
    steps it, a function of this module returning such an engine
    (`create_supervised_trainer` written in the project), or ignite's own
    `create_supervised_trainer`.

    An engine built elsewhere, a filtered event
    (`Events.EPOCH_STARTED(every=2)`) or an event fired after the update
    (`EPOCH_COMPLETED`) is left alone. Or in a function registered by name as a
    hook of a project engine (`engine.hooks['on_start_epoch'] =
    on_start_epoch`, torchnet's shape) whose class runs that hook at the start
    of an epoch or an iteration, before the optimizer step of the same
    iteration; a hook run after the step (`on_end_epoch`), at places that
    differ, or of an engine the project does not hold (torchnet's, installed)
    is left alone. A scheduler named by its key (`state['scheduler']`) is a
    scheduler; it is a library one when every value the module stores under
    that key builds one (or none is stored there). An attribute of an object
    no analysis types (`model.scheduler.step()`, `model` a parameter) is what
    the one class of the module holding that attribute builds there (SR-GNN's
    model class builds its own `StepLR` and `Adam`); when several classes hold
    it, it stays unknown.

    ## References
    - https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate
    """

    code = "MEM802"
    name = "scheduler-before-optimizer-step"
    message = "scheduler.step() before optimizer.step(): the first learning rate of the schedule is skipped"
    fix_safety = Safety.UNSAFE
    project_facts = (
        "What a scheduler attribute holds: `self.scheduler` set in `__init__` from a constructor argument "
        "is a library scheduler when every construction site in the project passes one, built right there "
        "or by a project function whose every `return` builds one (`get_linear_schedule_with_warmup` "
        "returning `LambdaLR(...)`). A class of another project module counts as the torch scheduler it "
        "subclasses (`class WarmupPolyLR(_LRScheduler)`, `class WarmupCosineSchedule(LambdaLR)`, through "
        "one base per class) when no class on the way defines its own `step()`. A project scheduler class "
        "with its own `step()`, or any untyped construction site, keeps it silent. "
        "A parameter no name convention types (`tg_lr_scheduler`) is a scheduler when every call of its "
        "function in the project hands it an epoch-based torch scheduler (`MultiStepLR`, `StepLR`; not a "
        "per-batch `OneCycleLR`/`CyclicLR` nor `ReduceLROnPlateau`), and no call hands it a value the project "
        "cannot type. "
        "A name bound to a project factory (`g_scheduler = build_lr_scheduler(g_optimizer, config)`) is a "
        "scheduler when every `return` of the factory builds a library one. "
        "Methods of a project object typed the same way: `trainer.train_step(x)` steps the optimizer when "
        "the method of every class the object may be calls `self.<optimizer>.step()` (an attribute named for "
        "an optimizer), and the object was built here with the scheduler's optimizer among its arguments "
        "(`Trainer(model, g_optimizer, d_optimizer)`). Both steps in methods of one such object "
        "(`trainer.update_learning_rate()` stepping `self.gen_scheduler`, then `trainer.gen_update(x)` stepping "
        "`self.gen_opt`) are reported at the first call when every assignment of the scheduler attribute in the "
        "class builds a library scheduler (through a factory that may also return None). "
        "A step only an old torch runs is left alone: under `if not flag:` (or the `else` of `if flag:`) where "
        "`flag` is bound once in the function to `is_pytorch_1_1_0_or_later()`, a parameterless function of "
        "another module returning `[int(_) for _ in torch.__version__.split('.')[:3]] >= [1, 1, 0]` (or "
        "`LooseVersion`/`parse` of the version against a literal) from a version up to 1.1. "
        "An ignite engine built by a function of another module (`trainer = create_supervised_trainer(model, "
        "optimizer, loss_fn)`) steps the optimizer it is handed when every `return` of that function is "
        "ignite's `Engine(update)` with `update` defined in it calling `<optimizer>.step()`: a scheduler "
        "stepped in that engine's `EPOCH_STARTED` or `ITERATION_STARTED` handler is reported. "
        "An engine class of another module (`from protonets.engine import Engine`) runs each hook it calls "
        "by name (`self.hooks['on_start_epoch'](state)`, or through a dispatcher method `self.hook(name, "
        "state)`) at a known place when every call of it in the class is in a loop that steps an optimizer: "
        "at the start of the epoch (before the inner loop that steps) or of the iteration (before the "
        "step), or after them; a scheduler stepped first in a function the script stores under that name "
        "(`engine.hooks['on_start_epoch'] = on_start_epoch`, or a `functools.partial` of it) runs before "
        "the step and is reported."
    )

    def visit_Module(self, node: cst.Module) -> None:
        if written_before(_NEXT_VALUE_SINCE, self.context.torch):
            return  # written for a torch before 1.1 (accepted or pinned): stepping first was the documented order
        verbs = self.facts.verbs
        for sched in verbs.verbs:
            if sched.kind is VerbKind.SCHED_STEP and sched.loop is None and sched.line is not None:
                self._stepped_first_in_call(verbs, sched)
                continue
            if sched.kind is not VerbKind.SCHED_STEP or sched.loop is None or sched.line is None:
                continue
            call = sched.call
            if not isinstance(call, cst.Call) or call.args or self._deliberately_late(verbs, sched):
                continue
            if runs_only_on_torch_before(call, _NEXT_VALUE_TUPLE, self.facts):
                continue  # ``if not is_pytorch_1_1_0_or_later():``: the documented order there
            if in_test_function(call, self.facts.calls.parents, self.context.path):
                continue  # a unit test of the scheduler, not a training run
            if self._is_plateau(sched.target, sched.scope) or not self._library_scheduler(sched):
                continue
            optimizer = self._optimizer_of(sched.target, sched.scope)
            in_loop = verbs.in_loop(sched.loop)
            before = [v for v in in_loop if v.index < sched.index]
            if self._steps(verbs, before, optimizer):
                continue
            stepping, same_block = self._stepped_after(
                sched.line,
                sched.loop,
                lambda later: self._steps(verbs, [v for v in in_loop if verbs.contains(later, v)], optimizer)
                or self._trains_elsewhere(later, optimizer, sched.scope),
            )
            if stepping is None:
                continue
            fix = self._fix(sched, self.parent(stepping), stepping) if same_block else None
            self.report(call, fix=fix)
        self._scheduler_methods()

    def _stepped_first_in_call(self, verbs, sched: Verb) -> None:
        """``def train_one_epoch(self): self.lr_scheduler.step()`` above the
        batch loop that steps the optimizer: every call of the function
        (once per epoch, from its caller's loop) moves the schedule before
        the optimizer steps, so the first value is skipped whoever calls it.
        (A project that accepts no torch from 1.1 on is left alone by
        visit_Module.)"""
        scope = sched.scope
        call = sched.call
        if not isinstance(scope, cst.FunctionDef) or not isinstance(call, cst.Call) or call.args:
            return
        if runs_only_on_torch_before(call, _NEXT_VALUE_TUPLE, self.facts):
            return
        if in_test_function(call, self.facts.calls.parents, self.context.path):
            return
        if self._late_in_call(verbs, sched):
            return
        if self._is_plateau(sched.target, scope) or not self._library_scheduler(sched):
            return
        optimizer = self._optimizer_of(sched.target, scope)
        in_scope = verbs.in_scope(scope)
        if self._steps(verbs, [v for v in in_scope if v.index < sched.index], optimizer):
            return
        engine = runs_before_process(scope, self.facts)
        if engine is not None and engine.may_step(optimizer):
            # An ignite handler fired before the process function that steps.
            said = f"an ignite `{engine.event}` handler runs before the engine's update steps the optimizer"
            self.report(call, message=f"{self.message} ({said})")
            return
        hook = runs_before_step(scope, self.facts)
        if hook is not None and hook.may_step(optimizer):
            # A hook a project engine runs before its optimizer step.
            said = f"`{hook.engine}.{hook.attr}['{hook.key}']` runs at the {_PLACES[hook.place]}, before the engine's optimizer step ({hook.where})"
            self.report(call, message=f"{self.message} ({said})")
            return
        stepping, same_block = self._stepped_after(
            sched.line,  # type: ignore[arg-type]
            scope,
            lambda later: self._steps(verbs, [v for v in in_scope if verbs.contains(later, v)], optimizer)
            or self._trains_elsewhere(later, optimizer, scope),
        )
        if stepping is not None:
            fix = self._fix(sched, self.parent(stepping), stepping) if same_block else None
            self.report(call, fix=fix)

    def _late_in_call(self, verbs, sched: Verb) -> bool:
        """The scheduler steps under a branch that may skip the first call:
        an ``else``, a test comparing with 0 or 1 (``if epoch > 0:``), or
        one naming a counter (``if epoch:``, ``if self.global_step:``), not
        a switch of the configuration (``if self.args.enable_lr_schedule:``)."""
        for node, branch in verbs.conditions(sched):
            if not isinstance(node, cst.If) or branch != "body":
                return True
            test = node.test
            if isinstance(test, cst.UnaryOperation):
                test = test.expression
            if isinstance(test, (cst.Name, cst.Attribute)):
                if name_tokens((dotted_name(test) or "").replace(".", "_")) & _COUNTER_WORDS:
                    return True
                continue
            if self._deliberately_late_test(test):
                return True
        return False

    def _stepped_after(self, line: cst.CSTNode, loop: cst.CSTNode, steps) -> tuple[cst.CSTNode | None, bool]:
        """The first statement after ``line`` in the same iteration of
        ``loop`` for which ``steps`` holds (its later siblings, then those of
        each enclosing statement), and whether it is a sibling; (None, _) when
        none does or the iteration may end first (``continue``)."""
        stmt: cst.CSTNode | None = line
        same_block = True
        while stmt is not None and stmt is not loop:
            block = self.parent(stmt)
            located = self.facts.blocks.locate(stmt)
            if located is not None:
                body, i = located
                for later in body[i + 1 :]:
                    if jumps(later):
                        # ``if epoch < start_epoch: scheduler.step(); continue``
                        # fast-forwards a resumed schedule.
                        return None, same_block
                    if steps(later):
                        return later, same_block
            stmt = self._enclosing_statement(block)
            same_block = False
        return None, same_block

    def _scheduler_methods(self) -> None:
        """``trainer.update_learning_rate()`` (a project method that only
        steps library schedulers the trainer holds) in a loop, before a call
        of a method of the same object that steps its optimizer
        (``trainer.dis_update(x)``): both read from the project (MUNIT)."""
        project = self.facts.project
        if project is None or not any(set(kinds) == {"s"} for *_, kinds in project.object_steps):
            return
        loops = self.facts.loops
        for scope, calls in self.facts.calls.calls_in.items():
            methods = self._object_calls(scope)
            for call in calls:
                func = call.func
                if not isinstance(func, cst.Attribute) or call.args:
                    continue
                receiver = dotted_name(func.value) or ""
                if set(methods.get((receiver, func.attr.value), "o")) != {"s"}:
                    continue
                line = self._statement_of(call)
                enclosing = loops.enclosing_loops(call)
                if line is None or not enclosing:
                    continue

                stepper: list[str] = []

                def steps(later: cst.CSTNode, receiver: str = receiver, methods=methods, stepper=stepper) -> bool:
                    visitor = _TrainingCallsHanded(self.facts.objects, self.facts.calls, None, methods)
                    visit_fast(later, visitor)
                    stepper.extend(m for r, m, kinds in visitor.object_steps if r == receiver and "o" in kinds)
                    return bool(stepper)

                stepping, _same_block = self._stepped_after(line, enclosing[0].node, steps)
                if stepping is not None:
                    said = f"`{receiver}.{func.attr.value}()` steps its schedulers before `{receiver}.{stepper[0]}()` steps the optimizer"
                    self.report(call, message=f"{self.message} ({said})")

    def _statement_of(self, call: cst.Call) -> cst.CSTNode | None:
        """The simple statement line that is just this call."""
        parent = self.parent(call)
        if not isinstance(parent, cst.Expr):
            return None
        line = self.parent(parent)
        return line if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else None

    def _trains_elsewhere(self, stmt: cst.CSTNode, optimizer: str | None, scope=None) -> bool:
        """``train_one_epoch(model, loader, optimizer)``: a function defined
        elsewhere, named for training, handed the optimizer, steps it; or
        ``trainer.train_step(x)``, a method of a project object that steps an
        optimizer it holds (``_object_steps``)."""
        visitor = _TrainingCallsHanded(self.facts.objects, self.facts.calls, optimizer, self._object_calls(scope))
        visit_fast(stmt, visitor)
        return bool(visitor.found) or any(
            "o" in kinds and self._holds(receiver, optimizer, scope) for receiver, _m, kinds in visitor.object_steps
        )

    def _object_calls(self, scope) -> dict[tuple[str, str], str]:
        """(receiver, method) -> what the method steps, for the typed
        receivers of ``scope`` (ProjectView.object_steps)."""
        project = self.facts.project
        if project is None or not project.object_steps or scope is None:
            return {}
        name = self._scope_name(scope)
        return {(r, m): kinds for s, r, m, kinds in project.object_steps if s == name}

    def _holds(self, receiver: str, optimizer: str | None, scope) -> bool:
        """The object was built here with the scheduler's optimizer among its
        arguments (``Trainer(G, D, g_optimizer, d_optimizer)``): the optimizer
        its method steps may be that one. Any optimizer when it is unknown."""
        if optimizer is None:
            return True
        call = self.facts.bindings.call_of(receiver, scope)
        return call is not None and any(dotted_name(a.value) == optimizer for a in call.args)

    def _enclosing_statement(self, block: cst.CSTNode | None) -> cst.CSTNode | None:
        """The statement (a child of a block) that holds ``block``."""
        cur = self.parent(block) if block is not None else None
        while cur is not None and not isinstance(self.parent(cur), (cst.IndentedBlock, cst.Module)):
            if isinstance(cur, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return None
            cur = self.parent(cur)
        return cur

    def _deliberately_late(self, verbs, sched: Verb) -> bool:
        """Under a condition that skips the first iteration (``if epoch > 0:``,
        ``if step:``), in an ``except``, or named for warmup."""
        for node, _branch in verbs.conditions(sched, sched.loop):
            if not isinstance(node, cst.If):
                return True
            test = node.test
            if isinstance(test, (cst.Name, cst.Attribute)) or self._deliberately_late_test(test):
                return True
        return False

    def _deliberately_late_test(self, test: cst.BaseExpression) -> bool:
        """A test that may fail the first time: about warmup or the first
        iteration, or comparing with 0 or 1 (``epoch > 0``, ``step != 0``)."""
        text = self.context.module.code_for_node(test).lower()
        if "warm" in text or "first" in text:
            return True
        for comp in _comparisons(test):
            ops = [c.operator for c in comp.comparisons]
            sides = [comp.left, *(c.comparator for c in comp.comparisons)]
            if any(isinstance(o, (cst.GreaterThan, cst.GreaterThanEqual, cst.NotEqual)) for o in ops) and any(
                isinstance(x, cst.Integer) and x.evaluated_value in (0, 1) for x in sides
            ):
                return True
            if _above_literal(comp):
                return True
        return False

    def _steps(self, verbs, subset: list[Verb], optimizer: str | None) -> bool:
        """Some verb of ``subset`` (or a local function it calls) steps the optimizer."""
        return any(
            v.kind is VerbKind.STEP and not v.closure and (optimizer is None or v.target == optimizer)
            for v in verbs.reached(subset)
        )

    def _optimizer_of(self, scheduler: str | None, scope) -> str | None:
        call = self.facts.bindings.call_of(scheduler or "", scope)
        if call is None or not call.args:
            return None
        if not (self.facts.names.call_name(call) or "").startswith(_LIBRARY_SCHEDULERS):
            # A project factory (``utility.make_scheduler(args, self.optimizer)``):
            # its one argument that is an optimizer, if any.
            handed = [a for a in call.args if self.facts.objects.kind_of(a.value, call) is Kind.OPTIMIZER]
            if len(handed) == 1:
                return dotted_name(handed[0].value)
        first = call.args[0]
        if first.keyword is not None and first.keyword.value != "optimizer":
            first = next((a for a in call.args if a.keyword is not None and a.keyword.value == "optimizer"), None)
        return dotted_name(first.value) if first is not None else None

    def _library_scheduler(self, sched: Verb) -> bool:
        """A torch (or transformers) LR scheduler, whose ``step()`` moves to
        the next value; a home-made scheduler class may mean "set the rate
        for the coming step". Unknown construction (a parameter) counts."""
        if "[" in (sched.target or ""):
            return self._keyed_library_scheduler(sched.target)  # type: ignore[arg-type]
        names = self.facts.bindings.constructors(sched.target or "", sched.scope)
        if names is None:
            typed = self._project_types(sched)
            if typed is not None:
                # ``self.scheduler`` from a constructor argument that every
                # construction site in the project builds with a library
                # scheduler, maybe through a project factory
                # (project/typed_objects.py); a project class stays home-made.
                return all(n.startswith(("torch.optim.lr_scheduler.", "transformers.", "diffusers.")) for n in typed)
            # ``scheduler = args.scheduler``, stored by the caller from a
            # library scheduler (training/namespace_schedulers.py).
            stored = namespace_constructors(self.facts.bindings, sched.target or "", sched.scope)
            if stored is not None:
                return all(n.startswith(_LIBRARY_SCHEDULERS) and not n.endswith("ReduceLROnPlateau") for n in stored)
            return not self.facts.bindings.values(sched.target or "", sched.scope)
        if self._local_factory_schedulers(sched):
            return True
        project = self._project_schedulers(sched)
        if all(
            n.startswith(("torch.optim.lr_scheduler.", "transformers.", "diffusers."))
            or self._torch_scheduler_subclass(n)
            or n in project
            for n in names
        ):
            return True
        # ``build_lr_scheduler(optimizer, config)``, a project factory whose
        # every ``return`` builds a library scheduler (project/typed_objects.py).
        typed = self._project_types(sched)
        return bool(typed) and all(
            n.startswith(("torch.optim.lr_scheduler.", "transformers.", "diffusers.")) for n in typed or ()
        )

    def _local_factory_schedulers(self, sched: Verb) -> bool:
        """``self.scheduler = make_scheduler(args, self.optimizer)`` with
        ``make_scheduler`` a function of this module whose every ``return``
        builds a library scheduler (``return lrs.StepLR(optimizer, ...)``)."""
        values = [
            v
            for v in self.facts.bindings.values(sched.target or "", sched.scope)
            if not (isinstance(v, cst.Name) and v.value == "None")
        ]
        if not values:
            return False
        for value in values:
            call = unwrap_pass_through(value)
            fn = self.facts.calls.resolve(call) if call is not None else None
            if fn is None:
                return False
            returned, yields = own_returns(fn)
            if yields or not returned:
                return False
            for r in returned:
                if not (
                    isinstance(r, cst.Call) and (self.facts.names.call_name(r) or "").startswith(_LIBRARY_SCHEDULERS)
                ):
                    return False
        return True

    def _keyed_library_scheduler(self, spelled: str) -> bool:
        """``state['scheduler']``: every value the module stores under that
        key builds a library scheduler (``lr_scheduler.StepLR(...)``);
        stored nowhere here, it is unknown and counts, as a parameter does."""
        for value in keyed_values(self.context.module, spelled):
            call = unwrap_pass_through(value)
            name = self.facts.names.call_name(call) if call is not None else None
            if name is None or not name.startswith(("torch.optim.lr_scheduler.", "transformers.", "diffusers.")):
                return False
        return True

    def _project_schedulers(self, sched: Verb) -> set[str]:
        """The constructors of ``sched.target`` (as ``constructors`` names
        them) that build a class of another project module subclassing a
        torch scheduler and keeping its ``step()`` (ProjectView.scheduler_classes)."""
        project = self.facts.project
        if project is None or not project.scheduler_classes:
            return set()
        bindings = self.facts.bindings
        found = set()
        for value in bindings.values(sched.target or "", sched.scope):
            call = unwrap_pass_through(value)
            if call is not None and dotted_name(call.func) in project.scheduler_classes:
                found.add(bindings.call_name(call) or "")
        return found

    def _project_types(self, sched: Verb) -> tuple[str, ...] | None:
        """The scheduler's types as the project's call sites give them."""
        project = self.facts.project
        if project is None or not project.object_types or not sched.target:
            return None
        return project.types_of(self._scope_name(sched.scope), sched.target)

    def _scope_name(self, scope) -> str:
        """``Class.method``, ``function`` or "" (the module), as the project names scopes."""
        if not isinstance(scope, cst.FunctionDef):
            return ""
        cls = self.facts.calls.class_of.get(scope)
        return f"{cls.name.value}.{scope.name.value}" if cls is not None else scope.name.value

    def _torch_scheduler_subclass(self, name: str) -> bool:
        """``class FindLR(_LRScheduler)`` with its own ``get_lr`` but torch's
        ``step()``: stepping moves to the next rate, as in torch."""
        classes = self.facts.calls.classes.get(name, [])
        if len(classes) != 1 or self.facts.calls.find_method(classes[0], "step") is not None:
            return False
        qualified = [self.facts.names.qualified_name(b.value) or "" for b in classes[0].bases]
        return any(q.startswith("torch.optim.lr_scheduler.") for q in qualified)

    def _is_plateau(self, scheduler: str | None, scope) -> bool:
        names = self.facts.bindings.constructors(scheduler or "", scope) or set()
        return any(n.endswith("ReduceLROnPlateau") for n in names)

    def _fix(self, sched: Verb, block: cst.CSTNode, stepping: cst.CSTNode) -> Fix | None:
        if not call_statement_only(sched.line, sched.call):
            return None
        edits = StatementEdits()
        edits.remove(sched.line, block)  # type: ignore[arg-type]
        edits.insert_after(stepping, bare(sched.line))  # type: ignore[arg-type]
        return Fix("Step the scheduler after the optimizer", ((block, edits.apply(block)),), Safety.UNSAFE)

    valid = [
        Valid(
            """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=3)


class Trainer:
    def __init__(self, optimizer, scheduler):
        self.optimizer = optimizer
        self.scheduler = scheduler


def train_epoch(model, batches):
    model.scheduler.step()
    for x, y in batches:
        model.optimizer.zero_grad()
        loss = (model.fc(x) - y).pow(2).mean()
        loss.backward()
        model.optimizer.step()


def train_later(model, batches):
    for x, y in batches:
        model.optimizer.zero_grad()
        loss = (model.fc(x) - y).pow(2).mean()
        loss.backward()
        model.optimizer.step()
    model.scheduler.step()
""",
            "two classes of the module hold `self.scheduler`: which one `model` is cannot be told; and stepped after the loop that steps the optimizer",
        ),
        Valid(
            """\
import torch
from torch import nn


class Warmup:
    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.n = 0

    def step(self):
        self.n += 1
        for group in self.optimizer.param_groups:
            group["lr"] = min(1.0, self.n / 100)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)
        self.scheduler = Warmup(self.optimizer)


def train_epoch(model, batches):
    model.scheduler.step()
    for x, y in batches:
        model.optimizer.zero_grad()
        loss = (model.fc(x) - y).pow(2).mean()
        loss.backward()
        model.optimizer.step()
""",
            "the one class holding `self.scheduler` builds a home-made scheduler (its own `step()`)",
        ),
        Valid(
            """\
import torch
class Trainer:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, 10)
    def train_one_epoch(self, epoch):
        if epoch:
            self.scheduler.step()
        for x in self.loader:
            self.optimizer.zero_grad()
            self.model(x).backward()
            self.optimizer.step()
    def fit(self, loader):
        self.optimizer.step()
        self.scheduler.step()
        for x in loader:
            self.optimizer.zero_grad()
            self.model(x).backward()
            self.optimizer.step()
""",
            "at the top of a function run once per epoch, the scheduler steps only after the first call "
            "(`if epoch:`), or after an optimizer step of the same call",
        ),
        Valid(
            """\
import torch
from torch.optim.lr_scheduler import _LRScheduler
class WarmupLR(_LRScheduler):
    def step(self, epoch=None):
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
warmup = WarmupLR(optimizer)
for images, labels in loader:
    warmup.step()
    optimizer.zero_grad()
    loss = loss_function(net(images), labels)
    loss.backward()
    optimizer.step()
""",
            "a torch scheduler subclass with its own step(): it may set the rate for the coming step",
        ),
        Valid(
            """\
import torch
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30)
for epoch in range(epochs):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    scheduler.step()
""",
            "stepped after the inner loop that steps the optimizer",
        ),
        Valid(
            """\
from timm.scheduler import CosineLRScheduler
lr_scheduler = CosineLRScheduler(optimizer, t_initial=epochs)
for epoch in range(epochs):
    lr_scheduler.step(epoch)
    train_one_epoch(model, loader, optimizer)
""",
            "timm scheduler stepped with an epoch argument on purpose",
        ),
        Valid(
            """\
for epoch in range(epochs):
    if epoch > 0:
        scheduler.step()
    train(epoch)
""",
            "stepped under a condition",
        ),
        Valid(
            """\
import torch
sched = torch.optim.lr_scheduler.StepLR(optimizer, 10)
for epoch in range(epochs):
    if epoch > 5:
        sched.step()
    for x in loader:
        model(x).sum().backward()
        optimizer.step()
""",
            "stepped only once the epoch counter passed a positive literal: the first iteration never steps it",
        ),
        Valid(
            """\
import torch
sched_d = torch.optim.lr_scheduler.StepLR(opt_d, 10)
sched_g = torch.optim.lr_scheduler.StepLR(opt_g, 10)
for epoch in range(epochs):
    for real in loader:
        opt_d.step()
        sched_d.step()
        opt_g.step()
        sched_g.step()
""",
            "two optimizers, each scheduler after its own optimizer",
        ),
        Valid(
            """\
import torch
scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[30, 60])
for epoch in range(epochs):
    if epoch < start_epoch:
        scheduler.step()  # fast-forward the schedule when resuming
        continue
    train_one_epoch(model, loader, optimizer)
    scheduler.step()
""",
            "a resumed run fast-forwards the schedule and skips the rest of the iteration",
        ),
        Valid(
            """\
import torch
from ignite.engine import Engine, Events, create_supervised_trainer
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
trainer = create_supervised_trainer(model, optimizer, loss_fn)
@trainer.on(Events.EPOCH_COMPLETED)
def after_epoch(engine):
    scheduler.step()
@trainer.on(Events.EPOCH_STARTED(every=2))
def every_other_epoch(engine):
    scheduler.step()
evaluator = Engine(inference)
@evaluator.on(Events.EPOCH_STARTED)
def on_evaluation(engine):
    scheduler.step()
""",
            "ignite handlers after the epoch, on a filtered event (first fired after some epochs), or on an "
            "engine whose process function steps no optimizer",
        ),
        Valid(
            """\
import torch
from ignite.engine import Events
from engines import build_trainer
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
trainer = build_trainer(model, optimizer)
@trainer.on(Events.EPOCH_STARTED)
def adjust(engine):
    scheduler.step()
""",
            "an ignite engine built elsewhere: its process function is unknown",
        ),
        Valid(
            """\
import torch
class Engine:
    def __init__(self):
        self.hooks = {}
    def train(self, model, loader, optimizer, epochs):
        state = {"model": model, "optimizer": optimizer}
        for epoch in range(epochs):
            self.hooks["on_start_epoch"](state)
            for x, y in loader:
                self.hooks["on_sample"](state)
                optimizer.zero_grad()
                model(x, y).backward()
                optimizer.step()
            self.hooks["on_end_epoch"](state)
    def test(self, model, loader):
        for x, y in loader:
            self.hooks["on_sample"](x)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
engine = Engine()
def on_end_epoch(state):
    scheduler.step()
def on_sample(state):
    scheduler.step()
engine.hooks["on_end_epoch"] = on_end_epoch
engine.hooks["on_sample"] = on_sample
engine.train(model, loader, optimizer, 100)
""",
            "an engine's hook run after the epoch's optimizer steps (`on_end_epoch`), or one it also runs in a "
            "loop that steps nothing (`on_sample`, in `test` too): its place is not known",
        ),
        Valid(
            """\
import torch
from torchnet.engine import Engine
class Warmup:
    def __init__(self, optimizer):
        self.optimizer = optimizer
    def step(self):
        self.optimizer.param_groups[0]["lr"] *= 2
engine = Engine()
def on_start_epoch(state):
    state["scheduler"].step()
def on_start(state):
    state["scheduler"] = Warmup(state["optimizer"])
engine.hooks["on_start"] = on_start
engine.hooks["on_start_epoch"] = on_start_epoch
engine.train(net, loader, 10, optimizer)
""",
            "an engine the project does not hold (installed: the order of its hooks is unknown), and a "
            "scheduler stored under its key by a home-made class",
        ),
        Valid(
            """\
import torch
import torch.optim.lr_scheduler as lrs


def make_scheduler(args, optimizer):
    return lrs.StepLR(optimizer, step_size=args.step)


class Trainer:
    def __init__(self, args, generator, discriminator, loader):
        self.generator = generator
        self.loader = loader
        self.g_optimizer = torch.optim.SGD(generator.parameters(), lr=0.1)
        self.d_optimizer = torch.optim.SGD(discriminator.parameters(), lr=0.1)
        self.scheduler = make_scheduler(args, self.d_optimizer)

    def pretrain_generator(self):
        self.scheduler.step()
        for x, y in self.loader:
            self.g_optimizer.zero_grad()
            loss = self.generator(x).sum()
            loss.backward()
            self.g_optimizer.step()
""",
            "the factory's scheduler follows the optimizer it is handed (`self.d_optimizer`), which the loop never"
            " steps: its schedule does not skip a rate here",
        ),
        Valid(
            """\
import torch


class Warmup:
    def __init__(self, optimizer, steps=100):
        self.optimizer = optimizer
        self.steps = steps
        self.n = 0

    def step(self):
        self.n += 1
        for group in self.optimizer.param_groups:
            group["lr"] = 0.1 * min(1.0, self.n / self.steps)


def main(args, model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    args.optimizer = optimizer
    args.scheduler = Warmup(optimizer)
    train(model, loader, args)


def train(model, loader, args):
    optimizer = args.optimizer
    scheduler = args.scheduler
    for x, y in loader:
        scheduler.step()
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
            "the namespace's scheduler is a home-made warm-up whose `step()` sets the rate for the coming step:"
            " stepping it first is its documented order",
        ),
        Valid(
            """\
import torch


def main(args, model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    args.optimizer = optimizer
    args.scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 - step / 1000)
    train(model, loader, args)


def train(model, loader, args):
    optimizer = args.optimizer
    scheduler = args.scheduler
    for x, y in loader:
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
""",
            "the namespace's LambdaLR is stepped after the optimizer",
        ),
        Valid(
            """\
import torch


def train(model, loader, args):
    optimizer = args.optimizer
    scheduler = args.scheduler
    for x, y in loader:
        scheduler.step()
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
            "nothing in the module fills `args.scheduler`: its kind is not known, and unknown stays silent",
        ),
    ]
    # Each fixed text repeats its source but for the one `scheduler.step()`
    # the fix moves: the examples test compares the fix's output with it
    # byte for byte, and the rule's page shows both whole.
    invalid = [
        Invalid(
            """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=3)


def train_epoch(model, batches):
    model.scheduler.step()
    for x, y in batches:
        model.optimizer.zero_grad()
        loss = (model.fc(x) - y).pow(2).mean()
        loss.backward()
        model.optimizer.step()
""",
            """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=3)


def train_epoch(model, batches):
    for x, y in batches:
        model.optimizer.zero_grad()
        loss = (model.fc(x) - y).pow(2).mean()
        loss.backward()
        model.optimizer.step()
    model.scheduler.step()
""",
        ),
        Invalid(
            """\
import torch
sched = torch.optim.lr_scheduler.StepLR(optimizer, 10)
for epoch in range(epochs):
    if epoch > -1:
        sched.step()
    for x in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
""",
            None,
        ),
        Invalid(
            """\
import torch
from torch.optim.lr_scheduler import _LRScheduler
class FindLR(_LRScheduler):
    def __init__(self, optimizer, max_lr=10, num_iter=100, last_epoch=-1):
        self.total_iters = num_iter
        self.max_lr = max_lr
        super().__init__(optimizer, last_epoch)
    def get_lr(self):
        return [b * (self.max_lr / b) ** (self.last_epoch / self.total_iters) for b in self.base_lrs]
optimizer = torch.optim.SGD(net.parameters(), lr=1e-7)
lr_scheduler = FindLR(optimizer, max_lr=10, num_iter=100)
for epoch in range(epochs):
    for images, labels in loader:
        lr_scheduler.step()
        optimizer.zero_grad()
        loss = loss_function(net(images), labels)
        loss.backward()
        optimizer.step()
""",
            """\
import torch
from torch.optim.lr_scheduler import _LRScheduler
class FindLR(_LRScheduler):
    def __init__(self, optimizer, max_lr=10, num_iter=100, last_epoch=-1):
        self.total_iters = num_iter
        self.max_lr = max_lr
        super().__init__(optimizer, last_epoch)
    def get_lr(self):
        return [b * (self.max_lr / b) ** (self.last_epoch / self.total_iters) for b in self.base_lrs]
optimizer = torch.optim.SGD(net.parameters(), lr=1e-7)
lr_scheduler = FindLR(optimizer, max_lr=10, num_iter=100)
for epoch in range(epochs):
    for images, labels in loader:
        optimizer.zero_grad()
        loss = loss_function(net(images), labels)
        loss.backward()
        optimizer.step()
        lr_scheduler.step()
""",
        ),
        Invalid(
            """\
import torch.optim as optim
scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=7, gamma=0.1)

def train(epoch):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()

for epoch in range(1, 25):
    scheduler.step()
    train(epoch)
    test()
""",
            """\
import torch.optim as optim
scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=7, gamma=0.1)

def train(epoch):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()

for epoch in range(1, 25):
    train(epoch)
    scheduler.step()
    test()
""",
        ),
        Invalid(
            """\
from torch.optim.lr_scheduler import OneCycleLR
scheduler = OneCycleLR(optimizer, max_lr=0.1, total_steps=1000)
for x, y in loader:
    scheduler.step()  # per batch
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
    log(scheduler.get_last_lr())
""",
            """\
from torch.optim.lr_scheduler import OneCycleLR
scheduler = OneCycleLR(optimizer, max_lr=0.1, total_steps=1000)
for x, y in loader:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
    scheduler.step()  # per batch
    log(scheduler.get_last_lr())
""",
        ),
        Invalid(
            """\
for epoch in range(args.epochs):
    lr_scheduler.step()
    model.train()
    for batch in train_loader:
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
            """\
for epoch in range(args.epochs):
    model.train()
    for batch in train_loader:
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    lr_scheduler.step()
""",
        ),
        Invalid(
            """\
for epoch in range(num_epochs):
    for phase in ["train", "val"]:
        if phase == "train":
            scheduler.step()
            model.train()
        else:
            model.eval()
        for inputs, labels in dataloaders[phase]:
            optimizer.zero_grad()
            loss = criterion(model(inputs), labels)
            if phase == "train":
                loss.backward()
                optimizer.step()
""",
            None,
        ),
        Invalid(
            """\
import torch
from engine import train_one_epoch
scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[30, 60])
for epoch in range(start_epoch, epochs):
    scheduler.step()
    train_one_epoch(model, train_loader, optimizer, epoch)
""",
            """\
import torch
from engine import train_one_epoch
scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[30, 60])
for epoch in range(start_epoch, epochs):
    train_one_epoch(model, train_loader, optimizer, epoch)
    scheduler.step()
""",
        ),
        Invalid(
            """\
import torch.optim as optim
class Trainer:
    def __init__(self, args, model, loader):
        self.args = args
        self.model = model
        self.loader = loader
        self.optimizer = optim.Adam(model.parameters())
        if args.enable_lr_schedule:
            self.lr_scheduler = optim.lr_scheduler.StepLR(self.optimizer, step_size=25)
    def train(self):
        for epoch in range(self.args.num_epochs):
            self.train_one_epoch(epoch)
    def train_one_epoch(self, epoch):
        self.model.train()
        if self.args.enable_lr_schedule:
            self.lr_scheduler.step()
        for batch in self.loader:
            self.optimizer.zero_grad()
            self.model(batch).backward()
            self.optimizer.step()
""",
            None,
        ),
        Invalid(
            """\
import torch
def train_one_epoch(model, loader, optimizer, scheduler):
    scheduler.step()
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
""",
            """\
import torch
def train_one_epoch(model, loader, optimizer, scheduler):
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    scheduler.step()
""",
        ),
        Invalid(
            """\
import torch
from ignite.engine import Engine, Events


def create_supervised_trainer(model, optimizer, loss_fn):
    def _update(engine, batch):
        optimizer.zero_grad()
        x, y = batch
        loss_fn(model(x), y).backward()
        optimizer.step()

    return Engine(_update)


def do_train(model, loader, optimizer, scheduler, loss_fn):
    trainer = create_supervised_trainer(model, optimizer, loss_fn)

    @trainer.on(Events.EPOCH_STARTED)
    def adjust_learning_rate(engine):
        scheduler.step()

    trainer.run(loader, max_epochs=120)
""",
            None,
        ),
        Invalid(
            """\
import torch
from ignite.engine import Events, create_supervised_trainer
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=1000)
trainer = create_supervised_trainer(model, optimizer, loss_fn)
def step_schedule(engine):
    scheduler.step()
trainer.add_event_handler(Events.ITERATION_STARTED, step_schedule)
""",
            None,
        ),
        Invalid(
            """\
import torch
class Engine:
    def __init__(self):
        self.hooks = {}
    def train(self, model, loader, optimizer, epochs):
        state = {"model": model, "optimizer": optimizer}
        for epoch in range(epochs):
            self.hooks["on_start_epoch"](state)
            for x, y in loader:
                optimizer.zero_grad()
                model(x, y).backward()
                optimizer.step()
            self.hooks["on_end_epoch"](state)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
engine = Engine()
def on_start_epoch(state):
    scheduler.step()
engine.hooks["on_start_epoch"] = on_start_epoch
engine.train(model, loader, optimizer, 100)
""",
            None,
        ),
        Invalid(
            """\
from functools import partial
import torch.optim.lr_scheduler as lr_scheduler
class Engine:
    def __init__(self):
        self.hooks = {}
    def hook(self, name, state):
        if name in self.hooks:
            self.hooks[name](state)
    def train(self, network, iterator, maxepoch, optimizer):
        state = {"network": network, "optimizer": optimizer, "epoch": 0}
        self.hook("on_start", state)
        while state["epoch"] < maxepoch:
            for sample in iterator:
                self.hook("on_sample", state)
                state["optimizer"].zero_grad()
                network(sample).backward()
                state["optimizer"].step()
            state["epoch"] += 1
def on_start(state):
    state["scheduler"] = lr_scheduler.OneCycleLR(state["optimizer"], 0.1, total_steps=1000)
def on_sample(log, state):
    state["scheduler"].step()
engine = Engine()
engine.hooks["on_start"] = on_start
engine.hooks["on_sample"] = partial(on_sample, print)
engine.train(net, loader, 10, optimizer)
""",
            None,
        ),
        Invalid(
            """\
import torch
import torch.optim.lr_scheduler as lrs


def make_scheduler(args, optimizer):
    return lrs.StepLR(optimizer, step_size=args.step)


class Trainer:
    def __init__(self, args, model, loader):
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.scheduler = make_scheduler(args, self.optimizer)

    def train(self):
        self.scheduler.step()
        self.model.train()
        for x, y in self.loader:
            self.optimizer.zero_grad()
            loss = self.model(x).sum()
            loss.backward()
            self.optimizer.step()
""",
            """\
import torch
import torch.optim.lr_scheduler as lrs


def make_scheduler(args, optimizer):
    return lrs.StepLR(optimizer, step_size=args.step)


class Trainer:
    def __init__(self, args, model, loader):
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.scheduler = make_scheduler(args, self.optimizer)

    def train(self):
        self.model.train()
        for x, y in self.loader:
            self.optimizer.zero_grad()
            loss = self.model(x).sum()
            loss.backward()
            self.optimizer.step()
        self.scheduler.step()
""",
        ),
        Invalid(
            """\
import torch


def main(args, model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 - step / 1000)
    args.optimizer = optimizer
    args.scheduler = scheduler
    train(model, loader, args)


def train(model, loader, args):
    optimizer = args.optimizer
    scheduler = args.scheduler
    for x, y in loader:
        scheduler.step()
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
            """\
import torch


def main(args, model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 - step / 1000)
    args.optimizer = optimizer
    args.scheduler = scheduler
    train(model, loader, args)


def train(model, loader, args):
    optimizer = args.optimizer
    scheduler = args.scheduler
    for x, y in loader:
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
""",
        ),
    ]
