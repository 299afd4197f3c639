"""One libcst tree's nodes, listed once.

:func:`children` lists a node's children in source order without rebuilding
the node; :class:`TreeIndex` numbers a tree's nodes in pre-order (whitespace
and punctuation left out) with parents, subtree ranges and per-class lists.
While one module is linted (:func:`module_walks`) every walk and every
position lookup shares one index (:func:`tree_of`, :func:`tree_index`).

Kept apart from :mod:`memlint.parse.traversal` so that positions (which regenerate
one statement from the index) and traversal (which reads positions lazily)
both build on it without importing each other.
"""

from __future__ import annotations

import dataclasses
import typing
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from itertools import chain
from operator import attrgetter

import libcst as cst

from memlint.parse.budget import tick

_CSTNode = cst.CSTNode
_FIELD_ORDER: dict[type, tuple[str, ...]] = {}


class _FieldRecorder(cst.CSTVisitor):
    """Records the order in which libcst visits a node's fields."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        self.fields.append(attribute)


def _field_order(node: cst.CSTNode) -> tuple[str, ...]:
    # libcst visits each class's fields in a fixed order (source order); ask
    # it once per class by running its own child visit one level deep.
    recorder = _FieldRecorder()
    node._visit_and_replace_children(recorder)  # noqa: SLF001
    order = dict.fromkeys(recorder.fields)
    # A field libcst skipped on this node (an optional format_spec) may hold
    # a child on the next one; plain-valued fields (Name.value) never do.
    for f in dataclasses.fields(node):  # type: ignore[arg-type]
        if f.name not in order and not isinstance(getattr(node, f.name), (str, int, float)):
            order[f.name] = None
    return tuple(order)


# value class -> 0 (no child), 1 (a node), 2 (a sequence of nodes). A plain
# dict lookup: isinstance() against the CSTNode ABC is slow.
_KIND: dict[type, int] = {}


def _kind(cls: type) -> int:
    if cls is tuple or cls is list:
        return 2
    return 1 if issubclass(cls, _CSTNode) else 0


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node.children`` without rebuilding ``node``."""
    order = _FIELD_ORDER.get(node.__class__)
    if order is None:
        order = _FIELD_ORDER[node.__class__] = _field_order(node)
    out: list[cst.CSTNode] = []
    for name in order:
        value = getattr(node, name)
        kind = _KIND.get(value.__class__)
        if kind is None:
            kind = _KIND[value.__class__] = _kind(value.__class__)
        if kind == 1:
            out.append(value)
        elif kind == 2:
            out.extend(value)  # sequences of a parsed tree hold nodes only
    return out


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under ``node`` (itself first), in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        tick()
        yield current
        stack.extend(reversed(children(current)))


def parent_map(module: cst.CSTNode) -> dict[cst.CSTNode, cst.CSTNode]:
    parents: dict[cst.CSTNode, cst.CSTNode] = {}
    for node in walk(module):
        for child in children(node):
            parents[child] = node
    return parents


# -- one module's nodes, listed once ------------------------------------------


def _trivia_classes() -> frozenset[type]:
    """Whitespace, comments, punctuation and operator tokens: about half of all
    nodes, never a hook of any rule or analysis. TreeIndex leaves them out; a
    walk that asks for them recurses instead."""
    import libcst._nodes.op as op
    import libcst._nodes.whitespace as whitespace

    found = {
        c
        for mod in (op, whitespace)
        for c in vars(mod).values()
        if isinstance(c, type) and issubclass(c, _CSTNode) and c.__module__ == mod.__name__
    }
    found |= {
        cst.LeftParen,
        cst.RightParen,
        cst.LeftSquareBracket,
        cst.RightSquareBracket,
        cst.LeftCurlyBrace,
        cst.RightCurlyBrace,
    }
    return frozenset(found)


TRIVIA = _trivia_classes()


_NOT_NODES = (str, int, float, bool, type(None), cst.MaybeSentinel)
# node class -> the fields (in visiting order) that may hold a non-TRIVIA node
_INDEXED_FIELDS: dict[type, tuple[str, ...]] = {}


def _annotated_classes(annotation) -> list:
    args = typing.get_args(annotation)
    if not args:
        return [annotation]
    return [c for a in args for c in _annotated_classes(a)]


def _all_subclasses(cls: type) -> set[type]:
    found = {cls}
    for sub in cls.__subclasses__():
        found |= _all_subclasses(sub)
    return found


def _only_trivia(annotation) -> bool:
    """Whether a field so annotated holds nothing but TRIVIA nodes (or no node):
    ``whitespace_after: BaseParenthesizableWhitespace``, ``lpar: Sequence[LeftParen]``,
    ``comma: Union[Comma, MaybeSentinel]``."""
    for cls in _annotated_classes(annotation):
        if not isinstance(cls, type):
            return False
        if issubclass(cls, _CSTNode):
            if not _all_subclasses(cls) <= TRIVIA:
                return False
        elif not issubclass(cls, _NOT_NODES):
            return False
    return True


def _indexed_fields(node: cst.CSTNode) -> tuple[str, ...]:
    """The fields of ``node``'s class TreeIndex reads: whitespace and
    punctuation fields (half of every node's fields) are never read."""
    cls = node.__class__
    order = _FIELD_ORDER.get(cls)
    if order is None:
        order = _FIELD_ORDER[cls] = _field_order(node)
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # an annotation that does not resolve: read every field
        hints = {}
    found = _INDEXED_FIELDS[cls] = tuple(f for f in order if f not in hints or not _only_trivia(hints[f]))
    return found


