"""Whether autograd is recording where a statement runs.

API (through ``facts.grad_mode``):

- ``mode_at(node) -> GradMode`` — ``ENABLED``, ``DISABLED`` or ``UNKNOWN``
  for the statement containing ``node``.
- ``is_disabled(node)`` — shorthand for ``mode_at(node) is DISABLED``.
- ``entry_mode(fn)`` — the mode a function body starts in.
- ``disabling_context(node)`` — the ``with`` statement that turns grad off
  around ``node`` in its own function, if any.
- ``method_called_without_grad(fn)`` — every ``x.<method>(...)`` in the
  module runs with grad off (calls through instances are not resolved).

Sources of a mode, innermost first:

- ``with torch.no_grad()`` / ``torch.inference_mode()`` /
  ``torch.set_grad_enabled(False)`` turn recording off, ``torch.enable_grad()``
  and ``set_grad_enabled(True)`` back on, ``set_grad_enabled(flag)`` makes it
  unknown. A bare ``torch.set_grad_enabled(False)`` statement holds for the
  statements after it in its function.
- ``with ctx:`` after ``ctx = torch.no_grad()`` (unknown when the
  assignments disagree), and ``stack.enter_context(torch.inference_mode())``
  for the statements after it in the block.
- A decorator ``@torch.no_grad()`` / ``@torch.inference_mode()`` (called or
  not) or ``@torch.enable_grad()`` sets the mode a function body starts in,
  also when applied by a call: ``predict = torch.inference_mode()(_predict)``.
  So does a decorator of the project's own that surely applies one
  (yolov5's ``@smart_inference_mode()``, off_decorators.py): off when this
  module defines it, unknown when another module does.
- Lightning's ``validation_step``/``test_step``/``predict_step`` hooks and
  the ``_forward`` of a transformers ``Pipeline`` subclass run with grad off
  (the framework disables it).
- A custom ``torch.autograd.Function`` runs its ``forward`` with grad off;
  its ``backward`` records only under ``create_graph=True`` (unknown here).
- Otherwise a function starts in the mode of its call sites in this module:
  off when every call site runs with grad off, on when every one runs with it
  on (or the function is never called here, or is passed around by name),
  unknown when they disagree; on when they disagree but the function
  backpropagates in its own body and some call (here or in another module)
  runs it with grad on: its training calls record.
"""

from __future__ import annotations

import enum
from bisect import bisect_left
from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst
from libcst.metadata import MetadataWrapper

from memlint.analysis.scope.bindings import Bindings
from memlint.analysis.scope.callgraph import CallGraph
from memlint.analysis.scope.names import ImportTable, dotted_name
from memlint.parse.traversal import OwnCodeVisitor, visit_fast
from memlint.vocabulary.frameworks import LIGHTNING_NO_GRAD_HOOKS
from memlint.vocabulary.loading import loading_name
from memlint.vocabulary.tokens import name_tokens

if TYPE_CHECKING:
    from memlint.project.view import Caller, ProjectView


class GradMode(enum.Enum):
    ENABLED = "enabled"
    DISABLED = "disabled"
    UNKNOWN = "unknown"


_OFF = frozenset({"no_grad", "inference_mode"})

# What autograd runs the static methods of a custom ``torch.autograd.Function`` under.
_AUTOGRAD_FUNCTION_METHODS = {
    "forward": GradMode.DISABLED,
    "setup_context": GradMode.DISABLED,
    "backward": GradMode.UNKNOWN,
    "jvp": GradMode.UNKNOWN,
    "vjp": GradMode.UNKNOWN,
}


def _is_autograd_function(cls: cst.ClassDef, names: ImportTable) -> bool:
    """``class F(torch.autograd.Function)`` (or ``InplaceFunction``, or a
    ``Function`` imported from ``torch.autograd``)."""
    for base in cls.bases:
        qn = names.qualified_name(base.value) if base.keyword is None else None
        if qn and qn.startswith("torch.autograd.") and qn.endswith("Function"):
            return True
    return False


def _is_pipeline(cls: cst.ClassDef) -> bool:
    """A transformers pipeline: ``Pipeline.forward`` runs ``_forward`` under
    its inference context. By name, since transformers itself imports its
    base classes relatively."""
    return any((dotted_name(b.value) or "").endswith("Pipeline") for b in cls.bases if b.keyword is None)


