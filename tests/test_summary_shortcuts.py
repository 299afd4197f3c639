"""The summary's shortcuts give what the walks they skip would give.

Each helper that the summary's one walk spares a walk of its own (a fact
the walk already knows: every class met, the functions holding a ``with
torch.no_grad():``, the names object_types reads) is asked here both ways,
with the walk's answer and without it, over every rule example and every
fixture script: a later shortcut that drops a case fails one of these.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from memlint.gate.ast_fields import nodes
from memlint.project import cpu_receivers
from memlint.project.method_moves import _touches, method_moves
from memlint.project.node_lists import NodeLists
from memlint.project.object_types import object_types
from memlint.project.summary import _signature_parts, _Walker, summarise
from memlint.rule.registry import all_rules
from memlint.vocabulary.settings_values import settings_functions

_ROOT = Path(__file__).resolve().parent.parent


def _sources() -> list[tuple[str, str]]:
    out = [
        (f"{rule.code}-{kind}-{i}", example.source)
        for rule in all_rules()
        for kind, examples in (("invalid", rule.invalid), ("valid", rule.valid))
        for i, example in enumerate(examples)
    ]
    for folder in ("fixtures", "tests/corpus"):
        for path in sorted((_ROOT / folder).rglob("*.py")):
            out.append((str(path.relative_to(_ROOT)), path.read_text(encoding="utf-8")))
    return out


def _trees() -> list[tuple[str, ast.Module]]:
    out = []
    for name, source in _sources():
        try:
            out.append((name, ast.parse(source)))
        except SyntaxError:
            continue
    return out


TREES = _trees()


def test_the_sources_are_many():
    assert len(TREES) > 500


def test_object_types_from_the_walk_equal_object_types_walking_alone():
    # The walk keeps only the names object_types reads (a binding, or a read
    # of a function or class of the module), and says which functions hold a
    # grad-off ``with``: the same facts as object_types' own walk of each scope.
    for name, tree in TREES:
        walker = _Walker(tree)
        from_walk = object_types(tree, walker.bindings, walker._has_star, walker.scope_nodes, walker.off_withs)
        alone = object_types(tree, walker.bindings, walker._has_star)
        assert from_walk.to_json() == alone.to_json(), name
        assert summarise(tree).objects.to_json() == alone.to_json(), name


def test_method_moves_without_the_class_search_when_every_class_is_top_level():
    for name, tree in TREES:
        everywhere = method_moves(tree)
        if all(n in tree.body for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            assert method_moves(tree, NodeLists(), nested=False) == everywhere, name
        summary = summarise(tree)
        assert (summary.still_methods, summary.moving_methods) == everywhere, name


_NESTED_CLASSES = textwrap.dedent(
    """
    import torch

    def build():
        class Inner(torch.nn.Module):
            def freeze(self):
                for p in self.parameters():
                    p.requires_grad_(False)
        return Inner()

    class Outer(torch.nn.Module):
        class Part(torch.nn.Module):
            def place(self):
                self.cuda()
    """
)


def test_a_class_in_a_function_or_a_class_is_still_searched():
    tree = ast.parse(_NESTED_CLASSES)
    summary = summarise(tree)
    assert summary.still_methods == ["freeze"]
    assert summary.moving_methods == ["place"]
    # Without the search (what the summary skips only when every class is
    # in the module's body) the class in a function would not be found.
    assert method_moves(tree, NodeLists(), nested=False) == ([], ["place"])


_OFF_FORWARDS = textwrap.dedent(
    """
    import torch

    class Deep(torch.nn.Module):
        def forward(self, x, mode):
            if mode == "infer":
                for _ in range(2):
                    with torch.no_grad():
                        x = self.net(x)
            return x

    class InNested(torch.nn.Module):
        def forward(self, x):
            def helper(y):
                with torch.no_grad():
                    return self.net(y)
            return helper(x)

    class InAClassBody(torch.nn.Module):
        def forward(self, x):
            class Local:
                with torch.inference_mode():
                    pass
            return self.net(x)

    class Plain(torch.nn.Module):
        def forward(self, x):
            with torch.autocast("cuda"):
                return self.net(x)
    """
)


def test_a_grad_off_with_is_the_forward_own_only_outside_nested_code():
    tree = ast.parse(_OFF_FORWARDS)
    walker = _Walker(tree)
    assert object_types(tree, walker.bindings, False, None, walker.off_withs).off_inside == ["Deep"]
    assert object_types(tree, walker.bindings, False).off_inside == ["Deep"]
    assert summarise(tree).objects.off_inside == ["Deep"]


def test_a_module_without_a_grad_off_with_records_none():
    walker = _Walker(
        ast.parse("import torch\nclass A(torch.nn.Module):\n    def forward(self, x):\n        return x\n")
    )
    assert walker.off_withs == set()


def _fresh_args_by_ast_walk(node, body, calls, spelling):
    """fresh_args as it read the scope before: every node of ``ast.walk``."""
    real = cpu_receivers.nodes
    try:
        cpu_receivers.nodes = lambda root: list(ast.walk(root))  # type: ignore[assignment]
        return cpu_receivers.fresh_args(node, body, calls, spelling)
    finally:
        cpu_receivers.nodes = real  # type: ignore[assignment]


@pytest.mark.parametrize(
    "binding",
    [
        "import model",
        "from nets import model",
        "global model",
        "def model(): pass",
        "class model: pass",
        "for model in []: pass",
        "try:\n        pass\n    except Exception as model:\n        pass",
        "",
    ],
)
def test_fresh_args_reads_an_import_alias_as_a_binding(binding):
    source = textwrap.dedent(
        """
        import nets, utils
        def main():
            model = nets.Net()
            BINDING
            utils.load(model, "w.pt")
        """
    ).replace("BINDING", binding)
    tree = ast.parse(source)
    fn = tree.body[1]
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and ast.unparse(n.func) == "utils.load"]
    spelling = ast.unparse
    found = cpu_receivers.fresh_args(fn, fn.body, calls, spelling)  # type: ignore[arg-type]
    assert found == _fresh_args_by_ast_walk(fn, fn.body, calls, spelling)
    assert bool(found) == (binding == "")


def test_settings_functions_read_only_where_the_walk_met_a_parse_call():
    # The walk notes the module-level functions calling ``parse_args``,
    # ``parse_known_args`` or ``Namespace``; settings_functions reads only
    # those, and must find what it finds reading every function.
    for name, tree in TREES:
        everywhere = settings_functions(tree)
        assert settings_functions(tree, _Walker(tree)._parsing) == everywhere, name
        assert summarise(tree).settings_functions == everywhere, name


_SETTINGS = textwrap.dedent(
    """
    import argparse

    def get_args(parser):
        args, _ = parser.parse_known_args()
        return args

    def namespace(d):
        return argparse.Namespace(**d)

    def bare(d):
        return Namespace(**d)

    def in_a_with(parser):
        with open("f") as f:
            return parser.parse_args(f.read().split())

    def other(parser):
        return parser.parse_argz()
    """
)


def test_each_spelling_of_a_parse_call_is_noted_by_the_walk():
    tree = ast.parse(_SETTINGS)
    assert _Walker(tree)._parsing == {"get_args", "namespace", "bare", "in_a_with"}
    assert summarise(tree).settings_functions == ["get_args", "namespace", "bare", "in_a_with"]
    # Told no function calls one, settings_functions reads none.
    assert settings_functions(tree, set()) == []


def test_wrapped_args_skipped_only_in_scopes_calling_no_data_parallel(monkeypatch):
    # The walk counts ``DataParallel(...)`` calls per scope; wrapped_args is
    # asked only where one was met. Asked everywhere, the summaries agree.
    shortcut = {name: summarise(tree).to_json() for name, tree in TREES}
    original = _Walker._fresh_args

    def always(self, node, scope, body, wraps=True):
        original(self, node, scope, body, wraps=True)

    monkeypatch.setattr(_Walker, "_fresh_args", always)
    for name, tree in TREES:
        assert summarise(tree).to_json() == shortcut[name], name


_WRAPPED = textwrap.dedent(
    """
    import torch
    from nets import HandNet
    from modelio import load_checkpoint

    def plain():
        model = HandNet()
        load_checkpoint(model, "p")

    def wrapped():
        model = HandNet()
        model = torch.nn.DataParallel(model)
        load_checkpoint(model, "p")
    """
)


def test_wrapped_args_read_only_where_data_parallel_is_called(monkeypatch):
    from memlint.project import summary as summary_module

    asked: list[int] = []
    original = summary_module.wrapped_args

    def spy(node, body, calls):
        asked.append(node.lineno)
        return original(node, body, calls)

    monkeypatch.setattr(summary_module, "wrapped_args", spy)
    facts = summarise(ast.parse(_WRAPPED))
    assert asked == [10]  # ``wrapped``'s def, not ``plain``'s
    assert any(site.built for site in facts.calls if site.line == 13)


def _calls_and_attributes(found: list[ast.AST]) -> list[ast.AST]:
    return [n for n in found if n.__class__ in (ast.Call, ast.Attribute)]


_SIGNATURES = [
    "def f(a, b=g(1), *args, c: torch.Tensor = h(), d=None, **kw: t.Any) -> x.Y: pass",
    "def f(a: int, /, b: 'str' = 2, *, c=k.m(n.o())): pass",
    "def f(self, hidden: Optional[torch.Tensor] = None, mask: torch.LongTensor | None = None): pass",
    "def f(*, a, b=1, c: List[torch.nn.Module]): pass",
    "def f(): pass",
]


@pytest.mark.parametrize("source", _SIGNATURES + [s for _, s in _sources()])
def test_signature_parts_meet_the_calls_and_attributes_of_the_signature_in_order(source):
    """_unvisited reads a signature's annotations and defaults only: the
    calls and attributes it meets, and their order (move calls and
    save/load callees are kept in lists), are those of the whole
    ``arguments`` node's walk."""
    tree = ast.parse(textwrap.dedent(source))
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            whole = _calls_and_attributes(nodes(fn.args))
            parts = [
                n
                for part in _signature_parts(fn.args)
                if part is not None and part.__class__ not in (ast.Name, ast.Constant)
                for n in _calls_and_attributes(nodes(part))
            ]
            assert parts == whole


@pytest.mark.parametrize(
    "spelled",
    ["self", "super", "self.conv", "super().f", "x.y.z", "'a'.join", "f(self)", "self[0].w", "(a, self)", "3"],
)
def test_touches_without_a_walk_equals_the_walk(spelled):
    """method_moves._touches reads a name or a chain of attributes without
    a walk of its subtree: the same answer as the walk's."""
    value = ast.parse(spelled, mode="eval").body
    for names in ({"self"}, {"x"}, set()):
        walked = _root_is_super(value) or any(n.__class__ is ast.Name and n.id in names for n in nodes(value))
        assert _touches(value, names) == walked


def _root_is_super(value: ast.AST) -> bool:
    while isinstance(value, (ast.Attribute, ast.Subscript, ast.Call)):
        value = value.func if isinstance(value, ast.Call) else value.value
    return isinstance(value, ast.Name) and value.id == "super"
