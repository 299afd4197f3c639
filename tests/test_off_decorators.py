"""Decorators of the project's own that run a function with grad off
(yolov5's ``@smart_inference_mode()``): project/off_decorators.py on the
``ast`` tree, analysis/autograd/off_decorators.py on libcst, grad_mode's
entry mode, the summary and view, and the CLI on a two-module project."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from memlint.analysis.autograd import off_decorators as cst_side
from memlint.analysis.autograd.grad_mode import GradMode
from memlint.analysis.facts import ModuleFacts
from memlint.analysis.scope.names import ImportTable
from memlint.project.summary import ModuleSummary, summarise

SHAPES = {
    # yolov5: a factory whose decorator picks by torch version; both branches turn grad off.
    "version_factory": (
        """\
        import torch
        def smart(torch_1_9=True):
            def decorate(fn):
                return (torch.inference_mode if torch_1_9 else torch.no_grad)()(fn)
            return decorate
        """,
        {"smart": "called"},
    ),
    "branches_factory": (
        """\
        import torch
        def smart(new=True):
            def decorate(fn):
                if new:
                    return torch.inference_mode()(fn)
                else:
                    return torch.no_grad()(fn)
            return decorate
        """,
        {"smart": "called"},
    ),
    "context_factory": (
        """\
        from torch import no_grad
        def frozen():
            return no_grad()
        """,
        {"frozen": "called"},
    ),
    "lambda_factory": (
        """\
        import torch
        def off():
            return lambda fn: torch.no_grad()(fn)
        """,
        {"off": "called"},
    ),
    "plain": (
        """\
        import torch
        def off(fn):
            return torch.inference_mode()(fn)
        """,
        {"off": "bare"},
    ),
    "bound": (
        """\
        import torch
        nograd = torch.no_grad()
        """,
        {"nograd": "bare"},
    ),
    # GwcNet: a nested wrapper that calls ``func`` only inside ``with torch.no_grad()``.
    "nograd_wrapper": (
        """\
        import functools
        import torch
        def make_nograd_func(func):
            @functools.wraps(func)
            def wrapper(*f_args, **f_kwargs):
                with torch.no_grad():
                    ret = func(*f_args, **f_kwargs)
                return ret
            return wrapper
        def off_factory(mode=True):
            def decorate(fn):
                def inner(*a):
                    with torch.inference_mode():
                        return fn(*a)
                return inner
            return decorate
        """,
        {"make_nograd_func": "bare", "off_factory": "called"},
    ),
    # The wrapper also calls ``func`` with grad on, hands it on, or turns grad back on: not one.
    "wrapper_not_off": (
        """\
        import torch
        def half(func):
            def wrapper(*a):
                with torch.no_grad():
                    func(*a)
                return func(*a)
            return wrapper
        def handed(func):
            def wrapper(*a):
                with torch.no_grad():
                    return run(func, *a)
            return wrapper
        def back_on(func):
            def wrapper(*a):
                with torch.no_grad():
                    with torch.enable_grad():
                        return func(*a)
            return wrapper
        def nested(func):
            def wrapper(*a):
                with torch.no_grad():
                    return (lambda: func(*a))()
            return wrapper
        def shadowed(func):
            def wrapper(func):
                with torch.no_grad():
                    return func()
            return wrapper
        def no_call(func):
            def wrapper(*a):
                with torch.no_grad():
                    return 1
            return wrapper
        """,
        {},
    ),
    # May hand ``fn`` back unchanged: unknown, not listed.
    "may_return_fn": (
        """\
        import torch
        def maybe(enabled=True):
            def decorate(fn):
                if enabled:
                    return torch.no_grad()(fn)
                return fn
            return decorate
        """,
        {},
    ),
    "falls_off_its_end": (
        """\
        import torch
        def off(fn):
            if fn:
                return torch.no_grad()(fn)
        """,
        {},
    ),
    "one_branch_on": (
        """\
        import torch
        def smart(flag=True):
            def decorate(fn):
                return (torch.inference_mode if flag else torch.enable_grad)()(fn)
            return decorate
        """,
        {},
    ),
    "inference_mode_false": (
        """\
        import torch
        def off(fn):
            return torch.inference_mode(False)(fn)
        """,
        {},
    ),
    "not_torch": (
        """\
        import mylib
        def off(fn):
            return mylib.no_grad()(fn)
        """,
        {},
    ),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_both_readings_agree(shape):
    source, expected = SHAPES[shape]
    source = textwrap.dedent(source)
    module = cst.parse_module(source)
    assert cst_side.off_decorators(module, ImportTable(module)) == expected
    assert summarise(ast.parse(source)).off_decorators == expected


def _entry(source: str, name: str, view=None) -> GradMode:
    facts = ModuleFacts(MetadataWrapper(cst.parse_module(textwrap.dedent(source))), project=view)
    fn = next(f for f in facts.calls.functions if f.name.value == name)
    return facts.grad_mode.entry_mode(fn)


def test_a_function_under_the_modules_own_decorator_starts_with_grad_off():
    source = textwrap.dedent(SHAPES["version_factory"][0]) + "@smart()\ndef run(model, x):\n    return model(x)\n"
    assert _entry(source, "run") is GradMode.DISABLED
    # Used as it is not made for (``@smart`` makes ``run`` the inner decorator): no mode.
    bare = textwrap.dedent(SHAPES["version_factory"][0]) + "@smart\ndef run(model, x):\n    return model(x)\n"
    assert _entry(bare, "run") is GradMode.ENABLED


def test_an_imported_one_is_unknown_and_only_with_the_view(tmp_path):
    from memlint.project.view import ProjectView

    source = "from utils import smart\n@smart()\ndef run(model, x):\n    return model(x)\n"
    assert _entry(source, "run") is GradMode.ENABLED
    view = ProjectView(root=str(tmp_path), path="export.py", off_decorators=(("smart", "called"),))
    assert _entry(source, "run", view) is GradMode.UNKNOWN


def test_the_summary_round_trips_and_marks_the_calls_it_makes_off():
    source = (
        textwrap.dedent(SHAPES["plain"][0])
        + "from engine import evaluate\n@off\ndef run(model, loader):\n    return evaluate(model, loader)\n"
    )
    summary = summarise(ast.parse(source))
    assert ModuleSummary.from_json(summary.to_json()).off_decorators == {"off": "bare"}
    (site,) = [c for c in summary.calls if c.callee.endswith("evaluate")]
    assert site.grad == "off"


EXPORT = """\
import torch

