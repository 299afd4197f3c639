"""An attribute of a namespace object that a caller filled, read back in
the function it is handed to: ShuffleNet-Series' ``main`` stores
``args.optimizer = optimizer`` and ``args.scheduler = scheduler`` and calls
``train(model, device, args)``, which reads ``optimizer = args.optimizer``.

``args`` is a parameter of ``train``: nothing there says what
``args.optimizer`` holds. The module's other scopes do, when every store
they make to that very spelling (``args.optimizer = ...``) evaluates to one
kind of object. A store the reading function makes itself, one that cannot
be evaluated, or stores of two kinds leave the attribute unknown.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from memlint.vocabulary.kinds import Kind

# Receivers that are the object itself, not a namespace handed around.
SELF_NAMES = frozenset({"self", "cls"})


def namespace_kind(
    stores: list[tuple[object, object]],
    reader: object,
    evaluate: Callable[[object, object], Kind | None],
) -> Kind | None:
    """The one kind every (scope, value) of ``stores`` evaluates to, read in
    ``reader`` (a function taking the namespace as a parameter); None when a
    store is in ``reader`` itself, cannot be evaluated, or kinds differ."""
    if not stores or any(owner is reader for owner, _value in stores):
        return None
    kinds = {evaluate(value, owner) for owner, value in stores}
    if len(kinds) != 1:
        return None
    return next(iter(kinds))


def namespace_key(target: cst.BaseExpression) -> str | None:
    """``args.optimizer`` for a store to an attribute of a plain name (never ``self``)."""
    if (
        isinstance(target, cst.Attribute)
        and isinstance(target.value, cst.Name)
        and target.value.value not in SELF_NAMES
    ):
        return f"{target.value.value}.{target.attr.value}"
    return None
