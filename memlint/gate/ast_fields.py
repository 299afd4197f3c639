"""Which fields of each Python ``ast`` node class can hold nodes worth a walk.

The walks over Python's tree (the gate, analysis/gate.py; the nesting
guard, guard.py) run on every file past the token pre-filter, so they read
children from a table made once instead of testing every field's value
(``getattr`` plus ``isinstance`` on each of ``_fields``: ``ast.walk`` and
``iter_child_nodes`` cost about three times as much again).

A class's fields are read off its ASDL signature (``Call(expr func, expr*
args, keyword* keywords)``, its docstring): a field of a node type is a
*single* child (possibly None) or a *list* of them (a ``Dict``'s keys may
hold None). Fields that hold only a context (``Load``/``Store``), an
operator, or an ``alias``/``type_ignore`` are *leaves*: leaf-only node
classes nothing reads, whose presence the guard still counts as one level of
depth. A class whose signature cannot be read (a Python whose docstrings
differ) gets every field as a single child; a list met that way is a
:data:`LIST` entry the walks extend generically, so nothing is missed.
"""

from __future__ import annotations

import ast
import re

# ASDL types whose values never hold a node any walk reads: scalars, and the
# leaf-only node sums (contexts, operators) and products without node fields.
_SCALARS = frozenset({"identifier", "int", "string", "constant"})
_LEAF_TYPES = frozenset({"expr_context", "operator", "unaryop", "boolop", "cmpop", "alias", "type_ignore"})
_SIGNATURE = re.compile(r"^\s*(\w+)\((.*)\)\s*$")


class Children:
    """The fields of one node class: ``singles`` (a node or None), ``lists``
    (lists of nodes, None allowed) and ``leaves`` (fields holding only
    contexts, operators, aliases or type ignores). ``generic``: the class's
    signature could not be read, every field is a single child."""

    __slots__ = ("singles", "lists", "leaves", "generic")

    def __init__(
        self, singles: tuple[str, ...], lists: tuple[str, ...], leaves: tuple[str, ...], generic: bool = False
    ) -> None:
        self.singles = singles
        self.lists = lists
        self.leaves = leaves
        self.generic = generic


def _children(cls: type) -> Children:
    fields: tuple[str, ...] = getattr(cls, "_fields", ())
    match = _SIGNATURE.match((cls.__doc__ or "").split("\n", 1)[0])
    if not fields:
        return Children((), (), ())
    if match is None or match.group(1) != cls.__name__:
        return Children(fields, (), (), generic=True)  # unknown signature: every field, generically
    singles: list[str] = []
    lists: list[str] = []
    leaves: list[str] = []
    read: list[str] = []
    for part in match.group(2).split(","):
        words = part.split()
        if len(words) != 2:
            return Children(fields, (), (), generic=True)
        kind, name = words
        read.append(name)
        base = kind.rstrip("*?")
        if base in _SCALARS:
            continue
        if base in _LEAF_TYPES:
            leaves.append(name)
        elif kind.endswith("*"):
            lists.append(name)
        else:
            singles.append(name)
    if tuple(read) != fields:
        return Children(fields, (), (), generic=True)
    return Children(tuple(singles), tuple(lists), tuple(leaves))


def _node_classes() -> list[type]:
    out: list[type] = []
    stack: list[type] = [ast.AST]
    while stack:
        cls = stack.pop()
        out.append(cls)
        stack.extend(cls.__subclasses__())
    return out


# Every concrete node class of this Python -> its Children.
CHILDREN: dict[type, Children] = {cls: _children(cls) for cls in _node_classes() if cls.__module__ == "ast"}


def _ordered(cls: type, children: Children) -> tuple[tuple[str, bool], ...] | None:
    if children.generic:
        return None
    kept = set(children.singles) | set(children.lists)
    return tuple((name, name in children.lists) for name in getattr(cls, "_fields", ()) if name in kept)


# Node class -> its fields that may hold code, in ``_fields`` order, each with
# whether it holds a list; None for a class read generically.
ORDERED: dict[type, tuple[tuple[str, bool], ...] | None] = {cls: _ordered(cls, ch) for cls, ch in CHILDREN.items()}


def _reader(fields: tuple[tuple[str, bool], ...]):
    """A function giving the children of a node with ``fields`` (ORDERED's
    entry of its class), as :func:`children` reads them, written out for the
    class: the summary's and object types' walks call :func:`children` on
    every node of every module, and a loop over the fields with ``getattr``
    cost a third more. Built from the field names of the ``ast`` module's
    own classes only (identifiers, ``str.isidentifier``-checked)."""
    lines = ["def read(node):", "    out = []"]
    for name, many in fields:
        if not name.isidentifier():
            raise ValueError(name)
        if many:
            lines.append(f"    out += node.{name}")
        else:
            lines += [f"    value = node.{name}", "    if value is not None:", "        out.append(value)"]
    if any(many for _name, many in fields):
        # A Dict's keys (``**d``) and arguments' kw_defaults may hold None.
        lines += ["    if None in out:", "        out = [item for item in out if item is not None]"]
    lines.append("    return out")
    namespace: dict[str, object] = {}
    exec("\n".join(lines), namespace)  # only the ast module's own field names reach it
    return namespace["read"]


