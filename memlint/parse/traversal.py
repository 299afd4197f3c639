"""Walking a libcst tree without rebuilding it.

``CSTNode.visit`` reconstructs every node it passes (libcst's visitors double as
transformers), so one read-only traversal costs more than parsing the file,
and the rules plus each analysis would traverse every module several times.
This module walks the existing nodes instead, in the order libcst visits them:

- :func:`children` lists a node's children in source order;
- :func:`visit_fast` drives a ``CSTVisitor`` (``visit_X``/``leave_X``, a
  ``False`` from ``visit_X`` skips the children); attribute visitors
  (``visit_X_attr``) are not called;
- :func:`run_batched` runs every rule in one walk, with ``ParentNodeProvider``
  and ``PositionProvider`` computed only when something asks for them;
- :class:`OwnCodeVisitor` and :class:`OwnScopeVisitor` are the bases of the
  visitors whose walk stays in the code it starts in.

While one module is linted (:func:`module_walks`), its nodes are listed once
in visiting order, per node class: a walk then touches only the nodes of the
classes its visitor has hooks for (whitespace, about half of all nodes, is
never hooked), and parent links come from the same list.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from weakref import WeakKeyDictionary

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from memlint.parse.budget import tick
from memlint.parse.positions import LazyPositions

# The tree index lives in memlint.parse.tree; its names stay importable from here.
from memlint.parse.tree import TRIVIA, TreeIndex, children, module_walks, parent_map, tree_index, tree_of, walk

_CSTNode = cst.CSTNode
__all__ = [
    "TRIVIA",
    "OwnCodeVisitor",
    "OwnScopeVisitor",
    "TreeIndex",
    "children",
    "install_lazy_metadata",
    "module_walks",
    "parent_map",
    "run_batched",
    "tree_index",
    "tree_of",
    "visit_fast",
    "walk",
]


# -- a fast driver for ordinary CSTVisitors ---------------------------------

# Keyed weakly by visitor class: analyses define visitor classes inside
# functions, a new class per call.
# visitor class -> node class -> (visit_X, leave_X), unbound, None for no-ops
_METHODS: WeakKeyDictionary = WeakKeyDictionary()
# visitor class -> node classes it has a hook for
_HOOKED: WeakKeyDictionary = WeakKeyDictionary()


def _hook(cls: type, name: str) -> Callable | None:
    fn = getattr(cls, name, None)
    return None if fn is None or getattr(fn, "_is_no_op", False) else fn


def _own_hook_names(cls: type) -> list[str]:
    """visit_*/leave_* defined outside libcst (whose own are no-op stubs, one
    per node class: ``dir()`` would list hundreds)."""
    names = []
    for klass in cls.__mro__:
        if klass.__module__.startswith("libcst") or klass is object:
            continue
        names.extend(n for n in vars(klass) if n.startswith(("visit_", "leave_")))
    return list(dict.fromkeys(names))


def _methods(vcls: type, kind: type) -> tuple[Callable | None, Callable | None]:
    table = _METHODS.get(vcls)
    if table is None:
        table = _METHODS[vcls] = {}
    found = table.get(kind)
    if found is None:
        name = kind.__name__
        found = table[kind] = (_hook(vcls, f"visit_{name}"), _hook(vcls, f"leave_{name}"))
    return found


def _table(vcls: type) -> dict:
    table = _METHODS.get(vcls)
    if table is None:
        table = _METHODS[vcls] = {}
    return table


def _hooked_classes(vcls: type) -> tuple[type, ...]:
    found = _HOOKED.get(vcls)
    if found is None:
        kinds = []
        for name in _own_hook_names(vcls):
            prefix, _, node_name = name.partition("_")
            if node_name and _hook(vcls, name) is not None:
                kind = getattr(cst, node_name, None)
                if isinstance(kind, type) and issubclass(kind, _CSTNode):
                    kinds.append(kind)
        found = _HOOKED[vcls] = tuple(dict.fromkeys(kinds))
    return found


def visit_fast(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``node.visit(visitor)`` for a read-only visitor, without the rebuild."""
    vcls = type(visitor)
    generic = vcls.on_visit is not cst.CSTVisitor.on_visit or vcls.on_leave is not cst.CSTVisitor.on_leave
    located = tree_of(node)
    if located is None:
        if generic:
            _visit_generic(node, visitor)
        else:
            _visit_recursive(node, visitor, _table(vcls))
        return
    tree, start = located
    hooked = _hooked_classes(vcls)
    if generic or not TRIVIA.isdisjoint(hooked):
        # Such a visitor sees whitespace and punctuation, which the index leaves out.
        if generic:
            _visit_generic(node, visitor)
        else:
            _visit_recursive(node, visitor, _table(vcls))
    else:
        _visit_indexed(tree, tree.indices(start, hooked), visitor)


