"""Node positions (line, column) as libcst's PositionProvider computes them,
about seven times faster, and only when something asks for one.

libcst computes positions by regenerating the module's code while recording
where each node starts and ends; its bookkeeping (a CodePosition object per
node, a regular expression per token) costs more than the code generation.
The state below records the same ranges as plain tuples.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst._position import CodePosition, CodeRange

from memlint.parse.guard import python_tree

_NEWLINE_RE = re.compile(r"\r\n?|\n")


class _PositionState(CodegenState):
    """libcst's PositionProvider bookkeeping, made cheap: plain tuples instead
    of a CodePosition per node, and no regex unless a token holds a newline.
    The ranges are the same (tests/test_traversal.py compares them)."""

    __slots__ = ("line", "column", "_starts", "ranges")

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.line = 1
        self.column = 0
        self._starts: list[tuple[int, int]] = []
        self.ranges: dict[cst.CSTNode, tuple[int, int, int, int]] = {}

    def _advance(self, value: str) -> None:
        if "\n" in value or "\r" in value:
            segments = _NEWLINE_RE.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        for token in self.indent_tokens:
            self._advance(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self._advance(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        line, column = self._starts.pop()
        if node not in self.ranges:
            self.ranges[node] = (line, column, self.line, self.column)

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):  # type: ignore[override]
        return _SyntacticRange(self, node, start_node, end_node)


class _SyntacticRange:
    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: _PositionState, node, start_node, end_node) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = (self.state.line, self.state.column)

    def __exit__(self, *exc) -> None:
        state = self.state
        sl, sc = self.start
        el, ec = state.line, state.column
        if self.start_node is not None:
            sl, sc = state.ranges[self.start_node][:2]
        if self.end_node is not None:
            el, ec = state.ranges[self.end_node][2:]
        state.ranges[self.node] = (sl, sc, el, ec)


def syntactic_ranges(module: cst.Module) -> dict[cst.CSTNode, tuple[int, int, int, int]]:
    """(start line, start column, end line, end column) of every node, as
    libcst's PositionProvider computes them."""
    state = _PositionState(module)
    module._codegen(state)  # noqa: SLF001
    return state.ranges


def statement_lines(module: cst.Module, text: str) -> list[int] | None:
    """The line of each of ``module.body``'s statements, as Python's own parser
    places it (where libcst's position of that statement starts), or None
    when the two parsers do not line up."""
    found = statement_nodes(module, text)
    return None if found is None else [stmt.lineno for stmt in found]


def statement_nodes(module: cst.Module, text: str) -> list[ast.stmt] | None:
    """Python's statement for each of ``module.body``'s (the first of ``a; b``),
    or None when the two parsers do not line up."""
    tree = python_tree(text)
    if tree is None:
        return None
    body = tree.body
    found: list[ast.stmt] = []
    j = 0
    for stmt in module.body:
        n = len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1  # ``a; b`` is two for ast
        if j + n > len(body) or body[j].col_offset != 0:
            return None
        found.append(body[j])
        j += n
    return found if j == len(body) else None


# Compound statements whose ``body`` a lookup descends into, and what
# Python's parser makes of each: the statement regenerated for a node is the
# innermost of these that holds it, not its whole top-level statement.
_BODIES: dict[type, tuple[type, ...]] = {
    cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef),
    cst.ClassDef: (ast.ClassDef,),
    cst.For: (ast.For, ast.AsyncFor),
    cst.While: (ast.While,),
    cst.With: (ast.With, ast.AsyncWith),
    cst.If: (ast.If,),
}