def context_mode(call: cst.BaseExpression, names: ImportTable) -> GradMode | None:
    """The mode a ``with`` item or decorator sets, or None when it does not
    touch grad mode (``autocast``, ``open``...)."""
    func = call.func if isinstance(call, cst.Call) else call
    qn = names.qualified_name(func)
    if qn is None or not qn.startswith("torch"):
        return None
    last = qn.rsplit(".", 1)[-1]
    args = call.args if isinstance(call, cst.Call) else ()
    if last in _OFF:
        if last == "inference_mode" and args:
            return _literal_bool(args[0].value, invert=True)
        return GradMode.DISABLED
    if last == "enable_grad":
        return GradMode.ENABLED
    if last == "set_grad_enabled":
        if not args:
            return None
        return _literal_bool(args[0].value, invert=False)
    return None


def _project_decorator_mode(
    decorator: cst.BaseExpression, own: dict[str, str], imported: dict[str, str]
) -> GradMode | None:
    """A decorator of the project's own that runs the function with grad off
    (off_decorators.py), used as its kind says (``@smart()`` for a factory,
    ``@off`` for a decorator). One of this module is DISABLED, as its gate
    card sees it (gate/eval.py reads decorators named by the file's own
    defs). One imported from another module is UNKNOWN: only ever towards
    unknown from the project, so a finding it removes is one the gate let
    through, and none (MEM202's) appears that the gate did not see."""
    func = decorator.func if isinstance(decorator, cst.Call) else decorator
    name = dotted_name(func)
    if name is None:
        return None
    want = "called" if isinstance(decorator, cst.Call) else "bare"
    if name in own:
        return GradMode.DISABLED if own[name] == want else None
    return GradMode.UNKNOWN if imported.get(name) == want else None


# Words in the name of a context manager from elsewhere that may turn grad off.
_HELPER_CONTEXT_TOKENS = frozenset(
    {
        "eval",
        "evaluating",
        "evaluation",
        "evaluate",
        "inference",
        "infer",
        "inferencing",
        "grad",
        "nograd",
        "predict",
        "predicting",
        "testing",
        "frozen",
        "freeze",
        "freezing",
    }
)


def _yields(fn: cst.FunctionDef) -> list[cst.Yield]:
    """The ``yield`` expressions of ``fn`` itself (not of nested functions)."""
    visitor = _Yields(fn)
    visit_fast(fn, visitor)
    return visitor.found


class _Yields(OwnCodeVisitor):
    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, fn: cst.FunctionDef) -> None:
        super().__init__()
        self.own = fn
        self.found: list[cst.Yield] = []

    def visit_Yield(self, node: cst.Yield) -> None:
        self.found.append(node)


def _literal_bool(expr: cst.BaseExpression, invert: bool) -> GradMode:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        on = (expr.value == "True") != invert
        return GradMode.ENABLED if on else GradMode.DISABLED
    return GradMode.UNKNOWN


