"""Functions of other modules that ``model.apply(fn)`` hands every submodule
to, and that switch no model's mode (MEM201/MEM202/MEM203's mode timeline).

``aD.apply(weights_init)`` after ``from training_utils import *``: an
unknown call handed a model may switch its mode (``m.apply(set_bn_eval)``),
so the timeline reads it as an unknown switch and a validation loop after
it is no longer known to run in train mode. When the project holds the
function and its summary shows no ``.eval()``/``.train()`` call and nothing
opaque that may switch one (FunctionFacts.switches, opaque), ``apply`` only
runs that function on each submodule: no switch. A function the project
does not hold, or one whose module has no summary, stays unknown.
"""

from __future__ import annotations

from typing import Any

from memlint.project.summary import ModuleSummary


def quiet_applied(index: Any, path: str, summary: ModuleSummary) -> tuple[str, ...]:
    """The local names ``path`` hands to ``.apply(...)`` that name a project
    function switching no mode (``index``: the ProjectIndex asking, not
    imported here: index.py imports this module)."""
    if not summary.applied:
        return ()
    stars: dict[str, dict[str, tuple[str, str]]] = {}
    out: set[str] = set()
    for spelled in summary.applied:
        located = index._function_facts_at(spelled, path, index._path_stars(path, stars))
        if located is None or located[1].switches or located[1].opaque:
            continue
        if spelled.startswith("*"):
            out.add(spelled[1:])
        else:
            out.update(local for local, target in summary.imports.items() if target == spelled)
    return tuple(sorted(out))
