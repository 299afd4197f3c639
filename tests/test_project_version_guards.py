"""MEM802 under a branch only an old torch takes, decided by a function of
another module that compares ``torch.__version__`` (FCOS's
``is_pytorch_1_1_0_or_later``): stepping the scheduler first was the
documented order before 1.1, so that step is not reported; the version
functions themselves (project/version_tests.py)."""

from __future__ import annotations

import ast

import pytest
from project_helpers import finding_lines, write_project

from memlint.project.version_tests import runs_only_before, version_tests

_COMM = """\
    import torch

    def is_pytorch_1_1_0_or_later():
        return [int(_) for _ in torch.__version__.split(".")[:3]] >= [1, 1, 0]
"""

_TRAINER = """\
    import torch
    from comm import is_pytorch_1_1_0_or_later

    def do_train(model, loader, optimizer, scheduler):
        pytorch_1_1_0_or_later = is_pytorch_1_1_0_or_later()
        for x, y in loader:
            if not pytorch_1_1_0_or_later:
                scheduler.step()
            loss = model(x, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if pytorch_1_1_0_or_later:
                scheduler.step()

    def build(model, params):
        optimizer = torch.optim.SGD(params, lr=0.1)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10)
        do_train(model, [], optimizer, scheduler)
"""


def _lint(tmp_path, trainer: str = _TRAINER, comm: str = _COMM) -> list[int]:
    write_project(tmp_path, {"setup.py": "", "comm.py": comm, "trainer.py": trainer})
    return finding_lines(tmp_path / "trainer.py", "MEM802")


def test_a_step_only_torch_before_1_1_takes_is_silent(tmp_path):
    assert _lint(tmp_path) == []


def test_the_call_itself_as_the_test_is_silent(tmp_path):
    trainer = _TRAINER.replace("if not pytorch_1_1_0_or_later:", "if not is_pytorch_1_1_0_or_later():")
    assert _lint(tmp_path, trainer) == []


def test_the_else_of_a_positive_test_is_silent(tmp_path):
    trainer = _TRAINER.replace(
        "if not pytorch_1_1_0_or_later:\n            scheduler.step()",
        "if pytorch_1_1_0_or_later:\n            pass\n        else:\n            scheduler.step()",
    )
    assert _lint(tmp_path, trainer) == []


def test_an_unguarded_early_step_is_reported(tmp_path):
    trainer = _TRAINER.replace("if not pytorch_1_1_0_or_later:", "if x is not None:")
    assert _lint(tmp_path, trainer) == [8]


def test_a_guard_from_a_later_version_is_no_proof(tmp_path):
    # Torch 1.1 to 1.2 take ``not >= 1.3``: stepping first is wrong there.
    assert _lint(tmp_path, comm=_COMM.replace("[1, 1, 0]", "[1, 3, 0]")) == [8]


def test_a_flag_rebound_in_the_function_is_no_proof(tmp_path):
    trainer = _TRAINER.replace(
        "        for x, y in loader:\n",
        "        for x, y in loader:\n            pytorch_1_1_0_or_later |= x is None\n",
        1,
    )
    assert _lint(tmp_path, trainer) == [9]


def test_a_flag_handed_in_as_a_parameter_is_no_proof(tmp_path):
    trainer = _TRAINER.replace(
        "def do_train(model, loader, optimizer, scheduler):\n        pytorch_1_1_0_or_later = is_pytorch_1_1_0_or_later()\n",
        "def do_train(model, loader, optimizer, scheduler, pytorch_1_1_0_or_later):\n        pass\n",
    )
    assert _lint(tmp_path, trainer) == [8]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('[int(_) for _ in torch.__version__.split(".")[:3]] >= [1, 1, 0]', ">=1.1.0"),
        ('[int(x) for x in torch.__version__.split(".")] < [1, 1]', "<1.1"),
        ('LooseVersion(torch.__version__) >= LooseVersion("1.1.0")', ">=1.1.0"),
        ('version.parse(torch.__version__) >= version.parse("1.1")', ">=1.1"),
    ],
)
def test_version_comparisons_are_read(body, expected):
    tree = ast.parse(f"import torch\ndef f():\n    return {body}\n")
    assert version_tests(tree) == {"f": expected}


@pytest.mark.parametrize(
    "body",
    [
        'torch.__version__ >= "1.1.0"',  # string order: "1.10" < "1.9"
        '[int(_) for _ in torch.__version__.split(".")[1:]] >= [1, 0]',  # not from the major
        '[int(_) for _ in other.__version__.split(".")] >= [1, 1, 0]',
        "LooseVersion(torch.__version__) >= LooseVersion(minimum)",
        '[int(_) for _ in torch.__version__.split(".")] >= (1, 1, 0)',  # list against tuple: TypeError
        '[int(_) for _ in torch.__version__.split(".")] == [1, 1, 0]',
    ],
)
def test_other_spellings_say_nothing(body):
    assert version_tests(ast.parse(f"import torch\ndef f():\n    return {body}\n")) == {}


def test_a_function_with_parameters_or_more_statements_says_nothing():
    src = "import torch\ndef f(v):\n    return LooseVersion(v) >= LooseVersion('1.1')\ndef g():\n    x = 1\n    return LooseVersion(torch.__version__) >= LooseVersion('1.1')\n"
    assert version_tests(ast.parse(src)) == {}


def test_runs_only_before():
    assert runs_only_before(">=1.1.0", True, (1, 1, 0))
    assert runs_only_before("<1.0", False, (1, 1, 0))
    assert not runs_only_before(">=1.1.0", False, (1, 1, 0))
    assert not runs_only_before(">=1.2", True, (1, 1, 0))
