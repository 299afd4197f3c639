"""A load into a parameter of a function nothing in the project calls.

``def load(model, path): model.load_state_dict(torch.load(path))`` in a
utils.py no module calls (ban-vqa's ``init_net``, NVAE's ``load``): where the
model is, on a GPU or still on the CPU, only a caller would say, and there is
none. Read with the project only: a lone file (no project) cannot tell "no
caller" from "callers elsewhere", and its helper stays judged by the rule.

The function is a module-level one, undecorated, called nowhere in its module (nor used
as a value there) and from no other module of the project, and the function
itself does not move the parameter before the load (``model.cuda()`` first
says where the copy lands, whoever calls it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import libcst as cst

from memlint.analysis.scope.callgraph import CallGraph
from memlint.analysis.scope.names import dotted_name


def into_uncalled_param(
    call: cst.Call,
    calls: CallGraph,
    project: Any,
    placed_before: Callable[[cst.BaseExpression, cst.CSTNode], bool],
) -> bool:
    """``call`` (``x.load_state_dict(...)``) loads into a parameter (or a part
    of one: ``model.module``) of a module-level function with no caller in
    the project, which does not move it before ``call``."""
    if project is None or not isinstance(call.func, cst.Attribute):
        return False
    receiver = call.func.value
    root = dotted_name(receiver)
    if root is None:
        return False
    name = root.partition(".")[0]
    fn = calls.parents.get(call)
    while fn is not None and not isinstance(fn, (cst.FunctionDef, cst.ClassDef, cst.Module)):
        fn = calls.parents.get(fn)
    if not isinstance(fn, cst.FunctionDef) or fn in calls.class_of or fn.decorators:
        return False  # a method (its callers are its instances'), or one a decorator may register
    if calls.owner.get(fn) is not calls.module:
        return False  # a nested function
    params = (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)
    if name not in {p.name.value for p in params}:
        return False
    if calls.call_sites.get(fn) or fn in calls.escapes or project.callers_of(fn.name.value):
        return False
    return not placed_before(receiver, call)
