"""Argument-list edits keep the call's layout, commas and comments."""

import libcst as cst
import pytest

from memlint.fix.call_args import (
    append_keyword,
    has_star_kwargs,
    keyword_arg,
    positional_to_keywords,
    prepend_positional,
    remove_arg,
)


def _edit(source: str, edit) -> str:
    module = cst.parse_module(source)
    stmt = module.body[0]
    call = stmt.body[0].value
    new = module.with_changes(body=[stmt.with_changes(body=[stmt.body[0].with_changes(value=edit(call))])])
    cst.parse_module(new.code)  # still Python
    return new.code


FALSE = cst.Name("False")


@pytest.mark.parametrize(
    "source, expected",
    [
        ("f()\n", "f(k=False)\n"),
        ("f(a)\n", "f(a, k=False)\n"),
        ("f(a, b)\n", "f(a, b, k=False)\n"),
        ("f(a, b,)\n", "f(a, b, k=False,)\n"),
        ("f(a, *rest)\n", "f(a, *rest, k=False)\n"),
        ("f(\n    a,\n    b,\n)\n", "f(\n    a,\n    b,\n    k=False,\n)\n"),
        ("f(\n    a,\n    b\n)\n", "f(\n    a,\n    b,\n    k=False\n)\n"),
        ("f(\n    a, b\n)\n", "f(\n    a, b, k=False\n)\n"),
        ("f(\n    a,\n)\n", "f(\n    a,\n    k=False,\n)\n"),
        ("f(a,\n  b)\n", "f(a,\n  b,\n  k=False)\n"),
        ("f(\n    a,\n    b,  # why\n)\n", "f(\n    a,\n    b,  # why\n    k=False,\n)\n"),
        ("f(\n    a,\n    b  # why\n)\n", "f(\n    a,\n    b,  # why\n    k=False\n)\n"),
        ("f(a, b  # why\n)\n", "f(a, b, k=False  # why\n)\n"),
    ],
)
def test_append_keyword(source, expected):
    assert _edit(source, lambda c: append_keyword(c, "k", FALSE)) == expected


@pytest.mark.parametrize(
    "source, expected",
    [
        ("f()\n", 'f("cuda")\n'),
        ("f(a)\n", 'f("cuda", a)\n'),
        ("f(a, b)\n", 'f("cuda", a, b)\n'),
        ("f(\n    a,\n)\n", 'f(\n    "cuda",\n    a,\n)\n'),
        ("f(\n    a,\n    b,\n)\n", 'f(\n    "cuda",\n    a,\n    b,\n)\n'),
        ("f(  # note\n    a,\n)\n", 'f(  # note\n    "cuda",\n    a,\n)\n'),
    ],
)
def test_prepend_positional(source, expected):
    assert _edit(source, lambda c: prepend_positional(c, cst.SimpleString('"cuda"'))) == expected


def _remove_k(call):
    return remove_arg(call, keyword_arg(call, "k"))


@pytest.mark.parametrize(
    "source, expected",
    [
        ("f(k=1)\n", "f()\n"),
        ("f(\n    k=1,\n)\n", "f()\n"),
        ("f(a, k=1)\n", "f(a)\n"),
        ("f(a, k=1, b=2)\n", "f(a, b=2)\n"),
        ("f(k=1, b=2)\n", "f(b=2)\n"),
        ("f(a, k=1,)\n", "f(a,)\n"),
        ("f(a,\n  k=1)\n", "f(a)\n"),
        ("f(\n    a,\n    k=1,\n)\n", "f(\n    a,\n)\n"),
        ("f(\n    a,\n    k=1\n)\n", "f(\n    a\n)\n"),
        ("f(\n    a,\n    k=1,  # noisy\n    b=2,\n)\n", "f(\n    a,\n    b=2,\n)\n"),
        ("f(\n    a,  # keep\n    k=1,\n)\n", "f(\n    a,  # keep\n)\n"),
        ("f(\n    a,  # keep\n    k=1\n)\n", "f(\n    a,  # keep\n)\n"),
        ("f(a,  # keep\n  k=1)\n", "f(a,  # keep\n  )\n"),
    ],
)
def test_remove_arg(source, expected):
    assert _edit(source, _remove_k) == expected


def test_positional_to_keywords():
    assert _edit("f(a, b, c=1)\n", lambda c: positional_to_keywords(c, ["x", "y"])) == "f(x=a, y=b, c=1)\n"
    call = cst.parse_expression("f(a, b, c)")
    assert positional_to_keywords(call, ["x", "y"]) is None
    assert positional_to_keywords(cst.parse_expression("f(*a)"), ["x"]) is None


def test_star_kwargs():
    assert has_star_kwargs(cst.parse_expression("f(a, **kw)"))
    assert not has_star_kwargs(cst.parse_expression("f(a, *kw)"))
