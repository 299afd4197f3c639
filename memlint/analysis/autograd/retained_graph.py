"""Whether a graph kept by ``backward(retain_graph=True)`` can be
backpropagated again.

API (``RetainedGraph(facts)``):

- ``operand(call)`` — the tensor a backward call differentiates:
  ``loss`` for ``loss.backward()``, ``scaler.scale(loss).backward()``,
  ``torch.autograd.grad(loss, ...)``, ``accelerator.backward(loss)``.
- ``fresh(first, later, loop, scope)`` — the ``later`` backward runs on a
  graph built after ``first`` from the loop's data only: no name both depend
  on is computed inside ``loop`` (other than the loop's own targets), so it
  cannot reach the buffers ``first`` retained. A shared ``fake`` (GAN), a
  shared ``out`` (multi-loss) or a shared ``feats`` keep it False.
- ``dies_in(call, fn)`` — every tensor of the graph ``call`` backpropagates is
  computed in ``fn`` and none outlives it: not stored on an attribute or in
  a container from outside, not returned (``fn`` returns no history), not
  read after the call except for its ``.grad``, not handed to a call that is
  not a model, loss or torch function, not captured by a nested function.
  Then no caller can backpropagate through it again (saliency and Grad-CAM
  helpers called once per image).
- ``apart(first, later, scope)`` — flow-sensitively (``graph_origins``), the
  ``later`` backward's graph runs through no value ``first``'s graph runs
  through, reads no outside name both read, and ``first``'s values are not
  stored anywhere a later read could find them. An SAC update that recomputes
  ``actions, log_probs`` before the actor loss, or detaches the target.
- ``built_here(call, fn)`` — the graph ``call`` backpropagates is built in
  ``fn`` from leaves and modules only (no parameter or attribute holding a
  graph), none of its values is stored, returned or captured: it dies with
  the call of ``fn``.
- ``built_from(call, fn)`` — the same, but the graph may read names from
  outside ``fn``: those names (a helper's ``weight`` parameter), or None.

Names are compared by spelling through ``facts.usage``'s flow-insensitive
dependencies, so a rebinding anywhere makes the answer "shared": silent.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.autograd.graph_origins import Origins, dominates, graph_origins
from memlint.analysis.autograd.history import H, param_names
from memlint.analysis.scope.blocks import inside
from memlint.analysis.scope.callgraph import bound_params
from memlint.analysis.scope.names import dotted_name, mentions

# Reads of a graph tensor after its backward that do not reach the graph.
_EXPRESSION_PARTS = (
    cst.Attribute,
    cst.Subscript,
    cst.SubscriptElement,
    cst.Index,
    cst.BinaryOperation,
    cst.UnaryOperation,
    cst.Comparison,
    cst.ComparisonTarget,
)
_CUT = frozenset({"data", "detach", "item", "numpy", "tolist"})
_LOGGING = frozenset({"add_scalar", "add_scalars", "add_histogram"})
_HARMLESS_ATTRS = frozenset({"grad", "shape", "dtype", "device", "detach", "item", "size", "requires_grad"})


class RetainedGraph:
    def __init__(self, facts) -> None:
        self.facts = facts

    def operand(self, call: cst.Call) -> cst.BaseExpression | None:
        func = call.func
        receiver = func.value if isinstance(func, cst.Attribute) and func.attr.value == "backward" else None
        if receiver is None or (isinstance(receiver, cst.Call) and not isinstance(receiver.func, cst.Attribute)):
            receiver = call.args[0].value if call.args else None
        if (
            isinstance(receiver, cst.Call)
            and isinstance(receiver.func, cst.Attribute)
            and receiver.func.attr.value == "scale"
        ):
            receiver = receiver.args[0].value if receiver.args else None  # scaler.scale(loss)
        return receiver

    def fresh(self, first: cst.Call, later: cst.Call, loop, scope) -> bool:
        a, b = self.operand(first), self.operand(later)
        if a is None or b is None:
            return False
        usage = self.facts.usage
        index = self.facts.recurrent.bindings_in(scope)

        def built_in_loop(key: str) -> bool:
            return any(
                loop.contains(b.pos) and not (b.kind == "for" and b.stmt is loop.node) for b in index.get(key, ())
            )

        first_graph = {k for k in usage.sources(a, scope) if built_in_loop(k)}
        if any("." in k or not built_in_loop(k) for k in usage.derived(first_graph, scope)):
            return False  # stored where a later computation may reach it
        return not (first_graph & usage.sources(b, scope))

    def origins(self, call: cst.Call, scope) -> Origins | None:
        operand = self.operand(call)
        if operand is None:
            return None
        found = graph_origins(operand, scope, self.facts)
        return found if found.complete else None

    def apart(self, first: cst.Call, later: cst.Call, scope) -> bool:
        a, b = self.origins(first, scope), self.origins(later, scope)
        if a is None or b is None:
            return False
        if (a.bindings & b.bindings) or (a.outside & b.outside):
            return False
        return not self._stored(a, scope)

    def built_here(self, call: cst.Call, fn: cst.FunctionDef) -> bool:
        return self.built_from(call, fn) == frozenset()

    def built_from(self, call: cst.Call, fn: cst.FunctionDef) -> frozenset[str] | None:
        """What ``built_here`` asks, but the graph may read names from outside:
        those names (``weight`` in ``penalty * weight``), or None when the
        graph is not built here or outlives ``fn``."""
        graph = self.origins(call, fn)
        if graph is None or not graph.bindings:
            return None
        if self.facts.history.returns(fn).h is not H.NO:
            return None
        if self._stored(graph, fn):
            return None
        keys = graph.keys()
        if any(mentions(n, key) for n in _nested_functions(fn) for key in keys):
            return None
        return frozenset(graph.outside)

    def _stored(self, graph: Origins, scope) -> bool:
        """A value of ``graph`` flows into an attribute, a container filled in
        place, a return, or an argument of a call that is no model, loss or
        torch function (which might keep it)."""
        usage = self.facts.usage
        keys = graph.keys()
        if any("." in k for k in keys | usage.derived(keys, scope, graph=True)):
            return True
        index = self.facts.recurrent.bindings_in(scope)
        for key in keys:
            after = self._bound_by(graph, key)
            for read in usage.reads(key, scope):
                if self._kept_local(read):
                    continue
                if after is not None and self._rebound_before(key, after, read, index, graph.bindings):
                    continue  # ``out = model(x)[0]`` again before it: the read sees another value
                return True
        return False

    def _bound_by(self, graph: Origins, key: str) -> tuple[int, int] | None:
        """Where the last of ``graph``'s assignments to ``key`` ends."""
        calls = self.facts.calls
        ends = [calls.end(stmt) for stmt in graph.bindings if key in _assigned_keys(stmt)]
        return max(ends) if ends else None

    def _kept_local(self, read: cst.CSTNode) -> bool:
        """Like ``_local_read``; a backward, a method of one of ``self``'s
        modules, a logging call (``writer.add_scalar``) and a function of this
        module that keeps none of its arguments (GDPP's nested
        ``normalize_min_max(eig)``) also keep it here."""
        parents = self.facts.calls.parents
        if isinstance(parents.get(read), cst.Param) or _harmless_read(read, parents):
            return True
        objects = self.facts.objects
        cur = read
        while True:
            parent = parents.get(cur)
            if parent is None:
                return False
            if isinstance(parent, cst.AssignTarget) or (
                isinstance(parent, (cst.Element, cst.Tuple, cst.List)) and _in_target(parent, parents)
            ):
                return True  # rebound
            if isinstance(parent, cst.Arg) and parent.keyword is cur:
                return True  # ``f(loss=meter)``: the keyword's name, not a read
            if isinstance(parent, cst.Attribute) and parent.value is cur and parent.attr.value in _CUT:
                return True  # ``losses.update(loss.data)``: what follows holds no graph
            if isinstance(parent, cst.Arg):
                call = parents.get(parent)
                if not isinstance(call, cst.Call):
                    return False
                qn = self.facts.names.call_name(call) or ""
                func = call.func
                logging = isinstance(func, cst.Attribute) and func.attr.value in _LOGGING
                if not (
                    objects.is_model_call(call)
                    or objects.is_loss_call(call)
                    or qn.startswith("torch")
                    or objects.is_backward_call(call)
                    or self._module_method(call)
                    or logging
                    or self._passes_through(call)
                ):
                    return False
                cur = call
                continue
            if isinstance(parent, cst.Call) and parent.func is cur:
                cur = parent
                continue
            if isinstance(parent, _EXPRESSION_PARTS):
                cur = parent
                continue
            if isinstance(parent, cst.Assign):
                return all(isinstance(t.target, (cst.Name, cst.Tuple)) for t in parent.targets)
            return isinstance(parent, (cst.Expr, cst.If, cst.While))

    def _module_method(self, call: cst.Call) -> bool:
        """``self.value(state)``, ``self.critic.forward(s, a)``, ``self.criterion(a, b)``:
        a call on an attribute of ``self`` only ever assigned a class instance."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("forward", "__call__"):
            func = func.value
        key = dotted_name(func)
        if key is None or not key.startswith("self.") or key.count(".") != 1:
            return False
        values = self.facts.bindings.values(key)
        if not values:
            return False
        for v in values:
            name = dotted_name(v.func) if isinstance(v, cst.Call) else None
            if name is None or not name.rsplit(".", 1)[-1][:1].isupper():
                return False
        return True

    def dies_in(self, call: cst.Call, fn: cst.FunctionDef) -> bool:
        operand = self.operand(call)
        if operand is None:
            return False
        facts = self.facts
        history = facts.history
        if history.returns(fn).h is not H.NO:
            return False
        index = facts.recurrent.bindings_in(fn)
        usage = facts.usage
        built = {k for k in usage.sources(operand, fn) if k in index}
        if not built:
            return False
        graph = usage.derived(built, fn)
        params = set(param_names(fn)) - {"self", "cls"}
        for key in (usage.sources(operand, fn) | graph) & params:
            if not self._tensor_param(key, fn):
                continue  # ``model`` called, ``label`` used as an index
            if not self._leaf_param(key, fn):
                return False  # the caller's graph may be part of this one
        nested = _nested_functions(fn)
        end = facts.calls.end(call)
        for key in graph:
            if "." in key or key not in index:
                return False  # an attribute, or a container that comes from outside
            if any(mentions(n, key) for n in nested):
                return False
            for read in usage.reads(key, fn):
                if isinstance(facts.calls.parents.get(read), cst.Param):
                    continue
                if inside(read, call, facts.calls.parents):
                    continue
                if facts.calls.pos(read) >= end:
                    if not _harmless_read(read, facts.calls.parents) and not self._rebound_before(
                        key, end, read, index
                    ):
                        return False
                elif not self._local_read(read):
                    return False
        return True

    def _rebound_before(
        self, key: str, after: tuple[int, int], read: cst.CSTNode, index, skip: set | frozenset = frozenset()
    ) -> bool:
        """``key`` is assigned anew between ``after`` and ``read`` on every
        path: ``output = input.grad.numpy()`` after the backward, then ``output[0]``
        (an assignment in ``skip`` does not count)."""
        calls = self.facts.calls
        at = calls.pos(read)
        return any(
            b.kind == "assign"
            and b.stmt not in skip
            and after <= b.pos
            and calls.end(b.stmt) <= at
            and dominates(b.stmt, read, self.facts)
            for b in index.get(key, ())
        )

    def _passes_through(self, call: cst.Call) -> bool:
        """A function of this module that keeps none of its arguments: each
        parameter flows into no attribute, no container and no nested function
        (``def forward(self, x): return self.model(x)``)."""
        callee = self.facts.calls.resolve(call)
        if callee is None:
            return False
        usage = self.facts.usage
        nested = _nested_functions(callee)
        for _arg, param in bound_params(call, callee):
            if any("." in k for k in usage.derived({param}, callee)):
                return False
            if any(mentions(n, param) for n in nested):
                return False
        return True

    def _tensor_param(self, key: str, fn: cst.FunctionDef) -> bool:
        """Some read of the parameter is neither a callee nor an index."""
        parents = self.facts.calls.parents
        for read in self.facts.usage.reads(key, fn):
            parent = parents.get(read)
            if isinstance(parent, cst.Param) or (isinstance(parent, cst.Call) and parent.func is read):
                continue
            if isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.AssignTarget)):
                continue  # ``if target is None``, ``target = np.argmax(...)``
            if isinstance(parent, cst.Index) and isinstance(parents.get(parent), cst.SubscriptElement):
                continue
            return True
        return False

    def _leaf_param(self, key: str, fn: cst.FunctionDef) -> bool:
        """The parameter holds no history of the caller's: every call site in
        this module passes a value without history or, when no call site is
        known, the function reads the parameter's ``.grad`` (only a leaf has one)."""
        sites = self.facts.calls.call_sites.get(fn, [])
        if sites:
            if fn in self.facts.calls.escapes:
                return False
            for site in sites:
                arg = next((a for a, p in bound_params(site, fn) if p == key), None)
                v = self.facts.history.value(arg.value) if arg is not None else None
                if v is None or v.h is not H.NO:
                    return False
            return True
        parents = self.facts.calls.parents
        for read in self.facts.usage.reads(key, fn):
            parent = parents.get(read)
            if isinstance(parent, cst.Attribute) and parent.value is read and parent.attr.value == "grad":
                return True
        return False

    def _local_read(self, read: cst.CSTNode) -> bool:
        """A read before the backward that keeps the tensor in this function:
        arithmetic, indexing, methods, an assignment to a local, an argument
        of a model, loss or torch call."""
        parents = self.facts.calls.parents
        objects = self.facts.objects
        cur = read
        while True:
            parent = parents.get(cur)
            if parent is None:
                return False
            if isinstance(parent, (cst.AssignTarget, cst.For)) and cur is not getattr(parent, "iter", None):
                return True  # the binding itself
            if isinstance(parent, cst.Arg):
                call = parents.get(parent)
                if not isinstance(call, cst.Call):
                    return False
                qn = self.facts.names.call_name(call) or ""
                if not (
                    objects.is_model_call(call)
                    or objects.is_loss_call(call)
                    or qn.startswith("torch")
                    or self._passes_through(call)
                ):
                    return False
                cur = call
                continue
            if isinstance(parent, cst.Call) and parent.func is cur:
                cur = parent
                continue
            if isinstance(parent, cst.Attribute) and parent.value is cur and parent.attr.value in _CUT:
                return True  # ``output.cpu().data.numpy()``: what follows holds no graph
            if isinstance(parent, _EXPRESSION_PARTS):
                cur = parent
                continue
            if isinstance(parent, cst.Assign):
                return all(isinstance(t.target, (cst.Name, cst.Tuple)) for t in parent.targets)
            if isinstance(parent, (cst.Expr, cst.If, cst.While)):
                return True
            return False