from utils.torch_utils import smart_inference_mode


@smart_inference_mode()
def run(model, im):
    model.eval()
    for _ in range(2):
        y = model(im)
    return y
"""


def test_cli_on_a_two_module_project(tmp_path, run_memlint):
    (tmp_path / ".git").mkdir()
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("")
    (tmp_path / "utils" / "torch_utils.py").write_text(
        textwrap.dedent(SHAPES["version_factory"][0]).replace("smart", "smart_inference_mode")
    )
    (tmp_path / "export.py").write_text(EXPORT)
    benchmarks = (
        "import torch\n\nimport export\n\n\ndef main(model):\n    return export.run(model, torch.zeros(1, 3, 8, 8))\n"
    )
    (tmp_path / "benchmarks.py").write_text(benchmarks)
    for args in ((".",), ("export.py",)):  # the tree, and the file alone (pre-commit)
        proc = run_memlint("check", "--no-cache", "--select", "MEM2", *args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    # A decorator that may hand the function back unchanged proves nothing.
    maybe = textwrap.dedent(SHAPES["may_return_fn"][0]).replace("maybe", "smart_inference_mode")
    (tmp_path / "utils" / "torch_utils.py").write_text(maybe)
    proc = run_memlint("check", "--no-cache", "--select", "MEM2", ".")
    assert proc.returncode == 1 and "export.py:9:5: MEM201" in proc.stdout, proc.stdout + proc.stderr


GWCNET_UTILS = """\
import torch


def make_nograd_func(func):
    def wrapper(*f_args, **f_kwargs):
        with torch.no_grad():
            ret = func(*f_args, **f_kwargs)
        return ret

    return wrapper
"""

GWCNET_MAIN = """\
import torch.nn as nn

from utils.experiment import make_nograd_func

model = nn.Linear(4, 4).cuda()


@make_nograd_func
def test_sample(sample):
    model.eval()
    return model(sample)


def test(loader):
    for sample in loader:
        test_sample(sample)
"""


def test_cli_an_imported_nograd_wrapper(tmp_path, run_memlint):
    """GwcNet: ``make_nograd_func`` in utils/experiment.py runs the decorated
    evaluation under ``torch.no_grad()``; a wrapper that calls it with grad on
    as well is no grad-off decorator and the evaluation is reported."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("")
    (tmp_path / "utils" / "experiment.py").write_text(GWCNET_UTILS)
    (tmp_path / "main.py").write_text(GWCNET_MAIN)
    for args in ((".",), ("main.py",)):
        proc = run_memlint("check", "--no-cache", "--select", "MEM2", *args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    leaky = GWCNET_UTILS.replace("        return ret\n", "        return func(*f_args, **f_kwargs)\n")
    (tmp_path / "utils" / "experiment.py").write_text(leaky)
    proc = run_memlint("check", "--no-cache", "--select", "MEM2", ".")
    assert proc.returncode == 1 and "main.py:9:1: MEM201" in proc.stdout, proc.stdout + proc.stderr
