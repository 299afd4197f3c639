"""The one project module an import that does not resolve may name (MEM701).

rpg_event_representation_learning's ``testing.py``, at the project's root,
says ``from models import Classifier``; no ``models`` module resolves from
there: the project holds ``utils/models.py`` only, put on ``sys.path`` by
whoever runs the script (``PYTHONPATH=utils``, an editor's source folder).
The script cannot run without some ``models`` on the path, and when the
project holds exactly one module whose path ends with the imported dotted
name (``utils/models.py`` for ``models``, ``a/b/c.py`` for ``b.c``), that
module defining the imported name is the one it means.

Read only to learn that such a class builds on the CPU (a load into a fresh
instance is then not claimed: index.ProjectView.cpu_classes), never to
claim a finding: two candidates, or none, leave the import unknown as
before, and an installed package of that name could only build its own
class, which the rule did not know either.
"""

from __future__ import annotations

import os
from collections.abc import Iterable


class StrayModules:
    """The project's modules by their last dotted part, for ``find``."""

    def __init__(self, root: str, files: Iterable[str]) -> None:
        self._by_last: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        for path in files:
            rel = os.path.relpath(path, root)
            if rel.startswith(".."):
                continue
            stem, ext = os.path.splitext(rel)
            if ext != ".py":
                continue
            parts = tuple(stem.split(os.sep))
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if parts and all(p.isidentifier() for p in parts):
                self._by_last.setdefault(parts[-1], []).append((parts, path))

    def find(self, target: str) -> tuple[str, str] | None:
        """``(file, name)`` for an absolute dotted import ``target``
        (``models.Classifier``) whose module part ends exactly one project
        module's path, the longest such part first; None otherwise."""
        if target.startswith("."):
            return None
        parts = tuple(target.split("."))
        for k in range(len(parts) - 1, 0, -1):
            module, rest = parts[:k], parts[k:]
            found = [path for mod, path in self._by_last.get(module[-1], ()) if mod[-k:] == module]
            if len(found) == 1:
                return found[0], ".".join(rest)
            if found:
                return None  # two modules could be meant: not known
        return None
