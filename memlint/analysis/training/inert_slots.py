"""Constructor slots for layers that hold no tensors (MEM701).

rpg_event_representation_learning's ``ValueLayer.__init__(self, mlp_layers,
activation=nn.ReLU(), ...)`` keeps ``self.activation = activation`` and then
loads its trilinear initialisation into ``self``. A module handed in and set
on a model under construction may sit on any device, so state_loads.py no
longer counts the model as on the CPU after such a store; but a slot whose
default is a torch.nn layer that owns no parameter (an activation, a
pooling, a dropout) declares what it holds: a layer with no tensors, which
puts nothing of the model on a device whichever one it is.

A parameter is such a slot when its default is a call of a parameterless
``torch.nn`` layer (vocabulary/kinds.py: ``nn.LeakyReLU(negative_slope=0.1)``)
and the function has not rebound it before the store. A caller handing a
layer with parameters on a device to an activation slot is not followed.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import ImportTable
from memlint.vocabulary.kinds import parameterless_layer


def inert_slot(fn: cst.FunctionDef, name: str, names: ImportTable) -> bool:
    """``name`` is a parameter of ``fn`` whose default builds a torch.nn layer that owns no parameter."""
    params = fn.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value != name:
            continue
        default = param.default
        return isinstance(default, cst.Call) and parameterless_layer(names.call_name(default) or "")
    return False
