"""gate/ast_fields.py: the walks over Python's tree read only the fields that
may hold code, and still reach every node ``ast.walk`` reaches (contexts,
operators and aliases aside); the nesting guard's depth is the one it
measured reading every field."""

from __future__ import annotations

import ast
import sys

import pytest

from memlint.gate import ast_fields
from memlint.gate.ast_fields import CHILDREN, Children, nodes
from memlint.parse.guard import MAX_DEPTH, nesting_depth

# Every kind of statement and expression this Python parses (3.9's syntax).
SOURCE = '''
"""doc"""
from __future__ import annotations
import os.path as p, sys
from . import x as y
from .a.b import *
@dec(arg=1)
async def f(a, /, b: int = 1, *args: "T", c, d=2, **kw) -> list[int]:
    global g
    async with ctx() as (u, v), other:
        async for i in aiter():
            await i
    x: int = 1
    y += 2
    del z[0], w.a
    assert x, "msg"
    try:
        raise E from None
    except (A, B) as e:
        pass
    except C:
        raise
    else:
        return
    finally:
        yield from gen()
    while n := next(it):
        break
    else:
        continue
    def inner():
        nonlocal a
        yield
    return lambda q=1, *r, s, **t: q if r else s
class K(Base, metaclass=M):
    v = {1: 2, **d, 3: {4}}
    w = [i for i in range(3) if i for j in "ab"]
    s = {i for i in x}
    m = {k: v for k, v in y}
    g = (not a and b or c for a in z)
    c = a < b <= c != d in e is not f
    f = f"{x!r:>{width}} and {y}"
    b = -x + ~y ** z @ w // v % u << t >> s | r ^ q & p
    sl = a[1:2:3, ::, ...][b]
    star = [*a, *b]
    by = b"bytes"
    first, *rest = seq
'''
MATCH = """
match command:
    case [Point(x=0, y=yy), *others] if yy > 0:
        pass
    case {"k": v, **rest} | None | 1 | "s":
        pass
    case [a, b as c, _]:
        pass
"""


def _sources() -> list[str]:
    return [SOURCE, MATCH] if sys.version_info >= (3, 10) else [SOURCE]


def _leaf(node: ast.AST) -> bool:
    return isinstance(node, (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.alias))


@pytest.mark.parametrize("source", _sources())
def test_nodes_reach_every_node_but_contexts_operators_and_aliases(source):
    tree = ast.parse(source)
    expected = sorted(id(n) for n in ast.walk(tree) if not _leaf(n))
    assert sorted(id(n) for n in nodes(tree)) == expected
    assert any(_leaf(n) for n in ast.walk(tree))  # there were some to leave out


# Classes no tree holds (kept for old code that builds nodes by hand).
_DEPRECATED = {
    "Num",
    "Str",
    "Bytes",
    "NameConstant",
    "Ellipsis",
    "Index",
    "ExtSlice",
    "Suite",
    "Param",
    "AugLoad",
    "AugStore",
}


def test_every_node_class_of_this_python_has_its_signature_read():
    """A class read generically still works (see the next test), but costs
    the walks their speed: on the Pythons memlint supports none is."""
    for cls, children in CHILDREN.items():
        fields = getattr(cls, "_fields", ())
        if not fields or cls.__name__ in _DEPRECATED:
            continue  # abstract classes, and the deprecated ones no tree holds
        assert not children.generic, cls
        listed = set(children.singles) | set(children.lists) | set(children.leaves)
        assert listed <= set(fields), cls