def _NO_FIELDS(node: cst.CSTNode) -> tuple:
    """The getter of a class with no field TreeIndex reads (Name, Integer...:
    a third of all nodes), which the loop tells by identity and never calls."""
    return ()


# node class -> a function of a node giving the values of _INDEXED_FIELDS, last first
_GETTERS: dict[type, Callable[[cst.CSTNode], Sequence]] = {}


def _getter(cls: type, node: cst.CSTNode) -> Callable[[cst.CSTNode], Sequence]:
    fields = _INDEXED_FIELDS.get(cls)
    if fields is None:
        fields = _indexed_fields(node)
    found: Callable[[cst.CSTNode], Sequence]
    if not fields:
        found = _NO_FIELDS
    elif len(fields) == 1:
        one = attrgetter(fields[0])
        found = lambda node: (one(node),)  # noqa: E731 - attrgetter of one name returns the value bare
    else:
        found = attrgetter(*reversed(fields))
    _GETTERS[cls] = found
    return found


class TreeIndex:
    """The nodes of a tree in pre-order, TRIVIA left out. ``end[i]`` is one
    past the last descendant of ``nodes[i]``; ``by_class`` lists the indices
    of each class."""

    __slots__ = ("nodes", "end", "parent", "index", "by_class")

    def __init__(self, root: cst.CSTNode) -> None:
        # Every rule's walk and position lookup starts here (~1.5 CPU s on
        # transformers' files past the gate), so one getter per class reads
        # the fields _indexed_fields keeps (last first), and
        # children go on the stack as they are read, their parent's number
        # on a stack beside it (no list, no tuple per node).
        nodes: list[cst.CSTNode] = []
        parent: list[int] = []
        by_class: dict[type, list[int]] = {}
        todo: list[cst.CSTNode] = [root]
        ups: list[int] = [-1]
        pop, push, push_all, pop_up, push_ups = todo.pop, todo.append, todo.extend, ups.pop, ups.extend
        add_node, add_parent = nodes.append, parent.append
        getters, kinds, trivia = _GETTERS, _KIND, TRIVIA
        i = 0
        while todo:
            node = pop()
            add_node(node)
            add_parent(pop_up())
            cls = node.__class__
            found = by_class.get(cls)
            if found is None:
                by_class[cls] = [i]
            else:
                found.append(i)
            getter = getters.get(cls)
            if getter is None:
                getter = _getter(cls, node)
            if getter is not _NO_FIELDS:
                before = len(todo)
                for value in getter(node):
                    vcls = value.__class__
                    kind = kinds.get(vcls)
                    if kind is None:
                        kind = kinds[vcls] = _kind(vcls)
                    if kind == 1:
                        if vcls not in trivia:
                            push(value)
                    elif kind == 2:
                        push_all([v for v in reversed(value) if v.__class__ not in trivia])
                added = len(todo) - before
                if added:
                    push_ups([i] * added)
            i += 1
        size = [1] * len(nodes)
        for i in range(len(nodes) - 1, 0, -1):
            size[parent[i]] += size[i]
        self.nodes = nodes
        self.parent = parent
        # id(node) -> i (CSTNode.__hash__ is slow Python code)
        self.index = dict(zip(map(id, nodes), range(len(nodes))))
        self.by_class = by_class
        self.end = [i + s for i, s in enumerate(size)]

    def parent_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        i = self.index.get(id(node))
        if i is None or self.nodes[i] is not node or self.parent[i] < 0:
            return None
        return self.nodes[self.parent[i]]

    def indices(self, start: int, classes: Sequence[type]) -> list[int]:
        """Pre-order indices in the subtree at ``start`` of nodes of ``classes``."""
        stop = self.end[start]
        runs = []
        for kind in classes:
            found = self.by_class.get(kind)
            if found:
                lo = bisect_left(found, start)
                hi = bisect_left(found, stop, lo)
                if hi > lo:
                    runs.append(found[lo:hi])
        if len(runs) == 1:
            return runs[0]
        # Sorted runs of distinct numbers: one sort of their concatenation
        # (timsort merges runs) costs less than heapq.merge in Python.
        return sorted(chain.from_iterable(runs))


_root: cst.CSTNode | None = None
_tree: TreeIndex | None = None


@contextmanager
def module_walks(module: cst.Module) -> Iterator[None]:
    """While linting ``module``: walks over it share one TreeIndex (built on
    first use) instead of recursing through children."""
    global _root, _tree
    outer = _root, _tree
    _root, _tree = module, None
    try:
        yield
    finally:
        _root, _tree = outer


def tree_index(module: cst.Module) -> TreeIndex:
    """The module's TreeIndex: the shared one while it is being linted, else
    a new one. Analyses that need pre-order numbers, subtree ranges or parents
    of every node can read them here instead of walking the module again."""
    located = tree_of(module)
    return located[0] if located is not None and located[1] == 0 else TreeIndex(module)


def tree_of(node: cst.CSTNode) -> tuple[TreeIndex, int] | None:
    """Where ``node`` sits in the shared TreeIndex of the module being linted
    (the index and its number there), or None outside a lint or for a node
    the module does not hold."""
    global _tree
    if _root is None:
        return None
    if _tree is None:
        _tree = TreeIndex(_root)
    i = _tree.index.get(id(node))
    if i is None or _tree.nodes[i] is not node:
        return None  # a node built during the lint, not part of the module
    return _tree, i
