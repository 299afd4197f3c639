"""integer_names.py: names a function binds only to integers."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from memlint.analysis.scope.integer_names import IntegerNames


def _holds(source: str, name: str) -> bool:
    module = cst.parse_module(textwrap.dedent(source))
    fn = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    return IntegerNames().holds_integer(fn, name)


@pytest.mark.parametrize(
    "body",
    [
        "H = 64",
        "H = int(size[0])",
        "H = len(rows) * 2 - 1",
        "H, W = None, None\n    H, W = size\n    H, W = int(H), int(W)",
        "H = None\n    if big:\n        H = 128",
    ],
)
def test_integers(body: str) -> None:
    assert _holds(f"def main(size, rows, big):\n    {body}\n", "H")


@pytest.mark.parametrize(
    "body",
    [
        "H, W = size",  # only unpacked: never shown to be an integer
        "H = None",
        "H = img.shape[0]",
        "H = 64\n    H += 1",
        "H = 64\n    for H in range(3):\n        pass",
        "H = 64\n    with open(p) as H:\n        pass",
        "H = 64\n    H = [H]",
        "H = 64.0",
        "H = 64\n    (H := size)",
    ],
)
def test_not_integers(body: str) -> None:
    assert not _holds(f"def main(size, img, p):\n    {body}\n", "H")


def test_a_parameter_is_not_known() -> None:
    assert not _holds("def main(H):\n    H = int(H)\n", "H")


def test_nested_scopes_are_their_own() -> None:
    source = """
        def main(x):
            H = 8
            def inner():
                H = x
            return inner
    """
    assert _holds(source, "H")
