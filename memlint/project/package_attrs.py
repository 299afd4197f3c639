"""``pkg.name`` is the package's attribute before it is its submodule.

``from models import hmr`` takes what ``models/__init__.py`` binds as ``hmr``
(``from .hmr import hmr``: the factory it re-exports) and falls back to the
submodule ``models/hmr.py`` only when ``__init__`` binds no such name; the
same holds for ``models.hmr`` spelled as an attribute. ModuleMap answers with
the longest prefix that is a file (the submodule); this module corrects that
answer with the package's own bindings, read from its summary.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from memlint.project.summary import ModuleSummary

Resolved = tuple[str, str]


def package_binding(
    name: str,
    importer: str,
    found: Resolved,
    files: frozenset[str],
    summary_of: Callable[[str], ModuleSummary | None],
    resolve_in: Callable[[str, str], Resolved | None],
) -> Resolved | None:
    """What ``name`` names when the package holding ``found``'s module binds
    the module's name itself; None when it does not (``found`` stands).

    ``found`` is ModuleMap's ``(file, rest)`` for ``name``; ``resolve_in``
    resolves a spelling as written in a given file (re-exports followed)."""
    path, rest = found
    # Only a name that ends at the module: a spelling flattens ``from a.b
    # import c`` to ``a.b.c``, where ``a.b`` is a module whatever ``a`` binds,
    # so a name reaching into the module (``.hmr.hmr``) keeps the submodule.
    if rest:
        return None
    level = len(name) - len(name.lstrip("."))
    parts = [p for p in name[level:].split(".") if p]
    # The package must be part of the name as spelled: ``models.hmr`` or
    # ``.hmr`` from inside ``models``; a top-level ``hmr`` has no package.
    if not parts or (len(parts) < 2 and not level):
        return None
    module = parts[-1]
    folder = os.path.dirname(path)
    if os.path.basename(path) == "__init__.py":  # a subpackage: its parent package binds it
        folder = os.path.dirname(folder)
    init = os.path.join(folder, "__init__.py")
    # Inside the package's own __init__, ``from . import hmr`` is the submodule.
    if init in (path, os.path.abspath(importer)) or init not in files:
        return None
    package = summary_of(init)
    if package is None:
        return None
    if module in package.defines:
        return init, module
    target = package.imports.get(module)
    if target is None:
        return None
    again = resolve_in(target, init)
    # ``from . import hmr`` in __init__ binds the submodule itself: no change.
    if again is None or again == found:
        return None
    return again
