"""MEM201: a function named for evaluation with two separate evaluation
loops (UGATIT's ``test``: the testA loop, then the testB loop) reports each
loop; both findings carry the one decorator fix, applied once."""

from __future__ import annotations

import textwrap

from memlint.lint.engine import lint_text
from memlint.rule.registry import all_rules

_TWO = """\
import torch


def test(model, loader_a, loader_b, save):
    model.eval()
    for n, (x, _) in enumerate(loader_a):
        save("a", n, model(x).cpu().numpy())
    for n, (x, _) in enumerate(loader_b):
        save("b", n, model(x).cpu().numpy())
"""


def _mem201(text: str):
    return [f for f in lint_text(textwrap.dedent(text), "t.py", all_rules()) if f.code == "MEM201"]


def test_each_separate_loop_is_reported_with_the_one_decorator_fix():
    found = _mem201(_TWO)
    assert [f.line for f in found] == [6, 8]
    assert found[0].fix is found[1].fix  # one edit: the fixer renders it once for both


def test_a_nested_loop_is_not_a_second_finding():
    nested = _TWO.replace(
        '    for n, (x, _) in enumerate(loader_b):\n        save("b", n, model(x).cpu().numpy())\n',
        "",
    ).replace(
        '        save("a", n, model(x).cpu().numpy())\n',
        '        for crop in x.unbind(1):\n            save("a", n, model(crop).cpu().numpy())\n',
    )
    assert [f.line for f in _mem201(nested)] == [6]


def test_a_second_loop_that_trains_is_not_reported():
    trains = _TWO.replace('        save("b", n, model(x).cpu().numpy())\n', "        model(x).sum().backward()\n")
    found = _mem201(trains)
    assert [f.line for f in found] == [6]  # the first loop only, wrapped: the function trains
    assert found[0].fix is not None and "Run the loop" in found[0].fix.title
