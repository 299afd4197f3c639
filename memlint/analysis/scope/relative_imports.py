"""Names bound by a module's relative imports, spelled as the project
summary spells them (summary.py): ``from .base_model import BaseModel``
binds ``BaseModel`` to ``.base_model.BaseModel``, ``from .. import nets``
``nets`` to ``..nets``. ImportTable leaves relative imports out (they name
no library); the project stage's facts about bases (family_saves.py) are
keyed by this spelling.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import dotted_name


def relative_bindings(module: cst.Module) -> dict[str, str]:
    """Local name -> its relative spelling, for the module-level ``from .x import y``."""
    found: dict[str, str] = {}
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if not isinstance(small, cst.ImportFrom) or not small.relative or isinstance(small.names, cst.ImportStar):
                continue
            base = "." * len(small.relative) + ((dotted_name(small.module) or "") if small.module is not None else "")
            sep = "" if base.endswith(".") else "."
            for alias in small.names:
                name = dotted_name(alias.name)
                if name is None:
                    continue
                local = alias.asname.name if alias.asname is not None else None
                key = local.value if isinstance(local, cst.Name) else name
                found[key] = f"{base}{sep}{name}"
    return found
