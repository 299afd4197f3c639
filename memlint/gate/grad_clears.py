"""Where a file may clear gradients: the ``zero_grad`` verbs of MEM301/MEM303.

Both rules report a ZERO_GRAD verb (analysis/training/training_verbs.py),
and a module records one only where it is spelled: a ``.zero_grad()`` call,
``p.grad = ...`` or ``del p.grad``, or ``p.grad.zero_()`` (``fill_``,
``mul_``, through ``.data`` too); or from a step written in another module
(ProjectView.step_sequences, the cards' ``project_matters``). The cards'
local gate used to pass any file naming ``grad``: every optimizer that reads
``p.grad`` (timm's optim/) then waited for its view and went through libcst
for nothing.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memlint.gate.facts import GateFacts

# training_verbs.visit_Call: in-place writes of a gradient that clear it.
_CLEARING_METHODS = frozenset({"zero_", "fill_", "mul_"})


def _is_grad(node: ast.AST, through_data: bool = False) -> bool:
    """``p.grad`` (and ``p.grad.data`` when ``through_data``): training_verbs._is_grad_attr."""
    if through_data and type(node) is ast.Attribute and node.attr == "data":  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
    return type(node) is ast.Attribute and node.attr == "grad"  # type: ignore[attr-defined]


def may_clear_gradients(g: GateFacts) -> bool:
    """Some statement of the file may be a ZERO_GRAD verb."""
    if "zero_grad" in g.idents:  # an attribute or a name: every ``.zero_grad()`` call
        return True
    if "grad" not in g.idents:
        return False
    for call in g._calls:
        func = call.func
        if type(func) is ast.Attribute and func.attr in _CLEARING_METHODS and _is_grad(func.value, through_data=True):
            return True
    if any(_is_grad(t) for a in g._assigns for t in a.targets):
        return True
    # ``del p.grad``: the walk keeps no ``del``; rare enough to look for only here.
    return any(
        type(n) is ast.Delete
        and any(_is_grad(t) or (type(t) is ast.Tuple and any(map(_is_grad, t.elts))) for t in n.targets)
        for n in ast.walk(g._tree)
    )
