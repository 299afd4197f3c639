"""Functions that return (a filtered view of) a dict they are handed.

MEM701 follows a load's tensors through key lookups, copying
comprehensions and loops (state_flow.py); a project helper that does the
same inside its body passes them on just as well: SECOND's
``pretrained = filter_param_dict(pretrained, include, exclude)`` keeps the
very tensors of the load, only fewer of them. ``passed_param`` names the
parameter whose values every ``return`` of a function passes on, unchanged:
the parameter itself, a key or copying comprehension of it, or a local dict
bound once and filled only by a loop copying that parameter's own values
(``for k, v in sd.items(): ... res[k] = v``). A return of anything else
(``None``, a transformed value, another parameter) gives None: the call's
value is not known to hold the load.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.bound_targets import bound_targets
from memlint.analysis.scope.own_returns import own_returns
from memlint.analysis.training.state_flow import drawn_from, loop_copies
from memlint.parse.traversal import OwnScopeVisitor, visit_fast


class _OwnLoops(OwnScopeVisitor):
    # Module-level, as own_returns.py's: a class per call would be a cycle.
    def __init__(self) -> None:
        super().__init__()
        self.loops: list[cst.For] = []

    def visit_For(self, node: cst.For) -> None:
        self.loops.append(node)


def _params(fn: cst.FunctionDef) -> set[str]:
    p = fn.params
    return {x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)}


def passed_param(fn: cst.FunctionDef) -> str | None:
    """The parameter whose values every return of ``fn`` passes on
    unchanged (see the module's docstring); None when there is none."""
    values, yields = own_returns(fn)
    if yields or not values:
        return None
    params = _params(fn)
    bound: dict[str, int] = {}
    for target in bound_targets(fn.body):
        if isinstance(target, cst.Name):
            bound[target.value] = bound.get(target.value, 0) + 1
    filled: dict[str, set[str]] = {}  # a local dict -> the parameters a loop copies into it
    found: set[str] = set()
    for value in values:
        if value is None:
            return None
        source = drawn_from(value)
        if not isinstance(source, cst.Name):
            return None
        name = source.value
        if name in params:
            if name in bound:
                return None  # rebound: the name may hold something else by then
            found.add(name)
            continue
        if bound.get(name) != 1:
            return None
        if not filled:
            visitor = _OwnLoops()
            visit_fast(fn.body, visitor)
            for loop in visitor.loops:
                for dest, src in loop_copies(loop):
                    origin = drawn_from(src)
                    if isinstance(origin, cst.Name) and origin.value in params and origin.value not in bound:
                        filled.setdefault(dest, set()).add(origin.value)
            filled.setdefault("", set())  # walked once
        sources = filled.get(name)
        if sources is None or len(sources) != 1:
            return None
        found |= sources
    return next(iter(found)) if len(found) == 1 else None
