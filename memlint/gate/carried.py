"""MEM104's gate: a loop that may train and feeds a call a name the same
iteration rebinds later, read on Python's ``ast``.

rules/mem104_hidden_state_carried_across_batches.py reports only what
recurrent.RecurrentAnalysis.carried_states finds, and that needs, for a loop:

- ``loop.trains`` (here gate_trains.TrainingLines, by the loop's lines);
- a call in the loop (``loop.model_calls``; here any call on its span) with
  an argument, not ``*``/``**``, whose flat elements (names.flat_targets)
  include a dotted name other than ``self``/``None``/``True``/``False``
  (``_fed_names``);
- ``_carried``: every binding of that name the scope's _BindingsIndex
  finds inside the loop (``loop.contains``: from the loop's start to its
  end) is an assignment (``=`` or ``: T =``, not a ``for`` target, ``+=``,
  ``with ... as`` or ``x.detach_()``/``zero_()``/``fill_()``), none starts
  before the call unless the call lies in it (``_same_statement``), and
  there is at least one.

Read wider here: the value's history (``H.YES``), the binding before the
loop (or ``self.``, or a parameter) and which calls run a model are not
checked.
"""

from __future__ import annotations

import ast
from bisect import bisect_left
from typing import Any

from memlint.gate import ast_fields
from memlint.gate.ast_names import ast_dotted
from memlint.gate.trains import TrainingLines

GateFacts = Any  # analysis/gate.GateFacts (no import circle, tests/test_layout.py)

_ASSIGN, _OTHER = 1, 2  # binding kinds: an assignment, anything _carried refuses
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_DETACHING = frozenset({"detach_", "zero_", "fill_"})
_NOT_STATE = frozenset({"self", "None", "True", "False"})

Pos = tuple[int, int]


def carries_state(facts: GateFacts) -> bool:
    """Some loop that may train feeds a call a name only assignments at or
    after that call rebind in the loop."""
    training = TrainingLines(facts)
    calls = sorted((((c.lineno, c.col_offset), c) for c in facts._calls), key=lambda pc: pc[0])
    starts = [pos for pos, _ in calls]
    tree = facts._tree
    for scope in (tree, *facts._functions):
        # A loop's lines lie in its function's: no training call on those, none on the loop's.
        if scope is not tree and not training.may_train(scope.lineno, scope.end_lineno):  # type: ignore[attr-defined]
            continue
        bindings: list[tuple[str, int, Pos, ast.AST]] = []
        loops: list[ast.AST] = []
        _bindings(scope, scope is tree, bindings, loops)
        for loop in loops:
            if not training.may_train(loop.lineno, loop.end_lineno):  # type: ignore[attr-defined]
                continue
            start: Pos = (loop.lineno, loop.col_offset)  # type: ignore[attr-defined]
            end: Pos = (loop.end_lineno, loop.end_col_offset)  # type: ignore[attr-defined]
            inside: dict[str, list[tuple[int, Pos, ast.AST]]] = {}
            for key, kind, pos, node in bindings:
                if start <= pos < end:
                    inside.setdefault(key, []).append((kind, pos, node))
            if not any(kind == _ASSIGN for found in inside.values() for kind, _, _ in found):
                continue
            for k in range(bisect_left(starts, start), bisect_left(starts, end)):
                feed_pos, call = calls[k]
                for key in _fed_names(call):
                    found = inside.get(key)
                    if found and all(
                        kind == _ASSIGN and (pos >= feed_pos or _within(call, node)) for kind, pos, node in found
                    ):
                        return True
    return False


def _within(call: ast.AST, stmt: ast.AST) -> bool:
    """``call`` lies in the statement ``stmt`` (recurrent._same_statement)."""
    return (stmt.lineno, stmt.col_offset) <= (call.lineno, call.col_offset) and (  # type: ignore[attr-defined]
        call.end_lineno,  # type: ignore[attr-defined]
        call.end_col_offset,  # type: ignore[attr-defined]
    ) <= (stmt.end_lineno, stmt.end_col_offset)  # type: ignore[attr-defined]


def _fed_names(call: ast.Call) -> list[str]:
    """recurrent._fed_names on ``ast``: the dotted names among the flat
    elements of each argument that is not ``*``/``**``."""
    out: list[str] = []
    values = [a for a in call.args if type(a) is not ast.Starred]
    values += [kw.value for kw in call.keywords if kw.arg is not None]
    for value in values:
        for el in _flat(value):
            key = ast_dotted(el)
            if key is not None and key not in _NOT_STATE:
                out.append(key)
    return out


def _flat(expr: ast.AST) -> list[ast.AST]:
    """names.flat_targets: ``a, (b, *c)`` -> a, b, c."""
    kind = type(expr)
    if kind is ast.Tuple or kind is ast.List:
        return [el for item in expr.elts for el in _flat(item)]  # type: ignore[attr-defined]
    if kind is ast.Starred:
        return _flat(expr.value)  # type: ignore[attr-defined]
    return [expr]


def _bindings(scope: ast.AST, module: bool, out: list[tuple[str, int, Pos, ast.AST]], loops: list[ast.AST]) -> None:
    """recurrent._BindingsIndex over one scope (nested defs and lambdas
    left out; class bodies only in the module's), and the loops there."""
    stack = list(ast_fields.children(scope)) if not module else list(scope.body)  # type: ignore[attr-defined]
    children = ast_fields.children
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Lambda:
            continue
        if kind is ast.ClassDef and not module:
            continue
        if kind is ast.Assign:
            for target in node.targets:  # type: ignore[attr-defined]
                _add(target, _ASSIGN, node, out)
        elif kind is ast.AnnAssign:
            if node.value is not None:  # type: ignore[attr-defined]
                _add(node.target, _ASSIGN, node, out)  # type: ignore[attr-defined]
        elif kind is ast.AugAssign:
            _add(node.target, _OTHER, node, out)  # type: ignore[attr-defined]
        elif kind in _LOOPS:
            loops.append(node)
            if kind is not ast.While:
                _add(node.target, _OTHER, node, out)  # type: ignore[attr-defined]
        elif kind is ast.withitem:
            if node.optional_vars is not None:  # type: ignore[attr-defined]
                _add(node.optional_vars, _OTHER, node.context_expr, out)  # type: ignore[attr-defined]
        elif kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            if type(func) is ast.Attribute and func.attr in _DETACHING:
                receiver = func.value
                _add(receiver.value if type(receiver) is ast.Subscript else receiver, _OTHER, node, out)  # type: ignore[attr-defined]
        stack.extend(children(node))


def _add(target: ast.AST, kind: int, node: ast.AST, out: list[tuple[str, int, Pos, ast.AST]]) -> None:
    for el in _flat(target):
        key = ast_dotted(el)
        if key is not None:
            out.append((key, kind, (node.lineno, node.col_offset), node))  # type: ignore[attr-defined]
