"""The fast walk must see exactly what libcst's own traversal sees."""

import os
import textwrap
from contextlib import nullcontext

import libcst as cst
import pytest
from libcst._position import CodePosition, CodeRange
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from memlint.lint.engine import lint_module
from memlint.parse.positions import LazyPositions, syntactic_ranges
from memlint.parse.traversal import (
    TRIVIA,
    OwnCodeVisitor,
    OwnScopeVisitor,
    ParentMap,
    TreeIndex,
    children,
    install_lazy_metadata,
    module_walks,
    parent_map,
    run_batched,
    visit_fast,
    walk,
)
from memlint.rule.registry import all_rules

# Every kind of syntax libcst parses, so each node class's field order is checked.
KITCHEN_SINK = textwrap.dedent(
    '''\
    """Module docstring."""
    from __future__ import annotations
    import os, sys as system
    from .pkg import (a as b, c)  # comment
    from x import *

    @decorator(arg=1)
    @other
    async def f(a, /, b: int = 1, *args, c, d=2, **kw) -> list[int]:
        global g
        x: int = 1; y = z = (yield)
        async with open(p) as fh, lock:
            async for i in aiter():
                await something(i)
        nonlocal_ = lambda q, *r, s=1, **t: q if r else s
        return [i for i in range(3) if i] + list({k: v for k, v in d.items()})

    class C(Base, metaclass=Meta):
        attr = {1, 2, *rest}
        def m(self):
            try:
                del self.x[1:2, ::3], y
            except* ValueError as e:
                raise RuntimeError("no") from e
            else:
                pass
            finally:
                assert x, "msg"
            while (n := next(it)) is not None:
                if n > 1: break
                elif n: continue
                else: ...
            with (a as b, c):
                print(f"{x!r:>{width}} {y=}", end="")
            match command.split():
                case [action, *objs] if objs:
                    pass
                case {"k": v, **rest}:
                    pass
                case Point(x=0, y=0) | None:
                    pass
                case _:
                    pass
            return not -x ** ~y // 2 @ m % 3 << 1 >> 2 & 3 | 4 ^ 5 and a or b

    x = 1 if y else (2,)
    x += 1; x -= 1; x *= 2
    s = "a" "b" f"c{d}"
    t = x[a:b:c], x[...]
    '''
)


def _nodes(module):
    return list(walk(module))


def test_children_match_libcst_for_every_node():
    module = cst.parse_module(KITCHEN_SINK)
    count = 0
    for node in _nodes(module):
        assert children(node) == list(node.children), type(node).__name__
        count += 1
    assert count > 500


def test_type_parameters_and_type_alias():
    module = cst.parse_module("type Alias[T] = list[T]\ndef f[T: int, *Ts, **P](x: T) -> T: ...\nclass K[T]: pass\n")
    for node in _nodes(module):
        assert children(node) == list(node.children)


class _Recorder(cst.CSTVisitor):
    def __init__(self, skip=()):
        super().__init__()
        self.events = []
        self.skip = skip

    def on_visit(self, node):  # generic hooks take the generic path
        self.events.append(("visit", node))
        return type(node).__name__ not in self.skip

    def on_leave(self, node):
        self.events.append(("leave", node))


class _Typed(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.events = []

    def visit_Name(self, node):
        self.events.append(("visit", node.value))

    def leave_Name(self, node):
        self.events.append(("leave", node.value))

    def visit_Lambda(self, node):
        self.events.append(("lambda", None))
        return False  # names inside are not visited


@pytest.fixture(params=["recursive", "indexed"])
def walk_mode(request):
    """visit_fast walks recursively, or over the module's TreeIndex while the
    module is being linted; both must match libcst."""
    if request.param == "recursive":
        return lambda module: nullcontext()
    return module_walks


@pytest.mark.parametrize("skip", [(), ("FunctionDef", "Call"), ("Module",)])
def test_visit_fast_matches_libcst_order_and_pruning(skip, walk_mode):
    module = cst.parse_module(KITCHEN_SINK)
    ours, theirs = _Recorder(skip), _Recorder(skip)
    with walk_mode(module):
        visit_fast(module, ours)
    module.visit(theirs)
    assert ours.events == theirs.events


def test_visit_fast_typed_hooks_and_false_skips_children(walk_mode):
    module = cst.parse_module(KITCHEN_SINK)
    ours, theirs = _Typed(), _Typed()
    with walk_mode(module):
        visit_fast(module, ours)
    module.visit(theirs)
    assert ours.events == theirs.events
    assert ("visit", "q") not in ours.events  # inside the lambda


class _Nested(cst.CSTVisitor):
    """Hooks on nested classes with leave methods, and pruning in between."""

    def __init__(self):
        super().__init__()
        self.events = []

    def visit_FunctionDef(self, node):
        self.events.append(("def", node.name.value))

    def leave_FunctionDef(self, node):
        self.events.append(("/def", node.name.value))

    def visit_Call(self, node):
        self.events.append(("call", type(node.func).__name__))
        return not isinstance(node.func, cst.Attribute)

    def leave_Call(self, node):
        self.events.append(("/call", None))

    def leave_Name(self, node):
        self.events.append(("/name", node.value))

    def visit_IndentedBlock(self, node):
        self.events.append(("block", len(node.body)))


def test_visit_fast_on_subtrees(walk_mode):
    module = cst.parse_module(KITCHEN_SINK)
    subtrees = [n for n in walk(module) if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Call, cst.Name))]
    with walk_mode(module):
        for node in subtrees:
            ours, theirs = _Nested(), _Nested()
            visit_fast(node, ours)
            node.visit(theirs)
            assert ours.events == theirs.events
    # a node that is not part of the module (built during a lint) still works
    outside = cst.parse_expression("f(g(x))")
    with module_walks(module):
        ours, theirs = _Nested(), _Nested()
        visit_fast(outside, ours)
        outside.visit(theirs)
    assert ours.events == theirs.events


