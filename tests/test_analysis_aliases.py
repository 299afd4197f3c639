"""analysis/scope/aliases.py: names that may hold the same module."""

import textwrap

import libcst as cst

from memlint.analysis.scope.aliases import alias_pairs, related


def pairs(src: str):
    return alias_pairs(cst.parse_module(textwrap.dedent(src)))


def test_attribute_alias_both_ways():
    p = pairs("model_without_ddp = model.module\n")
    assert related("model_without_ddp", "model", p)
    assert related("model", "model_without_ddp", p)


def test_parts_are_related_without_aliases():
    assert related("model.backbone", "model", frozenset())
    assert related("model", "model.backbone", frozenset())


def test_part_of_an_alias():
    p = pairs("m = model\n")
    assert related("m.head", "model", p)


def test_unrelated_names():
    p = pairs("x = y\nopt = make_optimizer(model)\nmodelA = build()\n")
    assert not related("model", "modelA", p)
    assert not related("teacher", "student", p)
    assert not related("opt", "model", p)
    assert not related("model", "model_ema", p)