def test_a_class_whose_signature_cannot_be_read_is_walked_generically(monkeypatch):
    tree = ast.parse("def f(a):\n    return [g(a), h.b]\n")
    expected = sorted(id(n) for n in ast.walk(tree) if not _leaf(n))
    depth = nesting_depth(tree, 10**9)

    class Unread:  # what _children makes of a class whose docstring says nothing
        __doc__ = None
        _fields = ast.FunctionDef._fields

    generic = {
        cls: ast_fields._children(Unread) if cls in (ast.FunctionDef, ast.List) else ch for cls, ch in CHILDREN.items()
    }
    assert generic[ast.FunctionDef].singles == ast.FunctionDef._fields
    generic[ast.List] = Children(ast.List._fields, (), (), generic=True)  # its ctx read as a child too
    monkeypatch.setattr(ast_fields, "CHILDREN", generic)
    # nodes() reads each class's children through a pusher made from its entry.
    monkeypatch.setattr(ast_fields, "PUSHERS", {cls: ast_fields._pusher(ch) for cls, ch in generic.items()})
    found = sorted(id(n) for n in ast_fields.nodes(tree))
    assert set(expected) <= set(found) and len(found) == len(expected) + 1  # + the List's Load
    monkeypatch.setattr("memlint.parse.guard.CHILDREN", generic)
    assert nesting_depth(tree, 10**9) == depth


def _depth_reading_every_field(tree: ast.AST, limit: int) -> int:
    """guard.nesting_depth as it was before ast_fields (every field tested)."""
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        below = depth + (len(node.values) if type(node) is ast.BoolOp else 1)  # type: ignore[attr-defined]
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                stack.extend((item, below) for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append((value, below))
    return deepest


DEEP = [
    "x = " + "-" * 450 + "1",
    "x = " + " and ".join(["a"] * 500),
    "a" + ".b" * 450,
    "x = " + "+".join(["a"] * 450),
    "x = " + "not " * 390 + "y",  # just under the limit with its operator level, or over without it
    "import a.b as c",
    "a, b = c",
    "x = {**a, b: c}",
]


@pytest.mark.parametrize("source", _sources() + DEEP)
def test_nesting_depth_is_the_depth_measured_reading_every_field(source):
    tree = ast.parse(source)
    assert nesting_depth(tree, 10**9) == _depth_reading_every_field(tree, 10**9)
    for limit in (5, MAX_DEPTH):
        assert (nesting_depth(tree, limit) > limit) == (_depth_reading_every_field(tree, limit) > limit)


@pytest.mark.parametrize("source", _sources())
def test_children_are_iter_child_nodes_in_its_order_less_contexts_operators_and_aliases(source):
    """The walks that replay a rule's visitor (MEM401's and MEM402's gate)
    depend on the order: a ``for``'s iterable before its body, an
    assignment's targets before its value, a def's body before its
    decorators and return annotation."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        expected = [c for c in ast.iter_child_nodes(node) if not _leaf(c)]
        assert [id(c) for c in ast_fields.children(node)] == [id(c) for c in expected], type(node).__name__


def test_children_of_a_class_whose_signature_cannot_be_read_are_iter_child_nodes(monkeypatch):
    tree = ast.parse("def f(a):\n    return g(a)\n")
    fn = tree.body[0]
    monkeypatch.setitem(ast_fields._READERS, ast.FunctionDef, None)
    assert ast_fields.children(fn) == list(ast.iter_child_nodes(fn))
    assert ast_fields.children("a string") == [] and ast_fields.children(None) == []


def test_each_pusher_pushes_the_singles_then_extends_the_lists_in_field_order():
    """nodes() and the gate's walks put a node's children on their stack
    through ast_fields.PUSHERS: the same calls, in the same order, as the
    loops over Children.singles and Children.lists they replace."""
    for cls, children in CHILDREN.items():
        pusher = ast_fields.PUSHERS[cls]
        if not children.singles and not children.lists:
            assert pusher is None, cls
            continue
        node = cls.__new__(cls)
        for name in children.singles:
            setattr(node, name, f"single:{name}")
        for name in children.lists:
            setattr(node, name, [f"list:{name}"])
        calls: list[tuple[str, object]] = []
        pusher(node, lambda v: calls.append(("push", v)), lambda vs: calls.append(("extend", vs)))
        expected = [("push", f"single:{n}") for n in children.singles]
        expected += [("extend", [f"list:{n}"]) for n in children.lists]
        assert calls == expected, cls
