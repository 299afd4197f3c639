"""A plain wrapper's method that runs its network through ``self.forward``.

pix2pix-style wrappers (Attention-Gated-Networks' ``FeedForwardSegmentation``,
no ``nn.Module``) hold the network in an attribute and run it in a method
named ``forward`` like any other: ``validate()`` is ``self.net.eval();
self.forward(split="test")``, and ``forward`` runs ``self.net(...)``. A
script's ``model.validate()`` per batch then runs the network with grad on.

Read only for a typed receiver's class and its bases when every one of them
is a project class that is no ``nn.Module`` (model_classes of its summary)
and has at most one base of the project: the method (its nearest definition)
calls ``self.forward`` (object_types ``self_forwards``) and neither
backpropagates, steps nor turns grad off; the nearest ``forward`` (of the
receiver's own class first: an override wins) runs an attribute with grad on
(``own_forwards``) whose parameters some class of the chain hands an
optimizer (``optimized_attrs``: trainable weights, so the forward records a
graph). Anything unknown is no answer.
"""

from __future__ import annotations

from typing import Any

_MAX_BASES = 8


def plain_forward(typed: Any, typ: str, method: str) -> str | None:
    """The message part for ``<receiver>.method(...)`` on ``typ``, else None."""
    chain = _plain_chain(typed, typ)
    if not chain:
        return None
    index = typed.index
    defining = next(((p, c, o) for p, c, o in chain if f"{c}.{method}" in dict(o.params)), None)
    forward = next(((p, c, o) for p, c, o in chain if f"{c}.forward" in dict(o.params)), None)
    if defining is None or forward is None:
        return None
    path, cls, objects = defining
    name = f"{cls}.{method}"
    if name not in objects.self_forwards or not _runs_no_step(index, path, name):
        return None
    fpath, fcls, fobjects = forward
    if not _runs_no_step(index, fpath, f"{fcls}.forward"):
        return None
    optimized = {a for _p, c, o in chain for oc, a in o.optimized_attrs if oc == c}
    for m, attr, line in fobjects.own_forwards:
        if m == f"{fcls}.forward" and attr in optimized:
            where = f"{index.modules.display(fpath)}:{line}"
            return f"{name} runs the {attr} with autograd on through self.forward, {where}"
    return None


def _runs_no_step(index: Any, path: str, name: str) -> bool:
    summary = index.full_summary(path)
    facts = next((f for f in summary.functions if f.name == name), None) if summary is not None else None
    return facts is not None and not (facts.backprops or facts.steps or facts.grad == "off")


def _plain_chain(typed: Any, typ: str) -> list[tuple[str, str, Any]]:
    """``typ`` and its project bases, nearest first, each (path, class, its
    module's object facts); empty when one is an ``nn.Module``, unknown, or
    has more than one base."""
    out: list[tuple[str, str, Any]] = []
    while len(out) <= _MAX_BASES:
        if "\0" not in typ:
            return []
        path, cls = typ.split("\0")
        objects = typed.objects(path)
        summary = typed.index.full_summary(path)
        if objects is None or summary is None or cls in summary.model_classes:
            return []
        out.append((path, cls, objects))
        bases = next((b for c, b in objects.bases if c == cls), None)
        if bases is None or len(bases) > 1:
            return []
        if not bases or bases[0] == "object":
            return out
        base = bases[0]
        q = (f"{path}\0{base[1:]}",) if base.startswith(":") else typed.qualify(base, path)
        if q is None or len(q) != 1:
            return []
        typ = q[0]
    return []


def trained_receivers(typed: Any, path: str) -> tuple[tuple[str, str, str], ...]:
    """``<receiver>.<method>(...)`` calls of ``path`` (scope, receiver,
    method) whose receiver may be a project class whose method (its nearest
    definition) backpropagates or steps: ``model.optimize_parameters()`` in
    the epoch loop that also calls ``model.validate()`` trains (MEM201 reads
    no evaluation there)."""
    objects = typed.objects(path)
    if objects is None:
        return ()
    out: list[tuple[str, str, str]] = []
    seen: dict[tuple[str, str], tuple[str, ...] | None] = {}
    for scope, receiver, method in objects.receivers:
        key = (scope, receiver)
        if key not in seen:
            seen[key] = typed.receiver_types(path, scope, receiver)
        if any(_trains(typed, typ, method) for typ in seen[key] or ()):
            out.append((scope, receiver, method))
    return tuple(out)


def _trains(typed: Any, typ: str, method: str) -> bool:
    for _hop in range(_MAX_BASES):
        if "\0" not in typ:
            return False
        path, cls = typ.split("\0")
        objects = typed.objects(path)
        if objects is None:
            return False
        name = f"{cls}.{method}"
        if name in dict(objects.params):
            summary = typed.index.full_summary(path)
            facts = next((f for f in summary.functions if f.name == name), None) if summary is not None else None
            return facts is not None and (facts.backprops or facts.steps)
        bases = next((b for c, b in objects.bases if c == cls), None)
        if not bases or bases[0] == "object":
            return False
        base = bases[0]
        q = (f"{path}\0{base[1:]}",) if base.startswith(":") else typed.qualify(base, path)
        if q is None or len(q) != 1:
            return False
        typ = q[0]
    return False
