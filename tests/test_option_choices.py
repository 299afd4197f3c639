"""option_choices.py: what a module's own command-line option may hold when it names objects."""

from __future__ import annotations

import textwrap

import libcst as cst

from memlint.analysis.scope.option_choices import OptionChoices
from memlint.analysis.scope.options import ModuleOptions


def _values(source: str, spelled: str) -> list[str] | None:
    module = cst.parse_module(textwrap.dedent(source))
    expr = cst.parse_expression(spelled)
    found = OptionChoices(ModuleOptions(module)).values(expr)
    return None if found is None else [module.code_for_node(v) for v in found]


_LOOKUP = """
    import argparse
    import nets

    parser = argparse.ArgumentParser()
    parser.add_argument("--base", choices=dict(small=nets.Small, large=nets.Large), default=nets.Large, action=A)
    parser.add_argument("--head", choices={"a": nets.HeadA}, default=nets.HeadA)
    parser.add_argument("--kind", choices=[nets.Small, nets.Large])
    parser.add_argument("--lr", type=float, default=0.1)
    opts = parser.parse_args()
"""


def test_dict_call_choices_and_default() -> None:
    assert _values(_LOOKUP, "opts.base") == ["nets.Small", "nets.Large", "nets.Large"]


def test_dict_literal_and_list_choices() -> None:
    assert _values(_LOOKUP, "opts.head") == ["nets.HeadA", "nets.HeadA"]
    assert _values(_LOOKUP, "opts.kind") == ["nets.Small", "nets.Large"]


def test_no_choices_or_a_converter_says_nothing() -> None:
    assert _values(_LOOKUP, "opts.lr") is None
    source = _LOOKUP.replace("action=A)\n", "action=A, type=pick)\n")
    assert _values(source, "opts.base") is None


def test_only_a_namespace_parsed_here() -> None:
    assert _values(_LOOKUP, "other.base") is None
    assert _values(_LOOKUP.replace("opts = parser.parse_args()", "opts = load()"), "opts.base") is None


def test_declared_twice_or_assigned_says_nothing() -> None:
    twice = _LOOKUP + '    parser.add_argument("--base", choices=[nets.Other])\n'
    assert _values(twice, "opts.base") is None
    assigned = _LOOKUP + "    opts.base = nets.Other\n"
    assert _values(assigned, "opts.base") is None


def test_choices_not_written_out_say_nothing() -> None:
    spread = _LOOKUP.replace("choices=dict(small=nets.Small, large=nets.Large)", "choices=dict(TABLE)")
    assert _values(spread, "opts.base") is None
    starred = _LOOKUP.replace("choices=[nets.Small, nets.Large]", "choices=[*ALL]")
    assert _values(starred, "opts.kind") is None
