"""Node positions (line, column) as libcst's PositionProvider computes them,
about seven times faster, and only when something asks for one.

libcst computes positions by regenerating the module's code while recording
where each node starts and ends; its bookkeeping (a CodePosition object per
node, a regular expression per token) costs more than the code generation.
The state below records the same ranges as plain tuples.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst._position import CodePosition, CodeRange

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


class LazyPositions(Mapping):
    """PositionProvider's mapping (node -> CodeRange), computed on first lookup."""

    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._ranges: dict | None = None
        self._made: dict[cst.CSTNode, CodeRange] = {}

    def _get(self) -> dict:
        if self._ranges is None:
            self._ranges = syntactic_ranges(self._module)
        return self._ranges

    def __getitem__(self, node) -> CodeRange:
        made = self._made.get(node)
        if made is None:
            sl, sc, el, ec = self._get()[node]
            made = self._made[node] = CodeRange(CodePosition(sl, sc), CodePosition(el, ec))
        return made

    def __contains__(self, node) -> bool:
        return node in self._get()

    def __iter__(self):
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())


