"""Keyword dicts splatted into a call that may leave one keyword out.

EDSR's ``Model.load``: ``kwargs = {'map_location': ...}`` when ``cpu``,
else ``kwargs = {}``, then ``torch.load(path, **kwargs)``: on the GPU path the
load has no ``map_location``. A ``**name`` counts only when the name is a
local of its scope (no parameter, ``global`` or ``nonlocal``), every binding
of it there is a plain assignment of a dict display with string keys (no
``**other`` inside), it is read only as a ``**`` argument (never mutated,
passed on or looked into), and some binding lacks the keyword; anything else
leaves it unknown.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from memlint.analysis.scope.plain_bindings import plain_values


def splat_misses(call: cst.Call, keyword: str, facts: Any) -> bool:
    """Every ``**`` argument of ``call`` is a dict of this kind, some
    binding of one of them leaves ``keyword`` out, and none holds it on
    every path; no ``*`` argument and no ``keyword=`` beside them."""
    stars = [a for a in call.args if a.star == "**"]
    if not stars or any(a.star == "*" or (a.keyword is not None and a.keyword.value == keyword) for a in call.args):
        return False
    scope = facts.loops.scope_of(call)
    if scope is None:
        return False
    missing = False
    for arg in stars:
        verdict = _dict_name_misses(arg.value, keyword, scope, facts)
        if verdict is None:
            return False
        missing = missing or verdict
    return missing


def _dict_name_misses(value: cst.BaseExpression, keyword: str, scope: cst.CSTNode, facts: Any) -> bool | None:
    """Whether some binding of the ``**`` name ``value`` leaves ``keyword``
    out; None when the name is not a local bound only to dict displays."""
    if not isinstance(value, cst.Name):
        return None
    values = plain_values(value, scope, facts)
    if values is None:
        return None
    missing = False
    for bound in values:
        keys = _display_keys(bound)
        if keys is None:
            return None
        missing = missing or keyword not in keys
    parents = facts.calls.parents
    for read in facts.usage.reads(value.value, scope):
        parent = parents.get(read)
        if isinstance(parent, cst.AssignTarget):
            continue  # one of the bindings above
        if not (isinstance(parent, cst.Arg) and parent.value is read and parent.star == "**"):
            return None  # mutated, passed on or looked into
    return missing


def _display_keys(value: cst.BaseExpression) -> set[str] | None:
    """The string keys of a dict display; None for anything else."""
    if not isinstance(value, cst.Dict):
        return None
    keys: set[str] = set()
    for element in value.elements:
        if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
            return None
        keys.add(element.key.evaluated_value if isinstance(element.key.evaluated_value, str) else "")
    return keys
