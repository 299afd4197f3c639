"""How a loaded checkpoint's tensors pass, unchanged, into another value.

MEM701 follows a ``torch.load`` to ``load_state_dict``. On its way the
checkpoint is often picked apart or filtered, but the tensors stay the same
objects on the same device: a key looked up (``ck["state_dict"]``,
``ck.get("model")``, ``ck.pop("model")``), a dict comprehension keeping every value it reads
(``{k[7:]: v for k, v in ck.items()}``), or ``model_dict.update(ck)``. These
helpers name the expression a value is drawn from; anything else (a value
transformed, ``v.cpu()``, a call of unknown effect) is not followed.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst


def key_source(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` without the key lookups applied to it: ``ck["a"]["b"]`` and
    ``ck.get("a")`` (a default may follow the key) are parts of ``ck``; so
    is ``ck["model"].state_dict()``, the tensors of a pickled module the
    load restored (on the device it was saved from)."""
    while True:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif is_get(expr) or _is_state_dict(expr):
            assert isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)
            expr = expr.func.value
        else:
            return expr


def through_module(expr: cst.BaseExpression) -> bool:
    """``key_source`` passes a ``.state_dict()`` on its way: the load held a
    pickled module (``ck["model"].state_dict()``), whose place at the load
    says nothing of the model it is loaded into."""
    while True:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif _is_state_dict(expr):
            return True
        elif is_get(expr):
            assert isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)
            expr = expr.func.value
        else:
            return False


def _is_state_dict(expr: cst.BaseExpression) -> bool:
    """``x.state_dict()``, no argument."""
    return (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value == "state_dict"
        and not expr.args
    )


def is_get(expr: cst.BaseExpression) -> bool:
    """``x.get(key)`` or ``x.get(key, default)``: positional, no star; also
    ``x.pop(key)`` (pvcnn's ``model.load_state_dict(checkpoint.pop("model"))``):
    the entry taken out is the same tensors, wherever the dict goes next."""
    return (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in ("get", "pop")
        and 1 <= len(expr.args) <= 2
        and all(a.keyword is None and not a.star for a in expr.args)
    )


def items_source(comp: cst.BaseExpression) -> cst.BaseExpression | None:
    """The dict a comprehension copies values from, unchanged:
    ``{f(k): v for k, v in X.items() if ...}`` (also over
    ``list(X.items())``) gives ``X``; a value other than the loop's own
    ``v``, or more than one ``for``, gives None."""
    if not isinstance(comp, cst.DictComp):
        return None
    loop = comp.for_in
    if loop.inner_for_in is not None or loop.asynchronous is not None:
        return None
    target = loop.target
    if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
        return None
    value_name = target.elements[1].value
    if not (isinstance(value_name, cst.Name) and isinstance(comp.value, cst.Name)):
        return None
    if comp.value.value != value_name.value:
        return None
    return _items_iter(loop.iter)


