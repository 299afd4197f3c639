"""MEM702's gate: an ``empty_cache()`` statement the rule's
``visit_SimpleStatementLine`` may report, read on Python's ``ast``.

rules/mem702_empty_cache_in_loop.py reports only

- an expression statement that is a call (``torch.cuda.empty_cache()``,
  any import spelling: the callee's last name, an alias resolved);
- with a loop around it in its own function (loops.LoopAnalysis.loop_of:
  the walk up stops at a ``def``; a loop's ``else`` counts as inside, a
  ``class`` body does not stop it);
- not ``_guarded``: no ``if`` body, ``except`` handler or ``finally`` block
  between it and its function (a ``class`` and a loop do not stop that walk
  either, so an ``if`` around the loop guards too), but for the body of an
  ``if __name__ == "__main__":`` (either way round), which guards nothing.

Read wider here: every ``else`` (and ``elif``) block counts as unguarded
(the rule guards the ``else`` of a test that is not an emptiness test),
``except*`` handlers count as unguarded (libcst's ExceptStarHandler is not
the ExceptHandler ``_guarded`` looks for), a loop over epochs
(``outer_loop``) and a call right after a ``del``/``gc.collect()`` are
kept, and a line of several statements counts as one.
"""

from __future__ import annotations

import ast

from memlint.gate.ast_names import ast_callee

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_WITHS = (ast.With, ast.AsyncWith)
_TRY_STAR = getattr(ast, "TryStar", None)  # Python 3.11+
_MATCH = getattr(ast, "Match", None)  # Python 3.10+


def empty_cache_in_loop(tree: ast.Module, aliases: dict[str, str]) -> bool:
    """Some ``empty_cache()`` statement is in a loop of its own function and
    under no ``if`` body, ``except`` handler or ``finally`` there."""
    try:
        return _any(tree.body, False, False, aliases)
    except RecursionError:  # nesting deeper than this walk goes: stay wide
        return True


def _any(stmts: list[ast.stmt], in_loop: bool, guarded: bool, aliases: dict[str, str]) -> bool:
    for stmt in stmts:
        kind = type(stmt)
        if kind is ast.Expr:
            value = stmt.value  # type: ignore[attr-defined]
            if in_loop and not guarded and type(value) is ast.Call and ast_callee(value.func, aliases) == "empty_cache":
                return True
        elif kind in _FUNCTIONS:
            if _any(stmt.body, False, False, aliases):  # type: ignore[attr-defined]
                return True
        elif kind in _LOOPS:
            if _any(stmt.body, True, guarded, aliases) or _any(stmt.orelse, True, guarded, aliases):  # type: ignore[attr-defined]
                return True
        elif kind is ast.If:
            body_guard = guarded or not _main_guard(stmt.test)  # type: ignore[attr-defined]
            if _any(stmt.body, in_loop, body_guard, aliases) or _any(stmt.orelse, in_loop, guarded, aliases):  # type: ignore[attr-defined]
                return True
        elif kind is ast.Try or kind is _TRY_STAR:
            handlers_guard = guarded or kind is ast.Try
            if (
                _any(stmt.body, in_loop, guarded, aliases)  # type: ignore[attr-defined]
                or any(_any(h.body, in_loop, handlers_guard, aliases) for h in stmt.handlers)  # type: ignore[attr-defined]
                or _any(stmt.orelse, in_loop, guarded, aliases)  # type: ignore[attr-defined]
                or _any(stmt.finalbody, in_loop, True, aliases)  # type: ignore[attr-defined]
            ):
                return True
        elif kind in _WITHS or kind is ast.ClassDef:
            if _any(stmt.body, in_loop, guarded, aliases):  # type: ignore[attr-defined]
                return True
        elif kind is _MATCH:
            if any(_any(case.body, in_loop, guarded, aliases) for case in stmt.cases):  # type: ignore[attr-defined]
                return True
    return False


def _main_guard(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either way round): the rule's ``_main_guard``."""
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) is not ast.Eq:  # type: ignore[attr-defined]
        return False
    sides = (test.left, test.comparators[0])  # type: ignore[attr-defined]
    names = [e for e in sides if type(e) is ast.Name and e.id == "__name__"]  # type: ignore[attr-defined]
    strings = [e for e in sides if type(e) is ast.Constant and e.value == "__main__"]  # type: ignore[attr-defined]
    return len(names) == 1 and len(strings) == 1
