"""State fed back into a model across the iterations of a training loop.

API (through ``facts.recurrent``):

- ``carried_states(loop) -> list[CarriedState]`` for a training loop: names
  (``hidden``, ``h``/``c``, ``self.state``) that a model call in the loop
  reads and that the same iteration later overwrites with a value carrying
  autograd history, with nothing in the loop detaching or re-initialising
  them. Each such name links the next batch's graph to this one.
- ``states_around(node)`` — carried states of every training loop around
  ``node`` (MEM103 stays silent there: ``retain_graph=True`` is then needed).
- ``init_form(state)`` — ``"tensor"``, ``"tuple"``, ``"none"`` or
  ``"unknown"``: what the state holds before the loop, for writing a detach.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import libcst as cst

from memlint.analysis.autograd.history import H
from memlint.analysis.scope.callgraph import Scope
from memlint.analysis.scope.names import dotted_name, flat_targets
from memlint.analysis.scope.own_returns import own_returns
from memlint.analysis.training.loops import LoopInfo
from memlint.parse.traversal import OwnCodeVisitor, visit_fast

_TENSOR_CREATORS = frozenset(
    {
        "zeros",
        "ones",
        "randn",
        "rand",
        "empty",
        "full",
        "zeros_like",
        "ones_like",
        "randn_like",
        "new_zeros",
        "new_ones",
        "new_empty",
        "new_full",
        "tensor",
    }
)


@dataclass(frozen=True)
class CarriedState:
    key: str
    loop: LoopInfo
    feed: cst.Call  # the model call that reads the state
    update: cst.CSTNode  # the statement that overwrites it from the model
    element: bool  # bound as one element of a nested tuple target: a tensor


class _Binding:
    __slots__ = ("key", "stmt", "value", "pos", "element", "kind")

    def __init__(self, key, stmt, value, pos, element, kind):
        self.key, self.stmt, self.value, self.pos, self.element, self.kind = key, stmt, value, pos, element, kind


class _BindingsIndex(OwnCodeVisitor):
    """Every binding of one scope by key (RecurrentAnalysis.bindings_in)."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, scope: Scope, loops) -> None:
        super().__init__()
        self.own = scope
        self.loops = loops
        self.out: dict[str, list[_Binding]] = defaultdict(list)

    def add(self, target: cst.BaseExpression, stmt: cst.CSTNode, value, kind: str, depth: int = 0) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self.add(el.value, stmt, value, kind, depth + 1)
            return
        if isinstance(target, cst.StarredElement):
            self.add(target.value, stmt, value, kind, depth + 1)
            return
        key = dotted_name(target)
        if key is not None:
            self.out[key].append(_Binding(key, stmt, value, self.loops.pos(stmt), depth >= 2, kind))

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return isinstance(self.own, cst.Module)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self.add(t.target, node, node.value, "assign")

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self.add(node.target, node, node.value, "assign")

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.add(node.target, node, node.value, "aug")

    def visit_For(self, node: cst.For) -> None:
        self.add(node.target, node, None, "for")

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self.add(node.asname.name, node, None, "with")

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("detach_", "zero_", "fill_"):
            receiver = func.value
            # ``state[0].detach_()`` detaches part of the ``(h, c)`` state in place.
            self.add(receiver.value if isinstance(receiver, cst.Subscript) else receiver, node, None, "detach")


class _NameReads(cst.CSTVisitor):
    """(name, position) of every read of one of ``names`` (carries_call_results)."""

    def __init__(self, names, loops, reads: list[tuple[str, tuple[int, int]]]) -> None:
        super().__init__()
        self.names = names
        self.loops = loops
        self.reads = reads

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.names:
            self.reads.append((node.value, self.loops.pos(node)))


