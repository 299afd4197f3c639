"""Training steps split across MODULES (issue 29, point 3): ``train.py``'s
loop calls ``utils.train_step(model, opt, x, y)``, a function of another
module whose body clears and backpropagates (MEM301 when ``train.py`` steps
every N iterations, MEM303 when the helper clears after its backward). The
helper's verbs come from its module summary (project/step_helpers.py
``step_sequence``); a helper the summary cannot read as one straight-line
step keeps the call unread (silent). Each project is checked as a tree, as
one file, and through flake8."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text))


def _cli(*args: str, cwd: Path) -> list[tuple[str, int, str, str]]:
    out = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--exit-zero", "--output-format", "json", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(
        (Path(f["filename"]).name, f["location"]["row"], f["code"], f["message"])
        for f in json.loads(out or "[]")
        if f["code"].startswith("MEM3")
    )


def _flake8(cwd: Path) -> list[tuple[str, int, str, str]]:
    out = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "MEM3", "--format", "%(path)s\t%(row)d\t%(code)s\t%(text)s", "."],
        cwd=cwd,
        capture_output=True,
        text=True,
    ).stdout
    rows = [line.split("\t") for line in out.splitlines()]
    return sorted((Path(p).name, int(r), c, m) for p, r, c, m in rows)


_UTILS = """\
    import torch.nn.functional as F


    def train_step(model, optimizer, x, y, accum):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y) / accum
        loss.backward()
        return loss.item()
    """

_TRAIN = """\
    import torch

    import utils

    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for i, (x, y) in enumerate(loader):
        utils.train_step(model, opt, x, y, 4)
        if (i + 1) % 4 == 0:
            opt.step()
    """

_MEM301 = (
    "zero_grad() runs every iteration but step() only every N: the accumulated gradients are discarded"
    " (zero_grad() in `utils.train_step` (utils.py:5), called at line 8; step() at line 10)"
)


@pytest.mark.parametrize("target", [".", "train.py"])
def test_a_clear_in_another_modules_step_discards_the_accumulation(tmp_path, target):
    _write(tmp_path, {"utils.py": _UTILS, "train.py": _TRAIN})
    expected = [("train.py", 8, "MEM301", _MEM301)]
    assert _cli(target, cwd=tmp_path) == expected
    assert _flake8(tmp_path) == expected
    # No fix across modules: moving a statement into another module changes its other callers.
    diff = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--diff", "--unsafe-fixes", "--select", "MEM301", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    ).stdout
    assert "@@" not in diff


@pytest.mark.parametrize(
    "helper, why",
    [
        (
            _UTILS.replace(
                "        optimizer.zero_grad()\n", "        if x.numel():\n            optimizer.zero_grad()\n"
            ),
            "the clear runs under a branch of the helper",
        ),
        (
            _UTILS.replace(
                "        optimizer.zero_grad()\n",
                "        if y is None:\n            return 0.0\n        optimizer.zero_grad()\n",
            ),
            "the helper may return before its clear",
        ),
        (
            _UTILS.replace("        optimizer.zero_grad()\n", "        clear(optimizer)\n")
            + "\n\n    def clear(optimizer):\n        optimizer.zero_grad()\n",
            "the helper calls another function of its module",
        ),
        (
            _UTILS.replace(
                "        optimizer.zero_grad()\n", "        for _ in range(2):\n            optimizer.zero_grad()\n"
            ),
            "the clear runs in a loop of the helper",
        ),
        (
            _UTILS.replace("    def train_step", "    @torch.no_grad()\n    def train_step"),
            "a decorated helper may not run as written",
        ),
    ],
    ids=["branch", "early-return", "local-call", "own-loop", "decorated"],
)
def test_a_helper_that_is_not_one_straight_line_step_stays_unread(tmp_path, helper, why):
    _write(tmp_path, {"utils.py": helper, "train.py": _TRAIN})
    assert _cli(".", cwd=tmp_path) == [], why


def test_a_helper_that_clears_after_its_own_step_is_a_plain_step(tmp_path):
    helper = _UTILS.replace("        optimizer.zero_grad()\n", "").replace(
        "        loss.backward()\n",
        "        loss.backward()\n        optimizer.step()\n        optimizer.zero_grad()\n",
    )
    train = _TRAIN.replace("        if (i + 1) % 4 == 0:\n            opt.step()\n", "")
    assert helper.count("zero_grad") == 1 and "opt.step" not in train
    _write(tmp_path, {"utils.py": helper, "train.py": train})
    assert _cli(".", cwd=tmp_path) == []


def test_the_accumulating_loop_that_clears_in_the_guard_is_right(tmp_path):
    helper = _UTILS.replace("        optimizer.zero_grad()\n", "")
    train = _TRAIN.replace("            opt.step()\n", "            opt.step()\n            opt.zero_grad()\n")
    _write(tmp_path, {"utils.py": helper, "train.py": train})
    assert _cli(".", cwd=tmp_path) == []


_ENGINE = """\
    def backward(loss, optimizer):
        loss.backward()
        optimizer.zero_grad()
    """

_LOOP = """\
    import torch

    from engine import backward

    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = model(x).sum()
        backward(loss, opt)
        opt.step()
    """

_MEM303 = (
    "zero_grad() between backward() and step(): the step sees no gradients"
    " (backward() in `backward` (engine.py:2), called at line 9;"
    " zero_grad() in `backward` (engine.py:3), called at line 9; step() at line 10)"
)


@pytest.mark.parametrize("target", [".", "train.py"])
def test_another_modules_backward_that_clears_after_it_starves_the_step(tmp_path, target):
    _write(tmp_path, {"engine.py": _ENGINE, "train.py": _LOOP})
    expected = [("train.py", 9, "MEM303", _MEM303)]
    assert _cli(target, cwd=tmp_path) == expected
    assert _flake8(tmp_path) == expected


def test_another_modules_backward_that_clears_first_is_right(tmp_path):
    engine = _ENGINE.replace(
        "        loss.backward()\n        optimizer.zero_grad()\n",
        "        optimizer.zero_grad()\n        loss.backward()\n",
    )
    _write(tmp_path, {"engine.py": engine, "train.py": _LOOP})
    assert _cli(".", cwd=tmp_path) == []


def test_a_helper_that_steps_what_the_call_does_not_know_is_not_read(tmp_path):
    """``backward(loss, opt, cfg)``: the helper steps what it is handed as
    ``thing``, of unknown kind here, so which optimizer it steps (and whether
    ``opt.step()`` still sees gradients) is unknown: the call stays unread."""
    engine = _ENGINE.replace("    def backward(loss, optimizer):", "    def backward(loss, optimizer, thing):")
    engine = engine.replace("optimizer.zero_grad()", "optimizer.zero_grad()\n        thing.step()")
    _write(
        tmp_path, {"engine.py": engine, "train.py": _LOOP.replace("backward(loss, opt)", "backward(loss, opt, cfg)")}
    )
    assert "thing.step()" in textwrap.dedent(engine)
    assert _cli(".", cwd=tmp_path) == []


# -- the summary fact ---------------------------------------------------------------


def _sequence(source: str):
    from memlint.project.step_helpers import step_sequence

    tree = ast.parse(textwrap.dedent(source))
    defs = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    return step_sequence(fn, defs)


def test_step_sequence_reads_the_verbs_in_order_on_their_parameters():
    source = """\
        def step(model, opt, scaler, batch):
            opt.zero_grad()
            with autocast():
                loss = model(batch).mean()
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            scaler.step(opt)
            scaler.update()
            return loss.item()
        """
    assert _sequence(source) == (("zero_grad", "opt", 2), ("backward", "", 5), ("step", "opt", 7))


@pytest.mark.parametrize(
    "body",
    [
        "self_opt.step()",  # not a parameter: what it steps is not handed over
        "for p in model.parameters():\n        p.grad = None",
        "torch.autograd.grad(loss, params)",
        "yield loss",
        "opt.step(lambda: loss)",  # a closure (LBFGS)
    ],
)
def test_step_sequence_is_empty_for_what_a_caller_cannot_read(body):
    source = f"def step(model, opt, loss, params, closure):\n    loss.backward()\n    {body}\n    opt.step()\n"
    assert _sequence(source) == ()
