"""Whether a later method's backward runs through anything of the graph an
earlier method of the same class retained.

GANomaly's ``optimize_params`` calls ``backward_g``, whose
``self.err_g.backward(retain_graph=True)`` keeps its graph, then
``backward_d``, whose loss is built from ``self.pred_real`` and
``self.pred_fake``, which ``forward_d`` computed from ``self.input`` (a
buffer filled under ``no_grad``) and ``self.fake.detach()``. The two graphs
share no value with history, so the second backward needs nothing the first
kept: ``retain_graph=True`` is kept for nothing.

``separate_methods(facts, retained, helper, later)`` answers that, from
values the class's own methods compute:

- every value the later method's backward graph runs through is followed
  (``graph_origins`` in its method, then through each ``self.attr`` it reads
  to every assignment of that attribute in the class, flow-insensitively)
  down to values with no history: a detached value, a factory tensor, an
  attribute every assignment of which makes a leaf and that is written in
  place only with grad off; a parameter, a global, an attribute the class
  never assigns, a conditional or loop-carried value: not known, so not
  separate (silent);
- the retained graph is followed the same way, without needing to resolve
  everything (what it reaches but cannot follow is only kept by name);
- the two share no assignment statement and no attribute with history.

The class's family in its module (its bases, all of which must be defined
there, and its subclasses) is read for the assignments; writes from outside
it (``model.pred_real = ...`` in another module) are not seen: the family's
own assignments are taken as all of them.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.autograd.grad_mode import GradMode
from memlint.analysis.autograd.graph_origins import graph_origins
from memlint.analysis.scope.names import dotted_name
from memlint.parse.traversal import visit_fast

# How many attribute hops are followed before giving up (not separate).
_MAX_KEYS = 64


class _Writes(cst.CSTVisitor):
    """Per ``self.<attr>`` key: the values assigned to it in one class (with
    their method), and whether something else writes it (augmented, in
    place, through a subscript)."""

    def __init__(self) -> None:
        super().__init__()
        self.method: cst.FunctionDef | None = None
        self.values: dict[str, list[tuple[cst.BaseExpression, cst.FunctionDef]]] = {}
        self.other: dict[str, list[cst.CSTNode]] = {}  # key -> the writing nodes (in-place calls, subscripts)

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False  # a nested class's ``self`` is another object

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._target(target.target, node.value, node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._target(node.target, node.value, node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        key = _self_key(node.target)
        if key is not None:
            self.other.setdefault(key, []).append(node)
        elif isinstance(node.target, cst.Subscript) and (key := _self_key(node.target.value)) is not None:
            self.other.setdefault(key, []).append(node)

    def visit_Call(self, node: cst.Call) -> None:
        # ``self.input.resize_(n).copy_(x)``: an in-place method on the attribute, maybe chained.
        func = node.func
        while isinstance(func, cst.Attribute):
            if func.attr.value.endswith("_") and not func.attr.value.endswith("__"):
                base = func.value
                while isinstance(base, cst.Call) and isinstance(base.func, cst.Attribute):
                    base = base.func.value
                key = _self_key(base)
                if key is not None:
                    self.other.setdefault(key, []).append(node)
                return
            inner = func.value
            func = inner.func if isinstance(inner, cst.Call) else None  # type: ignore[assignment]

    def _target(self, target: cst.BaseExpression, value: cst.BaseExpression, stmt: cst.CSTNode) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                # ``self.a, self.b = f(x)``: each holds part of the call's result.
                self._target(el.value, value, stmt)
            return
        if isinstance(target, cst.Subscript):
            key = _self_key(target.value)
            if key is not None:
                self.other.setdefault(key, []).append(stmt)
            return
        key = _self_key(target)
        if key is not None and self.method is not None:
            self.values.setdefault(key, []).append((value, self.method))


def _self_key(node: cst.BaseExpression) -> str | None:
    """``self.a`` (one level only) as "self.a"."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return f"self.{node.attr.value}"
    return None


def _writes(classes: list[cst.ClassDef]) -> _Writes:
    writes = _Writes()
    for cls in classes:
        for stmt in cls.body.body:
            if isinstance(stmt, cst.FunctionDef):
                writes.method = stmt
                visit_fast(stmt, writes)
    return writes


# Bases that assign no attribute of their subclasses' instances.
_PLAIN_BASES = frozenset({"object", "Module", "nn.Module", "torch.nn.Module"})