class RecurrentAnalysis:
    def __init__(self, facts) -> None:
        self.facts = facts
        self._bindings: dict[Scope, dict[str, list[_Binding]]] = {}
        self._memo: dict[LoopInfo, list[CarriedState]] = {}
        self._carried_reads: dict[LoopInfo, bool] = {}

    # -- bindings index, per scope ------------------------------------------
    def bindings_in(self, scope: Scope) -> dict[str, list[_Binding]]:
        """Every binding of ``scope`` by key, with its statement, value,
        position and kind (``assign``, ``aug``, ``for``, ...)."""
        return self._index(scope)

    def _index(self, scope: Scope) -> dict[str, list[_Binding]]:
        if scope in self._bindings:
            return self._bindings[scope]
        visitor = _BindingsIndex(scope, self.facts.loops)
        visit_fast(scope, visitor)
        self._bindings[scope] = visitor.out
        return visitor.out

    # -- queries -----------------------------------------------------------
    def carried_states(self, loop: LoopInfo) -> list[CarriedState]:
        if loop in self._memo:
            return self._memo[loop]
        found: list[CarriedState] = []
        if loop.trains:
            seen: set[str] = set()
            for call in loop.model_calls:
                for key in _fed_names(call):
                    if key in seen:
                        continue
                    state = self._carried(loop, call, key)
                    if state is not None:
                        seen.add(key)
                        found.append(state)
        self._memo[loop] = found
        return found

    def _carried(self, loop: LoopInfo, call: cst.Call, key: str) -> CarriedState | None:
        facts = self.facts
        bindings = self._index(loop.scope).get(key, [])
        inside = [b for b in bindings if loop.contains(b.pos)]
        before = [b for b in bindings if b.pos < loop.start]
        feed_pos = facts.loops.pos(call)
        update = None
        for b in inside:
            if b.kind != "assign":
                return None  # a loop target, ``+=``, ``detach_()``: handled in the loop
            if b.pos < feed_pos and not _same_statement(b.stmt, call, facts):
                return None  # rebound earlier in the iteration: not carried
            v = facts.history.value(b.value)
            if v is None or v.h is not H.YES:
                return None
            update = b
        if update is None:
            return None
        if not before and not key.startswith("self.") and key not in _params(loop.scope):
            return None
        return CarriedState(key, loop, call, update.stmt, update.element)

    def states_around(self, node: cst.CSTNode) -> list[CarriedState]:
        out: list[CarriedState] = []
        loop = self.facts.loops.loop_of(node)
        while loop is not None:
            out.extend(self.carried_states(loop))
            loop = loop.parent
        return out

    def carries_call_results(self, loop: LoopInfo) -> bool:
        """A name the body of ``loop`` binds from a call is read in the loop
        before that binding: the previous iteration's result (a dialogue's
        ``decode_batch`` fed into the next turn's batch) reaches this one, and
        a graph it holds with it. Flow-insensitive beyond that: any such read
        counts, so callers stay silent where they cannot tell."""
        if loop in self._carried_reads:
            return self._carried_reads[loop]
        loops, history = self.facts.loops, self.facts.history
        body = loops.pos(loop.node.body)  # the loop's own target and iterable are not carried reads

        def may_hold_graph(b: _Binding) -> bool:
            if b.value is None or not _holds_call(b.value):
                return False
            v = history.value(b.value)
            return v is None or v.h is not H.NO  # topk indices, .item(), detached values carry none

        first_bound: dict[str, tuple[int, int]] = {}
        for key, bindings in self._index(loop.scope).items():
            inside = [b for b in bindings if loop.contains(b.pos) and b.stmt is not loop.node]
            if "." not in key and inside and any(may_hold_graph(b) for b in inside):
                first_bound[key] = min(b.pos for b in inside)
        reads: list[tuple[str, tuple[int, int]]] = []
        if first_bound:
            visit_fast(loop.node, _NameReads(first_bound, loops, reads))
        answer = any(body <= pos < first_bound[name] for name, pos in reads)
        self._carried_reads[loop] = answer
        return answer

    def init_form(self, state: CarriedState) -> str:
        """What the state holds when the loop starts."""
        if state.element:
            return "tensor"
        bindings = [b for b in self._index(state.loop.scope).get(state.key, []) if b.pos < state.loop.start]
        if not bindings:
            return "unknown"
        value = bindings[-1].value
        return self._form_of(value, depth=0)

    def _form_of(self, value, depth: int) -> str:
        if isinstance(value, (cst.Tuple, cst.List)):
            return "tuple"
        if isinstance(value, cst.Name) and value.value == "None":
            return "none"
        if isinstance(value, cst.Call):
            func = value.func
            last = (
                func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
            )
            if last in _TENSOR_CREATORS:
                return "tensor"
            if depth < 2:
                fn = self.facts.calls.resolve(value) or self._method_named(last)
                if fn is not None:
                    forms = {self._form_of(r, depth + 1) for r in own_returns(fn)[0] if r is not None}
                    if len(forms) == 1:
                        return forms.pop()
        return "unknown"

    def _method_named(self, name: str) -> cst.FunctionDef | None:
        """``model.init_hidden(bs)``: the one method of that name in the file."""
        found = [fn for cls, methods in self.facts.calls.methods.items() for n, fn in methods.items() if n == name]
        return found[0] if len(found) == 1 else None


def _fed_names(call: cst.Call) -> list[str]:
    out: list[str] = []
    for arg in call.args:
        if arg.star:
            continue
        for el in flat_targets(arg.value):
            key = dotted_name(el) if isinstance(el, (cst.Name, cst.Attribute)) else None
            if key is not None and key not in ("self", "None", "True", "False"):
                out.append(key)
    return out


def _same_statement(stmt: cst.CSTNode, call: cst.Call, facts) -> bool:
    cur = facts.loops.parents.get(call)
    while cur is not None:
        if cur is stmt:
            return True
        if isinstance(cur, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return False
        cur = facts.loops.parents.get(cur)
    return False


def _params(scope: Scope) -> set[str]:
    if not isinstance(scope, cst.FunctionDef):
        return set()
    p = scope.params
    return {x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)}


class _Calls(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def visit_Call(self, node: cst.Call) -> bool:
        self.found = True
        return False

    def on_visit(self, node: cst.CSTNode) -> bool:
        return not self.found and super().on_visit(node)


def _holds_call(value: cst.CSTNode) -> bool:
    visitor = _Calls()
    visit_fast(value, visitor)
    return visitor.found
