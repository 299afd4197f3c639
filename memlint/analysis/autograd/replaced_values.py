"""Loops that replace every value of a dict: ``for k, v in d.items(): d[k] = v.item()``.

After such a loop each value the dict held was overwritten by what the store
computed, so the history analysis may take the dict's values from that store
alone (``d["loss"]`` is a number after the loop above), as it does for the
comprehension ``d = {k: v.item() for k, v in d.items()}``.

The loop qualifies only when every key is certainly replaced and nothing else
touches the dict in it:

- it iterates the dict itself (``d``, ``d.keys()``, ``d.items()``, not a copy
  such as ``list(d.items())``), so no key can be added or removed in the
  body without a ``RuntimeError``;
- one statement of the body's top level is ``d[k] = <value>`` under the loop's
  key name ``k``, which the body never rebinds, and ``<value>`` has no
  history by its spelling (``v.item()``, ``v.detach().cpu()``, ``float(v)``);
- the body holds no other store into ``d``, no rebinding of ``d``, no method
  call on ``d`` (``d.update(...)``), no ``del``, no ``break``, and no
  ``continue`` before the store (one after it leaves the key replaced).

``enumerate(d.items())`` iterates the same keys.

API: ``replacing_store(loop) -> (dict name, the store) | None``.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import dotted_name, flat_targets
from memlint.parse.traversal import visit_fast


def _iterated_dict(loop: cst.For) -> tuple[str, str] | None:
    """The dict a loop iterates and the name its keys are bound to."""
    it: cst.BaseExpression = loop.iter
    target: cst.BaseExpression = loop.target
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "enumerate":
        # ``for i, (k, v) in enumerate(d.items())``: the same keys, counted
        if len(it.args) != 1 or it.args[0].keyword is not None or it.args[0].star:
            return None
        if not (isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2):
            return None
        it, target = it.args[0].value, target.elements[1].value
    method = None
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and not it.args:
        method = it.func.attr.value
        it = it.func.value
    key = dotted_name(it)
    if key is None or method not in (None, "keys", "items"):
        return None
    if method == "items":
        if not (isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2):
            return None
        first = target.elements[0].value
        return (key, first.value) if isinstance(first, cst.Name) else None
    return (key, target.value) if isinstance(target, cst.Name) else None


_CUTTING_METHODS = frozenset({"item", "tolist", "detach", "numpy"})
_NUMBER_BUILTINS = frozenset({"float", "int", "bool"})


def _cuts_history(value: cst.BaseExpression) -> bool:
    """``v.item()``, ``v.detach().cpu()``, ``float(v)``: a value without
    history whatever ``v`` held, read from the spelling alone (the element
    the loop binds is not always known to carry history)."""
    while isinstance(value, cst.Call):
        func = value.func
        if isinstance(func, cst.Name):
            return func.value in _NUMBER_BUILTINS
        if not isinstance(func, cst.Attribute):
            return False
        if func.attr.value in _CUTTING_METHODS:
            return True
        value = func.value
    return False


def _is_slot(target: cst.BaseExpression, dict_key: str, loop_key: str) -> bool:
    """``d[k]`` with ``k`` the loop's key name."""
    if not (isinstance(target, cst.Subscript) and dotted_name(target.value) == dict_key and len(target.slice) == 1):
        return False
    index = target.slice[0].slice
    return isinstance(index, cst.Index) and isinstance(index.value, cst.Name) and index.value.value == loop_key


class _Touches(cst.CSTVisitor):
    """Whatever in a loop body may leave a key unreplaced or change the dict."""

    def __init__(self, dict_key: str, loop_key: str) -> None:
        super().__init__()
        self.dict_key = dict_key
        self.loop_key = loop_key
        self.stores: list[cst.CSTNode] = []
        self.spoiled = False
        self.continues = False

    def _target(self, target: cst.BaseExpression, owner: cst.CSTNode) -> None:
        for t in flat_targets(target):
            base = t
            while isinstance(base, cst.Subscript):
                base = base.value
            name = dotted_name(base)
            if name == self.dict_key and isinstance(t, cst.Subscript) and _is_slot(t, self.dict_key, self.loop_key):
                self.stores.append(owner)
            elif name == self.dict_key or dotted_name(t) == self.loop_key:
                self.spoiled = True

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._target(t.target, node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target, node)
        self.spoiled = self.spoiled or bool(self.stores and self.stores[-1] is node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target, node)

    def visit_For(self, node: cst.For) -> None:
        self._target(node.target, node)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._target(node.target, node)

    def visit_Del(self, node: cst.Del) -> None:
        self.spoiled = True

    def visit_Break(self, node: cst.Break) -> None:
        self.spoiled = True

    def visit_Continue(self, node: cst.Continue) -> None:
        self.continues = True

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and dotted_name(node.func.value) == self.dict_key:
            self.spoiled = True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # defined, not run, in the loop

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False


def replacing_store(loop: cst.For) -> tuple[str, cst.Assign] | None:
    """The dict whose every value ``loop`` replaces, and the store doing it."""
    found = _iterated_dict(loop)
    if found is None or not isinstance(loop.body, cst.IndentedBlock):
        return None
    dict_key, loop_key = found
    touches = _Touches(dict_key, loop_key)
    visit_fast(loop.body, touches)
    if touches.spoiled or len(touches.stores) != 1:
        return None
    store = touches.stores[0]
    if not (isinstance(store, cst.Assign) and len(store.targets) == 1) or not _cuts_history(store.value):
        return None
    lines = list(loop.body.body)
    at = next(
        (i for i, s in enumerate(lines) if isinstance(s, cst.SimpleStatementLine) and any(x is store for x in s.body)),
        None,
    )
    if at is None:
        return None
    # A ``continue`` after the store leaves this key replaced; one before it may skip it.
    before = _Touches(dict_key, loop_key)
    for line in lines[:at]:
        visit_fast(line, before)
    return None if before.continues else (dict_key, store)
