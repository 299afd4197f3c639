"""What a lint reports: findings and their fixes, as data.

Kept apart from the rule contract (memlint.rule, which re-exports them) so
that reading findings back (the cache, the reporters) never imports libcst:
a warm run whose files are all cached stays a small process.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst


class Safety(str, enum.Enum):
    """How far a fix may be trusted (RULES.md, "Fix safety")."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    NONE = "none"


@dataclass(frozen=True)
class Edit:
    """A text edit: replace ``text[start:end]`` with ``content``."""

    start: int
    end: int
    content: str
    # (line 1-based, column 0-based) of start and end, filled in for reports
    start_pos: tuple[int, int] | None = None
    end_pos: tuple[int, int] | None = None


@dataclass(frozen=True)
class Fix:
    """A fix as data.

    ``replacements`` maps original nodes (by identity) to their new nodes;
    ``None`` as the new node removes a statement. ``imports`` lists modules the
    new code needs bound under their own name (``import torch``); the engine adds
    the import only when the module has no binding for it yet.
    """

    title: str
    replacements: tuple[tuple[cst.CSTNode, cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel], ...]
    safety: Safety = Safety.SAFE
    imports: tuple[str, ...] = ()
    # Filled in by ``memlint.fix.fixer.detach`` when the finding leaves the worker
    # that parsed the module: the nodes stay behind, the text edits travel.
    edits: tuple[Edit, ...] = ()


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    path: str
    line: int  # 1-based
    column: int  # 0-based, as flake8 and libcst count
    end_line: int
    end_column: int
    fix: Fix | None = None
    cell: int | None = None  # notebook cell (1-based) when linting .ipynb

    @property
    def fix_safety(self) -> Safety:
        return self.fix.safety if self.fix else Safety.NONE
