"""Which values carry autograd history, flow-sensitively within a function.

API (through ``facts.history``):

- ``value(expr) -> Val | None`` — what an expression evaluated to where it
  stands: ``Val.h`` is ``H.YES`` (carries history), ``H.NO`` (a number, a
  detached or integer tensor, data from a loader) or ``H.MAYBE`` (cannot
  tell); ``Val.scalar`` says it is a single number (a reduced loss), which
  ``.item()`` accepts. None for expressions the walk did not evaluate.
- ``carries_history(expr) -> bool`` — ``value(expr).h is H.YES``.
- ``returns(fn) -> Val`` — what a function of this module returns when called
  with unknown arguments.

Sources of history: a model call, a loss call (``criterion(...)``,
``F.cross_entropy``), then arithmetic, indexing, tensor methods and torch
functions on such values, attributes of model outputs (``outputs.loss``,
``outputs.logits``), tuple unpacking (``out, hidden = rnn(x, hidden)``),
containers that had such a value appended, and values returned by functions of
this module (analysed with the caller's arguments and grad mode).
``.item()``, ``.tolist()``, ``float()``, ``int()``, ``.detach()``,
``.numpy()``, ``.data``, comparisons, ``argmax`` and integer casts remove it;
so does computing under ``torch.no_grad()`` (see ``grad_mode``).

The walk goes through statements in order, joining the branches of ``if`` and
``try`` and running loop bodies twice so that values carried around a loop
(``hidden``) are seen. Each function is walked once with unknown parameters;
calls into module functions are summarised with the caller's argument values.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import libcst as cst

from memlint.analysis.autograd.backward_proof import BackwardProof
from memlint.analysis.autograd.frozen import FrozenModules
from memlint.analysis.autograd.grad_mode import GradMode, GradModeAnalysis
from memlint.analysis.autograd.replaced_values import replacing_store
from memlint.analysis.scope.bindings import Bindings, unwrap_pass_through
from memlint.analysis.scope.callgraph import CallGraph, Scope, bound_params
from memlint.analysis.scope.config_attrs import plain_number_attributes
from memlint.analysis.scope.names import ImportTable, dotted_name, flat_targets, mentions
from memlint.analysis.scope.objects import ObjectTable
from memlint.analysis.scope.undo_env import ABSENT, UndoEnv
from memlint.parse.budget import tick
from memlint.vocabulary.kinds import Kind


class H(enum.Enum):
    YES = "yes"
    NO = "no"
    MAYBE = "maybe"


@dataclass(frozen=True)
class Val:
    h: H
    scalar: bool = False
    items: tuple[Val, ...] | None = None


YES = Val(H.YES)
NO = Val(H.NO)
NUMBER = Val(H.NO, scalar=True)
MAYBE = Val(H.MAYBE)

# Attributes that never carry history, whatever they are read from
# (``indices`` of topk/max/sort/kthvalue results is an integer tensor).
_NO_ATTRS = frozenset(
    {
        "data",
        "shape",
        "dtype",
        "device",
        "grad",
        "requires_grad",
        "is_cuda",
        "ndim",
        "grad_fn",
        "is_leaf",
        "names",
        "layout",
        "indices",
    }
)
# Indices and comparisons: no history whether called as a tensor method
# (``out.argmax()``) or a torch function (``torch.argmax(out)``); the two
# lists below share them.
_INDICES_AND_COMPARISONS = frozenset(
    {
        "argmax",
        "argmin",
        "argsort",
        "eq",
        "ne",
        "lt",
        "gt",
        "le",
        "ge",
        "isnan",
        "isinf",
        "isfinite",
    }
)
# Tensor methods whose result carries no history.
_DETACHING_METHODS = _INDICES_AND_COMPARISONS | frozenset(
    {
        "item",
        "tolist",
        "detach",
        "detach_",
        "numpy",
        "nonzero",
        "count_nonzero",
        "unique",
        "any",
        "all",
        "equal",
        "allclose",
        "long",
        "int",
        "bool",
        "byte",
        "short",
        "char",
        "size",
        "dim",
        "numel",
        "nelement",
        "stride",
        "data_ptr",
        "element_size",
        "get_device",
        "is_contiguous",
        "is_floating_point",
        "storage",
        "untyped_storage",
        "__len__",
        "keys",
        "zero_",
        "backward",
        "append",
        "extend",
        "insert",
        "add_module",
        "register_hook",
        "step",
        "zero_grad",
        "update",
        "state_dict",
        "parameters",
        "named_parameters",
        "eq_",
        "logical_not",
        "logical_and",
        "logical_or",
        "float_power_",
        "bincount",
        "histc",
        "new_zeros",
        "new_ones",
        "new_empty",
        "new_full",
        "new_tensor",
        "sign",
        "tobytes",
    }
)
_NUMBER_METHODS = frozenset({"item", "size", "dim", "numel", "nelement", "__len__", "element_size", "get_device"})
# Reductions: ``x.mean()`` (no dim) is a single number.
_REDUCTIONS = frozenset(
    {
        "mean",
        "sum",
        "norm",
        "prod",
        "std",
        "var",
        "max",
        "min",
        "logsumexp",
        "amax",
        "amin",
        "median",
        "nansum",
        "nanmean",
    }
)
# Methods that keep the shape (and so the scalar-ness) of their receiver.
_SHAPE_KEEPING = frozenset(
    {
        "squeeze",
        "float",
        "double",
        "half",
        "bfloat16",
        "to",
        "cpu",
        "cuda",
        "clone",
        "contiguous",
        "abs",
        "sqrt",
        "exp",
        "log",
        "neg",
        "pow",
        "mul",
        "div",
        "add",
        "sub",
        "clamp",
        "clip",
        "type_as",
        "requires_grad_",
        "relu",
        "sigmoid",
        "tanh",
        "log1p",
        "square",
        "reciprocal",
    }
)
# Methods returning (values, indices) when given a dimension.
_VALUES_INDICES = frozenset({"max", "min", "sort", "topk", "kthvalue", "median", "mode", "cummax", "cummin"})
_TORCH_NO_HISTORY = _INDICES_AND_COMPARISONS | frozenset(
    {
        "detach",
        "is_tensor",
        "numel",
        "zeros",
        "ones",
        "empty",
        "full",
        "arange",
        "linspace",
        "logspace",
        "eye",
        "randn",
        "rand",
        "randint",
        "randperm",
        "tensor",
        "as_tensor",
        "from_numpy",
        "zeros_like",
        "ones_like",
        "empty_like",
        "full_like",
        "rand_like",
        "randn_like",
        "randint_like",
        "bucketize",
        "searchsorted",
        "unique",
        "count_nonzero",
        "load",
        "save",
        "manual_seed",
        "device",
        "no_grad",
        "inference_mode",
        "enable_grad",
        "set_grad_enabled",
        "is_grad_enabled",
        "multinomial",
        "bernoulli",
        "normal",
        "poisson",
        "logical_not",
        "logical_and",
        "logical_or",
        "equal",
        "allclose",
        "isclose",
        "bincount",
        "histc",
        "clip_grad_norm_",
        "clip_grad_value_",
        "get_rng_state",
        "set_rng_state",
        "LongTensor",
        "FloatTensor",
        "Tensor",
        "BoolTensor",
        "where_",
        "synchronize",
        "empty_cache",
        "max_memory_allocated",
        "memory_allocated",
        "is_available",
        "device_count",
        "current_device",
    }
)
_NUMBER_BUILTINS = frozenset({"float", "int", "len", "round", "bool", "hash", "id", "ord"})
_NO_BUILTINS = _NUMBER_BUILTINS | frozenset(
    {
        "str",
        "repr",
        "print",
        "isinstance",
        "issubclass",
        "hasattr",
        "callable",
        "range",
        "enumerate",
        "zip",
        "open",
        "format",
        "type",
        "vars",
        "dir",
        "super",
        "input",
        "setattr",
        "delattr",
        "map",
        "filter",
        "chr",
    }
)
_PASSTHROUGH_BUILTINS = frozenset(
    {
        "sum",
        "max",
        "min",
        "abs",
        "list",
        "tuple",
        "sorted",
        "reversed",
        "next",
        "iter",
        "dict",
        "set",
        "copy",
        "deepcopy",
    }
)
_MODULE_NO_HISTORY_METHODS = frozenset(
    {
        "generate",
        "parameters",
        "named_parameters",
        "state_dict",
        "modules",
        "children",
        "named_modules",
        "eval",
        "train",
        "to",
        "cuda",
        "cpu",
        "zero_grad",
        "apply",
        "load_state_dict",
        "buffers",
        "init_hidden",
        "half",
        "float",
        "double",
        "requires_grad_",
        "register_forward_hook",
        "register_buffer",
        "save_pretrained",
    }
)
# PyTorch, its own domain libraries, and the ``torch_*`` extension libraries
# (torch_scatter, torch_geometric): functions that compute on their inputs.
# Another package whose name merely starts with "torch" (torchbiomed,
# torchnet, torchmetrics) is not torch: what it returns is not known
# (``bioloss.dice_error(output, target)`` may take the argmax first).
_TORCH_LIBS = ("torch.", "torchvision.", "torchaudio.", "torch_")
_NO_HISTORY_LIBS = (
    "numpy.",
    "math.",
    "statistics.",
    "sklearn.",
    "scipy.",
    "pandas.",
    "time.",
    "random.",
    "os.",
    "json.",
)
_DETACH_HELPER_TOKENS = ("detach", "repackage")


def join(a: Val, b: Val) -> Val:
    if a == b:
        return a
    items = None
    if a.items is not None and b.items is not None and len(a.items) == len(b.items):
        items = tuple(join(x, y) for x, y in zip(a.items, b.items))
    return Val(a.h if a.h is b.h else H.MAYBE, a.scalar and b.scalar, items)


def combine(vals: Iterable[Val], scalar: bool = False) -> Val:
    """A value computed from ``vals``: history if any operand has it."""
    hs = [v.h for v in vals]
    if H.YES in hs:
        return Val(H.YES, scalar)
    if all(h is H.NO for h in hs):
        return Val(H.NO, scalar)
    return Val(H.MAYBE, scalar)


def item_of(v: Val, index: int | None = None) -> Val:
    if v.items is not None and index is not None and -len(v.items) <= index < len(v.items):
        return v.items[index]
    return Val(v.h)


Env = UndoEnv


# Libraries whose models' ``__call__`` runs under ``inference_mode``.
_INFERENCE_LIBS = ("ultralytics.",)


class HistoryAnalysis:
    # Depth of nested loops whose bodies are walked twice; deeper ones once.
    MAX_REPEAT_DEPTH = 4
    MAX_SUMMARIES = 2000

    def __init__(
        self,
        module: cst.Module,
        names: ImportTable,
        calls: CallGraph,
        objects: ObjectTable,
        grad: GradModeAnalysis,
        bindings: Callable[[], Bindings],
        verbs: Callable[[], object] | None = None,
        frozen: Callable[[], FrozenModules] | None = None,
        off_forwards: frozenset[tuple[str, str]] = frozenset(),
        object_returns: tuple = (),
        eval_off: Callable[[], object] | None = None,
        object_backwards: tuple = (),
    ) -> None:
        self.module = module
        # ProjectView.object_backwards: (scope, receiver, method) -> (tuple
        # length or 0, places) of the loss the method backpropagated and
        # returns (another module's ``GraphSAINT.train_step``: backward_returns.py).
        self._object_backwards = {(s, r, m): (n, p) for s, r, m, n, p in object_backwards}
        # Model calls returning no history in eval mode (eval_off_calls.py).
        self._eval_off = eval_off
        # ProjectView.object_returns: (scope, receiver, method) -> the
        # parameters whose history the method's return carries (another
        # module's ``return 1 - self.dice_loss(inputs, t)``: forward_returns.py).
        self._object_returns = {(s, r, m): params for s, r, m, params in object_returns}
        # ProjectView.off_forwards: (scope, receiver) whose ``.forward`` runs
        # under its class's grad-off decorator in another module.
        self._off_forwards = off_forwards
        self._verbs = verbs
        self._proof: BackwardProof | None = None
        self.names = names
        self.calls = calls
        self.objects = objects
        self.grad = grad
        self._bindings = bindings  # built only for a module with a no_grad forward
        self._no_grad_classes_memo: frozenset[str] | None = None
        self._frozen_getter = frozen
        self._frozen: FrozenModules | None = None
        self._number_attrs: dict[int, frozenset[str]] = {}
        self.values: dict[cst.CSTNode, Val] = {}
        self._summaries: dict[tuple, Val] = {}
        self._busy: set[tuple] = set()
        self._returns: dict[cst.FunctionDef, Val] = {}
        self._replacing: dict[cst.For, tuple[str, cst.Assign] | None] = {}
        # Each function body (and the module's) is walked when a query first
        # lands in it: most functions of a model file are never asked about.
        self._walked: set[int] = set()

    def number_attributes(self, scope: Scope) -> frozenset[str]:
        """The plain-number ``self`` attributes of the class ``scope`` is a method of."""
        parents = self.calls.parents
        cls = parents.get(parents.get(scope)) if isinstance(scope, cst.FunctionDef) else None
        if not isinstance(cls, cst.ClassDef):
            return frozenset()
        if id(cls) not in self._number_attrs:
            self._number_attrs[id(cls)] = plain_number_attributes(cls)
        return self._number_attrs[id(cls)]

    def frozen_module(self, func: cst.BaseExpression, call: cst.Call) -> bool:
        """``model(x)`` where ``model`` is frozen (``model.requires_grad_(False)``,
        a copy of a frozen model, a frozen parent: frozen.py)."""
        key = dotted_name(func)
        if key is None:
            return False
        if self._frozen is None:
            self._frozen = self._frozen_getter() if self._frozen_getter else FrozenModules(self.module, self.calls)
        return self._frozen.is_frozen(key, self.objects.scope_of(call))

    def no_grad_module(self, func: cst.BaseExpression, call: cst.Call) -> bool:
        """``feat_net(x)`` where ``feat_net = FrozenEncoder(...)`` and that
        class of this module decorates its ``forward`` with ``no_grad``, or
        ``model = YOLO(...)`` (ultralytics predicts under ``inference_mode``)."""
        if self._off_forwards and self._typed_off_forward(func, call):
            return True
        if self._no_grad_classes_memo is None:
            self._no_grad_classes_memo = frozenset(
                name
                for name, defs in self.calls.classes.items()
                for cls in defs
                if (fwd := self.calls.methods.get(cls, {}).get("forward")) is not None
                and self.grad.decorator_mode(fwd) is GradMode.DISABLED
            )
        inference_lib = any(qn.startswith(_INFERENCE_LIBS) for qn in self.names.bindings.values())
        if not self._no_grad_classes_memo and not inference_lib:
            return False
        key = dotted_name(func)
        if key is None:
            return False
        # ``FrozenEncoder(enc).to(device)`` is still a ``FrozenEncoder``.
        values = [unwrap_pass_through(v) for v in self._bindings().values(key, self.objects.scope_of(call))]
        return bool(values) and all(
            isinstance(v, cst.Call)
            and (
                dotted_name(v.func) in self._no_grad_classes_memo
                or (self.names.call_name(v) or "").startswith(_INFERENCE_LIBS)
            )
            for v in values
        )

    def eval_off_call(self, func: cst.BaseExpression, call: cst.Call) -> bool:
        """``net(example)`` after ``net.eval()``, ``net`` a model returning no
        history in eval mode (eval_off_calls.py: SECOND's VoxelNet)."""
        return self._eval_off is not None and self._eval_off().returns_no_history(func, call)  # type: ignore[attr-defined]

    def eval_off_builds_graph(self, func: cst.BaseExpression, call: cst.Call) -> bool:
        """Such a call whose model works with grad on before its eval branch (MEM201)."""
        return self._eval_off is not None and self._eval_off().builds_graph(func, call)  # type: ignore[attr-defined]

    def _typed_off_forward(self, func: cst.BaseExpression, call: cst.Call) -> bool:
        """``self.model.forward(x)`` where the project types ``self.model``
        and every class it may be decorates ``forward`` with grad off
        (project/off_forwards.py)."""
        if not (isinstance(func, cst.Attribute) and func.attr.value == "forward"):
            return False
        receiver = dotted_name(func.value)
        scope = self.objects.scope_of(call)
        if receiver is None:
            return False
        name = self.calls.scope_name(scope)
        return (name, receiver) in self._off_forwards

    def returned_params(self, func: cst.Attribute, call: cst.Call) -> tuple[tuple[int, str], ...]:
        """``criterion._show_dice(preds, masks)``: the parameters whose
        history the method of every class the project gives the receiver
        returns (ProjectView.object_returns); () when none is known."""
        if not self._object_returns:
            return ()
        receiver = dotted_name(func.value)
        if receiver is None:
            return ()
        scope = self.objects.scope_of(call)
        name = self.calls.scope_name(scope)
        return self._object_returns.get((name, receiver, func.attr.value), ())

    def backward_returned(self, func: cst.Attribute, call: cst.Call) -> tuple[int, tuple[int, ...]] | None:
        """``model.train_step(*batch)``: (tuple length or 0, places) of the
        loss the method of every class the project gives the receiver
        backpropagated and returns (ProjectView.object_backwards); None
        when none is known."""
        if not self._object_backwards:
            return None
        receiver = dotted_name(func.value)
        if receiver is None:
            return None
        name = self.calls.scope_name(self.objects.scope_of(call))
        return self._object_backwards.get((name, receiver, func.attr.value))

    @property
    def proof(self) -> BackwardProof | None:
        """Values a later backward call proves to carry history (backward_proof.py)."""
        if self._proof is None and self._verbs is not None:
            self._proof = BackwardProof(self._verbs(), self.calls, self.names)
        return self._proof

    def _walk(self, scope: Scope) -> None:
        if id(scope) in self._walked:
            return
        self._walked.add(id(scope))
        if isinstance(scope, cst.Module):
            _Walker(self, scope, record=True, entry=GradMode.ENABLED).run()
        else:
            self._returns[scope] = _Walker(self, scope, record=True, entry=self.grad.entry_mode(scope)).run()

    def _scope_of(self, node: cst.CSTNode) -> Scope | None:
        """The body whose walk evaluates ``node``: the innermost function, or
        the module; None inside a class body (never walked)."""
        parents = self.calls.parents
        cur: cst.CSTNode | None = node
        while cur is not None:
            if isinstance(cur, (cst.FunctionDef, cst.Module)):
                return cur
            if isinstance(cur, cst.ClassDef):
                return None
            cur = parents.get(cur)
        return None

    # == queries ===========================================================
    def value(self, expr: cst.CSTNode) -> Val | None:
        found = self.values.get(expr)
        if found is None:
            scope = self._scope_of(expr)
            if scope is not None and id(scope) not in self._walked:
                self._walk(scope)
                found = self.values.get(expr)
        return found

    def carries_history(self, expr: cst.CSTNode) -> bool:
        v = self.value(expr)
        return v is not None and v.h is H.YES

    def returns(self, fn: cst.FunctionDef) -> Val:
        self._walk(fn)
        return self._returns.get(fn, MAYBE)

    def history_terms(self, expr: cst.BaseExpression, exclude: str | None = None) -> list[cst.BaseExpression]:
        """The smallest whole operands of ``expr`` that carry history: in
        ``loss * x.size(0) + 0.1 * reg`` the ``loss`` and ``reg``. Arithmetic
        and conditional expressions are looked through; anything else is a term. Operands that mention
        ``exclude`` (the accumulator) are skipped."""
        # An explicit stack, not a nested recursive function: such a function
        # refers to itself through its closure, a reference cycle that would
        # keep this analysis (and the tree) alive until the cyclic collector runs.
        out: list[cst.BaseExpression] = []
        stack = [expr]
        while stack:  # left operand first: the terms come out in source order
            e = stack.pop()
            if isinstance(e, cst.IfExp):
                stack += (e.orelse, e.body)  # the test only picks a branch
            elif isinstance(e, cst.BinaryOperation):
                stack += (e.right, e.left)
            elif isinstance(e, cst.UnaryOperation):
                stack.append(e.expression)
            elif not (exclude is not None and mentions(e, exclude)) and self.carries_history(e):
                out.append(e)
        return out

    # == function summaries =================================================
    def summary(self, fn: cst.FunctionDef, args: dict[str, Val], mode: GradMode) -> Val:
        key = (fn, tuple(sorted((k, v.h) for k, v in args.items())), mode)
        if key in self._summaries:
            return self._summaries[key]
        if key in self._busy or len(self._summaries) > self.MAX_SUMMARIES:
            return MAYBE
        self._busy.add(key)
        try:
            entry = self.grad.decorator_mode(fn) or mode
            result = _Walker(self, fn, record=False, entry=entry, args=args).run()
        finally:
            self._busy.discard(key)
        self._summaries[key] = result
        return result


class _Walker:
    """One flow-sensitive pass over a function (or module) body."""

    def __init__(
        self,
        analysis: HistoryAnalysis,
        scope: Scope,
        record: bool,
        entry: GradMode,
        args: dict[str, Val] | None = None,
    ) -> None:
        self.a = analysis
        self.scope = scope
        self.record = record
        self.entry = entry
        self.mode = entry
        self.env: Env = UndoEnv()
        self.returned: list[Val] = []
        self.generator = False
        self.depth = 0
        self.last_args: dict[cst.Call, list[Val]] = {}
        # The stores of loops that replace every value of a dict: their last value.
        self.stored: dict[cst.Assign, Val] = {}
        if isinstance(scope, cst.FunctionDef):
            for name in param_names(scope):
                self.env[name] = (args or {}).get(name, MAYBE)

    def run(self) -> Val:
        if isinstance(self.scope, cst.Module):
            self.block(self.scope.body)
        else:
            self.statement(self.scope.body)
        if self.generator:
            return MAYBE
        if not self.returned:
            return NO
        result = self.returned[0]
        for v in self.returned[1:]:
            result = join(result, v)
        return result

    # -- statements --------------------------------------------------------
    def block(self, stmts: Sequence[cst.CSTNode]) -> None:
        for stmt in stmts:
            self.statement(stmt)

    def _set_mode(self, stmt: cst.CSTNode) -> None:
        local = self.a.grad.local_mode(stmt)
        self.mode = local if local is not None else self.entry

    def statement(self, stmt: cst.CSTNode) -> None:
        tick()
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self._set_mode(small)
                self.small(small)
            return
        if isinstance(stmt, cst.IndentedBlock):
            self.block(stmt.body)
            return
        if isinstance(stmt, cst.SimpleStatementSuite):
            for small in stmt.body:
                self._set_mode(small)
                self.small(small)
            return
        self._set_mode(stmt)
        if isinstance(stmt, cst.If):
            self.ev(stmt.test)
            mark = self.env.mark()
            self.statement(stmt.body)
            after_body = self.env.undo(mark)
            mark = self.env.mark()
            if stmt.orelse is not None:
                orelse = stmt.orelse
                if isinstance(orelse, cst.If):
                    self.statement(orelse)
                else:
                    self.statement(orelse.body)
            self._apply(self._joined([after_body, self.env.undo(mark)]))
        elif isinstance(stmt, (cst.For, cst.While)):
            self.loop(stmt)
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                v = self.ev(item.item)
                if item.asname is not None:
                    self.bind(item.asname.name, Val(H.MAYBE) if v.h is not H.NO else NO)
            self.statement(stmt.body)
        elif isinstance(stmt, cst.Try) or type(stmt).__name__ == "TryStar":
            mark = self.env.mark()
            self.statement(stmt.body)
            if stmt.orelse is not None:
                self.statement(stmt.orelse.body)
            outs = [self.env.undo(mark)]
            merged = self._joined([{}, outs[0]])
            for handler in stmt.handlers:
                mark = self.env.mark()
                self._apply(merged)
                self.statement(handler.body)
                outs.append(self.env.undo(mark))
            self._apply(self._joined(outs))
            if stmt.finalbody is not None:
                self.statement(stmt.finalbody.body)
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            self.env[stmt.name.value] = NO
        elif type(stmt).__name__ == "Match":
            self.ev(stmt.subject)  # type: ignore[attr-defined]
            ends = []
            for case in stmt.cases:  # type: ignore[attr-defined]
                mark = self.env.mark()
                self.statement(case.body)
                ends.append(self.env.undo(mark))
            if ends:
                self._apply(self._joined([{}, self._joined(ends)]))

    def _joined(self, ends: list[dict], after_loop: bool = False) -> dict:
        """Where branches meet: ``ends`` are the states at their ends, as the
        keys each changed from the current state (``undo``'s answer, ``{}``
        for a path that changed nothing), joined left to right. Only keys some
        branch changed can differ, so the cost is that of the branches."""
        out = {}
        for k in set().union(*ends):
            here = self.env.get(k, ABSENT)
            v = ends[0].get(k, here)
            for end in ends[1:]:
                v = _join_value(k, v, end.get(k, here), after_loop)
            out[k] = v
        return out

    def _apply(self, changes: dict) -> None:
        for k, v in changes.items():
            if v is ABSENT:
                self.env.pop(k, None)
            else:
                self.env[k] = v

    def loop(self, stmt: cst.For | cst.While) -> None:
        replaced = None
        if isinstance(stmt, cst.For):
            element = self._element_of(stmt.iter, self.ev(stmt.iter))
            replaced = self._replacing_store(stmt)
            if replaced is not None:
                self.stored.pop(replaced[1], None)
        else:
            self.ev(stmt.test)
        self.depth += 1
        repeat = self.depth <= HistoryAnalysis.MAX_REPEAT_DEPTH
        passes = (False, self.record) if repeat else (self.record,)
        record = self.record
        carried: dict = {}  # the state a pass starts from, as changes to the state before the loop
        for i, rec in enumerate(passes):
            self.record = rec
            mark = self.env.mark()
            self._apply(carried)
            if isinstance(stmt, cst.For):
                self.bind(stmt.target, element)
            else:
                self.ev(stmt.test)
            self.statement(stmt.body)
            carried = self._joined([{}, self.env.undo(mark)], after_loop=i == len(passes) - 1)
        self._apply(carried)
        if replaced is not None and self.stored.get(replaced[1], MAYBE).h is H.NO:
            # ``for k, v in d.items(): d[k] = v.item()``: every value is now a number.
            self.env[replaced[0]] = NO
        self.record = record
        self.depth -= 1
        if stmt.orelse is not None:
            self.statement(stmt.orelse.body)

    def _replacing_store(self, stmt: cst.For) -> tuple[str, cst.Assign] | None:
        memo = self.a._replacing
        if stmt not in memo:
            memo[stmt] = replacing_store(stmt) if isinstance(stmt.iter, (cst.Call, cst.Name, cst.Attribute)) else None
        return memo[stmt]

    def _element_of(self, iterable: cst.BaseExpression, v: Val) -> Val:
        zipped = self._zipped(iterable)
        if zipped is not None:
            # ``for (_, score_f), (_, score_r) in zip(outs_f, outs_r)``: each
            # element is a tuple of one element of each argument, so a nested
            # target takes history from the model output it unpacks.
            items = tuple(self._element_of(arg.value, val) for arg, val in zipped)
            return Val(combine(items).h, items=items)
        if v.h is H.YES:
            return Val(H.YES)
        kind = self._kind_in_iterable(iterable)
        if kind is Kind.LOADER or v.h is H.NO:
            return NO
        return MAYBE

    def _zipped(self, iterable: cst.BaseExpression) -> list[tuple[cst.Arg, Val]] | None:
        """The arguments of a call of the builtin ``zip`` and their values."""
        if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name)):
            return None
        if iterable.func.value != "zip" or "zip" in self.env or self.a.names.call_name(iterable) is not None:
            return None
        args = self.last_args.get(iterable)
        positional = [a for a in iterable.args if a.keyword is None]
        if args is None or not positional or any(a.star for a in iterable.args):
            return None
        return [(a, v) for a, v in zip(iterable.args, args) if a.keyword is None]

    def _kind_in_iterable(self, expr: cst.BaseExpression) -> Kind | None:
        # ``enumerate(tqdm(loader))`` -> the loader.
        while isinstance(expr, cst.Call) and expr.args:
            expr = expr.args[0].value
        if isinstance(expr, (cst.Name, cst.Attribute)):
            return self.a.objects.kind_of(expr, self.scope)
        return None

    def small(self, stmt: cst.BaseSmallStatement) -> None:
        if isinstance(stmt, cst.Assign):
            v = self.ev(stmt.value)
            if isinstance(stmt.targets[0].target, cst.Subscript):
                self.stored[stmt] = v
            for t in stmt.targets:
                self.bind(t.target, self._loss_parts(stmt.value, t.target, v))
        elif isinstance(stmt, cst.AnnAssign):
            if stmt.value is not None:
                self.bind(stmt.target, self.ev(stmt.value))
        elif isinstance(stmt, cst.AugAssign):
            old = self.ev(stmt.target)
            v = self.ev(stmt.value)
            if self.mode is GradMode.DISABLED:
                new = Val(H.MAYBE if old.h is H.YES else H.NO, old.scalar and v.scalar)
            else:
                new = combine((old, v), old.scalar and v.scalar)
            self.bind(stmt.target, new, augmented=True)
        elif isinstance(stmt, cst.Expr):
            v = self.ev(stmt.value)
            if isinstance(stmt.value, (cst.Yield, cst.Await)):
                self.generator = self.generator or isinstance(stmt.value, cst.Yield)
            self._mutation(stmt.value)
            self._backward_proves(stmt.value)
            del v
        elif isinstance(stmt, cst.Return):
            self.returned.append(self.ev(stmt.value) if stmt.value is not None else NO)
        elif isinstance(stmt, cst.Del):
            for t in flat_targets(stmt.target):
                key = dotted_name(t)
                if key is not None:
                    self.env.pop(key, None)
        elif isinstance(stmt, cst.Assert):
            self.ev(stmt.test)
        elif isinstance(stmt, cst.Raise) and stmt.exc is not None:
            self.ev(stmt.exc)

    def _loss_parts(self, value: cst.BaseExpression, target: cst.BaseExpression, v: Val) -> Val:
        """``loss, loss_items = compute_loss(pred, y)``: a loss object that
        returns a tuple gives the loss first; what follows is most often its
        parts for logging, already detached (YOLO's ``loss_items``). Only the
        first element is known to carry history."""
        if v.h is not H.YES or v.items is not None or not isinstance(target, (cst.Tuple, cst.List)):
            return v
        if any(isinstance(el, cst.StarredElement) for el in target.elements) or len(target.elements) < 2:
            return v
        if not (isinstance(value, cst.Call) and self.a.objects.is_loss_call(value)):
            return v
        return Val(v.h, v.scalar, items=(v,) + (MAYBE,) * (len(target.elements) - 1))

    def _mutation(self, value: cst.BaseExpression) -> None:
        """``outs.append(out)``, ``h.detach_()``, ``x.add_(y)``: the receiver changes."""
        if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute):
            return
        key = dotted_name(value.func.value)
        if key is None:
            return
        method = value.func.attr.value
        old = self.env.get(key, MAYBE)
        args = self.last_args.get(value, [])
        if method in ("append", "extend", "insert", "add", "appendleft", "update", "put"):
            self.env[key] = Val(combine([old] + args).h) if old.h is not H.MAYBE or args else old
            if old.h is H.NO and args and all(a.h is H.NO for a in args):
                self.env[key] = NO
        elif method == "detach_":
            self.env[key] = NO
        elif method.endswith("_") and not method.startswith("_") and self.mode is not GradMode.DISABLED:
            self.env[key] = combine([old] + args, old.scalar)

    def _backward_proves(self, value: cst.BaseExpression) -> None:
        """After ``loss.backward()``, ``loss`` carries history (or it would have raised)."""
        proof = self.a.proof if isinstance(value, cst.Call) else None
        operand = proof.operand(value) if proof is not None else None  # type: ignore[arg-type]
        if operand is not None:
            key, scalar = operand
            old = self.env.get(key, MAYBE)
            if old.h is H.MAYBE:
                self.env[key] = Val(H.YES, old.scalar or scalar)

    def _proven(self, target: cst.BaseExpression, v: Val) -> Val:
        """The value bound to ``target`` when a later backward reads this binding."""
        if v.h is not H.MAYBE or self.mode is GradMode.DISABLED:
            return v
        proof = self.a.proof
        scalar = proof.proven(target) if proof is not None else None
        return v if scalar is None else Val(H.YES, v.scalar or scalar)

    def bind(self, target: cst.BaseExpression, v: Val, augmented: bool = False) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            elements = [el.value for el in target.elements]
            star = any(isinstance(el, cst.StarredElement) for el in target.elements)
            for i, el in enumerate(elements):
                if isinstance(el, cst.StarredElement):
                    self.bind(el.value, Val(v.h))
                else:
                    self.bind(el, item_of(v, None if star else i))
            return
        if isinstance(target, cst.Subscript):
            # ``d[k] = out``: the container now holds ``out``.
            key = dotted_name(target.value)
            if key is not None:
                old = self.env.get(key, MAYBE)
                self.env[key] = NO if (old.h is H.NO and v.h is H.NO) else Val(combine((old, v)).h)
            return
        key = dotted_name(target)
        if key is not None:
            if not augmented:
                v = self._proven(target, v)
            # A new value for ``x`` makes what we knew about ``x.attr`` stale.
            if not augmented:
                for k in self.env.keys_under(key):
                    del self.env[k]
            self.env[key] = v

    # -- expressions -------------------------------------------------------
    def ev(self, e: cst.BaseExpression) -> Val:
        v = self._ev(e)
        if self.record:
            self.a.values[e] = v
        return v

    def fresh(self, scalar: bool = False) -> Val:
        """A value newly computed from history-carrying inputs."""
        if self.mode is GradMode.ENABLED:
            return Val(H.YES, scalar)
        if self.mode is GradMode.DISABLED:
            return Val(H.NO, scalar)
        return Val(H.MAYBE, scalar)

    def computed(self, inputs: Iterable[Val], scalar: bool = False) -> Val:
        v = combine(inputs, scalar)
        if v.h is H.YES:
            return self.fresh(scalar)
        return v

    def _ev(self, e: cst.BaseExpression) -> Val:
        kind = e.__class__  # exact class tests: isinstance() on libcst's ABCs is slow on a miss
        if kind is cst.Name:
            if e.value in ("True", "False", "None"):
                return NUMBER
            return self.env.get(e.value, MAYBE)
        if kind is cst.Integer or kind is cst.Float or kind is cst.Imaginary:
            return NUMBER
        if kind is cst.SimpleString or kind is cst.ConcatenatedString or kind is cst.Ellipsis:
            return NO
        if kind is cst.FormattedString:
            for part in e.parts:
                if isinstance(part, cst.FormattedStringExpression):
                    self.ev(part.expression)
            return NO
        if kind is cst.Attribute:
            key = dotted_name(e)
            if key is not None and key in self.env:
                if self.record:
                    self.ev(e.value)
                return self.env[key]
            if (
                isinstance(e.value, cst.Name)
                and e.value.value == "self"
                and e.attr.value in self.a.number_attributes(self.scope)
            ):
                return NUMBER  # ``self.sigma = sigma`` with ``sigma=1.5``: a setting
            base = self.ev(e.value)
            if e.attr.value in _NO_ATTRS:
                return NO
            if base.h is H.YES:
                return Val(H.YES, scalar=e.attr.value == "loss")
            return NO if base.h is H.NO else MAYBE
        if kind is cst.Subscript:
            base = self.ev(e.value)
            index = None
            for el in e.slice:
                if isinstance(el.slice, cst.Index):
                    self.ev(el.slice.value)
                    if isinstance(el.slice.value, cst.Integer):
                        index = int(el.slice.value.value)
                    elif (
                        isinstance(el.slice.value, cst.UnaryOperation)
                        and isinstance(el.slice.value.operator, cst.Minus)
                        and isinstance(el.slice.value.expression, cst.Integer)
                    ):
                        index = -int(el.slice.value.expression.value)
            if base.items is not None and index is not None and len(e.slice) == 1:
                return item_of(base, index)
            return Val(base.h)
        if kind is cst.Call:
            return self.call(e)
        if kind is cst.BinaryOperation:
            left, right = self.ev(e.left), self.ev(e.right)
            if isinstance(e.operator, cst.Modulo) and isinstance(e.left, (cst.SimpleString, cst.ConcatenatedString)):
                return NO
            return self.computed((left, right), left.scalar and right.scalar)
        if kind is cst.UnaryOperation:
            v = self.ev(e.expression)
            return NUMBER if isinstance(e.operator, cst.Not) else v
        if kind is cst.Comparison:
            self.ev(e.left)
            for c in e.comparisons:
                self.ev(c.comparator)
            return NUMBER
        if kind is cst.BooleanOperation:
            return join(self.ev(e.left), self.ev(e.right))
        if kind is cst.IfExp:
            self.ev(e.test)
            return join(self.ev(e.body), self.ev(e.orelse))
        if kind is cst.Tuple or kind is cst.List or kind is cst.Set:
            items = []
            starred = False
            for el in e.elements:
                if isinstance(el, cst.StarredElement):
                    starred = True
                    items.append(Val(self.ev(el.value).h))
                else:
                    items.append(self.ev(el.value))
            h = combine(items).h if items else H.NO
            return Val(h, items=None if starred or isinstance(e, cst.Set) else tuple(items))
        if kind is cst.Dict:
            vals = []
            for el in e.elements:
                if isinstance(el, cst.DictElement):
                    self.ev(el.key)
                    vals.append(self.ev(el.value))
                else:
                    vals.append(Val(self.ev(el.value).h))
            return Val(combine(vals).h if vals else H.NO)
        if kind is cst.ListComp or kind is cst.GeneratorExp or kind is cst.SetComp or kind is cst.DictComp:
            return self.comprehension(e)
        if kind is cst.NamedExpr:
            v = self.ev(e.value)
            self.bind(e.target, v)
            return v
        if kind is cst.Lambda:
            return NO
        if kind is cst.Yield:
            self.generator = True
            if e.value is not None and isinstance(e.value, cst.BaseExpression):
                self.ev(e.value)
            return MAYBE
        if kind is cst.Await:
            self.ev(e.expression)
            return MAYBE
        return MAYBE

    def comprehension(self, e: cst.BaseExpression) -> Val:
        mark = self.env.mark()
        comp = e.for_in  # type: ignore[attr-defined]
        while comp is not None:
            element = self._element_of(comp.iter, self.ev(comp.iter))
            self.bind(comp.target, element)
            for cond in comp.ifs:
                self.ev(cond.test)
            comp = comp.inner_for_in
        if isinstance(e, cst.DictComp):
            self.ev(e.key)
            v = self.ev(e.value)
        else:
            v = self.ev(e.elt)  # type: ignore[attr-defined]
        self.env.undo(mark)
        return Val(v.h)

    # -- calls -----------------------------------------------------------
    def call(self, c: cst.Call) -> Val:
        args = [self.ev(a.value) for a in c.args]
        self.last_args[c] = args
        func = c.func
        o = self.a.objects
        if o.is_loss_call(c):
            # A loss of outputs computed without grad has no history either.
            self.ev(func)
            return self.computed([Val(a.h) for a in args], scalar=not _reduction_none(c, o))
        if o.is_model_call(c):
            self.ev(func)
            if self.a.no_grad_module(func, c) or self.a.eval_off_call(func, c):
                return NO
            if o.parameterless_module(func, c):
                return self.computed(args)
            if _frozen_name(func) or self.a.frozen_module(func, c):
                return MAYBE
            out = self.fresh()
            items = o.tuple_items(func, c) if out.h is H.YES else None
            if items is not None:
                # ``loss, parts = model(x, y)``: parts a forward builds fresh carry no graph.
                return Val(H.YES, items=tuple(NO if i in items[1] else out for i in range(items[0])))
            return out
        qn = self.a.names.call_name(c)
        if qn is not None:
            return self.library_call(qn, c, args)
        fn = self.a.calls.resolve(c)
        if fn is not None:
            name = fn.name.value.lower()
            if any(tok in name for tok in _DETACH_HELPER_TOKENS):
                return NO
            return self.a.summary(fn, self._bind_args(fn, c, args), self.mode)
        if isinstance(func, cst.Name):
            name = func.value
            if name in self.env and name not in _NO_BUILTINS:
                return MAYBE
            if name in _NUMBER_BUILTINS:
                return NUMBER
            if name in _NO_BUILTINS:
                return NO
            if name in _PASSTHROUGH_BUILTINS:
                if not args:
                    return NO
                scalar = name == "sum" or (name in ("max", "min", "abs") and all(a.scalar for a in args))
                if name in ("sum", "max", "min", "abs"):
                    return self.computed([Val(a.h) for a in args], scalar)
                return args[0] if name in ("list", "tuple", "copy", "deepcopy") else Val(args[0].h)
            if any(tok in name.lower() for tok in _DETACH_HELPER_TOKENS):
                return NO
            return MAYBE
        if isinstance(func, cst.Attribute):
            return self.method(c, func, args)
        self.ev(func)
        return MAYBE

    def _bind_args(self, fn: cst.FunctionDef, c: cst.Call, args: list[Val]) -> dict[str, Val]:
        if any(arg.star for arg in c.args):
            return {}
        value_of = {id(arg): v for arg, v in zip(c.args, args)}
        bound = {param: value_of[id(arg)] for arg, param in bound_params(c, fn)}
        for p in (*fn.params.posonly_params, *fn.params.params):
            if p.name.value not in bound and p.default is not None:
                if isinstance(p.default, cst.Name) and p.default.value == "None":
                    bound[p.name.value] = NUMBER
        return bound

    def library_call(self, qn: str, c: cst.Call, args: list[Val]) -> Val:
        if qn.startswith(_NO_HISTORY_LIBS):
            return NUMBER if qn.startswith("math.") else NO
        if not qn.startswith(_TORCH_LIBS):
            return MAYBE
        last = qn.rsplit(".", 1)[-1]
        if qn.startswith(("torch.autograd.grad", "torch.autograd.functional")):
            return MAYBE
        if last == "functional_call" and len(args) >= 3:
            # ``functional_call(model, params, (x,))`` runs the model with these
            # parameters: detached ones build no graph (for inputs without one)
            return self.computed(args[2:3]) if args[1].h is H.NO else self.fresh()
        if last in _TORCH_NO_HISTORY:
            if any(a.keyword is not None and a.keyword.value == "requires_grad" for a in c.args):
                return MAYBE
            return NO
        if qn.startswith("torch.optim") or qn.startswith("torch.utils") or qn.startswith("torch.cuda"):
            return MAYBE if last[:1].isupper() else NO
        if last[:1].isupper() and qn.startswith("torch.distributions"):
            # ``Categorical(probs)``: samples' log-probs and entropies depend on probs
            return self.computed([Val(a.h) for a in args])
        if last[:1].isupper():
            return MAYBE  # constructors: nn.Linear(...), optim.Adam(...)
        inputs = [Val(a.h) for a in args]
        if (
            last in _VALUES_INDICES
            and (len(c.args) >= 2 or _has_kw(c, "dim"))
            and last not in ("max", "min")
            or (last in ("max", "min") and (_has_kw(c, "dim") or (len(c.args) >= 2 and _is_int(c.args[1].value))))
        ):
            values = self.computed(inputs)
            return Val(values.h, items=(values, NO))
        scalar = last in _REDUCTIONS and len(c.args) == 1 and not _has_kw(c, "dim")
        return self.computed(inputs, scalar)

    def method(self, c: cst.Call, func: cst.Attribute, args: list[Val]) -> Val:
        m = func.attr.value
        receiver_kind = None
        if isinstance(func.value, (cst.Name, cst.Attribute)):
            receiver_kind = self.a.objects.kind_of(func.value, self.scope)
        base = self.ev(func.value)
        # A detaching method's name keeps its meaning (the gate reads it so: gate/loops.py).
        passed = self.a.returned_params(func, c) if m not in _DETACHING_METHODS else ()
        if passed:
            return self._returned(c, args, passed)
        backwarded = self.a.backward_returned(func, c) if m not in _DETACHING_METHODS else None
        if backwarded is not None:
            # A tensor ``backward()`` ran on has history (else it raises).
            length, places = backwarded
            if not length:
                return Val(H.YES)
            return Val(H.MAYBE, items=tuple(Val(H.YES) if i in places else MAYBE for i in range(length)))
        if receiver_kind is Kind.MODULE:
            return NO if m in _MODULE_NO_HISTORY_METHODS else MAYBE
        if receiver_kind is not None:
            return NO if m in ("step", "zero_grad", "state_dict", "get_last_lr", "load_state_dict", "update") else MAYBE
        if m in _DETACHING_METHODS:
            return NUMBER if m in _NUMBER_METHODS else NO
        if m in _VALUES_INDICES and (
            c.args and not (m in ("max", "min") and not _is_int(c.args[0].value)) or _has_kw(c, "dim")
        ):
            values = self.computed([Val(base.h)])
            return Val(values.h, items=(values, NO))
        if m in ("split", "chunk", "unbind"):
            return Val(self.computed([Val(base.h)]).h)
        if base.h is H.NO:
            return NO
        if base.h is H.MAYBE:
            return MAYBE
        if m in _REDUCTIONS:
            scalar = not c.args
        elif m in _SHAPE_KEEPING:
            scalar = base.scalar
        else:
            scalar = False
        return self.computed([base] + [Val(a.h) for a in args], scalar)

    def _returned(self, c: cst.Call, args: list[Val], passed: tuple[tuple[int, str], ...]) -> Val:
        """The value of a method returning its forward's result on the
        parameters ``passed``: history when an argument bound to one has it
        (and grad is on); unknown otherwise (the forward's own parameters
        may give it some)."""
        if any(arg.star for arg in c.args):
            return MAYBE
        chosen = []
        for at, (arg, v) in enumerate(zip(c.args, args)):
            key = arg.keyword.value if arg.keyword is not None else None
            if any((key is None and i == at) or key == p for i, p in passed):
                chosen.append(v)
        found = self.computed(chosen)
        return found if found.h is H.YES else MAYBE


