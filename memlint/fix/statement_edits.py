"""Moving, inserting, removing and wrapping statements for fixes.

A fix that moves a statement touches two places (remove here, insert there),
and those places may be nested (the statement after the removed one is the
``if`` block that receives it). ``Fix.replacements`` maps original nodes to
new ones and does not compose nested replacements, so a fix built here is a
single replacement of a common ancestor, rebuilt with every edit applied
bottom-up. The fixer only writes the span that changed.

Comments stay where they were: a removed statement hands the comment lines
above it to the statement that follows; a statement inserted before another
takes over that statement's comment lines, so the comment stays on top of
the group.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

import libcst as cst

from memlint.fix.parser_config import parser_config

Replace = Callable[[cst.CSTNode], cst.CSTNode]


class StatementEdits:
    def __init__(self) -> None:
        self._remove: set[int] = set()
        self._before: dict[int, list[cst.BaseStatement]] = defaultdict(list)
        self._after: dict[int, list[cst.BaseStatement]] = defaultdict(list)
        self._prefix: dict[int, list[cst.EmptyLine]] = defaultdict(list)
        self._footer: dict[int, list[cst.EmptyLine]] = defaultdict(list)
        self._replace: dict[int, Replace] = {}

    def remove(self, stmt: cst.BaseStatement, block: cst.CSTNode | None) -> None:
        """Remove ``stmt`` from ``block`` (its parent), keeping its comments."""
        self._remove.add(id(stmt))
        comments = [line for line in getattr(stmt, "leading_lines", ()) if line.comment is not None]
        body = getattr(block, "body", ())
        if comments and isinstance(body, (list, tuple)):
            for i, sib in enumerate(body):
                if sib is stmt and i + 1 < len(body):
                    self._prefix[id(body[i + 1])].extend(comments)
                elif sib is stmt:  # nothing follows: the comments end the block
                    self._footer[id(block)].extend(comments)

    def insert_after(self, stmt: cst.BaseStatement, new: cst.BaseStatement) -> None:
        self._after[id(stmt)].append(new)

    def insert_before(self, stmt: cst.BaseStatement, new: cst.BaseStatement) -> None:
        self._before[id(stmt)].append(new)

    def replace(self, node: cst.CSTNode, fn: Replace) -> None:
        self._replace[id(node)] = fn

    def apply(self, root: cst.CSTNode) -> cst.CSTNode:
        return root.visit(_Apply(self))


class _Apply(cst.CSTTransformer):
    def __init__(self, edits: StatementEdits) -> None:
        super().__init__()
        self.e = edits

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        key = id(original_node)
        node = updated_node
        if key in self.e._footer and hasattr(node, "footer"):
            node = node.with_changes(footer=[*self.e._footer[key], *node.footer])
        if isinstance(node, cst.IndentedBlock) and not node.body:
            return node.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        if key in self.e._replace:
            node = self.e._replace[key](node)
        if key in self.e._prefix and hasattr(node, "leading_lines"):
            node = node.with_changes(leading_lines=[*self.e._prefix[key], *node.leading_lines])
        before, after = self.e._before.get(key, []), self.e._after.get(key, [])
        if key in self.e._remove:
            rest = [*before, *after]
            return cst.FlattenSentinel(rest) if rest else cst.RemoveFromParent()
        if not before and not after:
            return node
        if before:
            first = before[0].with_changes(leading_lines=[*node.leading_lines, *before[0].leading_lines])
            before = [first, *before[1:]]
            node = node.with_changes(leading_lines=[])
        return cst.FlattenSentinel([*before, node, *after])


def bare(stmt: cst.BaseStatement) -> cst.BaseStatement:
    """``stmt`` without the blank and comment lines above it."""
    return stmt.with_changes(leading_lines=[])


def wrap_in_with(stmt: cst.BaseStatement, item: cst.BaseExpression) -> cst.With:
    """``with item:`` around ``stmt``; comment lines above stay above."""
    return cst.With(
        items=[cst.WithItem(item)],
        body=cst.IndentedBlock(body=[bare(stmt)]),
        leading_lines=stmt.leading_lines,
    )


def statement(code: str, module: cst.Module) -> cst.BaseStatement:
    return cst.parse_statement(code + module.default_newline, config=parser_config(module))


def call_statement_only(line: cst.SimpleStatementLine | None, call: cst.CSTNode) -> bool:
    """``line`` is exactly ``call`` as an expression statement (nothing else
    on the line), so it can be moved or removed as a whole."""
    return (
        line is not None and len(line.body) == 1 and isinstance(line.body[0], cst.Expr) and line.body[0].value is call
    )
