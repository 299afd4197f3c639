"""MEM802 leaves unit tests of a scheduler alone (reid-strong-baseline's
``tests/lr_scheduler_test.py`` steps its warm-up scheduler fifty times to
print the rates): a ``test_*`` function of a ``test_*.py``/``*_test.py``
file checks behaviour, it trains nothing."""

from __future__ import annotations

import pytest

from memlint.lint.engine import lint_text
from memlint.rule.registry import all_rules

_SOURCE = """\
import unittest

import torch
from torch import nn


class SchedulerTest(unittest.TestCase):
    def test_warmup(self):
        net = nn.Linear(10, 10)
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 20)
        for i in range(50):
            scheduler.step()
            print(i, scheduler.get_last_lr()[0])
            optimizer.step()
"""


def _lines(source: str, path: str) -> list[int]:
    rules = [r for r in all_rules() if r.code == "MEM802"]
    return [f.line for f in lint_text(source, path, rules)]


@pytest.mark.parametrize("path", ["tests/lr_scheduler_test.py", "tests/test_scheduler.py"])
def test_a_test_function_of_a_test_file_is_silent(path):
    assert _lines(_SOURCE, path) == []


def test_the_same_loop_outside_a_test_file_is_reported():
    assert _lines(_SOURCE, "train.py") == [13]


def test_a_helper_of_a_test_file_that_is_no_test_is_reported():
    assert _lines(_SOURCE.replace("def test_warmup", "def run_warmup"), "tests/test_scheduler.py") == [13]