def _join_value(k: str, va: Val, vb: Val, after_loop: bool = False) -> Val:
    """The value of ``k`` after two paths meet (either may be ABSENT: not
    bound on that path). ``after_loop``: ``va`` is the state before a loop
    that ran zero times, ``vb`` after its iterations; an accumulator started
    as a plain number (``total = 0.0``) or an empty list that the body made
    carry history carries it after any loop that ran."""
    if va is ABSENT or vb is ABSENT:
        present = vb if va is ABSENT else va
        if present is ABSENT or "." not in k:
            # A plain name is a local of this body: unbound on the other
            # path, so a read after the join sees this value.
            return present
        return Val(H.MAYBE) if present.h is not H.NO else present
    if after_loop and va.h is H.NO and vb.h is H.YES and (va.scalar or va.items == ()):
        return vb
    return join(va, vb)


def param_names(fn: cst.FunctionDef) -> list[str]:
    p = fn.params
    names = [x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)]
    for star in (p.star_arg, p.star_kwarg):
        if isinstance(star, cst.Param):
            names.append(star.name.value)
    return names


def _has_kw(c: cst.Call, name: str) -> bool:
    return any(a.keyword is not None and a.keyword.value == name for a in c.args)


def _is_int(e: cst.BaseExpression) -> bool:
    if isinstance(e, cst.UnaryOperation):
        e = e.expression
    return isinstance(e, cst.Integer)


def _frozen_name(func: cst.BaseExpression) -> bool:
    """EMA copies and teachers usually have frozen parameters."""
    name = (dotted_name(func) or "").lower()
    return any(tok in name for tok in ("ema", "teacher", "frozen", "swa", "averaged"))


def _reduction_none(c: cst.Call, objects: ObjectTable) -> bool:
    for arg in c.args:
        if arg.keyword is not None and arg.keyword.value == "reduction":
            return not (isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value in ("mean", "sum"))
    return objects.loss_reduction_none(c)
