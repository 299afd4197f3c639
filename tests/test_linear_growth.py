"""memlint's work grows linearly with the length of a file (issue 20).

Not timed: the work is counted, so the test means the same on any machine.
Two counters, on the generated files of bench/linear_growth.py (one long
function, a long module-level script, many classes):

- every Python and C function call made while linting (``sys.setprofile``):
  a pass that rescans the statements before each statement makes a call per
  statement rescanned, so it shows up as a quadratic count;
- the analysis' own work units (``budget.ticks``: nodes walked, statements
  the history walk visits).

Both must grow with an exponent of at most 1.1 from 200 to 800 statements
(quadratic is 2.0; the code before issue 20 gave 1.57 for the function and
1.20 for the module script on the first counter).
"""

import importlib.util
import math
import sys
from pathlib import Path

import pytest

from memlint.lint.engine import lint
from memlint.parse import budget
from memlint.rule.registry import select_rules

_spec = importlib.util.spec_from_file_location(
    "linear_growth", Path(__file__).resolve().parent.parent / "bench" / "linear_growth.py"
)
linear_growth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(linear_growth)

RULES = select_rules(None, [], [])
SMALL, LARGE = 200, 800
MAX_EXPONENT = 1.1


def work(text):
    """(calls made, analysis ticks) while linting ``text`` with every rule."""
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        if event == "call" or event == "c_call":
            calls += 1

    ticks = budget.ticks()
    sys.setprofile(count)
    try:
        lint(text, "generated.py", RULES)
    finally:
        sys.setprofile(None)
    return calls, budget.ticks() - ticks


def exponent(small, large):
    return math.log(large / small) / math.log(LARGE / SMALL)


@pytest.fixture(scope="module", autouse=True)
def warm():
    lint(linear_growth.function_body(20), "warm.py", RULES)  # first-use caches of libcst and the rules


@pytest.mark.parametrize("shape", sorted(linear_growth.SHAPES))
def test_work_grows_linearly(shape):
    make = linear_growth.SHAPES[shape]
    (calls_small, ticks_small), (calls_large, ticks_large) = work(make(SMALL)), work(make(LARGE))
    assert exponent(calls_small, calls_large) <= MAX_EXPONENT, (calls_small, calls_large)
    assert exponent(ticks_small, ticks_large) <= MAX_EXPONENT, (ticks_small, ticks_large)


def test_generated_files_exercise_the_analyses():
    """The shapes hold what the analyses work on: a training loop (history,
    MEM101 fires), branches, loops and comprehensions in the long part."""
    text = linear_growth.function_body(SMALL)
    assert text.count("\n    for ") > SMALL // 20 and text.count("\n    if ") > SMALL // 20
    assert "MEM101" in {f.code for f in lint(text, "generated.py", RULES)[0]}