class _Punctuation(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.events = []

    def visit_Comma(self, node):
        self.events.append("comma")

    def visit_Comment(self, node):
        self.events.append(node.value)

    def visit_Call(self, node):
        self.events.append("call")


def test_visitors_of_whitespace_and_punctuation_still_see_them(walk_mode):
    module = cst.parse_module(KITCHEN_SINK)
    ours, theirs = _Punctuation(), _Punctuation()
    with walk_mode(module):
        visit_fast(module, ours)
    module.visit(theirs)
    assert ours.events == theirs.events and "# comment" in ours.events


def test_tree_index_ranges():
    module = cst.parse_module(KITCHEN_SINK)
    tree = TreeIndex(module)
    expected = [n for n in walk(module) if type(n) not in TRIVIA]
    assert tree.nodes == expected
    for i, node in enumerate(tree.nodes):
        assert tree.nodes[i + 1 : tree.end[i]] == [n for n in walk(node) if type(n) not in TRIVIA][1:]
    calls = tree.indices(0, [cst.Call, cst.Name])
    assert calls == sorted(calls)
    assert [tree.nodes[i] for i in calls] == [n for n in walk(module) if isinstance(n, (cst.Call, cst.Name))]


@pytest.mark.parametrize(
    "source",
    [
        KITCHEN_SINK,
        "type Alias[T] = list[T]\ndef f[T: int, *Ts, **P](x: T) -> T: ...\nclass K[T]: pass\n",
        "print(f'{a!r:{w}}', *xs, sep=(\n  ','), **kw)  # c\nx = [a, (b), {c: d}, lambda: (yield)]\n",
    ],
)
def test_tree_index_reads_only_fields_that_may_hold_its_nodes(source):
    # TreeIndex skips the fields whose annotations allow only whitespace and
    # punctuation: the nodes it lists must be exactly the walk's non-TRIVIA ones.
    module = cst.parse_module(source)
    assert TreeIndex(module).nodes == [n for n in walk(module) if type(n) not in TRIVIA]


def test_tree_index_matches_the_walk_on_a_real_script():
    from pathlib import Path

    text = (Path(__file__).parent.parent / "fixtures" / "server" / "train_classifier.py").read_text()
    module = cst.parse_module(text)
    tree = TreeIndex(module)
    expected = [n for n in walk(module) if type(n) not in TRIVIA]
    assert len(tree.nodes) == len(expected) and all(a is b for a, b in zip(tree.nodes, expected))


def test_positions_and_parents_match_libcst():
    module = cst.parse_module(KITCHEN_SINK)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    expected_pos = wrapper.resolve(PositionProvider)
    expected_parent = wrapper.resolve(ParentNodeProvider)
    lazy = LazyPositions(module)
    assert set(syntactic_ranges(module)) == set(expected_pos)
    for node, rng in expected_pos.items():
        assert lazy[node] == rng
    assert parent_map(module) == dict(expected_parent)
    parents = ParentMap(module)
    assert dict(parents) == dict(expected_parent)
    deep = next(n for n in _nodes(module) if isinstance(n, cst.Integer))
    assert parents[deep] is expected_parent[deep]
    comma = next(n for n in _nodes(module) if isinstance(n, cst.Comma))
    assert parents[comma] is expected_parent[comma]  # trivia: from the full walk
    assert parents.get(module) is None and module not in parents
    assert parents.get(cst.Name("elsewhere"), "default") == "default"


def test_positions_with_crlf_and_tabs():
    module = cst.parse_module("if x:\r\n\ty = 'a\\\r\nb'\r\n\tz = 1\r\n")
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    lazy = LazyPositions(module)
    assert all(lazy[n] == r for n, r in expected.items())


def test_analyses_resolving_through_the_wrapper_share_the_lazy_maps():
    module = cst.parse_module("import torch\nx = torch.ones(1)\n")
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions, parents = install_lazy_metadata(wrapper)
    assert wrapper.resolve(PositionProvider) is positions
    assert wrapper.resolve(ParentNodeProvider) is parents


class _AttributeHook(cst.BatchableCSTVisitor):
    def __init__(self):
        super().__init__()
        self.seen = 0

    def visit_Call_func(self, node):
        self.seen += 1


def test_attribute_hooks_fall_back_to_libcst():
    module = cst.parse_module("f(1)\ng(2)\n")
    visitor = _AttributeHook()
    run_batched(MetadataWrapper(module, unsafe_skip_copy=True), [visitor])
    assert visitor.seen == 2


def _examples():
    for rule in all_rules():
        for i, example in enumerate(list(rule.invalid) + list(rule.valid)):
            yield pytest.param(rule, example.source, id=f"{rule.code}-{i}")


@pytest.mark.parametrize("rule,source", list(_examples()))
def test_rules_report_the_same_as_under_libcst_traversal(rule, source, monkeypatch):
    """Every rule example gives the same findings through the fast walk as
    through ``MetadataWrapper.visit_batched``."""
    rules = [r for r in all_rules() if r.default_enabled or r is rule]
    fast = lint_module(cst.parse_module(source), source, "x.py", rules)

    import memlint.lint.engine as engine

    monkeypatch.setattr(engine, "run_batched", lambda wrapper, visitors, source=None: wrapper.visit_batched(visitors))
    slow = lint_module(cst.parse_module(source), source, "x.py", rules)
    key = lambda f: (f.code, f.line, f.column, f.end_line, f.end_column, f.message, f.fix.title if f.fix else None)  # noqa: E731
    assert [key(f) for f in fast] == [key(f) for f in slow]


# -- positions from one statement's code generation ---------------------------

_ODD_LAYOUTS = [
    "# header\n\n\nimport torch; import os\nx = 1; y = 2;\n",
    "@dec\n@dec2(\n    1)\n\nasync def f(a,\n      b):\n    return a\n\n\nclass C(\n  B):\n    pass\n",
    "if x:\r\n\ty = 'a\\\r\nb'\r\n\tz = 1\r\nw = (1,\r\n 2)\r\n",
    "x = 1\ry = 2\rif x:\r    z = 3\r",
    "a = 1 \\\n    + 2\n\x0c\ndef f():\n    '''doc\n    string'''\n    return f\"{a!r:>{10}}\"\n# trailer",
    "match p:\n    case [1, *rest] if rest:\n        pass\n    case _:\n        pass\nx = ('é' +\n 'ü')\n",
    "with (open(a) as f,\n      open(b) as g):\n    pass\ntry:\n    pass\nexcept* E:\n    pass\n",
    "",
    "\n\n# only comments\n",
]


def _corpus_texts():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for folder in ("fixtures", os.path.join("tests", "corpus")):
        for path, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if name.endswith(".py"):
                    with open(os.path.join(path, name), encoding="utf-8", newline="") as fh:
                        yield fh.read()


def test_statement_positions_match_the_whole_module():
    """Positions computed one top-level statement at a time (the cheap path
    used while linting) equal libcst's for every node of every fixture, corpus
    file and odd layout."""
    checked = 0
    for text in [*_ODD_LAYOUTS, *_corpus_texts()]:
        module = cst.parse_module(text)
        expected = syntactic_ranges(module)
        lazy = LazyPositions(module, text)
        for node in TreeIndex(module).nodes[1:]:  # the module itself is the fallback's
            sl, sc, el, ec = expected[node]
            assert lazy[node] == CodeRange(CodePosition(sl, sc), CodePosition(el, ec)), (text, node)
            checked += 1
        assert lazy._ranges is None, "the whole-module fallback was taken"
    assert checked > 10_000


_NESTED_LAYOUTS = [
    "class C:\n  @dec\n  def m(self):\n     for x in y:  # c\n\n        # lead\n        if x: pass\n        elif y:\n"
    "          z = 1; w = 2\n     else:\n        pass\n",
    "async def f():\n\tasync with a as b:\n\t\tasync for i in b:\n\t\t\twhile i:\n\t\t\t\tawait g(\n  i)\n",
    'def f():\n    if a:\n        x = """\\\nline"""\n    with (a as b,\n          c):\n        return \\\n            1\n',
]


def test_nested_statement_positions_match_the_whole_module():
    """Looked up deepest first, a node's position comes from regenerating only
    the innermost statement that holds it (placed by Python's parser, indented
    as its blocks are): the same ranges as libcst's for every node."""
    checked = nested = 0
    for text in [*_NESTED_LAYOUTS, *_ODD_LAYOUTS, *_corpus_texts()]:
        module = cst.parse_module(text)
        expected = syntactic_ranges(module)
        lazy = LazyPositions(module, text)
        tree = TreeIndex(module)
        for node in reversed(tree.nodes[1:]):
            sl, sc, el, ec = expected[node]
            assert lazy[node] == CodeRange(CodePosition(sl, sc), CodePosition(el, ec)), (text, node)
            checked += 1
        assert lazy._ranges is None, "the whole-module fallback was taken"
        nested += sum(1 for i in lazy._done if tree.parent[i] > 0)
    assert checked > 10_000 and nested > 1_000


@pytest.mark.parametrize("python_text", ["x = (\n", "only_one = 1\n"], ids=["python-refuses", "parsers-disagree"])
def test_statement_positions_fall_back_to_the_whole_module(python_text):
    # Where Python's tree of the text is missing or does not line up with
    # libcst's statements, every lookup still gets libcst's own position.
    module = cst.parse_module("a = 1\nb = [\n  2]\n")
    expected = syntactic_ranges(module)
    lazy = LazyPositions(module, python_text)
    for node in TreeIndex(module).nodes:
        sl, sc, el, ec = expected[node]
        assert lazy[node] == CodeRange(CodePosition(sl, sc), CodePosition(el, ec))
    assert lazy._ranges is not None


def test_tree_index_is_the_walk_numbered_on_every_fixture_and_corpus_file():
    """TreeIndex reads fields through per-class getters and keeps parents on a
    stack beside the nodes': every list it builds equals the one made from
    the plain walk (pre-order non-TRIVIA nodes, nearest indexed ancestor,
    subtree end, per-class indices, id -> number)."""
    checked = 0
    for text in [KITCHEN_SINK, *_ODD_LAYOUTS, *_corpus_texts()]:
        module = cst.parse_module(text)
        tree = TreeIndex(module)
        nodes = [n for n in walk(module) if type(n) not in TRIVIA]
        number = {id(n): i for i, n in enumerate(nodes)}
        parents = parent_map(module)

        def indexed_parent(node):
            up = parents.get(node)
            while up is not None and type(up) in TRIVIA:
                up = parents.get(up)
            return -1 if up is None else number[id(up)]

        assert len(tree.nodes) == len(nodes) and all(a is b for a, b in zip(tree.nodes, nodes))
        up = [indexed_parent(n) for n in nodes]
        assert tree.parent == up
        size = [1] * len(nodes)
        for i in range(len(nodes) - 1, 0, -1):
            size[up[i]] += size[i]
        assert tree.end == [i + s for i, s in enumerate(size)]
        by_class: dict = {}
        for i, n in enumerate(nodes):
            by_class.setdefault(type(n), []).append(i)
        assert tree.by_class == by_class
        assert tree.index == number
        checked += len(nodes)
    assert checked > 10_000


_SCOPES = textwrap.dedent(
    """\
    def outer(a):
        b = a
        def inner(c):
            return c
        class K:
            d = b
            def method(self, e):
                return e
        f = lambda g: g
    """
)


class _OwnNames(OwnCodeVisitor):
    def __init__(self, own: cst.CSTNode | None = None) -> None:
        super().__init__()
        self.own = own
        self.names: list[str] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append(node.value)


class _OwnScopeNames(OwnScopeVisitor, _OwnNames):
    pass


@pytest.mark.parametrize("fast", [True, False])
def test_own_code_visitor_reads_class_bodies_but_no_nested_function_or_lambda(fast):
    module = cst.parse_module(_SCOPES)
    outer = module.body[0]
    seen = _OwnNames(outer)
    visit_fast(outer, seen) if fast else outer.visit(seen)
    # ``outer`` is entered (it is ``own``); ``inner``, ``method`` and the lambda are not, ``K``'s body is.
    assert seen.names == ["outer", "a", "b", "a", "K", "d", "b", "f"]


@pytest.mark.parametrize("fast", [True, False])
def test_own_scope_visitor_leaves_class_bodies_out_too(fast):
    module = cst.parse_module(_SCOPES)
    outer = module.body[0]
    seen = _OwnScopeNames(outer)
    visit_fast(outer, seen) if fast else outer.visit(seen)
    assert seen.names == ["outer", "a", "b", "a", "f"]


def test_own_code_visitor_without_own_enters_no_function():
    module = cst.parse_module(_SCOPES)
    seen = _OwnNames()
    visit_fast(module, seen)
    assert seen.names == []
