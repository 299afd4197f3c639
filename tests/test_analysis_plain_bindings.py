"""A local name whose every binding is a plain assignment
(analysis/scope/plain_bindings.py)."""

import libcst as cst
import pytest
from analysis_helpers import facts_of, find

from memlint.analysis.scope.plain_bindings import declared, plain_values

SOURCE = """
def restore(path{params}):
    {body}
    return use(opts)
"""


def _values(body: str, params: str = "") -> list[str] | None:
    facts = facts_of(SOURCE.format(body=body, params=params))
    read = find(facts.module, "use(opts)", cst.Call).args[0].value
    scope = facts.loops.scope_of(read)
    values = plain_values(read, scope, facts)
    return None if values is None else [facts.module.code_for_node(v) for v in values]


@pytest.mark.parametrize(
    "body, expected",
    [
        ("opts = {}", ["{}"]),
        ("if path:\n        opts = 1\n    else:\n        opts = None", ["1", "None"]),
        ("opts = a if path else b", ["a if path else b"]),
        ("opts, other = 1, 2", None),  # a tuple target
        ("opts = other = {}", None),  # two targets
        ("opts = {}\n    opts += extra", None),  # augmented
        ("opts: dict = {}", None),  # annotated
        ("for opts in path:\n        pass", None),  # a loop target
        ("with open(path) as opts:\n        pass", None),
        ("opts = {}\n    for opts in path:\n        pass", None),  # one plain binding is not enough
        ("global opts\n    opts = {}", None),  # another function may set it
        ("pass", None),  # no binding here
    ],
)
def test_plain_values(body, expected):
    assert _values(body) == expected


def test_a_parameter_is_the_callers():
    assert _values("opts = {}", params=", opts=None") is None


def test_nonlocal():
    facts = facts_of(
        """
def outer():
    opts = {}
    def inner():
        nonlocal opts
        opts = {}
        return use(opts)
"""
    )
    read = find(facts.module, "use(opts)", cst.Call).args[0].value
    scope = facts.loops.scope_of(read)
    assert isinstance(scope, cst.FunctionDef) and scope.name.value == "inner"
    assert declared(scope, "opts")
    assert plain_values(read, scope, facts) is None


def test_declared_ignores_nested_scopes():
    module = cst.parse_module("def f():\n    def g():\n        global opts\n    opts = 1\n")
    fn = module.body[0]
    assert isinstance(fn, cst.FunctionDef)
    assert not declared(fn, "opts")
    assert not declared(fn, "other")
