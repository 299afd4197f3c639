"""Calls that may reach a function of another module of the project.

What a view says of the functions a module calls (ProjectView.callees for
MEM203, ProjectView.step_sequences for MEM301/MEM303) is read off the
module's own summary: its call sites of names its imports bind
(project/summary.py, ``CallSite``), and the summary keeps no call under a
head that never names a project module (vocabulary/roots.py: the standard
library, torch, numpy ...). So a file whose every such call is of
``math.sqrt``, ``np.stack`` or ``logging.getLogger`` gets nothing from
those view fields, whatever the project holds: it need not wait for them.
The torch family the gate always left out stays left out (torchtext too).
"""

from __future__ import annotations

import ast
from typing import Any

from memlint.gate.syntax import in_spans, line_spans
from memlint.vocabulary.roots import NEVER_PROJECT_ROOTS

GateFacts = Any  # gate/facts.GateFacts (no import circle)

_TORCH_FAMILY = frozenset({"torch", "torchvision", "torchaudio", "torchtext"})
_NEVER = NEVER_PROJECT_ROOTS | _TORCH_FAMILY


def project_bound(facts: GateFacts) -> tuple[frozenset[str], bool]:
    """The names an import that may name a project module binds (a relative
    one, or one whose root is not in ``_NEVER``), and whether the file
    star-imports a module outside the torch family (a bare call may then be
    of a name it brings: the summary's "star" sites)."""
    names: set[str] = set()
    star = False
    for imp in facts._imports:
        if isinstance(imp, ast.ImportFrom):
            if not imp.level and (imp.module or "").split(".")[0] in _TORCH_FAMILY:
                continue
            for alias in imp.names:
                if alias.name == "*":
                    star = True
                elif imp.level or (imp.module or "").split(".")[0] not in _NEVER:
                    names.add(alias.asname or alias.name)
        else:
            for alias in imp.names:
                if alias.name.split(".")[0] not in _NEVER:
                    names.add(alias.asname or alias.name.split(".")[0])
    return frozenset(names), star


def calls_project(facts: GateFacts, with_args: bool, in_loops: bool) -> bool:
    """A call of a name ``project_bound`` gives (``utils.train_step(...)``,
    or a bare name after a star import). ``with_args``: the call hands
    something over; ``in_loops``: it lies inside a ``for``/``while`` loop."""
    names, star = project_bound(facts)
    if not names and not star:
        return False
    spans = line_spans(facts._loop_nodes) if in_loops else None
    for call in facts._calls:
        if with_args and not (call.args or call.keywords):
            continue
        func = root = call.func
        while type(root) is ast.Attribute:
            root = root.value  # type: ignore[attr-defined]
        if type(root) is ast.Name and (root.id in names or (star and func is root)):  # type: ignore[attr-defined]
            if spans is None or in_spans(call, spans):
                return True
    return False
