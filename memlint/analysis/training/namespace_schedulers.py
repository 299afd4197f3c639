"""A scheduler read back from an attribute of a namespace object that the
caller filled: ShuffleNet-Series' ``main`` builds ``scheduler =
lr_scheduler.LambdaLR(...)``, stores ``args.scheduler = scheduler`` and
calls ``train(model, device, args)``, which reads ``scheduler =
args.scheduler`` and steps it in its batch loop.

``bindings.constructors`` gives up on ``args.scheduler`` (an attribute, not
a call), so MEM802 would not know the scheduler's kind. Here the kind is
read back through every store the module makes to that very spelling in
its other scopes: each must be a value whose constructors ``bindings``
names (a call, or a name bound to one there). Any store it cannot follow
(an unpacking, ``+=``, a parameter) makes the answer unknown, and so does
a function that stores the attribute itself: stay silent.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.bindings import Bindings, unwrap_pass_through
from memlint.analysis.scope.names import dotted_name

# Receivers that are the object itself, not a namespace handed around.
_SELF = frozenset({"self", "cls"})


def namespace_constructors(bindings: Bindings, target: str, scope: cst.CSTNode | None) -> set[str] | None:
    """The constructors of the object ``target`` holds in ``scope`` when its
    one binding there is ``P.attr`` with ``P`` a parameter of ``scope``,
    read from the stores of ``P.attr`` in the module's other scopes; None
    when that is not the shape or some store is not followed."""
    if not isinstance(scope, cst.FunctionDef):
        return None
    values = bindings.values_in(target, scope)
    if len(values) != 1 or not isinstance(values[0], cst.Attribute):
        return None
    spelled = dotted_name(values[0])
    head = values[0].value
    if spelled is None or not isinstance(head, cst.Name) or head.value in _SELF:
        return None
    if head.value not in _parameters(scope):
        return None
    stores = bindings.stores(spelled)
    if not stores or any(where is scope for where, _value in stores):
        return None
    names: set[str] = set()
    for where, value in stores:
        found = _constructors_of(bindings, value, where)
        if not found:
            return None
        names |= found
    return names


def _parameters(fn: cst.FunctionDef) -> set[str]:
    params = fn.params
    return {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}


def _constructors_of(bindings: Bindings, value: cst.BaseExpression | None, where: cst.CSTNode) -> set[str] | None:
    if value is None:
        return None
    call = unwrap_pass_through(value)
    if call is not None:
        name = bindings.call_name(call)
        return {name} if name else None
    spelled = dotted_name(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
    if spelled is None or not bindings.values_in(spelled, where):
        return None  # a parameter of the storing scope, or a global: not followed
    return bindings.constructors(spelled, where)
