"""The training verbs of a module, in the order they run: zero_grad, backward,
optimizer step, GradScaler update/unscale_, scheduler step, gradient clipping.

API (through ``facts.verbs``):

- ``verbs``: every :class:`Verb`, in textual order; ``verb.path`` is the chain
  of compound statements (``(node, field)``: ``(if_node, "body")``...) from the
  function (or module) down to the statement that holds the call.
- ``in_loop(loop)`` / ``in_iteration(loop)``: verbs anywhere in a loop body /
  those whose innermost loop is ``loop``; ``in_region(region)``: verbs whose
  innermost loop, or else function, is ``region``.
- ``region(verb)``: the innermost loop of a verb, else its function or module.
- ``conditions(verb, since)``: the branches (``if``, ``except``, nested loops)
  a verb sits under below ``since``; ``dominates(a, b)``: ``a`` runs whenever
  ``b`` runs in the same iteration, and before it; ``follows(a, b)``: ``b``
  runs after ``a`` whenever ``a`` runs; ``co_occur(a, b)``: ``a`` then ``b``
  run in one iteration for some value of a counter (``if i % n == 0:`` and
  ``if i % m == 0:``).
- ``HELPER_STEP`` verbs: a call of another project module's function that
  only steps the optimizer it is handed (with the project view only);
  ``HELPER_ZERO_GRAD``: one that may clear what it is handed, or an
  inherited method of another module's class that may clear ``self.<attr>``.
- ``reached(verb)``: verbs in local functions the call of a ``CALL`` verb
  reaches (``train(epoch)`` -> the steps inside ``train``).
- ``accumulation_divisor(if_node)``: ``N`` for ``if (i + 1) % N == 0:``.
- ``pairs(zero, step)``: True/None/False: a zero_grad clears the gradients
  of the optimizer a step updates / cannot tell / clearly another one.
- ``scaler_disabled(text, scope)``: the scaler was built with ``enabled=False``.

Calls inside ``lambda`` are not recorded (they run when the lambda is called),
and nested functions are their own scope.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field

import libcst as cst

from memlint.analysis.scope.bindings import Bindings, parameters_owners, parameters_owners_in
from memlint.analysis.scope.names import ImportTable, dotted_name
from memlint.analysis.scope.objects import ObjectTable
from memlint.parse.traversal import visit_fast
from memlint.vocabulary.kinds import Kind, guess_kind_from_name

Scope = cst.FunctionDef | cst.Module
Loop = cst.For | cst.While

CLIP_FUNCTIONS = frozenset(
    {
        "torch.nn.utils.clip_grad_norm_",
        "torch.nn.utils.clip_grad_norm",
        "torch.nn.utils.clip_grad_value_",
        "torch.nn.utils.clip_grad.clip_grad_norm_",
        "torch.nn.utils.clip_grad.clip_grad_value_",
    }
)
# ``accelerator.backward(loss)``, ``engine.backward(loss)``: frameworks that
# scale, accumulate and unscale on their own.
_FRAMEWORK_HINTS = ("accelerator", "engine", "fabric", "deepspeed", "trainer", "model", "self")


class VerbKind(enum.Enum):
    ZERO_GRAD = "zero_grad"
    BACKWARD = "backward"
    STEP = "step"
    SCALE = "scale"
    UPDATE = "update"
    UNSCALE = "unscale"
    SCHED_STEP = "sched_step"
    CLIP = "clip"
    CALL = "call"  # a call of a function defined in this module
    # ``utils.optimizer_step(opt)``: a function of another project module that
    # only steps the optimizer it is handed (project/step_helpers.py). Its own
    # kind: a rule opts in (MEM304), since a fix written for ``opt.step()``
    # must not rewrite the helper's call.
    HELPER_STEP = "helper_step"
    # ``utils.train_step(model, opt, batch)``: a function of another project
    # module whose verbs run in a known order once per call (summary
    # FunctionFacts.sequence). Its verbs ride on it (``Verb.foreign``) and
    # only ``inlined_verbs.inlined`` lays them out at the call (MEM301,
    # MEM303), so no other rule mistakes the call for a verb of its own.
    PROJECT_CALL = "project_call"
    # ``trades_loss(model, x, y, optimizer)`` of another project module, or
    # ``self.standard_loss(x, y)`` inherited from a project class of another
    # module, whose code calls ``.zero_grad()`` on what the call hands over
    # (``target``) under a branch or not (project/zeroed_grads.py). Its own
    # kind: a clear that may run, read by MEM304 only (no fix moves it).
    HELPER_ZERO_GRAD = "helper_zero_grad"


@dataclass(eq=False)
class Verb:
    kind: VerbKind
    call: cst.CSTNode  # the Call (or the Assign/Del statement for ``p.grad = None``)
    line: cst.SimpleStatementLine | None  # None in a compound statement's header
    scope: Scope
    path: tuple[tuple[cst.CSTNode, str], ...]
    index: int
    # the optimizer (ZERO_GRAD/STEP/UNSCALE), scheduler (SCHED_STEP) or
    # module (ZERO_GRAD) acted on, as code
    target: str | None = None
    target_kind: Kind | None = None
    scaler: str | None = None  # scaled backward, scaler.step/update/unscale_/scale
    loss: cst.BaseExpression | None = None  # BACKWARD: the tensor backpropagated
    framework: bool = False  # BACKWARD by accelerate/DeepSpeed/Lightning
    closure: bool = False  # STEP with a closure (LBFGS)
    callee: cst.FunctionDef | None = None  # CALL
    loops: tuple[Loop, ...] = field(default=())
    # STEP by a function of another project module (``utils.optimizer_step(opt)``):
    # where it steps, ``utils.py:3``.
    helper: str = ""
    # A copy of a local function's verb read at its call (inlined_verbs.py):
    # the outermost call of the region it was inlined into.
    via: Verb | None = None
    # PROJECT_CALL: the callee's verbs as they act at the call (each ``call``
    # is the call, ``target`` what the call hands over, ``helper`` where the
    # verb is written: ``utils.py:7``).
    foreign: tuple[Verb, ...] = ()

    @property
    def loop(self) -> Loop | None:
        return self.loops[-1] if self.loops else None


class _Jumps(cst.CSTVisitor):
    """Finds a ``break``/``continue``/``return``/``raise`` outside nested
    functions (one instance across several subtrees: the first one counts)."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.Break, cst.Continue, cst.Return, cst.Raise)):
            self.found = True
        return not self.found and not isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef))


