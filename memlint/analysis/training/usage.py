"""Where a value goes after it is computed.

API (through ``facts.usage``):

- ``reaches_backward(key, scope)`` — the name (``total``) or attribute
  (``self.log_probs``) feeds a backward call or ``autograd.grad``, directly or
  through other names and containers: ``loss = total / n; loss.backward()``,
  ``torch.stack(saved).sum().backward()``, or through a function of this
  module that backpropagates the parameter it is passed to. Attributes count module-wide (one
  method fills ``policy.saved_log_probs``, another backpropagates through it).
- ``reaches_return(key, scope)`` — the same for ``return``/``yield``.
- ``sources(expr, scope)`` / ``derived(keys, scope)`` — the names a value
  is computed from / the names computed from given ones (flow-insensitive).
- ``numeric_uses_only(key, scope, after, skip)`` — every read of ``key`` in
  ``scope`` from position ``after`` on (outside the node ``skip``) treats it
  as a number: ``print``, f-strings, ``%``/``.format``, comparisons,
  ``float()``/``int()``/``round()``, arithmetic whose result is itself used
  only so. Anything else (returned, passed to an unknown call, a method
  called on it) is not.

Keys are dotted spellings: ``total``, ``self.buf``, ``policy.saved_log_probs``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

import libcst as cst
from libcst.metadata import MetadataWrapper

from memlint.analysis.autograd.graph_reach import CUTTING_FUNCTIONS, CUTTING_METHODS
from memlint.analysis.scope.blocks import inside
from memlint.analysis.scope.callgraph import CallGraph, Scope, bound_params
from memlint.analysis.scope.names import dotted_name
from memlint.analysis.scope.objects import ObjectTable
from memlint.parse.traversal import OwnCodeVisitor, visit_fast

_CONTAINER_ADD = frozenset({"append", "extend", "insert", "add", "appendleft", "update", "put", "setdefault"})
_NUMERIC_CALLS = frozenset({"print", "float", "int", "round", "str", "format", "bool", "abs"})
_NUMERIC_MODULES = ("math.",)


class _Keys(cst.CSTVisitor):
    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self) -> None:
        super().__init__()
        self.out: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.out.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        key = dotted_name(node)
        if key is not None:
            self.out.add(key)


def _keys(expr: cst.CSTNode) -> set[str]:
    visitor = _Keys()
    visit_fast(expr, visitor)
    return visitor.out


class _GraphKeys(_Keys):
    """The keys whose graph ``expr`` may carry: not those read only under
    ``.item()``, ``.detach()``, ``float()``... (a number or a cut graph)."""

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in CUTTING_METHODS:
            return False
        return not (isinstance(func, cst.Name) and func.value in CUTTING_FUNCTIONS)


def _graph_keys(expr: cst.CSTNode) -> set[str]:
    visitor = _GraphKeys()
    visit_fast(expr, visitor)
    return visitor.out


class _ScopeUsage(OwnCodeVisitor):
    """Reads, dependencies and backward/return seeds of one function (or of
    the module's own statements), nested functions excluded."""

    def __init__(self, scope: Scope, objects: ObjectTable) -> None:
        super().__init__()
        self.own = scope
        self.objects = objects
        self.reads: dict[str, list[cst.CSTNode]] = defaultdict(list)
        self.deps: dict[str, set[str]] = defaultdict(set)
        # The dependencies a graph can follow: ``hist.append(loss.item())``
        # makes ``hist`` depend on ``loss`` in ``deps``, not here.
        self.graph_deps: dict[str, set[str]] = defaultdict(set)
        self.backward_seeds: set[str] = set()
        self.return_seeds: set[str] = set()
        visit_fast(scope, self)

    def visit_Name(self, node: cst.Name) -> None:
        self.reads[node.value].append(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        key = dotted_name(node)
        if key is not None:
            self.reads[key].append(node)

    def _depend(self, target: cst.BaseExpression, *values: cst.CSTNode) -> None:
        sources: set[str] = set()
        graph: set[str] = set()
        for value in values:
            sources |= _keys(value)
            graph |= _graph_keys(value)
        self._depend_keys(target, sources, graph)

    def _depend_keys(self, target: cst.BaseExpression, sources: set[str], graph: set[str]) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._depend_keys(el.value, sources, graph)
            return
        if isinstance(target, cst.StarredElement):
            self._depend_keys(target.value, sources, graph)
            return
        if isinstance(target, cst.Subscript):
            target = target.value
        key = dotted_name(target)
        if key is not None:
            self.deps[key] |= sources
            self.graph_deps[key] |= graph

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._depend(t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._depend(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._depend(node.target, node.value)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._depend(node.target, node.value)

    def visit_For(self, node: cst.For) -> None:
        self._depend(node.target, node.iter)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._depend(node.target, node.iter)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._depend(node.asname.name, node.item)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _CONTAINER_ADD:
            self._depend(func.value, *(arg.value for arg in node.args))
        if self.objects.is_backward_call(node):
            seeds = set() if not isinstance(func, cst.Attribute) else _keys(func.value)
            for arg in node.args:
                seeds |= _keys(arg.value)
            self.backward_seeds |= seeds

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self.return_seeds |= _keys(node.value)

    def visit_Yield(self, node: cst.Yield) -> None:
        if isinstance(node.value, cst.BaseExpression):
            self.return_seeds |= _keys(node.value)

    def closure(self, seeds: set[str]) -> set[str]:
        seen = set(seeds)
        todo = list(seeds)
        while todo:
            key = todo.pop()
            for src in self.deps.get(key, ()):
                if src not in seen:
                    seen.add(src)
                    todo.append(src)
        return seen


class UsageAnalysis:
    """Each function is indexed the first time a rule asks about it."""

    def __init__(self, wrapper: MetadataWrapper, objects: ObjectTable, calls: CallGraph) -> None:
        self.objects = objects
        self.calls = calls
        self.parents = calls.parents
        self._module = wrapper.module
        self._data: dict[Scope, _ScopeUsage] = {}
        self._backward: dict[Scope, set[str]] = {}
        self._return: dict[Scope, set[str]] = {}
        self._attr_backward_memo: set[str] | None = None
        self._attr_return_memo: set[str] | None = None

    def _scope(self, scope: Scope) -> _ScopeUsage:
        data = self._data.get(scope)
        if data is None:
            data = self._data[scope] = _ScopeUsage(scope, self.objects)
        return data

    def _backward_keys(self, scope: Scope) -> set[str]:
        if scope not in self._backward:
            self._backward[scope] = set()  # a recursive call adds nothing
            data = self._scope(scope)
            seeds = set(data.backward_seeds)
            # ``backprop_and_step(opt, chunk_loss / k)`` where that function
            # of this module calls ``loss.backward()`` on its parameter.
            for call in self.calls.calls_in.get(scope, ()):
                callee = self.calls.resolve(call)
                if callee is not None and callee is not scope:
                    backpropagated = self._backward_keys(callee)
                    for arg, param in bound_params(call, callee):
                        if param in backpropagated:
                            seeds |= _keys(arg.value)
            self._backward[scope] = data.closure(seeds)
        return self._backward[scope]

    def _return_keys(self, scope: Scope) -> set[str]:
        if scope not in self._return:
            data = self._scope(scope)
            self._return[scope] = data.closure(data.return_seeds)
        return self._return[scope]

    @property
    def _attr_backward(self) -> set[str]:
        if self._attr_backward_memo is None:
            scopes = [s for s, cs in self.calls.calls_in.items() if any(self.objects.is_backward_call(c) for c in cs)]
            self._attr_backward_memo = {
                k.rsplit(".", 1)[-1] for s in scopes for k in self._backward_keys(s) if "." in k
            }
        return self._attr_backward_memo

    @property
    def _attr_return(self) -> set[str]:
        if self._attr_return_memo is None:
            scopes = [self._module, *self.calls.functions]
            self._attr_return_memo = {k.rsplit(".", 1)[-1] for s in scopes for k in self._return_keys(s) if "." in k}
        return self._attr_return_memo

    # == queries ===========================================================
    def reaches_backward(self, key: str, scope: Scope) -> bool:
        if key in self._backward_keys(scope):
            return True
        if "." in key:
            return key.rsplit(".", 1)[-1] in self._attr_backward
        # A module-level name that module-level code backpropagates through.
        return key in self._backward_keys(self._module)

    def reaches_return(self, key: str, scope: Scope) -> bool:
        if key in self._return_keys(scope):
            return True
        return "." in key and key.rsplit(".", 1)[-1] in self._attr_return

    def sources(self, expr: cst.CSTNode, scope: Scope) -> set[str]:
        """Every name/attribute ``expr`` is computed from in ``scope``,
        through assignments and container adds (flow-insensitive)."""
        return self._scope(scope).closure(_keys(expr))

    def derived(
        self, keys: set[str], scope: Scope, graph: bool = False, stop: Callable[[str], bool] | None = None
    ) -> set[str]:
        """``keys`` and every name/attribute of ``scope`` computed from them;
        with ``graph``, only through what may carry their autograd graph
        (not ``hist.append(loss.item())``); never through a name ``stop``
        accepts (a helper's result known to hold no graph)."""
        data = self._scope(scope)
        deps = data.graph_deps if graph else data.deps
        out = set(keys)
        changed = True
        while changed:
            changed = False
            for target, srcs in deps.items():
                if target not in out and srcs & out and not (stop is not None and stop(target)):
                    out.add(target)
                    changed = True
        return out

    def pos(self, node: cst.CSTNode) -> tuple[int, int]:
        return self.calls.pos(node)

    def reads(self, key: str, scope: Scope) -> list[cst.CSTNode]:
        return self._scope(scope).reads.get(key, [])

    def feeds_model(self, key: str, scope: Scope, skip: cst.CSTNode) -> bool:
        """``key`` is read, outside ``skip``, within an argument of a model
        call of ``scope`` (``self.rnn(x + self.weights_cum, h)``): state fed
        back into the forward pass, part of the graph on purpose. Carrying it
        across batches is MEM104's question, not an accumulator's. Values the
        scope computes from ``key`` count too (``cat = torch.cat((w, self.cum))``
        then ``self.attention(h, cat)``, as tacotron2 does)."""
        fed = self.derived({key}, scope)
        for node in (n for k in fed for n in self.reads(k, scope)):
            if inside(node, skip, self.parents):
                continue
            cur = self.parents.get(node)
            while cur is not None and not isinstance(cur, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                call = self.parents.get(cur) if isinstance(cur, cst.Arg) else None
                if isinstance(call, cst.Call) and self.objects.is_model_call(call):
                    return True
                cur = self.parents.get(cur)
        return False

    def numeric_uses_only(
        self, key: str, scope: Scope, after: tuple[int, int], skip: cst.CSTNode | None = None, _depth: int = 0
    ) -> bool:
        for node in self.reads(key, scope):
            if self.pos(node) < after or (skip is not None and inside(node, skip, self.parents)):
                continue
            if not self._numeric_use(node, scope, _depth):
                return False
        return True

    def _numeric_use(self, node: cst.CSTNode, scope: Scope, depth: int) -> bool:
        cur = node
        while True:
            parent = self.parents.get(cur)
            if parent is None:
                return False
            if isinstance(parent, cst.Attribute) and parent.value is cur:
                return False  # ``total.item()``, ``total.backward()``
            if isinstance(parent, cst.AssignTarget) or (isinstance(parent, cst.AugAssign) and parent.target is cur):
                return True  # a write, not a use
            if isinstance(parent, (cst.Del,)):
                return True
            if isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.FormattedStringExpression)):
                return True
            if isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)):
                if (
                    isinstance(parent, cst.BinaryOperation)
                    and isinstance(parent.operator, cst.Modulo)
                    and isinstance(parent.left, (cst.SimpleString, cst.ConcatenatedString))
                ):
                    return True
                cur = parent
                continue
            if isinstance(parent, cst.Arg):
                call = self.parents.get(parent)
                return isinstance(call, cst.Call) and self._numeric_call(call)
            if isinstance(parent, cst.Assign) and depth < 3:
                targets = [t.target for t in parent.targets]
                if len(targets) == 1 and isinstance(targets[0], cst.Name):
                    return self.numeric_uses_only(targets[0].value, scope, self.pos(parent), parent, depth + 1)
                return False
            if isinstance(parent, cst.AugAssign) and parent.value is cur and depth < 3:
                target = dotted_name(parent.target)
                return target is not None and self.numeric_uses_only(target, scope, self.pos(parent), parent, depth + 1)
            if isinstance(parent, (cst.Expr, cst.SimpleStatementLine)):
                return True  # evaluated and dropped
            return False

    def _numeric_call(self, call: cst.Call) -> bool:
        func = call.func
        if isinstance(func, cst.Name):
            return func.value in _NUMERIC_CALLS
        if isinstance(func, cst.Attribute):
            if func.attr.value == "format" and isinstance(func.value, (cst.SimpleString, cst.ConcatenatedString)):
                return True
            name = dotted_name(func) or ""
            return name.startswith(_NUMERIC_MODULES)
        return False