class GradModeAnalysis:
    """Computed on demand: a query walks up from the node to its function,
    looking for a ``with`` that sets the mode (memoised per ``with``), then at
    the function's bare ``set_grad_enabled`` statements and its entry mode.
    No traversal of the module of its own."""

    def __init__(
        self,
        wrapper: MetadataWrapper,
        names: ImportTable,
        calls: CallGraph,
        bindings: Callable[[], Bindings],
        project: ProjectView | None = None,
    ) -> None:
        self.wrapper = wrapper
        self.project = project
        self._bindings = bindings  # built only when a ``with name:`` is asked about
        self.names = names
        self.calls = calls
        self.parents = calls.parents
        self._decorated: dict[cst.FunctionDef, GradMode] = {}
        own, imported = self._off_decorators(wrapper, names, project)
        for fn in calls.functions:
            for dec in fn.decorators:
                mode = context_mode(dec.decorator, names)
                if mode is None and (own or imported):
                    mode = _project_decorator_mode(dec.decorator, own, imported)
                if mode is not None:
                    self._decorated[fn] = mode
            cls = calls.class_of.get(fn)
            if cls is None:
                continue
            if fn.name.value in LIGHTNING_NO_GRAD_HOOKS:
                self._decorated.setdefault(fn, GradMode.DISABLED)
            elif fn.name.value == "_forward" and _is_pipeline(cls):
                self._decorated.setdefault(fn, GradMode.DISABLED)
            elif fn.name.value in _AUTOGRAD_FUNCTION_METHODS and _is_autograd_function(cls, names):
                self._decorated.setdefault(fn, _AUTOGRAD_FUNCTION_METHODS[fn.name.value])
        # ``predict = torch.inference_mode()(_predict)``: a decorator applied by a call.
        by_name = {fn.name.value: fn for fn in calls.functions}
        for call in (c for scope_calls in calls.calls_in.values() for c in scope_calls):
            if isinstance(call.func, cst.Call) and call.args and isinstance(call.args[0].value, cst.Name):
                fn = by_name.get(call.args[0].value.value)
                mode = context_mode(call.func, names)
                if fn is not None and mode is not None:
                    self._decorated.setdefault(fn, mode)
        # ``torch.set_grad_enabled(False)`` as a statement, per scope.
        self._bare: dict[object, list[tuple[cst.Call, GradMode]]] = {}
        for scope, scope_calls in calls.calls_in.items():
            for call in scope_calls:
                qn = names.call_name(call)
                if qn and qn.startswith("torch") and qn.endswith("set_grad_enabled"):
                    mode = context_mode(call, names)
                    if mode is not None and isinstance(self.parents.get(call), cst.Expr):
                        self._bare.setdefault(scope, []).append((call, mode))
        self._with_memo: dict[cst.With, GradMode | None] = {}
        self._local_memo: dict[cst.CSTNode, tuple] = {}
        self._entered: dict[cst.IndentedBlock, dict] = {}
        self._bare_starts: dict[object, list[tuple[int, int]]] = {}
        self._method_calls: dict[str, list[cst.Call]] | None = None
        self._entry: dict[cst.FunctionDef, GradMode] = {}
        self._busy: set[cst.FunctionDef] = set()

    @staticmethod
    def _off_decorators(
        wrapper: MetadataWrapper, names: ImportTable, project: ProjectView | None
    ) -> tuple[dict[str, str], dict[str, str]]:
        """The grad-off decorators this module defines, and those it imports
        from other project modules (off_decorators.py), by local name -> kind."""
        from memlint.analysis.autograd.off_decorators import off_decorators

        own = off_decorators(wrapper.module, names)
        imported = dict(project.off_decorators) if project is not None else {}
        return own, imported

    # == local mode ========================================================
    def _with_mode(self, node: cst.With) -> GradMode | None:
        if node not in self._with_memo:
            mode = None
            for item in node.items:
                m = self._item_mode(item.item, node)
                if m is not None:
                    mode = m
            self._with_memo[node] = mode
        return self._with_memo[node]

    def _entered_before(self, block: cst.IndentedBlock, child: cst.CSTNode) -> GradMode | None:
        """``stack.enter_context(torch.inference_mode())`` earlier in the block
        (``child`` being one of its statements). One pass per block records
        the mode in force before each statement, so that a query costs no
        rescan of the statements before it."""
        table = self._entered.get(block)
        if table is None:
            table = self._entered[block] = self._entered_table(block)
        at = table.get(id(child))
        return at[1] if at is not None and at[0] is child else None

    def _entered_table(self, block: cst.IndentedBlock) -> dict[int, tuple[cst.CSTNode, GradMode | None]]:
        """id(statement) -> (statement, mode entered by the statements before it)."""
        table = {}
        mode = None
        for stmt in block.body:
            table[id(stmt)] = (stmt, mode)
            for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else ():
                call = small.value if isinstance(small, cst.Expr) else None
                if (
                    isinstance(call, cst.Call)
                    and isinstance(call.func, cst.Attribute)
                    and call.func.attr.value == "enter_context"
                    and call.args
                ):
                    mode = context_mode(call.args[0].value, self.names) or mode
        return table

    def _item_mode(self, item: cst.BaseExpression, node: cst.With) -> GradMode | None:
        """``with torch.no_grad():``, or ``with ctx:`` after ``ctx =
        torch.no_grad()`` (UNKNOWN when the assignments disagree:
        ``torch.no_grad() if evaluating else nullcontext()``)."""
        if not isinstance(item, cst.Name):
            return context_mode(item, self.names) or self._helper_mode(item)
        scope = self.parents.get(node)
        while scope is not None and not isinstance(scope, (cst.FunctionDef, cst.Module)):
            scope = self.parents.get(scope)
        values = self._bindings().values(item.value, scope if scope is not None else self.calls.module)
        if None in values:
            return None  # also bound by ``with ... as`` or a loop: not followed
        modes = set()
        for value in values:
            branches = (value.body, value.orelse) if isinstance(value, cst.IfExp) else (value,)
            modes.update(context_mode(b, self.names) for b in branches)
        if not modes or modes == {None}:
            return None
        return modes.pop() if len(modes) == 1 else GradMode.UNKNOWN

    def _helper_mode(self, item: cst.BaseExpression) -> GradMode | None:
        """``with eval_mode(model):`` — a context manager of the project's own.
        Defined here: the mode its body sets around its ``yield`` (off for
        ``model.eval(); with torch.no_grad(): yield``). Defined elsewhere and
        named for evaluation or grad (``evaluating``, ``inference``,
        ``no_grad_ctx``): unknown, since it may well turn grad off."""
        if not isinstance(item, cst.Call):
            return None
        fn = self.calls.resolve(item)
        if fn is not None:
            modes = {self.mode_at(y) for y in _yields(fn)}
            return modes.pop() if len(modes) == 1 and GradMode.DISABLED in modes else None
        qn = self.names.call_name(item) or dotted_name(item.func) or ""
        if qn.startswith("torch"):
            return None
        if name_tokens(qn.rsplit(".", 1)[-1]) & _HELPER_CONTEXT_TOKENS:
            return GradMode.UNKNOWN
        return None

    def _local(self, node: cst.CSTNode) -> tuple:
        """(mode set inside the function or None, disabling ``with`` or None,
        the function or module the node runs in)."""
        found = self._local_memo.get(node)
        if found is not None:
            return found
        prev: cst.CSTNode = node
        cur = self.parents.get(node)
        result = None
        # Exact class tests: isinstance() on libcst's ABCs is slow on a miss.
        while cur is not None and cur.__class__ is not cst.FunctionDef and cur.__class__ is not cst.Module:
            if result is None and cur.__class__ is cst.With and prev is cur.body:
                mode = self._with_mode(cur)
                if mode is not None:
                    result = (mode, cur if mode is GradMode.DISABLED else None)
            if result is None and cur.__class__ is cst.IndentedBlock:
                mode = self._entered_before(cur, prev)  # None unless prev is one of its statements
                if mode is not None:
                    result = (mode, None)
            prev, cur = cur, self.parents.get(cur)
        scope = cur if cur is not None else self.calls.module
        if result is None:
            result = (self._bare_mode(node, scope), None)
        found = (result[0], result[1], scope)
        self._local_memo[node] = found
        return found

    def _bare_mode(self, node: cst.CSTNode, scope) -> GradMode | None:
        bare = self._bare.get(scope)
        if not bare:
            return None
        # The last bare call before ``node``: calls are listed in source order.
        starts = self._bare_starts.get(scope)
        if starts is None:
            starts = self._bare_starts[scope] = [self.calls.pos(call) for call, _ in bare]
        k = bisect_left(starts, self.calls.pos(node))
        return bare[k - 1][1] if k else None

    # == queries ===========================================================
    def mode_at(self, node: cst.CSTNode) -> GradMode:
        if isinstance(node, cst.FunctionDef):
            return self.entry_mode(node)
        local, _, scope = self._local(node)
        if local is not None:
            return local
        if isinstance(scope, cst.FunctionDef):
            return self.entry_mode(scope)
        return GradMode.ENABLED

    def local_mode(self, node: cst.CSTNode) -> GradMode | None:
        """The mode set around ``node`` inside its own function, or None when
        it is the mode the function starts in."""
        return self._local(node)[0]

    def is_disabled(self, node: cst.CSTNode) -> bool:
        return self.mode_at(node) is GradMode.DISABLED

    def disabling_context(self, node: cst.CSTNode) -> cst.With | None:
        """The ``with`` in the same function that turns grad off around ``node``."""
        return self._local(node)[1]

    def decorator_mode(self, fn: cst.FunctionDef) -> GradMode | None:
        return self._decorated.get(fn)

    def method_called_without_grad(self, fn: cst.FunctionDef) -> bool:
        """Every ``x.<name>(...)`` call in this module that could reach the
        method ``fn`` runs with grad off: ``ema.update(model)`` under
        ``torch.no_grad()``, where the receiver's class is not known."""
        if fn not in self.calls.class_of:
            return False
        if self._method_calls is None:  # listed once, not per method asked about
            self._method_calls = {}
            for calls in self.calls.calls_in.values():
                for call in calls:
                    if isinstance(call.func, cst.Attribute):
                        self._method_calls.setdefault(call.func.attr.value, []).append(call)
        sites = self._method_calls.get(fn.name.value, [])
        return bool(sites) and all(self.mode_at(call) is GradMode.DISABLED for call in sites)

    def loader_called_without_grad(self, fn: cst.FunctionDef) -> bool:
        """``fn`` is a method that says it loads weights (``load_from``),
        called from another module of the project, and every use of its
        name in the project is a call under ``no_grad`` (ViT's
        ``unit.load_from(weights)`` inside the caller's ``with
        torch.no_grad():``): the in-place copies it makes record nothing."""
        project = self.project
        name = fn.name.value
        if project is None or fn not in self.calls.class_of or not loading_name(name):
            return False
        if name not in project.loading_elsewhere or name in project.loading_grad_elsewhere:
            return False
        self.method_called_without_grad(fn)  # lists this module's method calls once
        local = (self._method_calls or {}).get(name, [])
        return all(self.mode_at(call) is GradMode.DISABLED for call in local)

    def external_callers(self, fn: cst.FunctionDef) -> tuple[Caller, ...]:
        """Calls of ``fn`` (a module-level function) from other modules of the
        project, with the grad mode around each; () when unknown."""
        if self.project is None or fn in self.calls.class_of or self.calls.owner.get(fn) is not self.calls.module:
            return ()
        return self.project.callers_of(fn.name.value)

    def _called_off_elsewhere(self, fn: cst.FunctionDef) -> bool:
        """``fn`` is a method no call of this module reaches, and the other
        modules that call a method of its name do so only with grad off or
        in a mode they cannot tell (XLM's ``decoder.generate_beam(...)``,
        reached from ``run_all_evals``' ``torch.no_grad()``): the receiver's
        class is not known there, so the name is all there is, and the mode
        it runs in is not this module's to say."""
        project = self.project
        if project is None or fn not in self.calls.class_of or fn.name.value not in project.methods_off_elsewhere:
            return False
        self.method_called_without_grad(fn)  # lists this module's method calls once
        # ``model.generate_beam(src)`` here may reach it too: this module's calls decide.
        return fn.name.value not in (self._method_calls or {})

    def uncalled_method(self, fn: cst.FunctionDef) -> bool:
        """``fn`` is a method named for evaluation that nothing in the project
        calls: no call of this module reaches it (directly, through a
        subclass, or by its name on any receiver), it is handed out nowhere,
        and no other module calls a method of its name (SymbolicMathematics'
        ``TransformerModel.generate``, decoding done by ``generate_beam``).
        The mode it would run in is nobody's to say (MEM201). Without a
        project view (a text linted alone), no other module is known to call
        it either."""
        project = self.project
        if fn not in self.calls.class_of or fn in self.calls.escapes:
            return False
        if project is not None and fn.name.value not in project.methods_uncalled_elsewhere:
            return False
        if self.calls.call_sites.get(fn) or self.calls.inherited_sites.get(fn):
            return False
        self.method_called_without_grad(fn)  # lists this module's method calls once
        return fn.name.value not in (self._method_calls or {})

    def _delegated_off_elsewhere(self, fn: cst.FunctionDef) -> bool:
        """``fn`` is a method whose name other modules call only with grad
        off, and this module's own calls of that name prove no grad-on
        entry: each runs off or in a mode it cannot tell (flowtron's
        ``Flowtron.infer`` calling ``self.encoder.infer(text)``, itself
        entered under inference.py's ``torch.no_grad()``), or sits in a
        method no call reaches (whose grad-on entry is a default, not a
        fact). The caller's mode flows down the attribute call; one call
        entered with grad on still decides (``_called_off_elsewhere``)."""
        project = self.project
        if project is None or fn not in self.calls.class_of or fn.name.value not in project.methods_off_elsewhere:
            return False
        self.method_called_without_grad(fn)  # lists this module's method calls once
        sites = (self._method_calls or {}).get(fn.name.value, [])
        return bool(sites) and all(self._proves_no_grad_on_entry(call) for call in sites)

    def _proves_no_grad_on_entry(self, call: cst.Call) -> bool:
        local, _, scope = self._local(call)
        mode = local if local is not None else self.mode_at(scope) if isinstance(scope, cst.FunctionDef) else None
        if mode is None:
            return False  # module level: a script's own call, grad on
        if mode is not GradMode.ENABLED:
            return True
        return local is None and self._unreached_method(scope)

    def _unreached_method(self, fn: cst.FunctionDef) -> bool:
        """A method no call of this module reaches and nothing hands out."""
        return (
            fn in self.calls.class_of
            and fn not in self._decorated
            and fn not in self.calls.escapes
            and not self.calls.call_sites.get(fn)
            and not self.calls.inherited_sites.get(fn)
        )

    def _trains_on_some_call(self, fn: cst.FunctionDef, sites, external) -> bool:
        """``fn`` backpropagates in its own body and at least one call, here
        or in another module, runs it with grad on (``train_one_epoch`` run
        for training, then again under ``torch.no_grad()`` for validation):
        on its training calls every statement records, so what it keeps
        across its loop keeps graphs there, whatever its other calls do. The
        grad-on call must be a fact: a default (no caller seen) or a closure
        handed out does not count."""
        if not any(self._is_backward(call) for call in self.calls.calls_in.get(fn, ())):
            return False
        if any(c.grad == "on" for c in external):
            return True
        return any(self.mode_at(call) is GradMode.ENABLED for call in sites)

    def entered_with_grad_here(self, node: cst.CSTNode) -> bool:
        """``node`` runs in the mode its function starts in, which its calls
        leave unknown because they disagree, and one call of this module runs
        it with grad on (FlowNetPytorch's ``validate``, called bare for
        ``--evaluate`` and under ``torch.no_grad()`` in the epoch loop):
        RULES.md's MEM201 judges a helper "not called only from a no_grad
        context in the same module". Calls from other modules keep their own
        rule (label decision ``callers``): any of them off, or one this
        module cannot tell, and nothing is claimed; so does a function
        handed out, decorated, or reached through a subclass or a name."""
        local, _, scope = self._local(node)
        if local is not None or not isinstance(scope, cst.FunctionDef):
            return False
        if self.entry_mode(scope) is not GradMode.UNKNOWN or scope in self._decorated or scope in self.calls.escapes:
            return False
        if self.calls.inherited_sites.get(scope) or self._called_off_elsewhere(scope):
            return False
        if self._delegated_off_elsewhere(scope) or any(c.grad != "on" for c in self.external_callers(scope)):
            return False
        sites = self.calls.call_sites.get(scope, ())
        return any(self.mode_at(call) is GradMode.ENABLED for call in sites)

    def _is_backward(self, call: cst.Call) -> bool:
        """``loss.backward()``, ``scaler.scale(loss).backward()``: the call
        that needs a graph, so its scope trains."""
        func = call.func
        return isinstance(func, cst.Attribute) and func.attr.value == "backward"

    def entry_mode(self, fn: cst.FunctionDef) -> GradMode:
        if fn in self._decorated:
            return self._decorated[fn]
        if fn in self._entry:
            return self._entry[fn]
        if fn in self._busy:
            return GradMode.UNKNOWN
        self._busy.add(fn)
        try:
            # With ``self.<name>()`` calls of a base class's method that a
            # subclass inherits (FCGF's ``AlignmentTrainer.train`` running a
            # subclass's ``_valid_epoch`` under ``no_grad``).
            sites = (*self.calls.call_sites.get(fn, ()), *self.calls.inherited_sites.get(fn, ()))
            modes = {self.mode_at(call) for call in sites}
            if fn in self.calls.escapes and isinstance(self.calls.owner.get(fn), cst.FunctionDef):
                # A closure handed out by its factory (``make_val_step_fn``
                # returns ``perform_val_step_fn``): whoever receives it calls
                # it, in a mode this module does not show.
                modes.add(GradMode.UNKNOWN)
            if not modes and self._called_off_elsewhere(fn):
                modes.add(GradMode.UNKNOWN)
            elif self._delegated_off_elsewhere(fn):
                modes.add(GradMode.UNKNOWN)
            if not modes or fn in self.calls.escapes:
                modes.add(GradMode.ENABLED)
            external = self.external_callers(fn)
            if any(c.grad != "on" for c in external):
                # A caller in another module runs it with grad off (or we
                # cannot tell): the mode it runs in is not this module's to
                # say. Only ever towards unknown, so a finding the project
                # removes is one the gate let through.
                modes.add(GradMode.UNKNOWN)
            result = next(iter(modes)) if len(modes) == 1 else GradMode.UNKNOWN
            if result is GradMode.UNKNOWN and self._trains_on_some_call(fn, sites, external):
                result = GradMode.ENABLED
        finally:
            self._busy.discard(fn)
        self._entry[fn] = result
        return result
