"""``model.setup_to_test(path)`` on a plain object that holds models (index side).

A wrapper class that is no ``nn.Module`` (pix2pix's ``BaseModel`` family)
often switches its networks to eval in a method named for evaluation, not
in ``eval()``: InstColorization's ``FusionModel.setup_to_test`` loads the
weights and runs ``self.netG.eval()`` on each network. A script calling it
before its loop switched those models, which the file alone cannot tell.

The answer is the view's ``method_evals``: (scope, receiver, method) of each
``<receiver>.<method>(...)`` whose method is named for evaluation (the gate
reads the same names) and whose receiver the project types
(typed_objects.py) to project classes that are no ``nn.Module`` where every
class that has the method (its own, or a project base's) only switches
attributes of ``self`` to eval there (FunctionFacts.switches, no step, no
backward, no opaque call), and at least one has it. A class without the
method anywhere in its project bases is not the object (the call would
raise). Precision first: an installed class, a base that cannot be read,
a method that also trains or may switch to train is no such switch.
``wrapper_evals.py`` answers for ``eval()`` itself.
"""

from __future__ import annotations

from typing import Any

from memlint.gate.object_calls import switches_by_method

ProjectIndex = Any

_MAX_BASES = 8
_ABSENT = "absent"


def method_evals(index: ProjectIndex, path: str) -> tuple[tuple[str, str, str], ...]:
    typed = index.typed_objects()
    objects = typed.objects(path)
    if objects is None or not objects.receivers:
        return ()
    out: list[tuple[str, str, str]] = []
    for scope, receiver, method in objects.receivers:
        if not switches_by_method(method) or (scope, receiver, method) in out:
            continue
        types = typed.receiver_types(path, scope, receiver)
        if not types:
            continue
        answers = [_switches_to_eval(index, typed, t, method, 0) for t in types]
        if all(a is True or a == _ABSENT for a in answers) and True in answers:
            out.append((scope, receiver, method))
    return tuple(out)


def _switches_to_eval(index: ProjectIndex, typed: Any, typ: str, method: str, depth: int) -> bool | str:
    """True when ``typ``'s ``method`` (its own or its nearest project
    base's) only switches attributes of ``self`` to eval; ``_ABSENT`` when
    neither it nor a base has one; False otherwise or when not known."""
    if "\0" not in typ or depth > _MAX_BASES:
        return False
    path, cls = typ.split("\0")
    objects = typed.objects(path)
    if objects is None:
        return False
    summary = index.full_summary(path)  # None: no training word, no switch either
    if summary is not None and cls in summary.model_classes:
        return False  # an nn.Module: its own methods are read as such
    if any(f == f"{cls}.{method}" for f, _ in objects.params):
        facts = next((f for f in summary.functions if f.name == f"{cls}.{method}"), None) if summary else None
        if facts is None or facts.opaque or facts.steps or facts.backprops:
            return False
        return bool(facts.switches) and all(kind == "eval" and r.startswith("self.") for r, kind in facts.switches)
    bases = next((b for c, b in objects.bases if c == cls), None)
    if bases is None:
        return False
    for base in bases:
        if base == "object":
            continue
        if base == "?":
            return False
        q = (f"{path}\0{base[1:]}",) if base.startswith(":") else typed.qualify(base, path)
        if q is None or len(q) != 1:
            return False
        found = _switches_to_eval(index, typed, q[0], method, depth + 1)
        if found != _ABSENT:
            return found
    return _ABSENT