class _NestedFunctions(cst.CSTVisitor):
    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, fn: cst.FunctionDef) -> None:
        super().__init__()
        self.fn = fn
        self.found: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node is not self.fn and isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            self.found.append(node)
            return False
        return True


def _nested_functions(fn: cst.FunctionDef) -> list[cst.CSTNode]:
    visitor = _NestedFunctions(fn)
    fn.visit(visitor)
    return visitor.found


def _assigned_keys(stmt: cst.CSTNode) -> set[str]:
    """The names and attributes an assignment statement binds."""
    return Origins(bindings={stmt}).keys() if isinstance(stmt, cst.Assign) else set()


def _in_target(node: cst.CSTNode, parents) -> bool:
    """``node`` is part of ``a, b = ...``'s target."""
    cur = node
    while isinstance(cur, (cst.Element, cst.Tuple, cst.List, cst.StarredElement)):
        cur = parents.get(cur)
    return isinstance(cur, cst.AssignTarget)


def _harmless_read(read: cst.CSTNode, parents) -> bool:
    """``x.grad`` / ``loss.item()`` after the backward: not the graph."""
    parent = parents.get(read)
    if isinstance(parent, cst.Attribute) and parent.value is read and parent.attr.value in _HARMLESS_ATTRS:
        return True
    if isinstance(parent, cst.AssignTarget) or (
        isinstance(parent, cst.Assign) and read in [t.target for t in parent.targets]
    ):
        return True  # rebound: the old tensor is gone
    return False
