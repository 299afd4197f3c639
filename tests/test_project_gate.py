"""The gate asked again with the project's view (gate/project_gate.py): a
file whose MEM202 gate passed only for a call that may build a project model
class is settled without libcst when the view makes none of its callees a
model class, and its findings are those of a run without the re-gate."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import memlint.run.runner as runner
from memlint.run.results import Settings

NETS = """
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        return self.fc(x)


class Plain:
    def __call__(self, x):
        return x
"""

# A factory of this module returns a class of another: a model only if nets.py says so.
SAMPLE = """
import torch
from nets import {cls}


def build():
    return {cls}()


def sample(loader):
    model = build()
    with torch.no_grad():
        for x in loader:
            model(x)
"""

# The same spelled through the module, and a factory of a factory.
SAMPLE_DOTTED = """
import torch
import nets


def make():
    return nets.{cls}()


def build():
    return make()


def sample(loader):
    model = build()
    with torch.no_grad():
        for x in loader:
            model(x)
"""

# The model class arrives by a relative import inside a package.
SAMPLE_RELATIVE = """
import torch
from .nets import {cls}


def build():
    return {cls}()


def sample(loader):
    model = build()
    with torch.no_grad():
        for x in loader:
            model(x)
"""


def _project(tmp_path: Path, sample: str) -> list[str]:
    """nets.py, and a sampler of each of its classes: ``model.py`` (an
    ``nn.Module``) and ``plain.py`` (a plain class)."""
    (tmp_path / "pyproject.toml").write_text("")
    folder = tmp_path / "pkg" if sample is SAMPLE_RELATIVE else tmp_path
    folder.mkdir(exist_ok=True)
    if folder != tmp_path:
        (folder / "__init__.py").write_text("")
    (folder / "nets.py").write_text(textwrap.dedent(NETS))
    (folder / "model.py").write_text(textwrap.dedent(sample.format(cls="Net")))
    (folder / "plain.py").write_text(textwrap.dedent(sample.format(cls="Plain")))
    return sorted(str(p) for p in tmp_path.rglob("*.py"))


def _run(files: list[str], root: Path) -> list[tuple]:
    reports = runner.run(files, Settings(root=str(root)), jobs=1)
    return [(r.path, [(f.code, f.line, f.column, f.message) for f in r.findings]) for r in reports]


def _second_passes(monkeypatch) -> list[str]:
    parsed: list[str] = []
    real = runner._check_settled

    def counted(text, path, *args, **kwargs):
        parsed.append(path)
        return real(text, path, *args, **kwargs)

    monkeypatch.setattr(runner, "_check_settled", counted)
    return parsed


# A plain class binding ``self.G`` to a class of another module, evaluated under
# no_grad and switched by no code (loops._attribute_mode): a model in train mode
# only if nets.py says the class is one (gate/eval.py FreshCalls).
SAMPLE_PLAIN = """
import torch
from nets import {cls}


class Solver:
    def __init__(self):
        self.G = {cls}()

    def test(self, loader):
        with torch.no_grad():
            for x in loader:
                self.G(x)
"""

SAMPLES = [SAMPLE, SAMPLE_DOTTED, SAMPLE_RELATIVE, SAMPLE_PLAIN]


@pytest.mark.parametrize("sample", SAMPLES)
def test_a_factory_of_no_project_model_is_not_parsed_again(tmp_path, monkeypatch, sample):
    files = _project(tmp_path, sample)
    parsed = _second_passes(monkeypatch)
    found = {Path(path).name: [c[0] for c in codes] for path, codes in _run(files, tmp_path)}
    assert found["model.py"] == ["MEM202"] and found["plain.py"] == []
    # Its view rules MEM202 out of plain.py: libcst never reads it.
    assert [Path(p).name for p in parsed] == ["model.py"]


@pytest.mark.parametrize("sample", SAMPLES)
def test_the_same_findings_with_the_re_gate_on_and_off(tmp_path, monkeypatch, sample):
    from memlint.gate import project_gate

    files = _project(tmp_path, sample)
    on = _run(files, tmp_path)
    monkeypatch.setattr(project_gate, "ENABLED", False)
    assert _run(files, tmp_path) == on


# An optimizer reads ``p.grad`` and imports from its project: MEM301/MEM303
# pass its first screening for what a step of another module may do.
OPTIMIZER = """
import torch
from utils import clip


class SGD(torch.optim.Optimizer):
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                grad = clip(p.grad)
                grad.mul_(group["momentum"])
                p.data.add_(grad, alpha=-group["lr"])
"""


def test_an_optimizer_reading_grad_is_not_parsed_again(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "optim.py").write_text(textwrap.dedent(OPTIMIZER))
    (tmp_path / "utils.py").write_text("def clip(g):\n    return g\n")
    files = sorted(str(p) for p in tmp_path.glob("*.py"))
    parsed = _second_passes(monkeypatch)
    assert all(codes == [] for _path, codes in _run(files, tmp_path))
    assert parsed == []  # no gradient is cleared in it, and no step of utils.py clears one


@pytest.mark.parametrize(
    "line, clears",
    [
        ("opt.zero_grad()", True),
        ("p.grad = None", True),
        ("a.grad = b = None", True),
        ("del p.grad", True),
        ("del a, p.grad", True),
        ("p.grad.zero_()", True),
        ("p.grad.data.mul_(0)", True),
        ("p.grad.fill_(0)", True),
        ("g = p.grad; g.zero_()", False),  # training_verbs reads no alias either
        ("p.grad.add_(1)", False),
        ("p.grad += 1", False),
        ("x = p.grad", False),
    ],
)
def test_the_gradient_clears_the_verbs_may_record(line, clears):
    import ast

    from memlint.gate.facts import GateFacts
    from memlint.gate.grad_clears import may_clear_gradients

    assert may_clear_gradients(GateFacts(ast.parse(line))) is clears