def _family(module: cst.Module, cls: cst.ClassDef) -> list[cst.ClassDef] | None:
    """``cls``, its bases and its subclasses among the module's classes: every
    method that may assign ``self``'s attributes (GANomaly's ``set_input`` is
    its ``BaseModel``'s). None when a base is not one of them (imported: its
    writes are not seen)."""
    by_name = {c.name.value: c for c in module.body if isinstance(c, cst.ClassDef)}

    def bases(c: cst.ClassDef) -> list[str] | None:
        names = []
        for base in c.bases:
            name = dotted_name(base.value)
            if name is None:
                return None
            if name not in _PLAIN_BASES:
                names.append(name)
        return names

    family: list[cst.ClassDef] = []
    todo = [cls]
    while todo:
        c = todo.pop()
        if any(c is f for f in family):
            continue
        family.append(c)
        names = bases(c)
        if names is None or any(n not in by_name for n in names):
            return None
        todo.extend(by_name[n] for n in names)
    # Subclasses here may assign them too (their methods run on ``self``).
    changed = True
    while changed:
        changed = False
        for c in by_name.values():
            if any(c is f for f in family):
                continue
            if any(n in {f.name.value for f in family} for n in bases(c) or ()):
                family.append(c)
                changed = True
    return family


class _Closure:
    def __init__(self, facts, writes: _Writes) -> None:
        self.facts = facts
        self.writes = writes
        self.statements: set[int] = set()  # ids of assignment statements the graph runs through
        self.keys: set[str] = set()  # attributes with history it reads
        self.known = True  # every value was followed down to values without history
        self._leaf: dict[str, bool] = {}

    def follow(self, expr: cst.BaseExpression, method: cst.FunctionDef) -> None:
        todo = [(expr, method)]
        seen: set[str] = set()
        while todo:
            expr, method = todo.pop()
            origins = graph_origins(expr, method, self.facts)
            if not origins.complete:
                self.known = False
            self.statements |= {id(s) for s in origins.bindings}
            for key in origins.outside:
                if key in seen:
                    continue
                seen.add(key)
                head = _head_key(key)
                if head is None or head != key:
                    self.known = False  # a parameter, a global, ``self.opt.w``: not followed
                    self.keys.add(key)
                    continue
                if self.leaf(key):
                    continue
                self.keys.add(key)
                values = self.writes.values.get(key)
                if not values or key in self.writes.other or len(seen) > _MAX_KEYS:
                    self.known = False
                    continue
                todo.extend(values)

    def leaf(self, key: str) -> bool:
        """Every assignment of ``key`` in the class makes a value with no
        history and no graph to follow (a factory tensor, a constant, a
        detached value), and every in-place write of it runs with grad off."""
        found = self._leaf.get(key)
        if found is None:
            found = self._leaf[key] = self._compute_leaf(key)
        return found

    def _compute_leaf(self, key: str) -> bool:
        values = self.writes.values.get(key)
        if not values:
            return False
        for value, method in values:
            origins = graph_origins(value, method, self.facts)
            if not origins.complete or origins.bindings or origins.outside:
                return False
        grad = self.facts.grad_mode
        for node in self.writes.other.get(key, ()):
            if not isinstance(node, cst.Call) or grad.mode_at(node) is not GradMode.DISABLED:
                return False
        return True


def _head_key(key: str) -> str | None:
    parts = key.split(".")
    if parts[0] != "self" or len(parts) < 2:
        return None
    return f"self.{parts[1]}"


def separate_methods(facts, retained: cst.Call, helper: cst.FunctionDef, later: cst.FunctionDef) -> bool:
    """See the module docstring: ``later``'s backward calls (all of them; it
    calls no other function that trains) run through nothing of the graph
    ``retained`` (a backward in the method ``helper``) keeps."""
    from memlint.analysis.autograd.retained_graph import RetainedGraph

    calls, loops = facts.calls, facts.loops
    cls = calls.class_of.get(helper)
    if cls is None or calls.class_of.get(later) is not cls or later is helper:
        return False
    own = loops.scope_facts(later)
    if own is None or not own.backward_calls:
        return False
    if any(loops.trains(fn) for _call, fn in calls.callees(later)):
        return False
    graph = RetainedGraph(facts)
    first = graph.operand(retained)
    if first is None:
        return False
    family = _family(calls.module, cls)
    if family is None:
        return False
    writes = _writes(family)
    kept = _Closure(facts, writes)
    kept.follow(first, helper)
    for call in own.backward_calls:
        operand = graph.operand(call)
        if operand is None:
            return False
        new = _Closure(facts, writes)
        new._leaf = kept._leaf
        new.follow(operand, later)
        if not new.known or new.statements & kept.statements or new.keys & kept.keys:
            return False
    return True
