"""A model's ``load_state_dict`` held in a variable, then called.

SRFBN's ``load_func = self.model.load_state_dict if isinstance(self.model,
nn.DataParallel) else self.model.module.load_state_dict; load_func(ckpt)``
loads into ``self.model`` whichever arm runs. Only a name every binding of
which, in its own scope, is a ``load_state_dict`` of the same model (a
``.module`` of it counts as the model: DataParallel's wrapped network) is one;
any other binding, a parameter, or two models leave it unknown."""

from __future__ import annotations

from typing import Any

import libcst as cst

from memlint.analysis.scope.names import dotted_name


def bound_load_receiver(call: cst.Call, objects: Any) -> cst.BaseExpression | None:
    """The model ``call`` loads into, as the first arm spells it, when
    ``call`` calls a name bound only to that model's ``load_state_dict``."""
    if not isinstance(call.func, cst.Name) or not call.args:
        return None
    arms = objects.bound_methods(call.func)
    if not arms or any(arm.attr.value != "load_state_dict" for arm in arms):
        return None
    models = {_model(dotted_name(arm.value)) for arm in arms}
    if len(models) != 1 or None in models:
        return None
    return arms[0].value


def _model(name: str | None) -> str | None:
    if name is None:
        return None
    return name[: -len(".module")] if name.endswith(".module") else name
