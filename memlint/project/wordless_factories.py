"""Factories of a module with no training word (index side).

A module that never spells ``torch`` is not summarised (summary.py), yet it
may be the project's model factory: Attention-Gated-Networks'
``models/__init__.py`` ``get_model(opts)`` imports one of three wrapper
classes in a branch each and returns the one it built, without a word of
torch. ``typed_objects.qualify`` asks here, only for such a module and only
when a typed name is bound from one of its functions: the module's
factories' returns (object_types.py ``returns``), read once per index.
Nothing else of the module is typed: its classes stay unknown.
"""

from __future__ import annotations

import ast

from memlint.project.object_types import object_types
from memlint.read.source import read_bytes


def factory_returns(path: str) -> dict[str, tuple[str, ...]]:
    """``path``'s module-level functions whose every ``return`` hands back a
    typed value, with the spellings of those types."""
    from memlint.project.summary import module_bindings

    try:
        text = (read_bytes(path) or b"").decode("utf-8-sig")
        tree = ast.parse(text)
        bindings, has_star = module_bindings(tree)
        return dict(object_types(tree, bindings, has_star).returns)
    except (UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
