"""Keyword dicts splatted into torch.load that may leave map_location out
(analysis/training/load_kwargs.py)."""

import libcst as cst
import pytest
from analysis_helpers import facts_of, find

from memlint.analysis.scope.plain_bindings import declared
from memlint.analysis.training.load_kwargs import splat_misses
from memlint.parse.tree import module_walks, tree_of

LOAD = """
import torch
def restore(model, path, cpu{params}):
    {body}
    model.load_state_dict(torch.load(path, **kwargs))
"""


def _misses(body: str, params: str = "") -> bool:
    facts = facts_of(LOAD.format(body=body, params=params))
    call = find(facts.module, "torch.load(path, **kwargs)", cst.Call)
    return splat_misses(call, "map_location", facts)


@pytest.mark.parametrize(
    "body, expected",
    [
        ("kwargs = {'map_location': 'cpu'} if cpu else {}", False),  # a conditional expression: unknown
        ("if cpu:\n        kwargs = {'map_location': 'cpu'}\n    else:\n        kwargs = {}", True),
        ("kwargs = {}", True),
        ("kwargs = {'weights_only': True}", True),
        ("kwargs = {'map_location': 'cpu'}", False),  # always passed
        (
            "if cpu:\n        kwargs = {'map_location': 'cpu'}\n    else:\n        kwargs = {'map_location': None}",
            False,
        ),
        ("kwargs = {}\n    kwargs['map_location'] = 'cpu'", False),  # written after it is built
        ("kwargs = {}\n    kwargs.update(extra)", False),  # updated from elsewhere
        ("kwargs = {**base}", False),  # another dict's keys
        ("kwargs = dict()", False),  # not a display
        ("global kwargs\n    kwargs = {}", False),  # a module global: another function may fill it
    ],
)
def test_splat_misses(body, expected):
    assert _misses(body) is expected


def test_a_parameter_is_the_callers_dict():
    assert _misses("pass", params=", **kwargs") is False
    assert _misses("pass", params=", kwargs=None") is False


def test_an_explicit_keyword_or_star_args_beside_it():
    facts = facts_of(
        """
import torch
def restore(model, path, args):
    kwargs = {}
    model.load_state_dict(torch.load(path, map_location="cpu", **kwargs))
    model.load_state_dict(torch.load(*args, **kwargs))
"""
    )
    first = find(facts.module, 'torch.load(path, map_location="cpu", **kwargs)', cst.Call)
    second = find(facts.module, "torch.load(*args, **kwargs)", cst.Call)
    assert splat_misses(first, "map_location", facts) is False
    assert splat_misses(second, "map_location", facts) is False


DECLARED = """
def restore(path):
    {body}
"""


@pytest.mark.parametrize(
    "body, expected",
    [
        ("global kwargs\n    kwargs = {}", True),
        ("nonlocal kwargs", True),
        ("if path:\n        global kwargs", True),  # in a block of its own body
        ("global other, kwargs", True),
        ("global other", False),
        ("kwargs = {}", False),
        ("def inner():\n        global kwargs", False),  # a nested function's own
        ("class Inner:\n        global kwargs", False),  # a class body's own
        ("def inner():\n        def deeper():\n            global kwargs", False),
        ("if path:\n        def inner():\n            nonlocal kwargs\n        global kwargs", True),
    ],
)
def test_declared_with_and_without_the_shared_index(body, expected):
    # The shared TreeIndex of a lint and the walk outside one agree.
    module = cst.parse_module(DECLARED.format(body=body))
    fn = module.body[0]
    assert declared(fn, "kwargs") is expected
    with module_walks(module):
        assert tree_of(fn) is not None
        assert declared(fn, "kwargs") is expected
