"""Whether anything backpropagates again through a graph kept by
``backward(retain_graph=True)``, seen from around the call: later in the
iteration, and at the call sites of a helper that retains it. The companion
of ``retained_graph`` (which answers from inside one function: ``dies_in``,
``built_here``, ``fresh``, ``apart``); MEM103 asks both.

API (``RetainedSites(facts)``):

- ``later_backward(node, scope, loop)`` — a backward, or a call into a
  function that trains, after ``node`` in the same iteration of ``loop`` (or
  the rest of ``scope`` when ``loop`` is None) that may reach what ``node``
  retained. A later backward proven ``fresh`` or ``apart`` does not count;
  after a helper's call site (``node`` not a backward) every one does.
- ``graph_built_in(call, loop)`` — every name with history that the backward
  ``call`` differentiates is bound inside ``loop``: a new graph each pass.
- ``sites(fn)`` — every call of ``fn`` in this module (``cam.generate(img)``
  on a local ``cam = CAM(model)`` included), or none when ``fn`` escapes.
- ``done_after(site, fn)`` — nothing backpropagates through what ``site``
  hands to the helper ``fn`` once it returns (the full conditions are in
  its docstring); callers of the caller are checked when the values come
  from its parameters, three levels up at most.
- ``may_hold_graph(key, scope)`` — ``key`` may hold a tensor with history.
- ``helper_result(key, scope, fn)`` — every binding of ``key`` is the
  result of a call of ``fn``, which returns no history.

Calls the analysis cannot see into are trusted not to backpropagate, as in
``later_backward``; anything unknown about the values passed keeps the
answer False (silent).
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.autograd.graph_reach import CUTTING_ATTRIBUTES, CUTTING_FUNCTIONS, CUTTING_METHODS
from memlint.analysis.autograd.history import H, param_names
from memlint.analysis.autograd.method_graphs import separate_methods
from memlint.analysis.autograd.retained_graph import RetainedGraph
from memlint.analysis.scope.names import dotted_name

# How many callers up ``done_after`` follows values that arrive as parameters.
_CALLER_DEPTH = 3


class RetainedSites:
    def __init__(self, facts) -> None:
        self.facts = facts
        self.graph = RetainedGraph(facts)

    def later_backward(self, node: cst.CSTNode, scope, loop, retained: tuple | None = None) -> bool:
        loops = self.facts.loops
        facts = loops.scope_facts(scope)
        if facts is None:
            return True
        start = loops.pos(node)
        end = loop.end if loop is not None else (10**9, 0)
        for other in facts.backward_calls:
            if other is not node and start < loops.pos(other) < end:
                if not self._separate(node, other, loop, scope):
                    return True
        for call, fn in self.facts.calls.callees(scope):
            if start < loops.pos(call) < end and loops.trains(fn):
                if retained is not None and separate_methods(self.facts, retained[0], retained[1], fn):
                    continue  # ``self.backward_d()`` on a graph of its own (method_graphs.py)
                return True
        return False

    def _separate(self, node: cst.CSTNode, other: cst.Call, loop, scope) -> bool:
        """The later backward ``other`` cannot reach the graph ``node`` retained."""
        if not isinstance(node, cst.Call) or not self.facts.objects.is_backward_call(node):
            return False  # a call site of a helper: what it backpropagates is not known here
        if loop is not None and self.graph.fresh(node, other, loop, scope):
            return True
        return self.graph.apart(node, other, scope)

    def graph_built_in(self, call: cst.Call, loop) -> bool:
        receiver = self.graph.operand(call)
        if receiver is None:
            return False
        names = _history_names(receiver, self.facts.history)
        if not names:
            return False
        index = self.facts.recurrent._index(loop.scope)
        if not all(any(loop.contains(b.pos) for b in index.get(n, ())) for n in names):
            return False
        return not self._reaches_history_before(receiver, loop, index)

    def _reaches_history_before(self, receiver: cst.BaseExpression, loop, index) -> bool:
        """The graph runs through a value with history bound outside the
        loop only (TRADES' ``p_natural = softmax(model(x_natural))`` before
        its perturbation loop): every pass backpropagates that shared part
        again, so each backward but the last must retain it."""
        scope = loop.scope
        for key in self.facts.usage.sources(receiver, scope):
            binds = index.get(key, ()) if "." not in key else ()
            if (
                binds
                and not any(loop.contains(b.pos) for b in binds)
                and self._known_history(key, scope)
                and self.may_hold_graph(key, scope)
                and self._shared_by_passes(key, loop, scope)
            ):
                return True
        return False

    def _shared_by_passes(self, key: str, loop, scope) -> bool:
        """The loop reads ``key`` itself, and not only as the element the
        pass's own target picks (``log_probs[i]`` in ``for i in range(n)``:
        each pass backpropagates its own part, not a shared one)."""
        calls = self.facts.calls
        reads = [r for r in self.facts.usage.reads(key, scope) if loop.contains(calls.pos(r))]
        node = loop.node
        if not reads or not isinstance(node, cst.For):
            return bool(reads)
        targets = {n.value for n in _names_in(node.target)}
        for read in reads:
            sub = calls.parents.get(read)
            if not (isinstance(sub, cst.Subscript) and sub.value is read):
                return True
            if not any(n.value in targets for el in sub.slice for n in _names_in(el)):
                return True
        return False

    def sites(self, fn: cst.FunctionDef) -> list[cst.Call]:
        calls = self.facts.calls
        if fn in calls.escapes:
            return []
        sites = calls.call_sites.get(fn, [])
        if fn in calls.class_of:
            sites = self.facts.instance_calls.sites(fn) or sites
        return sites

    def done_after(self, site: cst.Call, fn: cst.FunctionDef, depth: int = 0, retained: cst.Call | None = None) -> bool:
        """No later backward (or call of a training function) in the caller;
        the values passed, and anything sharing a graph with them that is
        known to carry history, are not read after the call but as a number
        or a cut graph (``len(batch)``, ``x.item()``, ``x.shape``): returned,
        stored, handed to another call of the helper; nor passed again by the
        next iteration of a loop around it; and if they come from the
        caller's parameters, every call of the caller is done after too."""
        facts = self.facts
        loops = facts.loops
        caller = loops.scope_of(site)
        # ``retained``: the helper's own backward, whose graph a later method may be proven not to reach.
        if self.later_backward(site, caller, loops.loop_of(site), (retained, fn) if retained is not None else None):
            return False
        usage = facts.usage
        keys: set[str] = set()
        for arg in site.args:
            keys |= _direct_keys(arg.value, facts.calls.parents)
            keys |= {k for k in usage.sources(arg.value, caller) if self._known_history(k, caller)}
        keys = {k for k in keys if self.may_hold_graph(k, caller)}
        end = facts.calls.end(site)
        index = facts.recurrent.bindings_in(caller)
        enclosing = loops.enclosing_loops(site)

        # Only through what may carry their graph (``n = n + len(batch)``,
        # ``total += loss.item()``), and not through the helper's own result
        # when it returns none (``total = total + self.step(batch)``).
        def helper_result(key: str) -> bool:
            return key not in keys and self.helper_result(key, caller, fn)

        for key in usage.derived(keys, caller, graph=True, stop=helper_result):
            later = [r for r in usage.reads(key, caller) if facts.calls.pos(r) >= end]
            if "." in key or any(not _cut(r, facts.calls.parents) for r in later):
                return False  # kept past the call: a later backward may go through it
            for loop in enclosing:
                if not any(loop.contains(b.pos) and self._new_each_time(b) for b in index.get(key, ())):
                    return False  # the next iteration hands the same graph to the helper again
        if isinstance(caller, cst.FunctionDef) and keys & (set(param_names(caller)) - {"self", "cls"}):
            sites = self.sites(caller) if depth < _CALLER_DEPTH else []
            return bool(sites) and all(self.done_after(s, caller, depth + 1) for s in sites)
        return True

    def _new_each_time(self, binding) -> bool:
        """An assignment, or a ``for`` target over values not known to share
        a graph (``for path in paths``, not ``for f in feats.split(1)``)."""
        if binding.kind == "assign":
            return True
        if binding.kind != "for" or not isinstance(binding.stmt, cst.For):
            return False
        v = self.facts.history.value(binding.stmt.iter)
        return v is None or v.h is not H.YES

    def _known_history(self, key: str, scope) -> bool:
        """Some read of ``key`` in ``scope`` carries history for sure."""
        history = self.facts.history
        return any((v := history.value(r)) is not None and v.h is H.YES for r in self.facts.usage.reads(key, scope))

    def may_hold_graph(self, key: str, scope) -> bool:
        """No module, optimizer, loss or loader; some read of it is not a
        call of it; and not every read evaluates to a value without history."""
        facts = self.facts
        if "." not in key and facts.objects.kind_of(key, scope if isinstance(scope, cst.FunctionDef) else None):
            return False
        parents = facts.calls.parents
        reads = [r for r in facts.usage.reads(key, scope) if not _called(r, parents) and not _bound_by_for(r, parents)]
        if not reads:
            return "." in key
        values = [facts.history.value(r) for r in reads]
        return not all(v is not None and v.h is H.NO for v in values)

    def helper_result(self, key: str, scope, fn: cst.FunctionDef) -> bool:
        """``heat = cam.generate(img)``: nothing of the helper's graph."""
        if self.facts.history.returns(fn).h is not H.NO:
            return False
        sites = self.sites(fn)
        bindings = self.facts.recurrent.bindings_in(scope).get(key, ())
        return bool(bindings) and all(b.kind == "assign" and any(b.value is s for s in sites) for b in bindings)