class OwnCodeVisitor(cst.CSTVisitor):
    """A walk that reads only the code it starts in: a nested function or
    lambda is not entered (its code runs when it is called, with names of
    its own), but a class body is, since it runs where it stands. ``own``,
    set by a walk that starts at a function, is that function: it is entered."""

    own: cst.CSTNode | None = None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.own

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


class OwnScopeVisitor(OwnCodeVisitor):
    """An :class:`OwnCodeVisitor` that leaves nested class bodies out too:
    their names are the class's, not the scope's."""

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False


def _visit_recursive(node: cst.CSTNode, visitor: cst.CSTVisitor, table: dict) -> None:
    tick()
    kind = node.__class__
    found = table.get(kind)
    if found is None:
        found = _methods(type(visitor), kind)
    visit, leave = found
    if visit is None or visit(visitor, node) is not False:
        for child in children(node):
            _visit_recursive(child, visitor, table)
    if leave is not None:
        leave(visitor, node)


def _visit_indexed(tree: TreeIndex, indices: Sequence[int], visitor: cst.CSTVisitor) -> None:
    nodes, end = tree.nodes, tree.end
    table = _table(type(visitor))
    pending: list[tuple[int, cst.CSTNode, Callable]] = []  # leave_X owed, innermost last
    pos, count = 0, len(indices)
    while pos < count:
        tick()
        i = indices[pos]
        while pending and pending[-1][0] <= i:
            _, done, leave = pending.pop()
            leave(visitor, done)
        node = nodes[i]
        found = table.get(node.__class__)
        if found is None:
            found = _methods(type(visitor), node.__class__)
        visit, leave = found
        if leave is not None:
            pending.append((end[i], node, leave))
        if visit is not None and visit(visitor, node) is False:
            pos = bisect_left(indices, end[i], pos + 1)  # skip the subtree
        else:
            pos += 1
    while pending:
        _, done, leave = pending.pop()
        leave(visitor, done)


