"""MEM703's ``_rebound_in`` on Python's ``ast``: the keys a loop's body gives
a new object, which the rule never reports a module move of.

rules/mem703_loop_invariant_device_move.py reports a module's (or a
criterion's) move in a batch loop only when ``_rebound_in`` is false: the
receiver is not the ``for`` target, and no assignment in the loop's body
binds it to another object (``_Rebinds``: an assignment target, element by
element, whose value is not the move itself; a ``for`` target), unless in
the ``else`` of the flag test holding the move (``_other_arm``).
transformers' generation loops move what they just computed
(``codebook_preds = torch.argmax(...)`` then ``codebook_preds.to(torch.int32)``):
a dotted receiver ``ast`` cannot tell from a module, rebound in the loop.

Fewer keys than the rule finds, never more: an assignment whose value is
any ``.to(``/``.cuda(`` call (it may be the move), a starred target, and
everything under an ``if``'s ``else``, a nested function, class or lambda,
or a ``with ... as`` is left out.
"""

from __future__ import annotations

import ast

from memlint.gate.ast_names import ast_dotted

_MOVES = ("to", "cuda")
_SKIPPED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# The blocks walked below a statement (an ``if``'s ``orelse`` is not: _other_arm).
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


class LoopKeys:
    """``key in keys``: the rule's ``_rebound_in(loop, key, move)`` may hold.
    The ``for`` target's keys first; the body's rebinds read on first need
    (only a module-like move in the loop asks)."""

    __slots__ = ("_targets", "_body", "_rebound")

    def __init__(self, targets: frozenset[str], body: list[ast.stmt]) -> None:
        self._targets = targets
        self._body: list[ast.stmt] | None = body
        self._rebound: frozenset[str] | None = None

    def __contains__(self, key: object) -> bool:
        if key in self._targets:
            return True
        if self._rebound is None:
            self._rebound = rebound_keys(self._body or [])
            self._body = None
        return key in self._rebound


def rebound_keys(body: list[ast.stmt]) -> frozenset[str]:
    """The keys ``_Rebinds`` surely finds rebound in ``body`` (see the module docstring)."""
    found: set[str] = set()
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Assign:
            for target in node.targets:  # type: ignore[attr-defined]
                _bound(target, node.value, found)  # type: ignore[attr-defined]
            continue
        if kind in _SKIPPED:
            continue
        if kind is ast.For or kind is ast.AsyncFor:
            _bound(node.target, None, found)  # type: ignore[attr-defined]
        elif kind is ast.If:
            stack.extend(node.body)  # type: ignore[attr-defined]
            continue
        for field in _BLOCKS:
            for child in getattr(node, field, ()):
                if type(child) is ast.ExceptHandler or type(child) is ast.match_case:
                    stack.extend(child.body)  # a handler's or a case's own statements
                else:
                    stack.append(child)
    return frozenset(found)


def _bound(target: ast.AST, value: ast.AST | None, found: set[str]) -> None:
    """``_Rebinds._target``: element by element for a tuple or list."""
    kind = type(target)
    if kind is ast.Tuple or kind is ast.List:
        elements = target.elts  # type: ignore[attr-defined]
        values: list[ast.AST | None] = [None] * len(elements)
        if type(value) in (ast.Tuple, ast.List) and len(value.elts) == len(values):  # type: ignore[union-attr]
            values = list(value.elts)  # type: ignore[union-attr]
        for element, part in zip(elements, values):
            _bound(element, part, found)
        return
    key = ast_dotted(target)
    if key is None or _may_be_a_move(value):
        return
    found.add(key)


def _may_be_a_move(value: ast.AST | None) -> bool:
    if type(value) is ast.Starred:
        value = value.value  # type: ignore[union-attr]
    return (
        type(value) is ast.Call
        and type(value.func) is ast.Attribute  # type: ignore[union-attr]
        and value.func.attr in _MOVES  # type: ignore[union-attr]
    )
