"""Loop roles: which loops train, which evaluate, which iterate over data.

API (through ``facts.loops``):

- ``info(loop) -> LoopInfo`` for a ``For``/``While`` node; ``loop_of(node)``
  the innermost loop around a node in its own function (or None);
  ``all`` every loop of the module in source order.
- ``LoopInfo.trains`` — a backward or an optimizer step runs in the loop,
  directly or through functions of this module it calls.
- ``LoopInfo.role`` — ``"train"``, ``"eval"`` (a model call, nothing that
  needs gradients, and evidence of evaluation: after ``.eval()``, inside a
  function named for validation/evaluation/testing/prediction, or iterating a
  val/test loader) or None; a loop over the task's classes
  (``for c in classes_to_create:``, class_loops.py) is no evaluation.
- ``LoopInfo.is_batch_loop`` — each iteration is a training step, an
  evaluation step, or the loop iterates over data (loaders, batches, epochs,
  steps); time-step loops over a sequence are not. ``outer_loop(info)``: an
  epoch, fold, model or experiment loop, whose iterations each run whole
  batch loops.
- ``carried_across(target, stmt) -> LoopInfo | None`` — the batch loop across
  whose iterations the name/attribute written at ``stmt`` keeps its value
  (not re-initialised earlier in the same iteration), or None.
  ``carried_by_framework(key, stmt)``: the same for ``self.<attr>`` written in
  a LightningModule's ``training_step``, which Lightning runs once per batch.
- ``trains(fn)``, ``calls_model(fn)``, ``needs_grad(fn)`` for functions,
  ``per_iteration(fn)`` for functions called once per batch,
  ``runs_repeatedly(fn)`` for functions called in any loop,
  ``training_guards(fn)`` the flag parameters under which all its training runs
  (``"!p"`` for a negated one, ``if not p:``),
  ``serves_forward(fn)`` for a ``forward`` and the helpers it calls.
- ``mode_events(scope)`` — ``.train()``/``.eval()`` calls and training phases
  in source order, for the MEM2xx rules; ``mode_before(node, receivers)`` the
  mode those modules are in when ``node`` runs (a switch on an alias or a
  part of them makes it unknown).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper

from memlint.analysis.autograd.grad_mode import GradMode, context_mode
from memlint.analysis.scope.aliases import alias_pairs, related
from memlint.analysis.scope.callgraph import CallGraph, Scope, bound_params
from memlint.analysis.scope.literal_items import literal_items
from memlint.analysis.scope.names import ImportTable, dotted_name, flat_targets, is_lightning_module, mentions
from memlint.analysis.scope.objects import ObjectTable
from memlint.analysis.training.class_loops import iterates_classes
from memlint.analysis.training.layer_loops import chains_layers
from memlint.analysis.training.step_parts import counted_part
from memlint.analysis.training.training_verbs import accumulation_divisor
from memlint.parse.traversal import OwnScopeVisitor, visit_fast
from memlint.vocabulary.tokens import (
    DATA_TOKENS,
    EVAL_DATA_TOKENS,
    EVAL_FUNCTION_TOKENS,
    GRAD_NAME_TOKENS,
    name_tokens,
)

Loop = cst.For | cst.While

_TRAIN_TOKENS = frozenset({"train", "training", "fit"})
# Loops whose iterations each run a whole training or evaluation (RULES.md traps).
_OUTER_LOOP_TOKENS = frozenset(
    {
        "epoch",
        "epochs",
        "fold",
        "folds",
        "model",
        "models",
        "checkpoint",
        "checkpoints",
        "ckpt",
        "ckpts",
        "config",
        "configs",
        "cfg",
        "cfgs",
        "run",
        "runs",
        "trial",
        "trials",
        "experiment",
        "experiments",
        "seed",
        "seeds",
        "split",
        "splits",
    }
)
_GRAD_HOOKS = frozenset(
    {"register_hook", "register_full_backward_hook", "register_backward_hook", "retain_grad", "requires_grad_"}
)


_JUMPS = (cst.Break, cst.Continue, cst.Return, cst.Raise)

# Words naming an adversary: its methods (``attack.perturb(x, y)``,
# ``self.eval_attack.perturb(x, y)``) differentiate the model's loss with
# respect to the input, whatever the method is called.
_ATTACK_TOKENS = frozenset({"attack", "attacker", "attacks", "adversary", "adversarial", "fgsm", "pgd"})


def _attack_receiver(callee: str) -> bool:
    """``callee`` is a method of an object named as an attack."""
    receiver, dot, _method = callee.rpartition(".")
    return bool(dot) and bool(name_tokens(receiver.rsplit(".", 1)[-1]) & _ATTACK_TOKENS)


def jumps(stmt: cst.CSTNode, kinds: tuple[type, ...] = _JUMPS) -> bool:
    """``stmt`` is, or is a line holding, a ``break``/``continue``/``return``/
    ``raise`` of ``kinds``: nothing after it runs."""
    small = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt]
    return any(isinstance(s, kinds) for s in small)


def _last_mode_before(mode_calls: list[tuple[tuple[int, int], cst.Call, str]], at: tuple[int, int]) -> str | None:
    """The mode of the last ``.train()``/``.eval()`` call before ``at``
    (``mode_calls`` is in source order)."""
    k = bisect_left(mode_calls, (at,))
    return mode_calls[k - 1][2] if k else None


def ends_with_jump(suite: cst.BaseSuite, kinds: tuple[type, ...] = _JUMPS) -> bool:
    """The block's last statement jumps (``if done: ...; break``)."""
    return bool(suite.body) and jumps(suite.body[-1], kinds)


def is_emptiness_test(test: cst.BaseExpression) -> bool:
    """``n == 0``, ``len(x) == 0``, ``not x``, ``x is None``: the test that
    skips an empty item (``if num_gt == 0: ... else: <the work>``), so its
    ``else`` runs on nearly every iteration."""
    subject: cst.BaseExpression | None = None
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        subject = test.expression
    elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        op = test.comparisons[0]
        right = op.comparator
        if isinstance(op.operator, cst.Equal) and isinstance(right, cst.Integer) and right.value == "0":
            subject = test.left
        elif isinstance(op.operator, cst.Is) and isinstance(right, cst.Name) and right.value == "None":
            subject = test.left
    if isinstance(subject, cst.Call) and isinstance(subject.func, cst.Name) and subject.func.value == "len":
        subject = subject.args[0].value if len(subject.args) == 1 else None
    return isinstance(subject, (cst.Name, cst.Attribute, cst.Subscript))


def is_eval_name(name: str) -> bool:
    tokens = name_tokens(name)
    return bool(tokens & EVAL_FUNCTION_TOKENS) and not tokens & _TRAIN_TOKENS


@dataclass(eq=False)
class LoopInfo:
    node: Loop
    scope: Scope
    parent: LoopInfo | None
    start: tuple[int, int]
    end: tuple[int, int]
    backward_calls: list[cst.Call] = field(default_factory=list)
    step_calls: list[cst.Call] = field(default_factory=list)
    model_calls: list[cst.Call] = field(default_factory=list)
    callees: set[cst.FunctionDef] = field(default_factory=set)
    grad_markers: list[cst.CSTNode] = field(default_factory=list)
    # Of ``model_calls``, those of a model whose forward needs autograd (_runs_grad_forward).
    grad_forwards: list[cst.Call] = field(default_factory=list)
    data_tokens: set[str] = field(default_factory=set)
    trainer_calls: bool = False  # an instance of another module's class whose ``__call__`` trains is called
    trains: bool = False
    calls_model: bool = False
    needs_grad: bool = False
    role: str | None = None
    is_batch_loop: bool = False

    def contains(self, pos: tuple[int, int]) -> bool:
        return self.start <= pos < self.end


