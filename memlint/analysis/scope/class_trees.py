"""Each class of a module as Python's ``ast`` reads it, without parsing again.

Some facts about a class of the linted module are read on ``ast`` (the
project stage's readers: eval_forwards.py, tuple_returns.py,
parameterless.py). Regenerating the class's code from libcst and parsing it
cost a codegen and an ``ast.parse`` per class and per question; the module's
own ``ast`` tree (ModuleFacts.python_tree, the gate's parse of the same
text) already holds every class. libcst's and Python's parsers list the
same ``class`` statements in the same source order, so the k-th libcst class
named N is the k-th ``ast`` class named N. When the counts differ (no tree,
or the two parsers disagree), the class is parsed alone, as before.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Mapping, Sequence

import libcst as cst

from memlint.gate.ast_fields import STATEMENT_BLOCKS


class ClassTrees:
    def __init__(
        self,
        module: cst.Module,
        classes: Mapping[str, Sequence[cst.ClassDef]],
        python_tree: ast.Module | None,
    ) -> None:
        self._module = module
        self._classes = classes
        self._tree = python_tree
        self._paired: dict[int, ast.ClassDef] | None = None
        self._alone: dict[int, ast.ClassDef | None] = {}

    def of(self, cls: cst.ClassDef) -> ast.ClassDef | None:
        """``cls`` as an ``ast.ClassDef`` (None when its code does not parse alone)."""
        found = self._pairs().get(id(cls))
        if found is not None:
            return found
        key = id(cls)
        if key not in self._alone:
            self._alone[key] = self._parse_alone(cls)
        return self._alone[key]

    def _pairs(self) -> dict[int, ast.ClassDef]:
        if self._paired is None:
            self._paired = {}
            if self._tree is not None and self._classes:
                by_name: dict[str, list[ast.ClassDef]] = {}
                todo: list[ast.AST] = list(self._tree.body)
                while todo:  # statements only: no class is written inside an expression
                    node = todo.pop()
                    if isinstance(node, ast.ClassDef):
                        by_name.setdefault(node.name, []).append(node)
                    for field in STATEMENT_BLOCKS:
                        todo.extend(getattr(node, field, ()))
                for name, defs in self._classes.items():
                    found = by_name.get(name, [])
                    if len(found) != len(defs):
                        continue  # the parsers disagree: each is parsed alone
                    found.sort(key=lambda n: (n.lineno, n.col_offset))
                    for cst_cls, ast_cls in zip(defs, found, strict=True):
                        self._paired[id(cst_cls)] = ast_cls
        return self._paired

    def _parse_alone(self, cls: cst.ClassDef) -> ast.ClassDef | None:
        try:
            tree = ast.parse(textwrap.dedent(self._module.code_for_node(cls)))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        found = tree.body[-1] if tree.body else None
        return found if isinstance(found, ast.ClassDef) else None
