"""An optimizer's name handed to a model's constructor brings no module (MEM701).

AoANet's ``def setup(opt): model = AoAModel(opt)`` hands the command-line
options under a name the vocabulary reads as an optimizer (``opt``). A model
class is judged built on the CPU unless an argument may be a model built
before and maybe moved (``DataParallel(net)``: the new model wraps it). An
optimizer is no module: a class that moves nothing builds its own parameters
on the CPU whatever it is handed. Only a name not bound here from a call (a
parameter, ``opt``) is let through: ``Lookahead(torch.optim.Adam(...))``, an
optimizer built here, keeps the state of a model that may be on a device.
"""

from __future__ import annotations

from memlint.vocabulary.kinds import Kind


def handed_no_module(kind: Kind, bound_from_call: bool) -> bool:
    """An argument of ``kind`` (bound from a call here, or not) handed to a
    constructor is no model to wrap."""
    return kind is Kind.OPTIMIZER and not bound_from_call
