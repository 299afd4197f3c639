"""Imports made inside functions (ModuleSummary.local_imports).

KAIR's test scripts import their model class in ``main()``
(``from models.network_dncnn import DnCNN as net``) and build it there: the
call builds what the import names, as it would after a module-level import.
A name may be imported to several targets (one per branch choosing the
model, KAIR's main_challenge_sr.py): all are kept, and a call of the name
builds one of them. A name is kept only when nothing at module level binds
it (the module-level binding runs elsewhere in the module). Whether some
function binds it otherwise is asked where it is used
(``ImportTable.imported_only``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Mapping


def local_import(seen: dict[str, list[str]], node: ast.Import | ast.ImportFrom) -> None:
    """Note what ``node`` (an import inside a function) binds."""
    if isinstance(node, ast.Import):
        pairs = [(a.asname, a.name) if a.asname else (a.name.split(".")[0], a.name.split(".")[0]) for a in node.names]
    else:
        base = "." * node.level + (node.module or "")
        sep = "" if base.endswith(".") or not base else "."
        pairs = [(a.asname or a.name, f"{base}{sep}{a.name}") for a in node.names if a.name != "*"]
    for local, target in pairs:
        targets = seen.setdefault(local, [])
        if target not in targets:
            targets.append(target)


def only_local(
    seen: Mapping[str, list[str]], imports: Mapping[str, str], module_names: Collection[str]
) -> dict[str, list[str]]:
    """The names of ``seen`` that no module-level import or definition binds."""
    return {
        local: sorted(targets)
        for local, targets in sorted(seen.items())
        if local not in imports and local not in module_names
    }


def local_model_classes(
    local_imports: Mapping[str, list[str]], resolve: Callable[[str], tuple[str, str] | None], model_classes_of
) -> list[str]:
    """The names imported inside functions (``from model import STAGE1_G``
    in StackGAN's ``load_network_stageI``) whose every target is an
    ``nn.Module`` class of the project: a call of one builds a model, as
    after a module-level import (index side: ``resolve`` a dotted target
    to (file, name), ``model_classes_of`` a file's model classes)."""
    out = []
    for local, targets in local_imports.items():
        found = [resolve(t) for t in targets]
        if found and all(f is not None and f[1] and f[1] in model_classes_of(f[0]) for f in found):
            out.append(local)
    return out