class TrainingVerbs(cst.CSTVisitor):
    def __init__(
        self, module: cst.Module, names: ImportTable, objects: ObjectTable, bindings: Bindings, calls, project=None
    ) -> None:
        super().__init__()
        self.project = project  # ProjectView or None: step helpers of other modules
        self.names = names
        self.objects = objects
        self.bindings = bindings
        self._calls = calls
        self._module = module
        self.verbs: list[Verb] = []
        self._scope: list[Scope] = [module]
        self._path: list[tuple[cst.CSTNode, str]] = []
        self._saved: list[list[tuple[cst.CSTNode, str]]] = []
        self._line: list[cst.SimpleStatementLine | None] = [None]
        self._lambda = 0
        self._owners: list[cst.CSTNode] = []
        self._elifs: list[bool] = []
        self._blocks: list[bool] = []
        visit_fast(module, self)
        self._by_scope: dict[object, list[Verb]] = {}
        for v in self.verbs:
            self._by_scope.setdefault(v.scope, []).append(v)

    # == traversal ===========================================================
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scope.append(node)
        self._saved.append(self._path)
        self._path = []
        self._line.append(None)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scope.pop()
        self._path = self._saved.pop()
        self._line.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._lambda += 1

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self._lambda -= 1

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._line.append(node)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self._line.pop()

    # The branch of each compound statement a verb runs in. ``visit_fast``
    # calls no attribute visitors (``visit_If_body``), so a block's branch is
    # found from the compound statement that owns it.
    def _own(self, node: cst.CSTNode) -> None:
        self._owners.append(node)

    def _disown(self, node: cst.CSTNode) -> None:
        self._owners.pop()

    visit_For = visit_While = visit_With = visit_Try = _own  # type: ignore[assignment]
    visit_ExceptHandler = visit_Else = visit_Finally = _own  # type: ignore[assignment]
    leave_For = leave_While = leave_With = leave_Try = _disown  # type: ignore[assignment]
    leave_ExceptHandler = leave_Else = leave_Finally = _disown  # type: ignore[assignment]

    def visit_If(self, node: cst.If) -> None:
        # ``elif``: an ``if`` in the ``orelse`` of the ``if`` around it.
        outer = self._owners[-1] if self._owners else None
        is_elif = isinstance(outer, cst.If) and outer.orelse is node
        if is_elif:
            self._path.append((outer, "orelse"))  # type: ignore[arg-type]
        self._elifs.append(is_elif)
        self._owners.append(node)

    def leave_If(self, original_node: cst.If) -> None:
        self._owners.pop()
        if self._elifs.pop():
            self._path.pop()

    def _enter_block(self, block: cst.CSTNode) -> None:
        entry = self._branch(block)
        self._blocks.append(entry is not None)
        if entry is not None:
            self._path.append(entry)

    def _leave_block(self, block: cst.CSTNode) -> None:
        if self._blocks.pop():
            self._path.pop()

    visit_IndentedBlock = visit_SimpleStatementSuite = _enter_block  # type: ignore[assignment]
    leave_IndentedBlock = leave_SimpleStatementSuite = _leave_block  # type: ignore[assignment]

    def _branch(self, block: cst.CSTNode) -> tuple[cst.CSTNode, str] | None:
        if not self._owners:
            return None
        owner = self._owners[-1]
        if getattr(owner, "body", None) is not block:
            return None
        if isinstance(owner, (cst.If, cst.For, cst.While, cst.With, cst.Try)):
            return (owner, "body")
        if len(self._owners) >= 2:
            outer = self._owners[-2]
            field_name = {cst.Else: "orelse", cst.ExceptHandler: "handlers", cst.Finally: "finalbody"}.get(type(owner))
            if field_name is not None:
                return (outer, field_name)
        return None

    # == classification ======================================================
    def _add(self, kind: VerbKind, node: cst.CSTNode, **kw) -> None:
        if self._lambda:
            return
        path = tuple(self._path)
        loops = tuple(n for n, f in path if isinstance(n, (cst.For, cst.While)) and f == "body")
        self.verbs.append(Verb(kind, node, self._line[-1], self._scope[-1], path, len(self.verbs), loops=loops, **kw))

    def _code(self, node: cst.CSTNode) -> str:
        # Names are compared with bindings' keys: ``self . opt`` is ``self.opt``.
        dotted = dotted_name(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        return dotted if dotted is not None else self._module.code_for_node(node)

    def _kind(self, expr: cst.BaseExpression, at: cst.CSTNode) -> Kind | None:
        return self.objects.kind_of(expr, at)

    def visit_Assign(self, node: cst.Assign) -> None:
        # ``p.grad = None`` (or a fresh tensor) replaces the gradient.
        if any(_is_grad_attr(t.target) for t in node.targets):
            self._add(VerbKind.ZERO_GRAD, node, target=None)

    def visit_Del(self, node: cst.Del) -> None:
        if _is_grad_attr(node.target) or (
            isinstance(node.target, cst.Tuple) and any(_is_grad_attr(e.value) for e in node.target.elements)
        ):
            self._add(VerbKind.ZERO_GRAD, node, target=None)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        qn = self.names.call_name(node)
        if qn == "torch.autograd.backward" and node.args:
            self._add(VerbKind.BACKWARD, node, loss=node.args[0].value)
            return
        if qn in CLIP_FUNCTIONS:
            self._add(VerbKind.CLIP, node)
            return
        callee = self._calls.resolve(node)
        if callee is not None:
            self._add(VerbKind.CALL, node, callee=callee)
            return
        if self.project is not None and self.project.step_helpers and self._helper_step(node):
            return
        if self.project is not None and self.project.step_sequences and self._project_call(node):
            return
        if self.project is not None and (self.project.grad_clearers or self.project.inherited_clears):
            self._foreign_clears(node)
        if not isinstance(func, cst.Attribute):
            return
        attr, recv = func.attr.value, func.value
        if attr == "zero_grad":
            kind = self._kind(recv, node)
            self._add(VerbKind.ZERO_GRAD, node, target=self._code(recv), target_kind=kind)
        elif attr in ("zero_", "fill_", "mul_") and _is_grad_attr(recv, through_data=True):
            self._add(VerbKind.ZERO_GRAD, node, target=None)
        elif attr == "backward":
            self._backward(node, recv)
        elif attr == "manual_backward" and node.args:
            self._add(VerbKind.BACKWARD, node, loss=node.args[0].value, framework=True)
        elif attr in ("step", "update", "unscale_", "scale"):
            self._step_like(node, attr, recv)

    def _helper_step(self, node: cst.Call) -> bool:
        """``utils.optimizer_step(opt)``: a function of another project module
        that only steps the optimizer it is handed (project/step_helpers.py)
        is that optimizer's step, here. Every parameter it steps must be
        handed an object known to be an optimizer, else nothing is recorded."""
        written = dotted_name(node.func)
        found = self.project.step_helper(written) if written is not None else None
        if found is None:
            return False
        stepped, params, where = found
        handed = _handed(node, params)
        if handed is None:
            return False
        targets = [handed.get(p) for p in stepped]
        if any(t is None or self._kind(t, node) is not Kind.OPTIMIZER for t in targets):
            return False
        for target in targets:
            self._add(VerbKind.HELPER_STEP, node, target=self._code(target), target_kind=Kind.OPTIMIZER, helper=where)  # type: ignore[arg-type]
        return True

    def _project_call(self, node: cst.Call) -> bool:
        """``utils.train_step(model, opt, batch)``: a PROJECT_CALL verb
        carrying the callee's verbs on what this call hands over. Every
        parameter a verb acts on must be handed something; a stepped one must
        be known to be an optimizer (or a scheduler), else nothing is recorded
        and the call stays unread, as before."""
        written = dotted_name(node.func)
        found = self.project.step_sequence(written) if written is not None else None
        if found is None or self._lambda:
            return False
        sequence, params, path = found
        handed = _handed(node, params)
        if handed is None:
            return False
        loops = tuple(n for n, f in self._path if isinstance(n, (cst.For, cst.While)) and f == "body")
        foreign: list[Verb] = []
        for kind, param, line in sequence:
            at = f"{path}:{line}"
            common = dict(line=self._line[-1], scope=self._scope[-1], path=tuple(self._path), loops=loops, helper=at)
            if kind == "backward":
                foreign.append(Verb(VerbKind.BACKWARD, node, index=0, **common))  # type: ignore[arg-type]
                continue
            target = handed.get(param)
            if target is None:
                return False
            target_kind = self._kind(target, node)
            if kind == "zero_grad":
                verb = VerbKind.ZERO_GRAD
            elif target_kind is Kind.OPTIMIZER:
                verb = VerbKind.STEP
            elif target_kind is Kind.SCHEDULER:
                verb = VerbKind.SCHED_STEP
            else:
                return False  # a step of something not known to be an optimizer
            foreign.append(
                Verb(verb, node, index=0, target=self._code(target), target_kind=target_kind, **common)  # type: ignore[arg-type]
            )
        self._add(VerbKind.PROJECT_CALL, node, foreign=tuple(foreign))
        return True

    def _foreign_clears(self, node: cst.Call) -> None:
        """HELPER_ZERO_GRAD verbs for what ``node`` may clear in another
        module's code: the arguments it hands to the parameters a function
        clears, or the ``self.<attr>`` an inherited method clears."""
        written = dotted_name(node.func)
        found = self.project.grad_clearer(written) if written is not None else None
        if found is not None:
            cleared, params, kwonly = found
            handed = _handed(node, params)
            for param in cleared if handed is not None else ():
                target = handed.get(param)  # type: ignore[union-attr]
                if target is not None and (param in params or param in kwonly):
                    self._add_clear(node, self._code(target), self._kind(target, node))
            return
        func = node.func
        scope = self._scope[-1]
        if not isinstance(func, cst.Attribute) or dotted_name(func.value) != "self" or isinstance(scope, cst.Module):
            return
        cls = self._calls.class_of.get(self._calls.method_owner(scope))
        for base in cls.bases if cls is not None else ():
            spelled = dotted_name(base.value)
            for attr in self.project.inherited_clear(spelled, func.attr.value) if spelled else ():
                self._add_clear(node, attr, self.objects.kind_of(attr, node))

    def _add_clear(self, node: cst.Call, target: str, kind: Kind | None) -> None:
        self._add(VerbKind.HELPER_ZERO_GRAD, node, target=target, target_kind=kind)

    def _backward(self, node: cst.Call, recv: cst.BaseExpression) -> None:
        positional = [a for a in node.args if a.keyword is None and not a.star]
        if isinstance(recv, cst.Call) and isinstance(recv.func, cst.Attribute) and recv.func.attr.value == "scale":
            scaler = recv.func.value
            if self._kind(scaler, node) is Kind.SCALER and recv.args:
                self._add(VerbKind.BACKWARD, node, loss=recv.args[0].value, scaler=self._code(scaler))
                return
        if positional and isinstance(recv, (cst.Name, cst.Attribute)):
            text = self._code(recv).lower()
            if self._kind(recv, node) is Kind.MODULE or any(h in text for h in _FRAMEWORK_HINTS):
                self._add(VerbKind.BACKWARD, node, loss=positional[0].value, framework=True)
                return
        self._add(VerbKind.BACKWARD, node, loss=recv)

    def _step_like(self, node: cst.Call, attr: str, recv: cst.BaseExpression) -> None:
        kind = self._kind(recv, node)
        if kind is None and attr == "step" and keyed_kind(recv) is Kind.SCHEDULER:
            kind = Kind.SCHEDULER  # ``state['scheduler'].step()``: named by its key, as a name would be
        if kind is None and attr == "step":
            # ``model.scheduler.step()``, ``model.optimizer.step()``: what the one
            # class of this module holding that attribute builds there.
            held = self.objects.sole_holder_kind(recv)
            kind = held if held in (Kind.OPTIMIZER, Kind.SCHEDULER) else None
        if attr == "step":
            if kind is Kind.OPTIMIZER:
                self._add(VerbKind.STEP, node, target=self._code(recv), target_kind=kind, closure=bool(node.args))
            elif kind is Kind.SCALER and node.args and node.args[0].keyword is None:
                self._add(
                    VerbKind.STEP,
                    node,
                    target=self._code(node.args[0].value),
                    target_kind=Kind.OPTIMIZER,
                    scaler=self._code(recv),
                    closure=len(node.args) > 1,
                )
            elif kind is Kind.SCHEDULER:
                self._add(VerbKind.SCHED_STEP, node, target=self._code(recv), target_kind=kind)
        elif kind is Kind.SCALER:
            verb = {"update": VerbKind.UPDATE, "unscale_": VerbKind.UNSCALE, "scale": VerbKind.SCALE}[attr]
            target = self._code(node.args[0].value) if verb is VerbKind.UNSCALE and node.args else None
            self._add(verb, node, target=target, scaler=self._code(recv))

    # == queries =============================================================
    def in_scope(self, scope: Scope) -> list[Verb]:
        return self._by_scope.get(scope, [])

    def in_loop(self, loop: Loop) -> list[Verb]:
        return [v for v in self.verbs if loop in v.loops]

    def in_iteration(self, loop: Loop) -> list[Verb]:
        return [v for v in self.verbs if v.loop is loop]

    def region(self, verb: Verb) -> cst.CSTNode:
        return verb.loop if verb.loop is not None else verb.scope

    def in_region(self, region: cst.CSTNode) -> list[Verb]:
        """Verbs of one iteration of ``region`` (a loop), or of a function's
        straight-line code when ``region`` is a function or the module,
        nested loops included."""
        if isinstance(region, (cst.For, cst.While)):
            return self.in_loop(region)
        return self.in_scope(region)  # type: ignore[arg-type]

    def conditions(self, verb: Verb, since: cst.CSTNode | None = None) -> tuple[tuple[cst.CSTNode, str], ...]:
        """Branches ``verb`` runs under, below the body of ``since`` (a loop),
        or below its function when ``since`` is None. ``with`` blocks and
        ``try`` bodies always run, so they are not conditions."""
        path = verb.path
        if since is not None:
            for i, (node, f) in enumerate(path):
                if node is since and f == "body":
                    path = path[i + 1 :]
                    break
        return tuple(
            (n, f)
            for n, f in path
            if not isinstance(n, cst.With) and not (isinstance(n, cst.Try) and f in ("body", "finalbody"))
        )

    def dominates(self, a: Verb, b: Verb, since: cst.CSTNode | None = None) -> bool:
        """``a`` runs before ``b`` whenever ``b`` runs (same iteration of ``since``)."""
        ca, cb = self.conditions(a, since), self.conditions(b, since)
        return a.index < b.index and cb[: len(ca)] == ca

    def follows(self, a: Verb, b: Verb, since: cst.CSTNode | None = None) -> bool:
        """``b`` runs after ``a`` whenever ``a`` runs (same iteration of
        ``since``): ``b`` sits in no branch ``a`` is outside of, and the
        branches ``a`` sits in below ``b``'s hold no ``break``/``continue``/
        ``return``/``raise`` that could skip ``b``."""
        ca, cb = self.conditions(a, since), self.conditions(b, since)
        if not (a.index < b.index and ca[: len(cb)] == cb):
            return False
        jumps = _Jumps()
        for node, _ in ca[len(cb) :]:
            visit_fast(node, jumps)
        return not jumps.found

    def co_occur(self, a: Verb, b: Verb, since: cst.CSTNode | None = None) -> bool:
        """``a`` then ``b`` run in one iteration of ``since`` for some counter
        value: each sits under its own ``if i % n == 0:`` on the same counter
        (both hold when ``i`` is a multiple of both periods), and ``a``'s
        branches hold no jump that could skip ``b``."""
        ca, cb = self.conditions(a, since), self.conditions(b, since)
        if a.index >= b.index:
            return False
        common = 0
        while common < min(len(ca), len(cb)) and ca[common] == cb[common]:
            common += 1
        rest_a, rest_b = ca[common:], cb[common:]
        if not rest_a or not rest_b:
            return False
        counters = set()
        for node, branch in rest_a + rest_b:
            counter = _periodic_counter(node) if branch == "body" else None
            if counter is None:
                return False
            counters.add(counter)
        if len(counters) != 1:
            return False
        jumps = _Jumps()
        for node, _ in rest_a:
            visit_fast(node, jumps)
        return not jumps.found

    def reached(self, verbs: Iterable[Verb]) -> list[Verb]:
        """``verbs`` plus the verbs of the local functions their CALLs reach."""
        out: list[Verb] = []
        seen: set[cst.FunctionDef] = set()
        todo = list(verbs)
        while todo:
            v = todo.pop(0)
            out.append(v)
            if v.kind is VerbKind.CALL and v.callee is not None and v.callee not in seen:
                seen.add(v.callee)
                todo.extend(self.in_scope(v.callee))
        return out

    def contains(self, stmt: cst.CSTNode, verb: Verb) -> bool:
        """``verb`` is written inside ``stmt`` (a statement of its function)."""
        return verb.line is stmt or verb.call is stmt or any(n is stmt for n, _ in verb.path)

    def optimizer_modules(self, optimizer: str, scope: Scope | None = None) -> set[str] | None:
        """``{"model"}`` for ``opt = Adam(model.parameters())``; None when unknown."""
        owners: set[str] = set()
        values = self.bindings.values(optimizer, scope)
        if not values:
            return None
        for value in values:
            if not isinstance(value, cst.Call):
                return None
            found = parameters_owners(value)
            if not found:  # ``params = list(g.parameters()); Adam(params)``
                found = [
                    owner
                    for arg in value.args
                    if isinstance(arg.value, cst.Name)
                    for bound in self.bindings.values(arg.value.value, scope)
                    if bound is not None
                    for owner in parameters_owners_in(bound)
                ]
            if not found:
                return None
            owners.update(self._code(o) for o in found)
        return owners

    def scaler_disabled(self, scaler: str, scope: Scope | None = None) -> bool:
        """``GradScaler(enabled=False)``: scale/step/update are pass-throughs."""
        call = self.bindings.call_of(scaler, scope)
        if call is None:
            return False
        return any(
            a.keyword is not None
            and a.keyword.value == "enabled"
            and isinstance(a.value, cst.Name)
            and a.value.value == "False"
            for a in call.args
        )

    def pairs(self, zero: Verb, step: Verb, region_steps: list[Verb]) -> bool | None:
        """Does ``zero`` clear the gradients ``step`` applies? True, False, or
        None when it cannot tell. ``region_steps``: the optimizer steps of the
        iteration (several optimizers make guesses unsafe)."""
        optimizers = {s.target for s in region_steps}
        if zero.target is None:
            # ``p.grad = None``, ``self.zero_grad()``: whichever model it is.
            return True if len(optimizers) == 1 else None
        if zero.target_kind is Kind.OPTIMIZER:
            if zero.target == step.target:
                return True
            return False if zero.target in optimizers else None
        if zero.target_kind in (Kind.MODULE, None):
            owners = self.optimizer_modules(step.target or "", step.scope)
            if owners is not None:
                if zero.target in owners or all(o.startswith(zero.target + ".") for o in owners):
                    return True  # ``model.zero_grad()`` clears ``model.encoder`` too
                if len(optimizers) > 1 and zero.target_kind is Kind.MODULE:
                    return False
                # ``netD.zero_grad()`` while only the generator's optimizer
                # steps; ``opt.zero_grad()`` over a list of optimizers.
                return None
            return True if len(optimizers) == 1 else None
        return None


def keyed_kind(node: cst.BaseExpression) -> Kind | None:
    """The kind a string key names (``state['scheduler']``: a scheduler), for
    one constant key of a name or an attribute (gate/sched_steps.py's
    keyed_scheduler_step reads the same shape)."""
    if not isinstance(node, cst.Subscript) or len(node.slice) != 1 or dotted_name(node.value) is None:
        return None
    index = node.slice[0].slice
    if not isinstance(index, cst.Index) or not isinstance(index.value, cst.SimpleString):
        return None
    key = index.value.evaluated_value
    return guess_kind_from_name(key) if isinstance(key, str) else None


def _is_grad_attr(node: cst.BaseExpression, through_data: bool = False) -> bool:
    """``p.grad`` (and ``p.grad.data`` when ``through_data``)."""
    if through_data and isinstance(node, cst.Attribute) and node.attr.value == "data":
        node = node.value
    return isinstance(node, cst.Attribute) and node.attr.value == "grad"


def accumulation_divisor(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """``N`` when ``test`` holds ``x % N == 0`` (or ``not x % N``, possibly
    joined with ``or``/``and``): the step runs every N iterations."""
    if isinstance(test, cst.BooleanOperation):
        return accumulation_divisor(test.left) or accumulation_divisor(test.right)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = test.expression
        if isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, cst.Modulo):
            return _divisor(inner)
        return None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comp = test.comparisons[0]
        if isinstance(comp.operator, cst.Equal):
            for side in (test.left, comp.comparator):
                if isinstance(side, cst.BinaryOperation) and isinstance(side.operator, cst.Modulo):
                    return _divisor(side)
    return None


def _divisor(op: cst.BinaryOperation) -> cst.BaseExpression | None:
    right = op.right
    if isinstance(right, cst.Integer) and right.evaluated_value in (0, 1):
        return None
    if isinstance(right, (cst.Integer, cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
        return right
    return None


def _periodic_counter(node: cst.CSTNode) -> str | None:
    """``i`` for ``if i % n == 0:`` (or ``0 == i % n``) with no ``elif``/``else``."""
    if not isinstance(node, cst.If) or node.orelse is not None:
        return None
    test = node.test
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    target = test.comparisons[0]
    if not isinstance(target.operator, cst.Equal):
        return None
    sides = (test.left, target.comparator)
    for mod, zero in (sides, sides[::-1]):
        if (
            isinstance(zero, cst.Integer)
            and zero.value == "0"
            and isinstance(mod, cst.BinaryOperation)
            and isinstance(mod.operator, cst.Modulo)
        ):
            return dotted_name(mod.left)
    return None


def _handed(node: cst.Call, params) -> dict[str, cst.BaseExpression] | None:
    """What ``node`` hands each parameter of the callee it names (by position
    or keyword); None when a ``*``/``**`` argument makes that unknowable."""
    handed: dict[str, cst.BaseExpression] = {}
    for i, arg in enumerate(node.args):
        if arg.star:
            return None
        if arg.keyword is not None:
            handed[arg.keyword.value] = arg.value
        elif i < len(params):
            handed[params[i]] = arg.value
    return handed