class _DirectKeys(cst.CSTVisitor):
    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, parents) -> None:
        super().__init__()
        self.parents = parents
        self.found: set[str] = set()

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        key = dotted_name(node)
        if key is not None and not _called(node, self.parents):
            self.found.add(key)
        return key is None

    def visit_Name(self, node: cst.Name) -> None:
        if not _called(node, self.parents):
            self.found.add(node.value)

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


def _direct_keys(expr: cst.BaseExpression, parents) -> set[str]:
    """The names and attributes ``expr`` reads as values (not its callees):
    ``{"img", "self.mean"}`` for ``normalize(img - self.mean)``."""
    visitor = _DirectKeys(parents)
    expr.visit(visitor)
    return visitor.found


def _bound_by_for(read: cst.CSTNode, parents) -> bool:
    """``read`` is (part of) a ``for`` loop's target."""
    cur = parents.get(read)
    while isinstance(cur, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
        read, cur = cur, parents.get(cur)
    return isinstance(cur, cst.For) and cur.target is read


def _cut(read: cst.CSTNode, parents) -> bool:
    """``read`` is seen only as a number or a cut graph: ``len(batch)``,
    ``loss.item()``, ``x.size(0)``, ``x.shape`` (graph_reach's cutting reads)."""
    parent = parents.get(read)
    if isinstance(parent, cst.Arg):
        call = parents.get(parent)
        return (
            isinstance(call, cst.Call)
            and len(call.args) == 1
            and isinstance(call.func, cst.Name)
            and call.func.value in CUTTING_FUNCTIONS
        )
    if isinstance(parent, cst.Attribute) and parent.value is read:
        if parent.attr.value in CUTTING_ATTRIBUTES:
            return True
        call = parents.get(parent)
        return isinstance(call, cst.Call) and call.func is parent and parent.attr.value in CUTTING_METHODS
    return False


def _called(read: cst.CSTNode, parents) -> bool:
    """``read`` is the callee of a call (``backbone(x)``)."""
    parent = parents.get(read)
    return isinstance(parent, cst.Call) and parent.func is read


def _names_in(node: cst.CSTNode) -> list[cst.Name]:
    """Every ``Name`` under ``node``."""
    found: list[cst.Name] = []
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, cst.Name):
            found.append(cur)
        stack.extend(cur.children)
    return found


def _history_names(expr: cst.BaseExpression, history) -> list[str]:
    """The names with history an operand is computed from, through
    arithmetic, method calls, subscripts and literal lists."""
    names: list[str] = []
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, cst.Name):
            v = history.value(e)
            if v is not None and v.h is H.YES:
                names.append(e.value)
        elif isinstance(e, cst.BinaryOperation):
            stack.extend((e.left, e.right))
        elif isinstance(e, cst.UnaryOperation):
            stack.append(e.expression)
        elif isinstance(e, cst.Call) and isinstance(e.func, cst.Attribute):
            stack.append(e.func.value)
        elif isinstance(e, (cst.Subscript, cst.Attribute)):
            stack.append(e.value)
        elif isinstance(e, (cst.List, cst.Tuple)):
            stack.extend(el.value for el in e.elements)
    return names
