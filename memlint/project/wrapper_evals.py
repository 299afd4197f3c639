"""``model.eval()`` on a plain object that holds models (index side).

Research code often wraps its networks in a plain class, not an
``nn.Module``: RIFE's ``Model`` builds ``self.flownet = IFNet()`` and its
``eval()`` runs ``self.flownet.eval()`` (and its other parts'), its
``inference()`` runs ``self.flownet(...)``. A script that calls
``model.eval()`` on such an object switched models to eval mode, which the
file alone cannot tell from any other method named ``eval``.

The answer is the view's ``object_evals``: (scope, receiver) of each
``<receiver>.eval()`` whose receiver the project types (typed_objects.py)
to project classes that are no ``nn.Module`` and whose own ``eval(self)``
does nothing the summary sees but switch attributes of ``self`` to eval
mode (FunctionFacts.switches, no step, no backward, no opaque call).
Precision first: an untyped receiver, an installed class, an inherited or
parameterised ``eval``, or one that also trains is no such switch.
"""

from __future__ import annotations

from typing import Any

ProjectIndex = Any


def object_evals(index: ProjectIndex, path: str) -> tuple[tuple[str, str], ...]:
    typed = index.typed_objects()
    objects = typed.objects(path)
    if objects is None or not objects.receivers:
        return ()
    out = []
    for scope, receiver, method in objects.receivers:
        if method != "eval" or (scope, receiver) in out:
            continue
        types = typed.receiver_types(path, scope, receiver)
        if types and all(_switches_held_models(index, t) for t in types):
            out.append((scope, receiver))
    return tuple(out)


def _switches_held_models(index: ProjectIndex, typ: str) -> bool:
    """``typ`` (``file\\0Class``) is a plain project class whose own
    ``eval(self)`` only switches its attributes to eval mode."""
    if "\0" not in typ:
        return False
    path, cls = typ.split("\0")
    summary = index.full_summary(path)
    if summary is None or cls in summary.model_classes:
        return False  # an nn.Module's eval() is already a mode switch
    facts = next((f for f in summary.functions if f.name == f"{cls}.eval"), None)
    if facts is None or facts.params != ("self",) or facts.opaque or facts.steps or facts.backprops:
        return False
    return bool(facts.switches) and all(
        kind == "eval" and receiver.startswith("self.") for receiver, kind in facts.switches
    )