@dataclass(eq=False)
class _ScopeFacts:
    backward_calls: list[cst.Call] = field(default_factory=list)
    step_calls: list[cst.Call] = field(default_factory=list)
    model_calls: list[cst.Call] = field(default_factory=list)
    grad_markers: list[cst.CSTNode] = field(default_factory=list)
    grad_forwards: list[cst.Call] = field(default_factory=list)
    mode_calls: list[tuple[tuple[int, int], cst.Call, str]] = field(default_factory=list)
    loops: list[LoopInfo] = field(default_factory=list)


@dataclass(frozen=True)
class ModeEvent:
    """A ``.train()``/``.eval()`` call, a training phase, or an opaque call
    that may change the mode, at ``pos`` in a scope."""

    pos: tuple[int, int]
    kind: str  # "train" | "eval" | "unknown" | "training-phase"
    node: cst.CSTNode
    receiver: str | None = None  # the module switched, as this scope spells it
    # Modules a training phase trains; "*" when it may train any.
    receivers: frozenset = frozenset()

    def trains_module(self, receiver: str) -> bool:
        return receiver in self.receivers or "*" in self.receivers


class _NameTokens(cst.CSTVisitor):
    """The name tokens of the names and strings under a node. A module-level
    class: one defined per call costs more than the walk (the class itself, and
    visit_fast's hook tables for each new class)."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.tokens.update(name_tokens(node.value))

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self.tokens.update(name_tokens(node.value.strip("'\"")))


class LoopAnalysis(cst.CSTVisitor):
    def __init__(
        self, wrapper: MetadataWrapper, names: ImportTable, calls: CallGraph, objects: ObjectTable, project=None
    ) -> None:
        super().__init__()
        self.project = project  # project/view.py's ProjectView, or None
        self.names = names
        self.calls = calls
        self.objects = objects
        self.parents = calls.parents
        self._loops: dict[cst.CSTNode, LoopInfo] = {}
        self.all: list[LoopInfo] = []
        self._scopes: dict[Scope, _ScopeFacts] = {}
        self._stack: list[tuple[Scope, list[LoopInfo]]] = [(wrapper.module, [])]
        self._scopes[wrapper.module] = _ScopeFacts()
        self._fn_memo: dict[tuple[str, cst.FunctionDef], bool] = {}
        self._kill_memo: dict[tuple[int, str], list[int]] = {}
        visit_fast(wrapper.module, self)
        for info in self.all:
            self._finish(info)
        self._per_iteration: dict[cst.FunctionDef, bool] = {}
        self._locals_memo: dict[cst.FunctionDef, set[str]] = {}
        self._parts_memo: dict[cst.CSTNode, bool] = {}
        self._events_memo: dict[Scope, list[ModeEvent]] = {}
        self._event_starts: dict[Scope, list] = {}  # positions of mode_events(scope), for bisection
        self._aliases_memo: dict[Scope, frozenset[tuple[str, str]]] = {}

    # == collection =========================================================
    def pos(self, node: cst.CSTNode) -> tuple[int, int]:
        return self.calls.pos(node)

    def end(self, node: cst.CSTNode) -> tuple[int, int]:
        return self.calls.end(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes[node] = _ScopeFacts()
        self._stack.append((node, []))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._stack.pop()

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def _enter_loop(self, node: Loop) -> None:
        scope, active = self._stack[-1]
        info = LoopInfo(node, scope, active[-1] if active else None, self.pos(node), self.end(node))
        iterable = node.iter if isinstance(node, cst.For) else node.test
        info.data_tokens = self._tokens_of(iterable)
        self._loops[node] = info
        self.all.append(info)
        self._scopes[scope].loops.append(info)
        active.append(info)

    def _leave_loop(self) -> None:
        self._stack[-1][1].pop()

    def visit_For(self, node: cst.For) -> None:
        self._enter_loop(node)

    def leave_For(self, original_node: cst.For) -> None:
        self._leave_loop()

    def visit_While(self, node: cst.While) -> None:
        self._enter_loop(node)

    def leave_While(self, original_node: cst.While) -> None:
        self._leave_loop()

    def _tokens_of(self, expr: cst.BaseExpression) -> set[str]:
        names = _NameTokens()
        visit_fast(expr, names)
        return names.tokens

    def _mark(self, attr: str, node: cst.CSTNode) -> None:
        scope, active = self._stack[-1]
        getattr(self._scopes[scope], attr).append(node)
        for info in active:
            getattr(info, attr).append(node)

    def visit_Call(self, node: cst.Call) -> None:
        o = self.objects
        scope, active = self._stack[-1]
        if o.is_backward_call(node):
            self._mark("backward_calls", node)
            self._mark("grad_markers", node)
        elif o.is_optimizer_step(node):
            self._mark("step_calls", node)
            self._mark("grad_markers", node)
        elif o.is_model_call(node):
            self._mark("model_calls", node)
            if self._runs_grad_forward(node, scope):
                self._mark("grad_markers", node)  # its forward runs ``autograd.grad`` (IDR's renderer)
                self._mark("grad_forwards", node)
        mode = o.mode_call(node)
        if mode is not None:
            self._scopes[scope].mode_calls.append((self.pos(node), node, mode))
        func = node.func
        qn = self.names.call_name(node) or ""
        if isinstance(func, cst.Attribute) and func.attr.value in _GRAD_HOOKS:
            if not (func.attr.value == "requires_grad_" and _first_arg_false(node)):
                self._mark("grad_markers", node)
        elif qn.startswith(("torch.autograd.functional", "captum", "torch.func.grad", "functorch")):
            self._mark("grad_markers", node)
        elif (context := context_mode(node, self.names)) is GradMode.ENABLED:
            self._mark("grad_markers", node)
        elif context is GradMode.DISABLED:
            pass  # ``torch.no_grad()`` turns grad off: not a need for it, whatever its name says
        else:
            callee = dotted_name(func)
            if callee and (
                name_tokens(callee.rsplit(".", 1)[-1]) & GRAD_NAME_TOKENS
                and not (self.project is not None and callee in self.project.array_helpers)
                or _attack_receiver(callee)
            ):
                self._mark("grad_markers", node)
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "requires_grad":
                if not (isinstance(arg.value, cst.Name) and arg.value.value == "False"):
                    self._mark("grad_markers", node)
        target = self.calls.resolve(node)
        if target is None and isinstance(func, cst.Name):
            # ``compute_loss(x, y)`` on an instance of a class whose ``__call__`` trains.
            through = o.trains_through_call(node)
            if through is True:
                for info in active:
                    info.trainer_calls = True
            elif isinstance(through, cst.FunctionDef):
                target = through
        if target is not None:
            for info in active:
                info.callees.add(target)

    def _runs_grad_forward(self, call: cst.Call, scope: Scope) -> bool:
        """``model(x)`` or ``model.forward(x)`` on a receiver the project
        says may be a model whose ``forward`` needs autograd
        (ProjectView.grad_forwards, project/grad_forwards.py)."""
        project = self.project
        if project is None or not project.grad_forwards:
            return False
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "forward":
            func = func.value
        receiver = dotted_name(func)
        if receiver is None:
            return False
        name = self.calls.scope_name(scope)
        return (name, receiver) in project.grad_forwards

    def visit_Attribute(self, node: cst.Attribute) -> None:
        # ``x.grad`` read while evaluating: saliency maps, adversarial examples.
        if node.attr.value in ("grad", "requires_grad") and not isinstance(self.parents.get(node), cst.Call):
            parent = self.parents.get(node)
            if node.attr.value == "requires_grad" and not isinstance(parent, cst.AssignTarget):
                return
            self._mark("grad_markers", node)

    # == derived facts ======================================================
    def _finish(self, info: LoopInfo) -> None:
        fns = info.callees
        info.trains = bool(info.backward_calls or info.step_calls or info.trainer_calls) or any(
            self.trains(f) for f in fns
        )
        info.calls_model = bool(info.model_calls) or any(self.calls_model(f) for f in fns)
        info.needs_grad = bool(info.grad_markers) or any(self.needs_grad(f) for f in fns)
        renders = False  # evaluates a model whose forward needs grad: no evaluation role, still a pass over data
        if info.trains:
            info.role = "train"
        elif (
            info.calls_model
            and (not info.needs_grad or info.grad_forwards)
            and not iterates_classes(info.node, info.data_tokens)  # per class of the task, not per batch
            and self._eval_evidence(info)
            and not (not any(self.calls_model(f) for f in fns) and chains_layers(info.node, info.model_calls))
        ):
            if info.needs_grad:
                renders = True
            else:
                info.role = "eval"
        info.is_batch_loop = info.trains or info.role == "eval" or renders or bool(info.data_tokens & DATA_TOKENS)

    def _eval_evidence(self, info: LoopInfo) -> bool:
        scope = info.scope
        if isinstance(scope, cst.FunctionDef) and self.eval_named(scope):
            return True
        if info.data_tokens & EVAL_DATA_TOKENS and not info.data_tokens & _TRAIN_TOKENS:
            return True
        if isinstance(scope, cst.FunctionDef) and self._iterates_eval_argument(scope, info):
            return True
        return _last_mode_before(self._scopes[scope].mode_calls, info.end) == "eval"

    def _iterates_eval_argument(self, fn: cst.FunctionDef, info: LoopInfo) -> bool:
        """The loop iterates a parameter of ``fn`` and every call in this
        module passes a validation/test loader for it:
        ``compute_accuracy(net, test_loader)`` once per epoch."""
        iterable = info.node.iter if isinstance(info.node, cst.For) else info.node.test
        params = {p for p in _params(fn) if mentions(iterable, p)}
        sites = self.calls.call_sites.get(fn, ())
        if not params or not sites or fn in self.calls.escapes:
            return False
        for call in sites:
            bound = [arg for arg, param in bound_params(call, fn) if param in params]
            if not bound:
                return False
            for arg in bound:
                tokens = self._tokens_of(arg.value)
                if not tokens & EVAL_DATA_TOKENS or tokens & _TRAIN_TOKENS:
                    return False
        return True

    @staticmethod
    def holds_comprehension(stmt: cst.CSTNode) -> bool:
        """``stmt`` holds a comprehension, generator expression or lambda."""
        visitor = _HoldsComprehension()
        visit_fast(stmt, visitor)
        return visitor.found

    def comprehension_is_eval(self, comp: cst.BaseExpression) -> list[cst.Call]:
        """The model calls of a comprehension or generator expression that
        evaluates (``sum(loss(model(x), y) for x, y in valid_dl)`` after
        ``model.eval()``), or [] when it is not one."""
        scope = self.scope_of(comp)
        facts = self._scopes.get(scope)
        if facts is None:
            return []
        start, end = self.pos(comp), self.end(comp)
        between = self.calls.between  # the lists are in source order
        model_calls = list(between(facts.model_calls, start, end))
        if not model_calls or between(facts.grad_markers, start, end):
            return []
        callees = [self.calls.resolve(c) for c in between(self.calls.calls_in.get(scope, []), start, end)]
        if any(f is not None and (self.trains(f) or self.needs_grad(f)) for f in callees):
            return []
        tokens: set[str] = set()
        comp_for = getattr(comp, "for_in", None)
        while comp_for is not None:
            tokens |= self._tokens_of(comp_for.iter)
            comp_for = comp_for.inner_for_in
        evidence = (isinstance(scope, cst.FunctionDef) and self.eval_named(scope)) or bool(
            tokens & EVAL_DATA_TOKENS and not tokens & _TRAIN_TOKENS
        )
        if not evidence:
            evidence = _last_mode_before(facts.mode_calls, start) == "eval"
        return model_calls if evidence else []

    def _fn_fact(self, key: str, fn: cst.FunctionDef) -> bool:
        memo = (key, fn)
        if memo in self._fn_memo:
            return self._fn_memo[memo]
        self._fn_memo[memo] = False  # recursion guard
        facts = self._scopes.get(fn)
        if facts is None:
            return False
        if key == "trains":
            direct = bool(facts.backward_calls or facts.step_calls)
        elif key == "steps":
            direct = bool(facts.step_calls)
        elif key == "model":
            direct = bool(facts.model_calls)
        else:
            direct = bool(facts.grad_markers)
        result = direct or any(self._fn_fact(key, f) for _, f in self.calls.callees(fn))
        self._fn_memo[memo] = result
        return result

    def eval_named(self, fn: cst.FunctionDef) -> bool:
        """``fn`` is named for evaluation (``validate``, ``predict``...) and is
        not part of a model's forward: ``_inference_forward`` called from
        ``forward`` runs in whatever mode the model's caller chose."""
        return is_eval_name(fn.name.value) and not self.serves_forward(fn)

    def serves_forward(self, fn: cst.FunctionDef) -> bool:
        """``fn`` is a model's ``forward`` or is called from one (in this module)."""
        seen: set[cst.FunctionDef] = set()
        todo = [fn]
        while todo:
            cur = todo.pop()
            if cur.name.value == "forward" and cur in self.calls.class_of:
                return True
            seen.add(cur)
            for call in self.calls.call_sites.get(cur, ()):
                caller = self.calls.scope_of_call(call)
                if isinstance(caller, cst.FunctionDef) and caller not in seen:
                    todo.append(caller)
        return False

    def trains(self, fn: cst.FunctionDef) -> bool:
        """A backward or optimizer step runs in ``fn`` or what it calls."""
        return self._fn_fact("trains", fn)

    def steps(self, fn: cst.FunctionDef) -> bool:
        """An optimizer step runs in ``fn`` or what it calls: it updates weights."""
        return self._fn_fact("steps", fn)

    def loop_steps(self, info: LoopInfo) -> bool:
        if info.step_calls or any(self.steps(f) for f in info.callees):
            return True
        if self.project is None or not self.project.callees:
            return False
        calls = self.calls.between(self.calls.calls_in.get(info.scope, []), info.start, info.end)
        return any(
            isinstance(c, cst.Call) and (facts := self.external_callee(c)) is not None and facts.steps for c in calls
        )

    def calls_model(self, fn: cst.FunctionDef) -> bool:
        return self._fn_fact("model", fn)

    def needs_grad(self, fn: cst.FunctionDef) -> bool:
        """``fn`` (or what it calls) needs gradients: backward, ``autograd.grad``,
        ``.grad`` reads, hooks, ``requires_grad_``, ``enable_grad``..."""
        return self._fn_fact("grad", fn)

    # == queries ===========================================================
    def info(self, loop: cst.CSTNode) -> LoopInfo | None:
        return self._loops.get(loop)

    def scope_loops(self, scope: Scope) -> list[LoopInfo]:
        facts = self._scopes.get(scope)
        return facts.loops if facts else []

    def scope_facts(self, scope: Scope) -> _ScopeFacts | None:
        return self._scopes.get(scope)

    def loop_of(self, node: cst.CSTNode) -> LoopInfo | None:
        """Innermost loop around ``node`` within its own function. A node in
        a loop's ``else`` or header counts as inside; callers that care check
        ``info.node.body``."""
        cur = self.parents.get(node)
        while cur is not None and not isinstance(cur, (cst.FunctionDef, cst.Module, cst.Lambda)):
            if cur in self._loops:
                return self._loops[cur]
            cur = self.parents.get(cur)
        return None

    def scope_of(self, node: cst.CSTNode) -> Scope:
        cur = self.parents.get(node)
        while cur is not None and not isinstance(cur, (cst.FunctionDef, cst.Module)):
            cur = self.parents.get(cur)
        return cur if cur is not None else self.calls.module

    def in_loop_body(self, node: cst.CSTNode, loop: LoopInfo) -> bool:
        """``node`` runs once per iteration of ``loop`` (not in its header or else)."""
        cur: cst.CSTNode | None = node
        while cur is not None and cur is not loop.node:
            parent = self.parents.get(cur)
            if parent is loop.node:
                return cur is loop.node.body
            cur = parent
        return False

    def per_iteration(self, fn: cst.FunctionDef) -> bool:
        """``fn`` runs once per batch: called in a batch loop (possibly through
        other functions), or a Lightning ``*_step`` hook."""
        if fn in self._per_iteration:
            return self._per_iteration[fn]
        self._per_iteration[fn] = False
        result = fn.name.value in ("training_step", "validation_step", "test_step", "predict_step") and (
            fn in self.calls.class_of
        )
        for call in self.calls.call_sites.get(fn, ()):
            if result:
                break
            loop = self.loop_of(call)
            while loop is not None and not result:
                result = loop.is_batch_loop
                loop = loop.parent
            if not result:
                scope = self.calls.scope_of_call(call)
                if isinstance(scope, cst.FunctionDef) and self.loop_of(call) is None:
                    result = self.per_iteration(scope)
        self._per_iteration[fn] = result
        return result

    def runs_repeatedly(self, fn: cst.FunctionDef, _seen: frozenset = frozenset()) -> bool:
        """Some call of ``fn`` in this module sits in a loop (any loop: an
        epoch loop over ``range(200)`` too), directly or through its callers."""
        if fn in _seen:
            return False
        for call in self.calls.call_sites.get(fn, ()):
            if self.loop_of(call) is not None:
                return True
            scope = self.calls.scope_of_call(call)
            if isinstance(scope, cst.FunctionDef) and self.runs_repeatedly(scope, _seen | {fn}):
                return True
        return False

    def training_guards(self, fn: cst.FunctionDef) -> frozenset[str]:
        """The parameters of ``fn`` that guard all its training: every
        backward, optimizer step, gradient read and call into a function that
        trains or needs gradients sits under ``if <param>:`` (the body, not
        the ``else``). ``iteration(epoch, loader, train=True)`` shared by
        ``train()`` and ``test()`` (BERT-pytorch) gives {"train"}; a function
        that trains nothing, or trains outside such a guard, gives {}."""
        facts = self._scopes.get(fn)
        if facts is None:
            return frozenset()
        needs: list[cst.CSTNode] = list(facts.grad_markers)
        for call in self.calls.calls_in.get(fn, ()):
            callee = self.calls.resolve(call)
            if callee is not None and (self.trains(callee) or self.needs_grad(callee)):
                needs.append(call)
        if not facts.backward_calls and not facts.step_calls:
            return frozenset()
        params = _params(fn)
        guards: set[str] | None = None
        for node in needs:
            found = self.guarding_params(node, fn, params)
            guards = found if guards is None else guards & found
            if not guards:
                return frozenset()
        return frozenset(guards or ())

    def guarding_params(self, node: cst.CSTNode, fn: cst.FunctionDef, params: set[str] | None = None) -> set[str]:
        """Parameters ``p`` with ``node`` inside the body of an ``if p:`` of
        ``fn``, and ``"!p"`` inside the body of an ``if not p:`` (a negated
        evaluation flag: ``if not cross_valid: loss.backward()``)."""
        params = _params(fn) if params is None else params
        found: set[str] = set()
        child, cur = node, self.parents.get(node)
        while cur is not None and cur is not fn:
            if isinstance(cur, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return set()  # a nested function: it runs whenever it is called
            if isinstance(cur, (cst.If, cst.IfExp)) and child is cur.body:
                found |= _flag_guards(cur.test, params)
            child, cur = cur, self.parents.get(cur)
        return found

    def carried_by_framework(self, key: str, stmt: cst.CSTNode) -> bool:
        """``self.outputs.append(x)`` in a LightningModule's ``training_step``,
        outside any loop of its own: Lightning calls the hook once per batch,
        so ``self.<attr>`` (not re-bound earlier in the hook) keeps the value
        across batches. Only classes that name a Lightning base count. In a
        loop of the hook's own (over the samples of the batch), only when the
        hook never gives ``self.<attr>`` a fresh value anywhere."""
        if not key.startswith("self."):
            return False
        fn = self.scope_of(stmt)
        if not isinstance(fn, cst.FunctionDef) or fn.name.value != "training_step":
            return False
        cls = self.calls.class_of.get(fn)
        if cls is None or not is_lightning_module(cls, self.names):
            return False
        if self.loop_of(stmt) is not None and _kills_in(fn, key):
            return False
        cur = stmt
        while cur is not fn:
            parent = self.parents.get(cur)
            if parent is None:
                return False
            if isinstance(parent, cst.IndentedBlock):
                for sib in parent.body:
                    if sib is cur:
                        break
                    if _kills(sib, key):
                        return False
            cur = parent
        return True

    def outer_loop(self, info: LoopInfo) -> bool:
        """Each iteration of ``info`` runs whole passes over data: it is named
        for epochs, folds, models, checkpoints, configurations or seeds, or
        runs a batch loop per iteration (nested, or in a function it calls)."""
        if info.data_tokens & _OUTER_LOOP_TOKENS:
            return True
        if isinstance(info.node, cst.For) and self._target_tokens(info.node.target) & _OUTER_LOOP_TOKENS:
            return True
        return self.runs_whole_passes(info)

    def runs_whole_passes(self, info: LoopInfo) -> bool:
        """``outer_loop`` by what ``info`` runs, not by its names: a batch
        loop nested in it or in a function it calls, or an object's pass."""
        for other in self.scope_loops(info.scope):
            if other is not info and other.is_batch_loop and info.contains(other.start):
                if not self._accumulates_for(other, info):
                    return True
        if any(self._runs_batch_loop(f, frozenset()) for f in self._unthrottled_callees(info)):
            return True
        return self._runs_object_pass(info)

    def _runs_object_pass(self, info: LoopInfo) -> bool:
        """``agent.collect_samples(n)`` in ``info``, not under a periodic
        test: a method that runs a whole pass over data wherever the project
        defines it for what ``agent`` holds (ProjectView.object_passes, a
        rollout in another module's class)."""
        project = self.project
        if project is None or not project.object_passes:
            return False
        scope = info.scope
        scope_name = self.calls.scope_name(scope)
        for call in self.calls.between(self.calls.calls_in.get(info.scope, []), info.start, info.end):
            func = call.func if isinstance(call, cst.Call) else None
            if not isinstance(func, cst.Attribute):
                continue
            receiver = dotted_name(func.value)
            if (
                receiver is not None
                and project.runs_pass(scope_name, receiver, func.attr.value)
                and not self._periodic(call, info.node)
            ):
                return True
        return False

    def _accumulates_for(self, inner: LoopInfo, outer: LoopInfo) -> bool:
        """``inner`` backpropagates micro-batches and steps no optimizer, and
        ``outer`` steps one after it (``for i in range(iter_size): ...
        loss.backward()`` then ``optimizer.step()``): an iteration of
        ``outer`` is one training step, not a pass over the data."""
        if not inner.backward_calls or inner.step_calls:
            return False
        return any(not inner.contains(self.pos(step)) for step in outer.step_calls)

    def _unthrottled_callees(self, info: LoopInfo) -> set[cst.FunctionDef]:
        """``info.callees`` less those it calls only under a periodic test
        (``if step % valid_step == 0: self.validate()``): a validation pass
        run every N steps does not make each iteration a whole pass."""
        if not info.callees:
            return info.callees
        called: set[cst.FunctionDef] = set()
        found: set[cst.FunctionDef] = set()
        for call in self.calls.between(self.calls.calls_in.get(info.scope, []), info.start, info.end):
            fn = self.calls.resolve(call)
            if fn is not None:
                called.add(fn)
                if fn not in found and not self._periodic(call, info.node):
                    found.add(fn)
        # A callee reached another way (an instance's ``__call__``) stays.
        return (found & info.callees) | (info.callees - called)

    def _periodic(self, node: cst.CSTNode, loop: Loop) -> bool:
        """``node`` sits in the body of an ``if`` whose test runs every N
        iterations (``x % N == 0``, possibly or-ed with ``x == 1``) inside ``loop``."""
        child, cur = node, self.parents.get(node)
        while cur is not None and cur is not loop:
            if isinstance(cur, cst.If) and child is cur.body and accumulation_divisor(cur.test) is not None:
                return True
            child, cur = cur, self.parents.get(cur)
        return False

    @staticmethod
    def _target_tokens(target: cst.BaseExpression) -> set[str]:
        return {tok for t in flat_targets(target) if isinstance(t, cst.Name) for tok in name_tokens(t.value)}

    def _runs_batch_loop(self, fn: cst.FunctionDef, seen: frozenset) -> bool:
        if fn in seen:
            return False
        # A loop that trains or iterates data (``for x, y in loader``), not one
        # that is a batch loop only by its function's name: ``crop_eval``'s
        # ``for i in range(n_h)`` over crops of one batch is part of that batch.
        if any(l.is_batch_loop and (l.trains or l.data_tokens & DATA_TOKENS) for l in self.scope_loops(fn)):
            return True
        return any(self._runs_batch_loop(f, seen | {fn}) for _, f in self.calls.callees(fn))

    def batch_loop_calling(self, fn: cst.FunctionDef, _seen: frozenset = frozenset()) -> LoopInfo | None:
        """A batch loop that calls ``fn`` on each iteration (through callers)."""
        if fn in _seen:
            return None
        for call in self.calls.call_sites.get(fn, ()):
            loop = self.loop_of(call)
            while loop is not None:
                if loop.is_batch_loop:
                    return loop
                loop = loop.parent
            scope = self.calls.scope_of_call(call)
            if isinstance(scope, cst.FunctionDef):
                found = self.batch_loop_calling(scope, _seen | {fn})
                if found is not None:
                    return found
        return None

    # -- what outlives an iteration --------------------------------------
    def carried_across(self, target: cst.BaseExpression | str, stmt: cst.CSTNode) -> LoopInfo | None:
        """The batch loop across whose iterations ``target`` (a name, or an
        attribute such as ``self.buf``) keeps the value written at ``stmt``.

        Walks out from the innermost loop: a loop that re-initialises the
        target earlier in the same iteration ends the search (nothing is
        carried); the first batch loop that does not is the answer. A
        statement in a function run once per batch carries ``self.x`` and
        module-level names across that batch loop.
        """
        key = target if isinstance(target, str) else dotted_name(target)
        if key is None:
            return None
        loop = self.loop_of(stmt)
        while loop is not None:
            if not self.in_loop_body(stmt, loop) or self._reinitialised(key, stmt, loop):
                return None
            if loop.is_batch_loop:
                return None if self._one_step_part(key, stmt, loop) else loop
            loop = loop.parent
        scope = self.scope_of(stmt)
        if isinstance(scope, cst.FunctionDef) and self._outlives_call(key, scope):
            return self.batch_loop_calling(scope)
        return None

    def _one_step_part(self, key: str, stmt: cst.CSTNode, loop: LoopInfo) -> bool:
        """``loop`` and the loops up to an enclosing one that re-initialises
        ``key`` count the parts of one training step (step_parts.py), and
        that enclosing loop backpropagates or steps in its own body: ``key``
        lives one training step, not across the batches."""
        while loop.role != "eval" and self._counted_part(loop):
            outer = loop.parent
            if outer is None or not self.in_loop_body(stmt, outer):
                return False
            if self._reinitialised(key, stmt, outer):
                return outer.trains and any(
                    self.loop_of(call) is outer for call in outer.backward_calls + outer.step_calls
                )
            loop = outer
        return False

    def _counted_part(self, loop: LoopInfo) -> bool:
        if loop.node not in self._parts_memo:
            self._parts_memo[loop.node] = counted_part(loop.node)
        return self._parts_memo[loop.node]

    def outlives_call(self, key: str, fn: cst.FunctionDef) -> bool:
        """``key`` (a name or ``self.x``) is not a local of ``fn``: what it
        holds survives the call."""
        return self._outlives_call(key, fn)

    def _outlives_call(self, key: str, fn: cst.FunctionDef) -> bool:
        head = key.split(".")[0]
        if head == "self" and "." in key:
            return True
        if fn not in self._locals_memo:
            self._locals_memo[fn] = _local_names(fn)
        return head not in self._locals_memo[fn]

    def _reinitialised(self, key: str, stmt: cst.CSTNode, loop: LoopInfo) -> bool:
        """``key`` is re-bound (not from itself) or cleared unconditionally
        before ``stmt`` in the same iteration of ``loop``."""
        cur = stmt
        while cur is not loop.node:
            parent = self.parents.get(cur)
            if parent is None:
                return False
            if isinstance(parent, (cst.IndentedBlock, cst.Module)):
                siblings = parent.body
                for sib in siblings:
                    if sib is cur:
                        break
                    if _kills(sib, key):
                        return True
            cur = parent
        return False

    # -- model mode timeline ----------------------------------------------
    def _switch_events(self, pos: tuple[int, int], call: cst.Call, mode: str) -> list[ModeEvent]:
        """A switch's events: one per module of the display a loop variable
        takes its values from (``[x.eval() for x in (net, head)]``)."""
        receiver = call.func.value  # type: ignore[attr-defined]
        items = literal_items(receiver, self.calls.parents) if isinstance(receiver, cst.Name) else None
        if items:
            return [ModeEvent(pos, mode, call, dotted_name(item)) for item in items]
        return [ModeEvent(pos, mode, call, dotted_name(receiver))]

    def mode_events(self, scope: Scope) -> list[ModeEvent]:
        """``.train()``/``.eval()`` calls, training phases and opaque calls
        that may flip the mode, in source order of ``scope``. A call into a
        function of this module contributes that function's events, with
        module names translated to the caller's arguments."""
        if scope in self._events_memo:
            return self._events_memo[scope]
        self._events_memo[scope] = []  # recursion guard
        facts = self._scopes.get(scope)
        if facts is None:
            return []
        events = [e for p, n, m in facts.mode_calls for e in self._switch_events(p, n, m)]
        for info in facts.loops:
            if self.loop_steps(info) and (info.parent is None or not self.loop_steps(info.parent) or info.step_calls):
                events.append(ModeEvent(info.start, "training-phase", info.node, None, self._trained_by(info)))
        mode_nodes = {id(n) for _, n, _ in facts.mode_calls}
        for call in self.calls.calls_in.get(scope, ()):
            if id(call) in mode_nodes:
                continue
            fn = self.calls.resolve(call)
            external = self.external_callee(call) if fn is None else None
            if external is not None:
                events += self._external_events(call, external)
            elif fn is not None:
                sub = self.mode_events(fn) if fn is not scope else []
                if sub and self.objects.fresh_factory(fn):
                    # ``model = get_model(p)``: its switches of the models it builds
                    # are on a CPU-only path (ObjectTable.fresh_factory); the
                    # caller reads what it returns as built in train mode.
                    own = _params(fn)
                    sub = [e for e in sub if e.receiver is None or e.receiver.split(".")[0] in own]
                if sub:
                    sub = self._taken_by(call, fn, sub)
                line, col = self.pos(call)
                for i, e in enumerate(sub):
                    receiver = self.map_receiver(call, fn, e.receiver) if e.receiver else None
                    receivers = frozenset(self.map_receiver(call, fn, r) or "*" for r in e.receivers)
                    events.append(ModeEvent((line, col + 1 + i), e.kind, call, receiver, receivers))
                if self.steps(fn) and not any(e.kind == "training-phase" for e in sub):
                    events.append(ModeEvent((line, col), "training-phase", call, None, frozenset({"*"})))
            elif (
                _may_set_mode(call)
                and not (self.names.call_name(call) or "").startswith("torch")
                and not self._quiet_apply(call, scope)
            ):
                events.append(ModeEvent(self.pos(call), "unknown", call))
            elif (self.names.call_name(call) or "").endswith(("Module.train", "Module.eval")):
                # ``nn.Module.train(model)``: the unbound method, on its argument
                events.append(ModeEvent(self.pos(call), "unknown", call))
        events.sort(key=lambda e: e.pos)
        self._events_memo[scope] = events
        return events

    def _quiet_apply(self, call: cst.Call, scope: Scope) -> bool:
        """``model.apply(weights_init)`` where ``weights_init`` is a function
        that switches no mode: of this module (no ``.eval()``/``.train()``
        nor unknown switch among its events), or of another module of the
        project (ProjectView.quiet_applied) and not bound in ``scope``."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "apply" and len(call.args) == 1):
            return False
        arg = call.args[0]
        if arg.keyword is not None or arg.star or not isinstance(arg.value, cst.Name):
            return False
        name = arg.value.value
        defs = self.calls.visible_functions(name, scope)
        if defs:
            return len(defs) == 1 and not any(e.kind in ("eval", "train", "unknown") for e in self.mode_events(defs[0]))
        if self.project is None or name not in self.project.quiet_applied:
            return False
        if isinstance(scope, cst.FunctionDef):
            if scope not in self._locals_memo:
                self._locals_memo[scope] = _local_names(scope)
            return name not in self._locals_memo[scope]
        return True

    def _taken_by(self, call: cst.Call, fn: cst.FunctionDef, events: list[ModeEvent]) -> list[ModeEvent]:
        """The events of ``fn`` that ``call`` may run: ``net_mode(train=False)``
        runs only the ``else`` of ``if train: net.train() else: net.eval()``.
        A branch is left out only when its test is a parameter (or ``not``
        one) that the call binds to the literal ``True``/``False`` and ``fn``
        never rebinds."""
        literals: dict[str, bool] = {}
        for arg, param in bound_params(call, fn):
            value = arg.value
            if isinstance(value, cst.Name) and value.value in ("True", "False"):
                literals[param] = value.value == "True"
        if not literals:
            return events
        rebound = _assigned_names(fn)
        literals = {p: v for p, v in literals.items() if p not in rebound}
        return [e for e in events if not self._branch_not_taken(e.node, fn, literals)] if literals else events

    def _branch_not_taken(self, node: cst.CSTNode, fn: cst.FunctionDef, literals: dict[str, bool]) -> bool:
        child, cur = node, self.parents.get(node)
        while cur is not None and cur is not fn:
            if isinstance(cur, cst.If) and child is not cur.test:
                test = cur.test
                name = test.value if isinstance(test, cst.Name) else _negated_name(test)
                if name in literals:
                    holds = literals[name] if isinstance(test, cst.Name) else not literals[name]
                    if holds != (child is cur.body):
                        return True
            child, cur = cur, self.parents.get(cur)
        return False

    def external_callee(self, call: cst.Call):
        """The summary facts (project/summary.py's FunctionFacts) of the
        function of another project module that ``call`` runs, when it
        switches a mode or steps an optimizer; None otherwise."""
        if self.project is None or not self.project.callees:
            return None
        written = dotted_name(call.func)
        return self.project.callee(written) if written else None

    def _external_events(self, call: cst.Call, facts) -> list[ModeEvent]:
        """``evaluate(model, loader)`` of ``engine.py``: its switches, with
        its parameters translated to this call's arguments (as mode_events
        does for a function of this module)."""
        line, col = self.pos(call)
        if facts.opaque:
            return [ModeEvent((line, col), "unknown", call)]
        out = []
        for i, (receiver, kind) in enumerate(facts.switches):
            pos = (line, col + 1 + i)
            if kind == "training-phase":
                out.append(ModeEvent(pos, kind, call, None, frozenset({"*"})))
            else:
                out.append(ModeEvent(pos, kind, call, self._map_external(call, facts, receiver)))
        if facts.steps and not any(kind == "training-phase" for _, kind in facts.switches):
            out.append(ModeEvent((line, col + 1 + len(facts.switches)), "training-phase", call, None, frozenset({"*"})))
        return out

    def _map_external(self, call: cst.Call, facts, receiver: str) -> str | None:
        """``model`` inside ``engine.evaluate(model)`` is ``net`` at
        ``evaluate(net)``; None for what the call does not hand over."""
        head, dot, rest = receiver.partition(".")
        arg = None
        if head in facts.params:
            index = facts.params.index(head)
            positional = [a for a in call.args if a.keyword is None]
            if any(a.star for a in positional[: index + 1]):
                return None
            if index < len(positional):
                arg = positional[index]
        if arg is None and (head in facts.params or head in facts.kwonly):
            arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == head), None)
        if arg is None:
            return None
        base = dotted_name(arg.value)
        return base + dot + rest if base else None

    def _trained_by(self, info: LoopInfo) -> frozenset:
        names = {dotted_name(_module_of(c.func)) for c in info.model_calls}
        for call in self.calls.between(self.calls.calls_in.get(info.scope, []), info.start, info.end):
            if self.calls.resolve(call) in info.callees:
                names.update(dotted_name(a.value) for a in call.args)
                names.add("*")
        return frozenset(n for n in names if n)

    def map_receiver(self, call: cst.Call, fn: cst.FunctionDef, receiver: str | None) -> str | None:
        """``model`` inside ``evaluate(model)`` is ``net`` at ``evaluate(net)``."""
        if receiver is None:
            return None
        head, dot, rest = receiver.partition(".")
        if head == "self":
            via_self = isinstance(call.func, cst.Attribute) and dotted_name(call.func.value) == "self"
            return receiver if via_self else None
        params = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
        if head in params:
            for arg, param in bound_params(call, fn):
                if param == head:
                    base = dotted_name(arg.value)
                    return base + dot + rest if base else None
            return None
        return receiver

    def mode_before(
        self,
        node: cst.CSTNode,
        receivers: frozenset,
        trained: bool = False,
        depth: int = 0,
        scope_evals: bool = False,
    ) -> str:
        """The mode the modules ``receivers`` are in when ``node`` runs:

        - ``"eval"``: the last switch before it was ``.eval()``;
        - ``"train-trained"``: the last switch was ``.train()`` and a training
          phase of these modules ran since (the classic missing ``.eval()``);
        - ``"train-fresh"``: ``.train()`` right before, on purpose
          (MC dropout, batch-norm recalibration);
        - ``"default-trained"`` / ``"default-fresh"``: never switched since
          being built in train mode here, with or without training since;
        - ``"unknown"`` otherwise.

        Walks back through the statement order of the scope, around enclosing
        loops (the previous iteration's tail), then into callers.
        ``scope_evals``: a caller in another module that hands a model in a
        mode it cannot tell, from a scope that evaluates (Caller.eval_scope),
        counts as "eval" (MEM201's evidence of evaluation only).
        """
        scope = self.scope_of(node)
        events = self.mode_events(scope)
        starts = self._event_starts.get(scope)
        if starts is None or len(starts) != len(events):
            starts = self._event_starts[scope] = [e.pos for e in events]
        start, end = self.pos(node), self.end(node)
        # Ranges of ``events`` (in source order) to read backwards, found by
        # bisection and read lazily: a query stops at the switch it meets first.
        ranges: list[tuple[tuple[int, int], tuple[int, int]]] = []
        cs, ce = start, end
        loop = self.loop_of(node)
        while loop is not None:
            ranges += [(loop.start, cs), (ce, loop.end)]
            cs, ce = loop.start, loop.end
            loop = loop.parent
        ranges.append(((-1, -1), cs))
        seq = (
            events[k] for lo, hi in ranges for k in range(bisect_left(starts, hi) - 1, bisect_left(starts, lo) - 1, -1)
        )
        for e in seq:
            if e.kind == "training-phase":
                trained = trained or any(e.trains_module(r) for r in receivers)
                continue
            if e.kind == "unknown":
                return "unknown"
            if e.receiver is not None and e.receiver not in receivers:
                if all(r.startswith(e.receiver + ".") for r in receivers):
                    pass  # ``model.eval()`` switches ``model.backbone`` too
                elif any(related(e.receiver, r, self._aliases(scope)) for r in receivers):
                    return "unknown"  # ``model_without_ddp.eval()``, ``model.head.train()``
                else:
                    continue
            if e.receiver is None:
                return "unknown"
            if e.kind == "eval":
                return "eval"
            if e.kind == "train":
                return "train-trained" if trained else "train-fresh"
            return "unknown"
        if isinstance(scope, cst.FunctionDef):
            local = _local_names(scope) - _params(scope)
            if all(r.split(".")[0] in local for r in receivers):
                return self._default_mode(receivers, scope, trained)
            sites = self.calls.call_sites.get(scope, [])
            external = self.external_modes(scope, receivers, scope_evals)
            if not sites and not external and not trained and scope in self.calls.class_of:
                return self._attribute_mode(receivers, self.calls.class_of[scope], scope)
            if (not sites and not external) or scope in self.calls.escapes or depth > 3:
                return "unknown"
            results = set()
            for site in sites:
                mapped = frozenset(self.map_receiver(site, scope, r) or "?" for r in receivers)
                if "?" in mapped:
                    return "unknown"
                results.add(self.mode_before(site, mapped, trained, depth + 1, scope_evals))
            for _caller, state in external:
                results.add("train-trained" if state == "train-fresh" and trained else state)
            return results.pop() if len(results) == 1 else "unknown"
        return self._default_mode(receivers, scope, trained)

    def _attribute_mode(self, receivers: frozenset, cls: cst.ClassDef, method: cst.FunctionDef) -> str:
        """A method entered from outside its class (StarGAN's
        ``Solver.test``, called from main.py) running ``self.G``: when
        ``G`` is a model the class builds fresh and nothing ever switches
        its mode (no method of the class, no code of the module or, per the
        project view, of another module), it is in train mode whenever a
        method runs: "default-fresh" (no training seen on the way here; a
        preview inside a training loop stays unknown). Only plain classes
        (no base but ``object``, no subclass here): a ``model.eval()`` on an
        ``nn.Module`` switches its children, a base class may switch them."""
        attrs = set()
        for r in receivers:
            head, _, rest = r.partition(".")
            if head != "self" or not rest:
                return "unknown"
            attrs.add(rest.split(".")[0])
        if not self._plain_unsubclassed(cls):
            return "unknown"
        if self.project is not None and attrs & set(self.project.switched_attrs):
            return "unknown"
        classes = frozenset(self.project.model_classes) if self.project is not None else frozenset()
        if not all(self.objects.built_in_train_mode(f"self.{a}", method, classes) for a in attrs):
            return "unknown"
        start, end = self.pos(cls), self.end(cls)
        for scope in self._scopes:
            if not (isinstance(scope, cst.FunctionDef) and start <= self.pos(scope) < end):
                continue
            for e in self.mode_events(scope):
                if e.kind not in ("eval", "train", "unknown"):
                    continue
                parts = (e.receiver or "").split(".")
                if e.receiver is None or parts[0] != "self" or len(parts) == 1 or parts[1] in attrs:
                    return "unknown"  # the class switches it, or something it may alias
        # Outside the class, in this module: ``solver.G.eval()``, ``evaluate(solver.G)``.
        for calls in self.calls.calls_in.values():
            for call in calls:
                if start <= self.pos(call) < end:
                    continue
                handed = [dotted_name(a.value) for a in call.args]
                func = call.func
                if isinstance(func, cst.Attribute) and (func.attr.value in ("eval", "train") or _may_set_mode(call)):
                    handed.append(dotted_name(func.value))
                for name in handed:
                    parts = (name or "").split(".")
                    if parts[0] != "self" and attrs.intersection(parts[1:]):
                        return "unknown"
        return "default-fresh"

    def _plain_unsubclassed(self, cls: cst.ClassDef) -> bool:
        if cls.keywords or any(dotted_name(b.value) != "object" for b in cls.bases):
            return False
        name = cls.name.value
        for other in self.calls.module.body:
            if isinstance(other, cst.ClassDef) and any(dotted_name(b.value) == name for b in other.bases):
                return False
        return True

    def external_modes(
        self, fn: cst.FunctionDef, receivers: frozenset, scope_evals: bool = False
    ) -> list[tuple[object, str]]:
        """(caller, mode) for each call of the module-level function ``fn``
        from another module of the project (project/view.py's Caller.modes):
        the mode the models it hands to the parameters named by
        ``receivers`` are in there; "unknown" for a receiver that is not a
        parameter, or handed in a mode the caller's module cannot tell."""
        if self.project is None or fn in self.calls.class_of or self.calls.owner.get(fn) is not self.calls.module:
            return []
        callers = self.project.callers_of(fn.name.value)
        if not callers:
            return []
        positional = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)]
        keyword_only = {p.name.value for p in fn.params.kwonly_params}
        out = []
        for caller in callers:
            states = set()
            for r in receivers:
                head = r.split(".")[0]
                if head in positional:
                    states.add(caller.mode_of(positional.index(head), head))
                elif head in keyword_only:
                    states.add(caller.mode_of(None, head))
                else:
                    states.add("unknown")
            state = states.pop() if len(states) == 1 else "unknown"
            if scope_evals and state == "unknown" and caller.eval_scope:
                state = "eval"  # ``vis()``: ``self.model.eval()``, then the helper on ``model``
            out.append((caller, state))
        return out

    def _aliases(self, scope: Scope) -> frozenset[tuple[str, str]]:
        if scope not in self._aliases_memo:
            self._aliases_memo[scope] = alias_pairs(scope)
        return self._aliases_memo[scope]

    def _default_mode(self, receivers: frozenset, scope: Scope, trained: bool) -> str:
        if all(self.objects.built_in_train_mode(r, scope) for r in receivers):
            return "default-trained" if trained else "default-fresh"
        return "unknown"

    def enclosing_loops(self, node: cst.CSTNode) -> list[LoopInfo]:
        out = []
        loop = self.loop_of(node)
        while loop is not None:
            out.append(loop)
            loop = loop.parent
        return out


def _module_of(func: cst.BaseExpression) -> cst.BaseExpression:
    """``model`` for ``model.forward``."""
    if isinstance(func, cst.Attribute) and func.attr.value in ("forward", "__call__"):
        return func.value
    return func


def _first_arg_false(call: cst.Call) -> bool:
    return bool(call.args) and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == "False"


# Words naming what a function builds or reports when it is not a model.
_NOT_A_MODEL = frozenset(
    {
        "transform",
        "transforms",
        "dataset",
        "datasets",
        "loader",
        "dataloader",
        "sampler",
        "metric",
        "metrics",
        "log",
        "logger",
        "print",
        "csv",
        "split",
    }
)


def _may_set_mode(call: cst.Call) -> bool:
    """An unknown call that may switch a model's mode: ``set_eval_mode(m)``,
    ``model.apply(fn)``, ``enable_dropout(model)``."""
    name = dotted_name(call.func) or ""
    last = name.rsplit(".", 1)[-1]
    if last[:1].isupper():
        return False  # a constructor: ``nn.Dropout(0.5)``
    tokens = name_tokens(last)
    if tokens & _NOT_A_MODEL:
        return False  # ``build_eval_transform(384)``, ``make_train_loader(cfg)``
    return (
        bool(tokens & {"eval", "train", "mode", "dropout", "bn", "batchnorm", "freeze", "unfreeze"}) or last == "apply"
    )


def _targets(stmt: cst.BaseSmallStatement) -> Iterable[tuple[cst.BaseExpression, cst.BaseExpression | None]]:
    if isinstance(stmt, cst.Assign):
        for t in stmt.targets:
            yield t.target, stmt.value
    elif isinstance(stmt, cst.AnnAssign) and stmt.value is not None:
        yield stmt.target, stmt.value


def _kills(stmt: cst.CSTNode, key: str) -> bool:
    """``stmt`` unconditionally gives ``key`` a fresh value: ``total = 0``,
    ``outs = []``, ``outs.clear()``, ``del outs[:]``; also inside ``with``."""
    if isinstance(stmt, cst.With):
        return any(_kills(s, key) for s in stmt.body.body) if isinstance(stmt.body, cst.IndentedBlock) else False
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        for target, value in _targets(small):
            for t in flat_targets(target):
                if dotted_name(t) == key and value is not None and not mentions(value, key):
                    return True
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            func = small.value.func
            if isinstance(func, cst.Attribute) and func.attr.value == "clear" and dotted_name(func.value) == key:
                return True
        if isinstance(small, cst.Del):
            t = small.target
            if isinstance(t, cst.Subscript) and dotted_name(t.value) == key:
                return True
    return False


class _HoldsComprehension(cst.CSTVisitor):
    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.GeneratorExp, cst.ListComp, cst.SetComp, cst.DictComp, cst.Lambda)):
            self.found = True
        return not self.found


