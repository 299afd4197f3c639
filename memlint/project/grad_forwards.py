"""Models whose ``forward`` needs autograd (issue 29, IDR's ``IDRNetwork``).

An implicit-surface renderer computes its surface normals as the gradient of
the network's output with respect to its input points: ``IDRNetwork.forward``
runs ``self.implicit_network.gradient(points)``, and ``gradient`` runs
``torch.autograd.grad(y, x, create_graph=True)``. Evaluating such a model
under ``torch.no_grad()`` fails (nothing to differentiate), so a loop that
renders with grad on after ``model.eval()`` is no waste: its forward needs
grad, as a loop calling ``autograd.grad`` itself does (MEM201).

A class's ``forward`` needs grad when it backpropagates itself (the
summary's ``FunctionFacts.backprops``: ``autograd.grad``, ``.backward()``) or
calls a method of one of its attributes (``self.<attr>.<method>(...)``)
whose every class, as the class assigns the attribute (ObjectTypes.attr_types),
is a project class whose ``method`` backpropagates. Only modules whose text
spells ``autograd`` are read for it (a word scan: ``backward`` alone in a
forward is a training step, not a need for gradients while evaluating).

Which receivers may be such a model (``grad_receivers``):

- a receiver the project types (typed_objects.receiver_types) with any such
  class among its types;
- a model built from a class the project looks up at run time by a name it
  cannot follow (``utils.get_class(conf.get_string("train.model_class"))(conf)``,
  spelled ``%`` + the lookup, for which class_registries finds no classes):
  any class of the project may be the one, so one such class in the project
  is enough. The answer then depends on every file of the project (any of
  them may gain or lose such a class), and all are noted as read.

The index asks only for a module that spells ``.eval()`` (MEM201's evidence
of an evaluation), so most views read none of this.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

ProjectIndex = Any  # index.ProjectIndex (no import back)
TypedObjects = Any  # typed_objects.TypedObjects (which the index builds)

_NEEDLE = b"autograd"


def forward_needs_grad(typed: TypedObjects, path: str, cls: str) -> bool:
    """``cls`` of ``path`` has a ``forward`` that backpropagates, itself or
    through a method of one of its attributes (module docstring); read once
    per index, its reads noted again for each view that asks."""
    memo = getattr(typed, "_grad_forward_memo", None)
    if memo is None:
        memo = typed._grad_forward_memo = {}
    key = (path, cls)
    if key not in memo:
        reads: set[str] = set()
        index = typed.index
        outer, index._reading = index._reading, reads
        try:
            memo[key] = (_needs_grad(typed, path, cls), tuple(reads))
        finally:
            index._reading = outer
    answer, reads_made = memo[key]
    for read in reads_made:
        typed.index._note_read(read)
    return answer


def _needs_grad(typed: TypedObjects, path: str, cls: str) -> bool:
    summary = typed.index.full_summary(path)
    if summary is None or summary.objects is None:
        return False
    own = f"{cls}.forward"
    if any(f.name == own and f.backprops for f in summary.functions):
        return True
    objects = summary.objects
    for scope, receiver, method in objects.receivers:
        if scope != own or not receiver.startswith("self.") or "." in receiver[len("self.") :]:
            continue
        attr = receiver[len("self.") :]
        spelled = next((t for c, a, t in objects.attr_types if c == cls and a == attr), None)
        if spelled and all(_backprops(typed, path, sp, method) for sp in spelled):
            return True
    return False


def _backprops(typed: TypedObjects, path: str, spelled: str, method: str) -> bool:
    """Every class ``spelled`` (in ``path``) may be is a project class whose
    own ``method`` backpropagates."""
    types = (f"{path}\0{spelled[1:]}",) if spelled.startswith(":") else typed.qualify(spelled, path)
    if not types:
        return False
    for typ in types:
        if "\0" not in typ:
            return False
        home, name = typ.split("\0")
        summary = typed.index.full_summary(home)
        if summary is None or not any(f.name == f"{name}.{method}" and f.backprops for f in summary.functions):
            return False
    return True


def grad_forward_classes(typed: TypedObjects, files: Iterable[str], note_read: Callable[[str], None]) -> bool:
    """Some module of ``files`` defines a model class whose ``forward`` needs
    grad; every file whose text is read is noted (a file that cannot be read
    spells nothing)."""
    found = False
    for path in files:
        if not path.endswith(".py"):
            continue
        note_read(path)
        try:
            data = typed.index.source_bytes(path)
        except OSError:
            continue
        if found or data is None or _NEEDLE not in data:
            continue  # every file is still read: any of them may change the answer
        summary = typed.index.full_summary(path)
        if summary is None or summary.objects is None:
            continue
        found = any(
            forward_needs_grad(typed, path, cls) for cls, _ in summary.objects.bases if cls in summary.model_classes
        )
    return found


def _spellings(objects: Any, scope: str, receiver: str) -> tuple[str, ...]:
    """What ``receiver`` in ``scope`` is bound to, as spelled: a name's
    bindings there, or the class's assignments of ``self.<attr>``."""
    if receiver.startswith("self."):
        cls = scope.rpartition(".")[0]
        attr = receiver[len("self.") :]
        return next((t for c, a, t in objects.attr_types if c == cls and a == attr), ())
    return next((t for s, n, t in objects.bound if s == scope and n == receiver), ())


def grad_receivers(typed: TypedObjects, path: str, anywhere: Callable[[], bool]) -> tuple[tuple[str, str], ...]:
    """The view's ``grad_forwards``: (scope, receiver) of each receiver or
    bound name of ``path`` that may be a model whose ``forward`` needs grad.
    ``anywhere()``: the project defines such a class (grad_forward_classes),
    asked only for a model built from a class looked up at run time."""
    objects = typed.objects(path)
    if objects is None:
        return ()
    names = {(s, r) for s, r, _ in objects.receivers} | {(s, n) for s, n, _ in objects.bound}
    out = []
    for scope, name in sorted(names):
        types = typed.receiver_types(path, scope, name)
        if types:
            if any("\0" in t and forward_needs_grad(typed, *t.split("\0")) for t in types):
                out.append((scope, name))
            continue
        spelled = _spellings(objects, scope, name)
        if spelled and all(sp.startswith("%") and not typed.qualify(sp, path) for sp in spelled) and anywhere():
            out.append((scope, name))
    return tuple(out)
