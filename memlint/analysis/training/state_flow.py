"""How a loaded checkpoint's tensors pass, unchanged, into another value.

MEM701 follows a ``torch.load`` to ``load_state_dict``. On its way the
checkpoint is often picked apart or filtered, but the tensors stay the same
objects on the same device: a key looked up (``ck["state_dict"]``,
``ck.get("model")``), a dict comprehension keeping every value it reads
(``{k[7:]: v for k, v in ck.items()}``), or ``model_dict.update(ck)``. These
helpers name the expression a value is drawn from; anything else (a value
transformed, ``v.cpu()``, a call of unknown effect) is not followed.
"""

from __future__ import annotations

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


def _is_state_dict(expr: cst.BaseExpression) -> bool:
    """``x.state_dict()``, no argument."""
    return (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value == "state_dict"
        and not expr.args
    )


def is_get(expr: cst.BaseExpression) -> bool:
    """``x.get(key)`` or ``x.get(key, default)``: positional, no star."""
    return (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value == "get"
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
    it = loop.iter
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