def _kills_in(fn: cst.FunctionDef, key: str) -> bool:
    """Some statement of ``fn`` (outside nested functions) gives ``key`` a fresh value."""
    visitor = _Kills(fn, key)
    visit_fast(fn, visitor)
    return visitor.found


class _Kills(cst.CSTVisitor):
    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, fn: cst.FunctionDef, key: str) -> None:
        super().__init__()
        self.fn = fn
        self.key = key
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.found or (isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and node is not self.fn):
            return False
        if isinstance(node, (cst.SimpleStatementLine, cst.With)) and _kills(node, self.key):
            self.found = True
        return True


def local_names(fn: cst.FunctionDef) -> set[str]:
    """Names local to ``fn`` (see ``_local_names``)."""
    return _local_names(fn)


class _LocalNames(OwnScopeVisitor):
    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, fn: cst.FunctionDef) -> None:
        super().__init__()
        self.own = fn
        self.local = set(_params(fn))
        self.declared: set[str] = set()

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.local.update(t.value for t in flat_targets(node.target) if isinstance(t, cst.Name))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.local.add(node.target.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.local.add(node.target.value)

    def visit_For(self, node: cst.For) -> None:
        self.local.update(t.value for t in flat_targets(node.target) if isinstance(t, cst.Name))

    def visit_Global(self, node: cst.Global) -> None:
        self.declared.update(n.name.value for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.declared.update(n.name.value for n in node.names)


def _assigned_names(fn: cst.FunctionDef) -> set[str]:
    """Names ``fn`` binds in its body (its parameters only when rebound)."""
    visitor = _LocalNames(fn)
    visitor.local = set()
    visit_fast(fn, visitor)
    return visitor.local


def _local_names(fn: cst.FunctionDef) -> set[str]:
    """Names local to ``fn``: parameters and names it binds, minus those it
    declares ``global``/``nonlocal``."""
    visitor = _LocalNames(fn)
    visit_fast(fn, visitor)
    return visitor.local - visitor.declared


def _params(fn: cst.FunctionDef) -> set[str]:
    p = fn.params
    names = {x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)}
    for star in (p.star_arg, p.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    return names


def _flag_guards(test: cst.BaseExpression, params: set[str]) -> set[str]:
    """The flags that hold wherever ``test`` is true: ``p`` for ``p``, ``"!p"``
    for ``not p``, and those of each side of an ``and`` (``if not
    is_validate and args.fp16:`` holds ``"!is_validate"``)."""
    if isinstance(test, cst.Name) and test.value in params:
        return {test.value}
    negated = _negated_name(test)
    if negated in params:
        return {"!" + negated}  # type: ignore[operator]
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _flag_guards(test.left, params) | _flag_guards(test.right, params)
    return set()


def _negated_name(test: cst.BaseExpression) -> str | None:
    """``p`` of ``not p``."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = test.expression
        if isinstance(inner, cst.Name) and not inner.lpar:
            return inner.value
    return None
