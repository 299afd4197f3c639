"""One convention for unit tests (analysis/training/test_code.py), read by
MEM201 and MEM802: a ``test_*`` function of a ``test_*.py`` / ``*_test.py``
file checks behaviour; it neither trains nor evaluates."""

from __future__ import annotations

import libcst as cst
import pytest

from memlint.analysis.training.test_code import is_test_file, is_test_function
from memlint.lint.engine import lint_text
from memlint.rule.registry import all_rules

_EVAL = """\
import torch


def test_accuracy(model, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
"""


@pytest.mark.parametrize(
    ("path", "expected"),
    [("tests/test_model.py", True), ("pkg/model_test.py", True), ("train.py", False), ("tests/conftest.py", False)],
)
def test_test_files_by_pytest_discovery_names(path, expected):
    assert is_test_file(path) is expected


def test_a_test_function_needs_both_names():
    fn = cst.parse_module(_EVAL).body[1]
    assert isinstance(fn, cst.FunctionDef)
    assert is_test_function(fn, "tests/test_model.py")
    assert not is_test_function(fn, "evaluate.py")
    assert not is_test_function(fn.with_changes(name=cst.Name("accuracy")), "tests/test_model.py")


def _mem201(path: str) -> list[int]:
    rules = [r for r in all_rules() if r.code == "MEM201"]
    return [f.line for f in lint_text(_EVAL, path, rules)]


def test_mem201_leaves_a_test_function_of_a_test_file_alone():
    assert _mem201("tests/test_model.py") == []
    assert _mem201("evaluate.py") != []


_HALF_STEP = """\
import torch
import torch.optim as optim

bn = torch.nn.BatchNorm2d(10).cuda()
if args.fp16:
    bn.half()
out = bn(inp)
out.backward(grad)
opt = optim.SGD(bn.parameters(), lr=1.0)
opt.step()
"""


def _mem507(path: str) -> list[int]:
    rules = [r for r in all_rules() if r.code == "MEM507"]
    return [f.line for f in lint_text(_HALF_STEP, path, rules)]


@pytest.mark.parametrize("path", ["apex/tests/distributed/test_groups.py", "tests/two_gpu_unit_test.py"])
def test_mem507_leaves_a_test_module_run_as_a_script_alone(path):
    assert _mem507(path) == []


@pytest.mark.parametrize("path", ["train.py", "tests/train_fp16.py"])
def test_mem507_reports_a_script_not_named_as_a_test(path):
    assert _mem507(path) == [6]