class LazyPositions(Mapping):
    """PositionProvider's mapping (node -> CodeRange), computed on first lookup.

    Given the module's source text, a lookup regenerates only the top-level
    statement that holds the node and shifts its lines to where Python's
    parser places that statement: one finding in a 3,000-line file then costs
    one statement's code generation, not the whole module's. Anything else
    (the module node, trivia, a text the parsers disagree on) falls back to
    the whole module.
    """

    def __init__(self, module: cst.Module, text: str | None = None) -> None:
        self._module = module
        self._text = text
        self._ranges: dict | None = None
        self._partial: dict[cst.CSTNode, tuple[int, int, int, int]] = {}
        self._lines: list[ast.stmt] | None | bool = False  # Python's top-level statements; False: not computed yet
        self._done: set[int] = set()
        self._top: dict[int, int] | None = None  # id(statement of module.body) -> its index
        self._made: dict[cst.CSTNode, CodeRange] = {}

    def _get(self) -> dict:
        if self._ranges is None:
            self._ranges = syntactic_ranges(self._module)
        return self._ranges

    def _range(self, node) -> tuple[int, int, int, int]:
        if self._ranges is None and self._text is not None:
            found = self._partial.get(node)
            if found is None and self._statement(node):
                found = self._partial.get(node)
            if found is not None:
                return found
        return self._get()[node]

    def _statement(self, node) -> bool:
        """Regenerate the innermost statement holding ``node`` that Python's
        parser places (else its top-level statement); False when there is
        none to regenerate."""
        from memlint.parse.tree import TRIVIA, tree_index

        if node.__class__ in TRIVIA or node is self._module:
            return False
        tree = tree_index(self._module)
        i = tree.index.get(id(node))
        if i is None or tree.nodes[i] is not node:
            return False
        target = i
        while tree.parent[i] > 0:
            i = tree.parent[i]
        if tree.parent[i] != 0:
            return False
        if self._lines is False:
            self._lines = statement_nodes(self._module, self._text)  # type: ignore[arg-type]
        stmt = tree.nodes[i]
        if self._top is None:  # one listing, not a scan per statement with a finding
            self._top = {id(s): k for k, s in enumerate(self._module.body)}
        k = self._top.get(id(stmt))
        if self._lines is None or k is None:
            return False
        anchor: ast.stmt = self._lines[k]
        inner, inner_anchor, indents = self._innermost(tree, target, stmt, anchor)
        if inner is not stmt and self._regenerate(tree.index[id(inner)], inner, inner_anchor, indents):
            return True
        return self._regenerate(i, stmt, anchor, [])

    def _innermost(
        self, tree, target: int, stmt: cst.CSTNode, anchor: ast.stmt
    ) -> tuple[cst.CSTNode, ast.stmt, list[str]]:
        """The innermost statement holding the node numbered ``target``, down
        through the bodies of _BODIES, with Python's statement for it and the
        indentation of the blocks around it."""
        indents: list[str] = []
        while True:
            kinds = _BODIES.get(stmt.__class__)
            block = getattr(stmt, "body", None)
            if kinds is None or not isinstance(anchor, kinds) or block.__class__ is not cst.IndentedBlock:
                return stmt, anchor, indents
            inner, j = None, 0
            for child in block.body:  # type: ignore[union-attr]
                c = tree.index.get(id(child))
                if c is None:
                    return stmt, anchor, indents
                if c <= target < tree.end[c]:
                    inner = child
                    break
                j += len(child.body) if child.__class__ is cst.SimpleStatementLine else 1
            body = anchor.body  # type: ignore[attr-defined]
            if inner is None or j >= len(body):
                return stmt, anchor, indents
            indents.append(self._module.default_indent if block.indent is None else block.indent)  # type: ignore[union-attr]
            stmt, anchor = inner, body[j]

    def _regenerate(self, i: int, stmt: cst.CSTNode, anchor: ast.stmt, indents: list[str]) -> bool:
        """Positions of every node of ``stmt`` (numbered ``i``), placed by
        ``anchor``, Python's statement for it; False when already done or
        when the two disagree on its column."""
        if i in self._done:
            return False
        self._done.add(i)
        state = _PositionState(self._module)
        state.indent_tokens = list(indents)  # the blocks around it, as libcst's own codegen would have them
        stmt._codegen(state)  # noqa: SLF001
        sl, sc, _, _ = state.ranges[stmt]
        if sc != anchor.col_offset:
            return False
        delta = anchor.lineno - sl
        partial = self._partial
        for n, (a, b, c, d) in state.ranges.items():
            partial[n] = (a + delta, b, c + delta, d)
        return True

    def __getitem__(self, node) -> CodeRange:
        made = self._made.get(node)
        if made is None:
            sl, sc, el, ec = self._range(node)
            made = self._made[node] = CodeRange(CodePosition(sl, sc), CodePosition(el, ec))
        return made

    def __contains__(self, node) -> bool:
        return node in self._get()

    def __iter__(self):
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())