def drawn_from(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The value ``expr`` passes on unchanged: through key lookups and
    comprehensions copying every value they read, down to a name or
    whatever else is left (``expr`` itself when nothing applies)."""
    while True:
        inner = key_source(expr)
        source = items_source(inner)
        if source is None:
            return inner
        expr = source


def _items_iter(it: cst.BaseExpression) -> cst.BaseExpression | None:
    """``X`` of ``X.items()`` or ``list(X.items())``, else None."""
    if (
        isinstance(it, cst.Call)
        and isinstance(it.func, cst.Name)
        and it.func.value == "list"
        and len(it.args) == 1
        and it.args[0].keyword is None
        and not it.args[0].star
    ):
        it = it.args[0].value
    if (
        isinstance(it, cst.Call)
        and isinstance(it.func, cst.Attribute)
        and it.func.attr.value == "items"
        and not it.args
    ):
        return it.func.value
    return None


def loop_copies(loop: cst.For) -> list[tuple[str, cst.BaseExpression]]:
    """The dicts a loop over ``X.items()`` fills with ``X``'s own values,
    each with ``X``: ``for k, v in ck["state_dict"].items(): d[k[7:]] = v``
    gives ``("d", ck["state_dict"])``: ``d`` holds the very tensors of the
    checkpoint, renamed (the statement-spelled comprehension). Stores in the
    loop's body and in the ``if`` and ``try`` blocks inside it count (``try:
    d[k] = X["module." + k] except KeyError: d[k] = v``); a stored value other
    than the loop's own ``v`` or an entry of ``X`` itself is not followed.
    A loop over anything else copies the entries of a name it reads by key
    (``for a, b in zip(keys, names): d[a] = weights[b]`` gives ``("d",
    weights)``)."""
    if loop.asynchronous is not None:
        return []
    target = loop.target
    source = _items_iter(loop.iter)
    found: list[tuple[str, cst.BaseExpression]] = []
    if source is None:
        for small in _loop_smalls(loop):
            _entry_stores(small, found)
        return found
    if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
        return []
    value_name = target.elements[1].value
    if not isinstance(value_name, cst.Name):
        return []
    for small in _loop_smalls(loop):
        _stores([small], value_name.value, source, found)
    return found


def _loop_smalls(loop: cst.For) -> list[cst.BaseSmallStatement]:
    """The simple statements of the loop's body and of the ``if`` and ``try``
    blocks inside it (each may run in an iteration)."""
    smalls: list[cst.BaseSmallStatement] = []
    todo: list[cst.BaseSuite] = [loop.body]
    while todo:
        suite = todo.pop()
        if isinstance(suite, cst.SimpleStatementSuite):  # ``for k, v in X.items(): d[k] = v``
            smalls.extend(suite.body)
            continue
        for stmt in suite.body:
            if isinstance(stmt, cst.If):
                todo.append(stmt.body)
                orelse = stmt.orelse
                while isinstance(orelse, cst.If):
                    todo.append(orelse.body)
                    orelse = orelse.orelse
                if orelse is not None:
                    todo.append(orelse.body)
                continue
            if isinstance(stmt, cst.Try):
                todo.extend(_try_blocks(stmt))
                continue
            if isinstance(stmt, cst.SimpleStatementLine):
                smalls.extend(stmt.body)
    return smalls


def _entry_stores(small: cst.BaseSmallStatement, found: list[tuple[str, cst.BaseExpression]]) -> None:
    """Adds ``(d, X)`` for ``d[...] = X[key]``, ``X`` a name other than ``d``."""
    if not (isinstance(small, cst.Assign) and isinstance(small.value, cst.Subscript)):
        return
    source = small.value.value
    if not (isinstance(source, cst.Name) and _entry_of(small.value, source)):
        return
    for t in small.targets:
        store = t.target
        if isinstance(store, cst.Subscript) and isinstance(store.value, cst.Name) and store.value.value != source.value:
            found.append((store.value.value, source))


def _try_blocks(stmt: cst.Try) -> list[cst.BaseSuite]:
    """The blocks of a ``try`` statement: each may run in an iteration."""
    blocks = [stmt.body, *(handler.body for handler in stmt.handlers)]
    if stmt.orelse is not None:
        blocks.append(stmt.orelse.body)
    if stmt.finalbody is not None:
        blocks.append(stmt.finalbody.body)
    return blocks


def _stores(
    smalls: Sequence[cst.BaseSmallStatement],
    value: str,
    source: cst.BaseExpression,
    found: list[tuple[str, cst.BaseExpression]],
) -> None:
    """Adds ``(d, source)`` for each ``d[...] = value`` of ``smalls``, or
    ``d[...] = source[...]`` (an entry of the dict looped over, also a
    value it holds) when ``source`` is a name."""
    for small in smalls:
        if isinstance(small, cst.Assign) and (_is_name(small.value, value) or _entry_of(small.value, source)):
            for t in small.targets:
                if isinstance(t.target, cst.Subscript) and isinstance(t.target.value, cst.Name):
                    found.append((t.target.value.value, source))


def _is_name(expr: cst.BaseExpression, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name


def _entry_of(expr: cst.BaseExpression, source: cst.BaseExpression) -> bool:
    """``source[key]`` with ``source`` a name: one of the values the loop reads."""
    return (
        isinstance(expr, cst.Subscript)
        and isinstance(source, cst.Name)
        and _is_name(expr.value, source.value)
        and len(expr.slice) == 1
        and isinstance(expr.slice[0].slice, cst.Index)
    )
