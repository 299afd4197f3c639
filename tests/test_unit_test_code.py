"""One convention for unit tests (analysis/training/test_code.py), read by
MEM201 and MEM802: a ``test_*`` function of a ``test_*.py`` / ``*_test.py``
file checks behaviour; it neither trains nor evaluates."""

from __future__ import annotations

import libcst as cst
import pytest

from memlint.analysis.scope.callgraph import CallGraph
from memlint.analysis.training.test_code import is_test_file, is_test_function, is_unit_test
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


_EVAL_STEP = """\
import torch


def test_one_epoch(device, model, loader):
    model.eval()
    errors = []
    for x, y in loader:
        errors.append((model(x.to(device)) - y).abs().mean().item())
    return errors


def test(args, model, loader):
    print(test_one_epoch(args.device, model, loader))
"""

_RUN_BY_HAND = """\
import torch


def test_accuracy(model, loader):
    model.eval()
    for x, y in loader:
        assert model(x).shape == y.shape


def test_all():
    test_accuracy(Net(), make_loader())


if __name__ == "__main__":
    test_accuracy(Net(), make_loader())
"""


def _mem201_of(source: str, path: str) -> list[int]:
    rules = [r for r in all_rules() if r.code == "MEM201"]
    return [f.line for f in lint_text(source, path, rules)]


def test_a_test_named_step_an_evaluation_script_calls_is_no_unit_test():
    # ``test_pcrnet.py``: the script's own ``test()`` calls ``test_one_epoch``.
    module = cst.parse_module(_EVAL_STEP)
    calls = CallGraph(module)
    step, runner = module.body[1], module.body[2]
    assert isinstance(step, cst.FunctionDef) and isinstance(runner, cst.FunctionDef)
    assert is_test_function(step, "test_pcrnet.py")
    assert not is_unit_test(step, "test_pcrnet.py", calls)
    assert _mem201_of(_EVAL_STEP, "test_pcrnet.py") == [7]


def test_a_test_called_by_another_test_or_by_hand_stays_a_unit_test():
    module = cst.parse_module(_RUN_BY_HAND)
    fn = module.body[1]
    assert isinstance(fn, cst.FunctionDef)
    assert is_unit_test(fn, "tests/test_model.py", CallGraph(module))
    assert _mem201_of(_RUN_BY_HAND, "tests/test_model.py") == []
