"""Refuse, before libcst sees them, the texts that would crash or hang it.

libcst's native parser recurses on nesting: 10,000 nested brackets, or a chain
of 10,000 ``and``s, overflow its stack and kill the process (a segfault no
``except`` can catch), and chains of a few thousand attribute accesses,
subscripts or binary operators take it minutes before its Python side runs out
of recursion anyway. Python's own parser is fast, never crashes, and already
refuses the worst cases; its tree tells how deep libcst would have to go.
Measured limits are in tests/test_robustness_files.py.
"""

from __future__ import annotations

import ast
import re
import warnings

from memlint.gate.ast_fields import CHILDREN

# Deeper than any real code (torch, the standard library, transformers: at
# most ~70), and shallow enough that libcst answers in about a second.
MAX_DEPTH = 400
# Python's tokenizer refuses more than 200 open brackets; libcst crashes
# somewhere past a few thousand.
MAX_BRACKETS = 200

_BRACKETS = re.compile(r"[()\[\]{}]")


class TooDeep(Exception):
    """The text is nested beyond what libcst can take; message says how."""


def check_nesting(text: str, tree: ast.Module | None = None) -> SyntaxError | None:
    """Raise TooDeep when ``text`` must not be given to libcst; return Python's
    SyntaxError, if any (its line and message beat libcst's, should libcst
    fail too). ``tree``: Python's tree of ``text`` when the caller has it
    (flake8 does), to save parsing it again."""
    try:
        if tree is None:
            with warnings.catch_warnings():  # the user's invalid escapes are not ours to print
                warnings.simplefilter("ignore")
                tree = ast.parse(text)
    except (RecursionError, MemoryError):
        raise TooDeep("file is nested too deeply to analyse (Python's own parser gives up)") from None
    except SyntaxError as exc:
        if "too many" in (exc.msg or ""):  # nested parentheses, indentation levels
            raise TooDeep(f"syntax error at {exc.lineno}:{(exc.offset or 1) - 1}: {exc.msg}") from None
        # Perhaps newer syntax than this Python knows; libcst may parse it,
        # but not past the bracket depth that would crash it.
        if bracket_depth(text) > MAX_BRACKETS:
            raise TooDeep(f"file is nested too deeply to analyse (more than {MAX_BRACKETS} open brackets)") from None
        # Without its traceback: callers keep the error in a local of a frame
        # that traceback holds, a reference cycle that would keep the
        # caller's libcst tree alive until the cyclic collector runs.
        return exc.with_traceback(None)
    except ValueError:  # NUL bytes; decoding already refuses them
        return None
    depth = nesting_depth(tree, MAX_DEPTH)
    if depth > MAX_DEPTH:
        raise TooDeep(f"file is nested too deeply to analyse (depth over {MAX_DEPTH})")
    global _last
    _last = (text, tree)
    return None


# The tree of the text last checked: positions.statement_lines reads its
# statement lines instead of parsing the same text again.
_last: tuple[str, ast.Module] | None = None


def forget_last() -> None:
    """Let go of the last tree checked (its file is done)."""
    global _last
    _last = None


def python_tree(text: str) -> ast.Module | None:
    """Python's tree of ``text`` (the one check_nesting made, when it was this
    text), or None when Python cannot parse it."""
    if _last is not None and _last[0] is text:
        return _last[1]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def nesting_depth(tree: ast.AST, limit: int) -> int:
    """Depth of ``tree`` as libcst builds it, stopping once past ``limit``.

    A ``BoolOp`` with n values is one node here but n-1 nested ones in libcst.
    Children are read from the fields that may hold them (ast_fields.CHILDREN:
    testing every field costs twice as much, and this runs on every file that
    is parsed); a context, operator or alias is never pushed, but counts its
    level as before.
    """
    table, BoolOp = CHILDREN, ast.BoolOp
    deepest = 0
    stack: list[tuple[object, int]] = [(tree, 1)]
    push, pop = stack.append, stack.pop
    while stack:
        node, depth = pop()
        children = table.get(type(node))
        if children is None:
            if type(node) is list:  # a field of a class whose signature was not read
                for item in node:
                    push((item, depth))
            continue  # None, or a scalar: no level
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        below = depth + (len(node.values) if type(node) is BoolOp else 1)  # type: ignore[attr-defined]
        for name in children.singles:
            push((getattr(node, name), below))
        for name in children.lists:
            for item in getattr(node, name):
                push((item, below))
        if below > deepest:
            for name in children.leaves:
                if getattr(node, name):  # a context, an operator, an alias: one level
                    deepest = below
                    if deepest > limit:
                        return deepest
                    break
    return deepest


def bracket_depth(text: str) -> int:
    """Deepest bracket nesting, counting brackets in strings and comments too
    (an over-estimate, used only when Python cannot parse the text)."""
    depth = deepest = 0
    for match in _BRACKETS.finditer(text):
        if match.group() in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif depth:
            depth -= 1
    return deepest
