"""A training step split across functions of one module, read as one step.

``fit()`` loops over the batches and calls ``self.train_step(x, y)``, which
runs ``zero_grad()`` and the backward; ``fit()`` then steps under
``if (i + 1) % accum == 0:``. Which verb runs before which, and under which
condition, is decided across the two methods. ``inlined(verbs, region)``
gives the verbs of one iteration of a loop (or of a function's straight-line
code) with every call of a local function replaced by that function's verbs,
as if its body were written at the call: each copy's ``path`` is the call's
followed by its own, its ``loops`` the call's, its ``via`` the call, and the
list is renumbered so that ``index`` orders the copies and the region's own
verbs alike. ``verbs.conditions``/``dominates``/``follows`` then work on the
copies as on any verb of the region.

Precision first: a function is inlined only when every one of its verbs
runs once per call, in its straight-line code (none in a loop of its own)
and it holds no ``return``/``raise``/``yield`` before its last statement that
could skip some of them; otherwise its call stays an opaque ``CALL`` verb,
which the rules read as "may do anything" (silent). Calls are followed
three levels deep, never into a function already being inlined.
"""

from __future__ import annotations

import dataclasses

import libcst as cst

from memlint.analysis.scope.names import dotted_name
from memlint.analysis.training.training_verbs import Verb, VerbKind
from memlint.parse.traversal import visit_fast

_DEPTH = 3


class _Exits(cst.CSTVisitor):
    """A ``return``/``raise``/``yield`` outside nested functions."""

    # A module-level class, not one per call: see training_verbs._Jumps.
    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.Return, cst.Raise, cst.Yield)):
            self.found = True
        return not self.found and not isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef))


def straight_line(verbs, fn: cst.FunctionDef) -> list[Verb] | None:
    """The verbs of ``fn`` when each runs at most once per call and nothing
    but a branch decides whether it runs; None otherwise. Read once per
    function (kept on ``verbs``), however many regions call it."""
    memo = verbs.__dict__.setdefault("_straight_line", {})
    if fn not in memo:
        memo[fn] = _straight_line(verbs, fn)
    return memo[fn]


def _straight_line(verbs, fn: cst.FunctionDef) -> list[Verb] | None:
    own = verbs.in_scope(fn)
    if any(v.loops for v in own):
        return None
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else ()
    exits = _Exits()
    for stmt in body[:-1]:
        visit_fast(stmt, exits)
    if body and not _is_return(body[-1]):
        visit_fast(body[-1], exits)
    return None if exits.found else own


def _is_return(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and any(isinstance(s, cst.Return) for s in stmt.body)


def inlined(verbs, region: cst.CSTNode, iteration_only: bool = False) -> list[Verb]:
    """The verbs of ``region`` (``verbs.in_region``, or ``in_iteration`` when
    ``iteration_only``) with the calls of straight-line local functions
    replaced by their verbs. Copies carry ``via``: the outermost call of the
    region that reaches them."""
    base = verbs.in_iteration(region) if iteration_only else verbs.in_region(region)
    out: list[Verb] = []
    for verb in base:
        out.extend(_expand(verbs, verb, None, (), 0))
    return [dataclasses.replace(v, index=i) if v.index != i else v for i, v in enumerate(out)]


def _expand(verbs, verb: Verb, via: Verb | None, stack: tuple[cst.FunctionDef, ...], depth: int) -> list[Verb]:
    if verb.kind is VerbKind.PROJECT_CALL:
        # Another module's function (summary FunctionFacts.sequence): its
        # verbs, already read on what the call hands over.
        outer = via or verb
        return [dataclasses.replace(v, path=verb.path, loops=verb.loops, via=outer) for v in verb.foreign]
    if verb.kind is not VerbKind.CALL or verb.callee is None or depth >= _DEPTH or verb.callee in stack:
        return [verb]
    body = straight_line(verbs, verb.callee)
    if body is None:
        return [verb]
    out: list[Verb] = []
    outer = via or verb
    for sub in body:
        copy = dataclasses.replace(sub, path=verb.path + sub.path, loops=verb.loops, via=outer)
        out.extend(_expand(verbs, copy, outer, (*stack, verb.callee), depth + 1))
    return out or [verb]


def where(verb: Verb, line_of) -> str:
    """``in `train_step`, called at line 14`` for a verb reached through a
    call, ``in `utils.train_step` (utils.py:7), called at line 14`` through
    another module's, ``at line 9`` for the region's own (``line_of``: a
    node's first line)."""
    if verb.via is not None and verb.helper and isinstance(verb.call, cst.Call):
        callee = dotted_name(verb.call.func) or "a helper"
        return f"in `{callee}` ({verb.helper}), called at line {line_of(verb.via.call)}"
    if verb.via is None or not isinstance(verb.scope, cst.FunctionDef):
        return f"at line {line_of(verb.call)}"
    return f"in `{verb.scope.name.value}`, called at line {line_of(verb.via.call)}"
