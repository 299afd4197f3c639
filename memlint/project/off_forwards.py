"""Model attributes whose class runs its forward with grad off by decorator.

``self.model.forward(tokens)`` in ``LLaMA.generate`` builds no graph when
every class the project gives ``self.model`` (typed_objects.py: from every
construction site of ``LLaMA``) decorates that method with
``@torch.inference_mode()`` or ``@torch.no_grad()`` (the summary's
``FunctionFacts.grad``), in its own module or in a project base class it
inherits the method from. The decorator is the callee's own promise: what
the caller's grad mode is does not matter. An installed class, a class we
cannot read, or one that defines the method without such a decorator
answers "not proved", and the rules keep their findings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# ``typed``: typed_objects.TypedObjects, which imports this module (so no import back).
TypedObjects = Any

_MAX_HOPS = 4
_ROOT_BASES = frozenset({"object", "Module", "nn.Module", "torch.nn.Module", "torch.nn.modules.module.Module"})


def _class_facts(typed: TypedObjects, typ: str, hops: int) -> tuple[str, str, Any, Any] | None:
    """The module path, class name, module summary and object facts of a
    project type (``path\0Class``); None for an installed or unread class,
    or past the walk's hop limit."""
    if "\0" not in typ or hops > _MAX_HOPS:
        return None
    path, cls = typ.split("\0")
    summary = typed.index.full_summary(path)
    objects = typed.objects(path)
    if summary is None or objects is None:
        return None
    return path, cls, summary, objects


def decorated_off(typed: TypedObjects, types: tuple[str, ...], method: str) -> bool:
    """Every type is a project class whose ``method`` (its own or inherited
    from a project base) is decorated to run with grad off."""
    return bool(types) and all(_off(typed, typ, method, 0) is True for typ in types)


def _off(typed: TypedObjects, typ: str, method: str, hops: int) -> bool | None:
    """True: decorated off; False: defined without it; None: not defined
    here (look in the bases) or not known."""
    read = _class_facts(typed, typ, hops)
    if read is None:
        return False
    path, cls, summary, objects = read
    facts = next((f for f in summary.functions if f.name == f"{cls}.{method}"), None)
    if facts is not None:
        return facts.grad == "off"
    bases = next((b for c, b in objects.bases if c == cls), None)
    if not bases:
        return False
    for base in bases:
        if base.rpartition(".")[2] in _ROOT_BASES or base in _ROOT_BASES:
            continue
        q = typed.qualify(base, path) if not base.startswith(":") else (f"{path}\0{base[1:]}",)
        if q is None or len(q) != 1:
            return False
        # The first base defining it wins (the method resolution order of single inheritance).
        return _off(typed, q[0], method, hops + 1)
    return False  # nn.Module's own forward: nothing decorated


def attribute_forward_off(typed: TypedObjects, path: str, method_scope: str, attr: str, ctor: str, via: str) -> bool:
    """``self.<attr>`` (built by ``ctor`` as ``path`` spells it, "" when not
    built in the class) runs ``via`` (its forward when "") under a grad-off
    decorator of every class it may be (typed_objects.forward_of)."""
    if ctor:
        types: set[str] = set()
        for c in ctor.split("|"):
            q = typed.qualify(c, path) if not c.startswith(":") else (f"{path}\0{c[1:]}",)
            if not q:
                return False
            types.update(q)
        found: tuple[str, ...] | None = tuple(sorted(types))
    else:
        found = typed.receiver_types(path, method_scope, f"self.{attr}")
    return found is not None and decorated_off(typed, found, via or "forward")


def off_receivers(typed: TypedObjects, path: str) -> tuple[tuple[str, str], ...]:
    """The view's ``off_forwards``: (scope, receiver) of each
    ``<receiver>.forward(...)`` in ``path`` whose receiver's every project
    class decorates ``forward`` with ``no_grad``/``inference_mode``."""
    objects = typed.objects(path)
    if objects is None or not objects.receivers:
        return ()
    out = []
    for scope, receiver, method in objects.receivers:
        if method != "forward":
            continue
        types = typed.receiver_types(path, scope, receiver)
        if types is not None and decorated_off(typed, types, "forward"):
            out.append((scope, receiver))
    return tuple(sorted(set(out)))


def partly_off_receivers(typed: TypedObjects, path: str) -> tuple[tuple[str, str], ...]:
    """The view's ``partly_off``: (scope, name) of each receiver or bound
    name in ``path`` whose every type is a project class whose ``forward``
    (its own, or the first project base's that defines it) turns grad off
    for some of its work (ObjectTypes.off_inside): SPADE's
    ``model = Pix2PixModel(opt)``, whose ``forward`` runs ``mode='inference'``
    under ``torch.no_grad()``. A call of it may build no graph."""
    return receivers_whose_forward(typed, path, lambda objects: objects.off_inside)


def receivers_whose_forward(
    typed: TypedObjects, path: str, listed: Callable[[Any], list[str]]
) -> tuple[tuple[str, str], ...]:
    """(scope, name) of each receiver or bound name in ``path`` whose every
    type is a project class whose ``forward`` (its own, or the first project
    base's that defines one) its module lists in ``listed(objects)``."""
    objects = typed.objects(path)
    if objects is None:
        return ()
    names = {(s, r) for s, r, _ in objects.receivers} | {(s, n) for s, n, _ in objects.bound}
    out = []
    for scope, name in names:
        types = typed.receiver_types(path, scope, name)
        if types and all(_forward_listed(typed, typ, listed, 0) for typ in types):
            out.append((scope, name))
    return tuple(sorted(out))


def _forward_listed(typed: TypedObjects, typ: str, listed: Callable[[Any], list[str]], hops: int) -> bool:
    read = _class_facts(typed, typ, hops)
    if read is None:
        return False
    path, cls, summary, objects = read
    if cls in listed(objects):
        return True
    if any(f.name == f"{cls}.forward" for f in summary.functions):
        return False  # its own forward, not listed
    bases = next((b for c, b in objects.bases if c == cls), None)
    for base in bases or ():
        if base.rpartition(".")[2] in _ROOT_BASES or base in _ROOT_BASES:
            continue
        q = typed.qualify(base, path) if not base.startswith(":") else (f"{path}\0{base[1:]}",)
        return q is not None and len(q) == 1 and _forward_listed(typed, q[0], listed, hops + 1)
    return False
