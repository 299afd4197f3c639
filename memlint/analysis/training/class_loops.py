"""Loops over classes, not data (issue 29, incremental_learning's zil.py).

``for class_id in classes_to_create:`` or ``for c in range(self.n_classes):``
runs once per class of the task: each iteration builds that class's weights,
prototype or text embedding. After ``model.eval()`` it looks like an
evaluation loop, but it walks no loader and its iterations are not batches:
what it keeps from one class to the next is the result being built, not
the graphs of past batches. Only the iterable's own words count: a class
word (``classes``, ``n_classes``, ``classnames``) and no data word
(``loader``, ``batch``, ``val``...), through ``enumerate``/``range``/``list``.
"""

from __future__ import annotations

import libcst as cst

from memlint.vocabulary.tokens import DATA_TOKENS

_CLASS_TOKENS = frozenset({"class", "classes", "classnames", "cls", "categories"})
# Calls that hand on their argument's items (or count up to it).
_PASS_ON = frozenset({"enumerate", "range", "list", "sorted", "tqdm", "reversed", "tuple"})


def _plain(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """The iterable under the pass-on calls: a name or an attribute (or,
    for ``range``, an expression of them), else None."""
    while isinstance(expr, cst.Call):
        if not (isinstance(expr.func, cst.Name) and expr.func.value in _PASS_ON and expr.args):
            return None
        if expr.func.value == "range":
            return expr  # its bounds name what it counts
        expr = expr.args[0].value
    return expr if isinstance(expr, (cst.Name, cst.Attribute)) else None


def iterates_classes(loop: cst.For | cst.While, tokens: set[str]) -> bool:
    """``loop`` walks the task's classes: a ``for`` over a name, an
    attribute or a ``range`` whose words (``tokens``, the iterable's name
    tokens) name classes and no data."""
    if not isinstance(loop, cst.For) or _plain(loop.iter) is None:
        return False
    return bool(tokens & _CLASS_TOKENS) and not tokens & DATA_TOKENS