# Node class -> its children reader (ORDERED, written out); None for a class read generically.
_READERS = {cls: (None if fields is None else _reader(fields)) for cls, fields in ORDERED.items()}


def children(node: ast.AST) -> list[ast.AST]:
    """``node``'s children that may hold code, in ``ast.iter_child_nodes``'s
    order (the order libcst visits them in, for the walks that replay a
    rule's visitor), less contexts, operators and aliases. A class read
    generically gives what ``iter_child_nodes`` gives."""
    read = _READERS.get(node.__class__, _READ_NOTHING)
    if read is None:
        return list(ast.iter_child_nodes(node))
    return read(node)  # type: ignore[operator]


def read_nothing(node: ast.AST) -> list[ast.AST]:
    """The reader of a class that is no node class of ``ast`` (no children)."""
    return []


_READ_NOTHING = read_nothing
# The readers, for a walk that looks a node's reader up itself (the
# summary's, on every node of every module): ``CHILD_READERS.get(cls,
# read_nothing)`` is :func:`children`'s reader for ``cls``, None for a class
# read generically (``ast.iter_child_nodes``).
CHILD_READERS = _READERS


def _pusher(children: Children):
    """A function putting a node's children (``children``: its class's
    entry) on a walk's stack, as :func:`nodes` reads them: its singles
    pushed, then its lists extended, written out for the class (``nodes``
    runs on most subtrees of every summarised module; the loops over the
    fields with ``getattr`` cost a seventh more). None for a class with no
    field to read. Built from the ``ast`` module's own field names only."""
    lines = ["def push_children(node, push, extend):"]
    lines += [f"    push(node.{name})" for name in children.singles if name.isidentifier()]
    lines += [f"    extend(node.{name})" for name in children.lists if name.isidentifier()]
    if len(lines) != 1 + len(children.singles) + len(children.lists):
        raise ValueError(children.singles + children.lists)
    if len(lines) == 1:
        return None
    namespace: dict[str, object] = {}
    exec("\n".join(lines), namespace)  # only the ast module's own field names reach it
    return namespace["push_children"]


# Node class -> the function pushing its children (None: it has none to read),
# for a walk that looks it up with what else it keeps per class (gate/facts.py).
PUSHERS = {cls: _pusher(ch) for cls, ch in CHILDREN.items()}


def nodes(root: ast.AST) -> list[ast.AST]:
    """``root`` and every node below it that may hold code: what ``ast.walk``
    yields, in another order, less the contexts, operators and aliases."""
    out: list[ast.AST] = []
    stack: list[object] = [root]
    push, extend, pop, table, keep = stack.append, stack.extend, stack.pop, PUSHERS, out.append
    while stack:
        node = pop()
        kind = type(node)
        if kind in table:
            keep(node)  # type: ignore[arg-type]
            pusher = table[kind]
            if pusher is not None:
                pusher(node, push, extend)
        elif kind is list:  # a field of a class whose signature was not read
            extend(node)  # type: ignore[arg-type]
        # else None, or a scalar
    return out


# The fields of a statement (or an except handler, a match case) that hold statements.
STATEMENT_BLOCKS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def expression_nodes(stmt: ast.AST) -> list[ast.AST]:
    """Every node that may hold code in ``stmt``'s own expressions (its test,
    target, value, decorators...), none from its blocks of statements."""
    children = CHILDREN.get(type(stmt))
    if children is None:
        return []
    out: list[ast.AST] = []
    for field in children.singles:
        if field not in STATEMENT_BLOCKS:
            out += nodes(getattr(stmt, field))
    for field in children.lists:
        if field not in STATEMENT_BLOCKS:
            for item in getattr(stmt, field):
                out += nodes(item)
    return out


def _expression_fields(children: Children) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (
        tuple(f for f in children.singles if f not in STATEMENT_BLOCKS),
        tuple(f for f in children.lists if f not in STATEMENT_BLOCKS),
    )


# Node class -> its fields outside STATEMENT_BLOCKS (singles, lists).
_EXPRESSION_FIELDS = {cls: _expression_fields(ch) for cls, ch in CHILDREN.items()}


def expression_calls(stmt: ast.AST) -> list[ast.Call]:
    """The ``ast.Call`` nodes of :func:`expression_nodes`, in one walk: the
    gate asks a statement's calls once per statement of a scope it reads
    (eval.py's _names_called), and a list of every node per field cost
    several times the calls themselves."""
    fields = _EXPRESSION_FIELDS.get(type(stmt))
    if fields is None:
        return []
    singles, lists = fields
    stack: list[object] = [getattr(stmt, field) for field in singles]
    for field in lists:
        stack += getattr(stmt, field)
    out: list[ast.Call] = []
    push, extend, pop, table, Call = stack.append, stack.extend, stack.pop, CHILDREN, ast.Call
    while stack:
        node = pop()
        children = table.get(type(node))
        if children is None:
            if type(node) is list:  # a field of a class whose signature was not read
                extend(node)
            continue  # None, or a scalar
        if type(node) is Call:
            out.append(node)  # type: ignore[arg-type]
        for field in children.singles:
            push(getattr(node, field))
        for field in children.lists:
            extend(getattr(node, field))
    return out