def _visit_generic(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    tick()
    if visitor.on_visit(node):
        for child in children(node):
            _visit_generic(child, visitor)
    visitor.on_leave(node)


# -- many rules, one walk ----------------------------------------------------


class ParentMap(Mapping):
    """ParentNodeProvider's mapping, read from the module's TreeIndex; the
    parents of TRIVIA nodes come from one full walk, made when first asked."""

    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._tree: TreeIndex | None = None
        self._full: dict[cst.CSTNode, cst.CSTNode] | None = None

    def _index(self) -> TreeIndex:
        if self._tree is None:
            self._tree = tree_index(self._module)
        return self._tree

    def _all(self) -> dict[cst.CSTNode, cst.CSTNode]:
        if self._full is None:
            self._full = parent_map(self._module)
        return self._full

    def get(self, node, default=None):
        if node.__class__ in TRIVIA:
            return self._all().get(node, default)
        found = self._index().parent_of(node)
        return default if found is None else found

    def __getitem__(self, node):
        found = self.get(node)
        if found is None:
            raise KeyError(node)
        return found

    def __contains__(self, node) -> bool:
        return self.get(node) is not None

    def __iter__(self):
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


_LAZY = (PositionProvider, ParentNodeProvider)


def install_lazy_metadata(wrapper: MetadataWrapper, source: str | None = None) -> tuple[Mapping, Mapping]:
    """Give ``wrapper`` the lazy position and parent mappings, so analyses that
    resolve those providers through the wrapper share them."""
    positions: Mapping = LazyPositions(wrapper.module, source)
    parents: Mapping = ParentMap(wrapper.module)
    cache = getattr(wrapper, "_metadata", None)
    if isinstance(cache, dict):
        positions = cache.setdefault(PositionProvider, positions)
        parents = cache.setdefault(ParentNodeProvider, parents)
    return positions, parents


_RULE_HOOKS: WeakKeyDictionary = WeakKeyDictionary()


def _rule_hooks(cls: type) -> tuple[tuple[str, str, str], ...]:
    """(method name, "visit"|"leave", node or node_attribute) for a visitor
    class. Looked up on the class: libcst's ``get_visitors`` inspects the
    instance, which evaluates every property (``facts`` among them)."""
    found = _RULE_HOOKS.get(cls)
    if found is None:
        hooks = []
        for name in _own_hook_names(cls):
            kind, _, target = name.partition("_")
            if target and _hook(cls, name) is not None:
                hooks.append((name, kind, target))
        found = _RULE_HOOKS[cls] = tuple(hooks)
    return found


def run_batched(
    wrapper: MetadataWrapper, visitors: Sequence[cst.BatchableCSTVisitor], source: str | None = None
) -> None:
    """``wrapper.visit_batched(visitors)``, in one fast walk; ``source``, the
    text the module was parsed from, lets positions regenerate one statement
    instead of the module."""
    targets = {target for v in visitors for _, _, target in _rule_hooks(type(v))}
    if any("_" in t or getattr(cst, t, None) in TRIVIA for t in targets):
        # visit_<Node>_<attribute> hooks exist only in libcst's own traversal,
        # and TreeIndex leaves out whitespace and punctuation.
        wrapper.visit_batched(visitors)
        return
    positions, parents = install_lazy_metadata(wrapper, source)
    visit: dict[type, list[Callable]] = {}
    leave: dict[type, list[Callable]] = {}
    for v in visitors:
        extra = [p for p in v.get_inherited_dependencies() if p not in _LAZY]
        metadata = dict(wrapper.resolve_many(extra)) if extra else {}
        metadata[PositionProvider] = positions
        metadata[ParentNodeProvider] = parents
        v.metadata = metadata
        for name, kind, target in _rule_hooks(type(v)):
            node_class = getattr(cst, target, None)
            if isinstance(node_class, type):
                (visit if kind == "visit" else leave).setdefault(node_class, []).append(getattr(v, name))
    try:
        with module_walks(wrapper.module):
            located = tree_of(wrapper.module)
            if located is None:
                _dispatch_recursive(wrapper.module, visit, leave)
            else:
                tree = located[0]
                _dispatch(tree, tree.indices(0, list(dict.fromkeys([*visit, *leave]))), visit, leave)
    finally:
        for v in visitors:
            v.metadata = {}


def _dispatch(
    tree: TreeIndex,
    indices: Sequence[int],
    visit: dict[type, list[Callable]],
    leave: dict[type, list[Callable]],
) -> None:
    nodes, end = tree.nodes, tree.end
    pending: list[tuple[int, cst.CSTNode, list[Callable]]] = []
    for i in indices:
        tick()
        while pending and pending[-1][0] <= i:
            _, done, fns = pending.pop()
            for fn in fns:
                fn(done)
        node = nodes[i]
        for fn in visit.get(node.__class__, ()):
            fn(node)
        fns = leave.get(node.__class__)
        if fns:
            pending.append((end[i], node, fns))
    while pending:
        _, done, fns = pending.pop()
        for fn in fns:
            fn(done)


def _dispatch_recursive(
    node: cst.CSTNode, visit: dict[type, list[Callable]], leave: dict[type, list[Callable]]
) -> None:
    tick()
    for fn in visit.get(node.__class__, ()):
        fn(node)
    for child in children(node):
        _dispatch_recursive(child, visit, leave)
    for fn in leave.get(node.__class__, ()):
        fn(node)
