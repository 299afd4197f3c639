"""MEM703 on a module-level function another module calls once per batch
(ProjectView.functions_per_batch): a constant it builds and moves on every
call is copied to the device per batch."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from memlint.project.index import view_from_disk

_MODEL = """\
    import torch


    def regularizer(trans):
        d = trans.size()[1]
        I = torch.eye(d)[None, :, :]
        if trans.is_cuda:
            I = I.cuda()
        return torch.mean(torch.norm(torch.bmm(trans, trans.transpose(2, 1)) - I, dim=(1, 2)))
    """

_TRAIN = """\
    import torch

    from model import regularizer


    def train(loader, model, optimizer):
        for x, y in loader:
            pred, trans = model(x)
            loss = torch.nn.functional.nll_loss(pred, y)
            loss += regularizer(trans) * 0.001
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """


def _write(folder: Path, model: str = _MODEL, train: str = _TRAIN) -> Path:
    (folder / "model.py").write_text(textwrap.dedent(model))
    (folder / "train.py").write_text(textwrap.dedent(train))
    return folder / "model.py"


def _lint(path: Path, project: bool = True):
    from memlint.lint.engine import lint_text
    from memlint.rule.registry import all_rules

    rules = [r for r in all_rules() if r.code == "MEM703"]
    view = (lambda: view_from_disk(str(path))) if project else None
    return [(f.line, f.message) for f in lint_text(path.read_text(), str(path), rules, project=view)]


def test_a_constant_built_and_moved_by_a_function_called_once_per_batch_is_reported(tmp_path):
    path = _write(tmp_path)
    assert view_from_disk(str(path)).functions_per_batch == (("regularizer", "train.py:10"),)
    found = _lint(path)
    assert [line for line, _ in found] == [8]
    assert (
        "`regularizer` builds a constant tensor" in found[0][1] and "train.py:10 calls it once per batch" in found[0][1]
    )
    assert _lint(path, project=False) == []  # the file alone cannot tell


@pytest.mark.parametrize(
    "old, new",
    [
        ("d = trans.size()[1]", "d = trans.size()[0]"),  # the batch's dimension
        ("d = trans.size()[1]", "d = trans.size(0)"),
        ("torch.eye(d)[None, :, :]", "torch.tensor(trans.tolist())"),  # the batch's data
        ("torch.eye(d)[None, :, :]", "torch.eye(d)[trans.argmax()]"),
        ("if trans.is_cuda:", "if trans.sum() > 0:"),  # a test that picks calls
        ("d = trans.size()[1]", "trans = trans.float()\n        d = trans.size()[1]"),  # rebound
    ],
)
def test_a_value_that_may_follow_the_batch_stays_silent(tmp_path, old, new):
    assert _lint(_write(tmp_path, _MODEL.replace(old, new))) == []


def test_a_default_value_built_once_when_the_def_runs_stays_silent(tmp_path):
    model = _MODEL.replace("def regularizer(trans):", "def regularizer(trans, m=torch.eye(3)[None].cuda()):")
    model = model.replace("        if trans.is_cuda:\n            I = I.cuda()\n", "")
    assert "cuda()" in model and "I.cuda" not in model
    assert _lint(_write(tmp_path, model)) == []


def test_a_buffer_the_function_grows_stays_silent(tmp_path):
    moved = "        I = torch.eye(d)[None, :, :].cuda()\n"
    model = _MODEL.replace(
        "        I = torch.eye(d)[None, :, :]\n        if trans.is_cuda:\n            I = I.cuda()\n", moved
    )
    assert [line for line, _ in _lint(_write(tmp_path, model))] == [6]  # a constant, moved once per call
    grown = model.replace(moved, moved + "        I = torch.cat((I, trans))\n")
    assert _lint(_write(tmp_path, grown)) == []


_EVALUATE = """\
    import torch


    def evaluate(model, loader, device):
        preds = torch.Tensor([]).to(device)
        for x, y in loader:
            preds = torch.cat((preds, model(x)))
        return preds
    """


def test_a_function_running_a_pass_over_data_of_its_own_is_no_batch_work(tmp_path):
    train = _TRAIN.replace("from model import regularizer", "from model import evaluate").replace(
        "loss += regularizer(trans) * 0.001", "print(evaluate(model, loader, 'cuda'))"
    )
    path = _write(tmp_path, _EVALUATE, train)
    assert view_from_disk(str(path)).functions_per_batch == ()
    assert _lint(path) == []


def test_a_function_called_once_outside_the_batch_loop_stays_silent(tmp_path):
    train = _TRAIN.replace("            loss += regularizer(trans) * 0.001\n", "").replace(
        "    def train(", "    print(regularizer(torch.ones(1, 3, 3)))\n\n\n    def train("
    )
    path = _write(tmp_path, train=train)
    assert view_from_disk(str(path)).functions_per_batch == ()
    assert _lint(path) == []


@pytest.mark.parametrize("gate", ["1", "0"])
def test_the_gate_changes_nothing(gate, tmp_path, monkeypatch):
    import memlint.lint.screen as screen

    monkeypatch.setattr(screen, "GATE", gate == "1")
    assert [line for line, _ in _lint(_write(tmp_path))] == [8]
