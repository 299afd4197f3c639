"""Loops whose grad was turned off the only way torch before 0.4 had.

``Variable(x, volatile=True)`` made every result computed from ``x`` carry
no graph until torch 0.4, which ignores the flag. A loop that wraps its data
so evaluates without a graph only where the code still runs on such a torch.
Two facts say it does:

- the project accepts no torch from 0.4 on (a pin or a ceiling read by
  find/torch_floor.py);
- the function holding the loop reads ``<loss>.data[0]``: a reduced loss is a
  0-dim tensor from 0.4 on, and indexing it raises from 0.5 on, so the
  function only completes on an older torch (the one ``volatile`` served).

Without either, the flag is taken as ignored (code that runs unchanged on a
current torch builds a graph per batch).
"""

from __future__ import annotations

import libcst as cst

_VARIABLES = frozenset(("torch.autograd.Variable", "torch.autograd.variable.Variable"))
_VOLATILE_UNTIL = "0.4"


def volatile_era_loop(info, facts, torch_range) -> bool:
    """``info`` (a LoopInfo) wraps its data in ``Variable(..., volatile=True)``
    and its code runs only on a torch before 0.4."""
    if not _wraps_volatile(info, facts):
        return False
    if torch_range is not None and torch_range.predates(_VOLATILE_UNTIL):
        return True
    scope = info.scope
    return isinstance(scope, cst.FunctionDef) and _indexes_scalar_loss(scope, facts)


def _wraps_volatile(info, facts) -> bool:
    calls = facts.calls
    names = facts.names
    for call in calls.between(calls.calls_in.get(info.scope, []), info.start, info.end):
        if not isinstance(call, cst.Call) or names.call_name(call) not in _VARIABLES:
            continue
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "volatile":
                if isinstance(arg.value, cst.Name) and arg.value.value == "True":
                    return True
    return False


def _indexes_scalar_loss(fn: cst.FunctionDef, facts) -> bool:
    """``fn`` reads ``.data[0]`` of a loss that reduces to one number: a loss
    call, or a name every assignment in ``fn`` binds to one."""
    finder = _Finder()
    fn.body.visit(finder)
    if not finder.indexed:
        return False
    objects = facts.objects

    def scalar_loss(expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Call) and objects.is_loss_call(expr) and _reduced(expr, objects)

    for base in finder.indexed:
        if scalar_loss(base):
            return True
        if isinstance(base, cst.Name):
            values = finder.bound.get(base.value)
            if values and all(scalar_loss(v) for v in values):
                return True
    return False


def _reduced(call: cst.Call, objects) -> bool:
    """The loss returns one number: no ``reduce=False`` / ``reduction="none"``
    on the call, and a loss object not built with a reduction we cannot read
    (ObjectTable.loss_reduction_none, which also doubts ``size_average=``)."""
    for arg in call.args:
        if arg.keyword is None:
            continue
        key, value = arg.keyword.value, arg.value
        if key == "reduce" and not (isinstance(value, cst.Name) and value.value == "True"):
            return False
        if key == "reduction" and not (
            isinstance(value, cst.SimpleString) and value.evaluated_value in ("mean", "sum")
        ):
            return False
    functional = (objects.names.call_name(call) or "").startswith("torch.nn.functional.")
    return functional or not objects.loss_reduction_none(call)


class _Finder(cst.CSTVisitor):
    """One walk of a function: the bases of ``<x>.data[0]`` and what each
    plain name is assigned (nested functions and classes are their own)."""

    def __init__(self) -> None:
        self.indexed: list[cst.BaseExpression] = []
        self.bound: dict[str, list[cst.BaseExpression]] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self.bound.setdefault(target.target.value, []).append(node.value)
            else:
                for name in _names_in(target.target):
                    self.bound.setdefault(name, []).append(cst.Name("_unknown"))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.bound.setdefault(node.target.value, []).append(cst.Name("_unknown"))

    def visit_For(self, node: cst.For) -> None:
        for name in _names_in(node.target):
            self.bound.setdefault(name, []).append(cst.Name("_unknown"))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        value = node.value
        if not (isinstance(value, cst.Attribute) and value.attr.value == "data" and len(node.slice) == 1):
            return
        index = node.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) and index.value.value == "0":
            self.indexed.append(value.value)


def _names_in(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in _names_in(el.value)]
    if isinstance(target, cst.StarredElement):
        return _names_in(target.value)
    return []
