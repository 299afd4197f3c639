"""Each part of a module's tree walked once for every helper of its summary.

Several helpers of the summary (class_moves.py, parameterless.py,
cpu_builders.py) read the flat list of nodes of the same methods, class
statements and module-level functions: MEM701's "does this class move
anything" and MEM202's "does it own a parameter" both ask it of most
``nn.Module`` classes. One ``NodeLists`` per summary keeps each part's list
(``ast_fields.nodes``, whose order the helpers rely on: a node before its
children) the first time one is asked, so the others read it back.
"""

from __future__ import annotations

import ast

from memlint.gate.ast_fields import nodes


class NodeLists:
    """``nodes(part)``, kept per part for the life of one module's summary.
    Callers must not change the lists they get."""

    __slots__ = ("_of",)

    def __init__(self) -> None:
        # id of the part -> (the part, kept alive so its id is never reused; its nodes)
        self._of: dict[int, tuple[ast.AST, list[ast.AST]]] = {}

    def __call__(self, part: ast.AST) -> list[ast.AST]:
        kept = self._of.get(id(part))
        if kept is None:
            kept = self._of[id(part)] = (part, nodes(part))
        return kept[1]
