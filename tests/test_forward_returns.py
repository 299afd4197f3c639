"""A method of another module's class that returns its forward's result on
its own arguments (project/forward_returns.py): the caller's value carries
history when the argument it hands there does (MEM101/MEM102)."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import pytest

from memlint.project.forward_returns import returned_params
from memlint.project.index import view_from_disk
from memlint.project.summary import ModuleSummary, summarise_text

_LOSSES = """\
    import torch
    import torch.nn as nn


    class DiceLoss(nn.Module):
        def forward(self, p, t):
            inter = (p * t).sum()
            return 1 - 2 * inter / (p.sum() + t.sum())


    class DiceBCE(nn.Module):
        def __init__(self):
            super().__init__()
            self.dice_loss = DiceLoss()

        def show_dice(self, inputs, targets):
            inputs[inputs >= 0.5] = 1
            inputs[inputs < 0.5] = 0
            return 1.0 - self.dice_loss(inputs, targets)

        def show_number(self, inputs, targets):
            return 1.0 - self.dice_loss(inputs, targets).item()

        def show_detached(self, inputs, targets):
            inputs = inputs.detach()
            return 1.0 - self.dice_loss(inputs, targets)

        def show_quiet(self, inputs, targets):
            with torch.no_grad():
                return 1.0 - self.dice_loss(inputs, targets)

        def forward(self, inputs, targets):
            return self.dice_loss(inputs, targets)
    """

_TRAIN = """\
    import torch

    from losses import DiceBCE


    def train_one_epoch(loader, model, criterion, optimizer):
        dices = []
        dice_sum = 0.0
        for images, masks in loader:
            preds = model(images)
            loss = criterion(preds, masks)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            train_dice = criterion.{method}({args})
            dices.append(train_dice)
            dice_sum += len(images) * train_dice
        return dice_sum / len(loader), dices


    def main(loader, model, optimizer):
        criterion = DiceBCE()
        train_one_epoch(loader, model, criterion, optimizer)
    """


def _write(folder: Path, method: str = "show_dice", args: str = "preds, masks") -> Path:
    (folder / "losses.py").write_text(textwrap.dedent(_LOSSES))
    train = folder / "train.py"
    train.write_text(textwrap.dedent(_TRAIN).replace("{method}", method).replace("{args}", args))
    return train


def _lint(path: Path, codes: tuple[str, ...] = ("MEM101", "MEM102"), project: bool = True):
    from memlint.lint.engine import lint_text
    from memlint.rule.registry import all_rules

    rules = [r for r in all_rules() if r.code in codes]
    view = (lambda: view_from_disk(str(path))) if project else None
    return sorted((f.line, f.code) for f in lint_text(path.read_text(), str(path), rules, project=view))


def _params(source: str, attr: str = "dice_loss") -> tuple:
    fn = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    a = fn.args
    params = tuple(p.arg for p in a.args[1:]) + tuple(p.arg for p in a.kwonlyargs)
    return returned_params(fn, attr, params)


# -- the fact, on ast ---------------------------------------------------------


def test_a_return_of_arithmetic_on_the_forward_names_the_parameters_it_hands_over():
    assert _params("def m(self, x, y):\n    return 1.0 - self.dice_loss(x, y)\n") == ((0, "x"), (1, "y"))
    assert _params("def m(self, x, *, y):\n    return -self.dice_loss.forward(x, t=y)\n") == ((0, "x"), (-1, "y"))


def test_a_local_name_bound_once_to_the_forward_is_looked_through():
    assert _params("def m(self, x):\n    d = self.dice_loss(x)\n    return d * 2\n") == ((0, "x"),)
    assert _params("def m(self, x):\n    d = self.dice_loss(x)\n    d = d.item()\n    return d * 2\n") == ()


@pytest.mark.parametrize(
    "source",
    [
        "def m(self, x):\n    x = x.detach()\n    return self.dice_loss(x)\n",  # rebound first
        "def m(self, x):\n    x.detach_()\n    return self.dice_loss(x)\n",  # detached in place
        "def m(self, x):\n    return self.dice_loss(x).item()\n",  # a number
        "def m(self, x):\n    return self.dice_loss(x) > 0.5\n",  # a comparison
        "def m(self, x):\n    return self.dice_loss(x) // 1\n",  # no derivative
        "def m(self, x):\n    if x is None:\n        return 0\n    return self.dice_loss(x)\n",  # one return is not
        "def m(self, x):\n    return self.other(x)\n",  # another attribute
        "def m(self, x):\n    return self.dice_loss(x.detach())\n",  # not the parameter as it came in
    ],
)
def test_anything_else_gives_no_fact(source):
    assert _params(source) == ()


def test_the_fact_survives_json():
    summary = summarise_text(textwrap.dedent(_LOSSES))
    assert summary is not None and summary.objects is not None
    returned = dict(summary.objects.returned)
    # ``show_detached`` still hands its ``targets`` over as they came in
    assert returned == {
        "DiceBCE.show_dice": ((0, "inputs"), (1, "targets")),
        "DiceBCE.show_detached": ((1, "targets"),),
    }
    assert ModuleSummary.from_json(json.loads(json.dumps(summary.to_json()))) == summary


# -- read at the call, in another module ---------------------------------------


def test_the_method_returning_its_forward_on_a_model_output_is_reported(tmp_path):
    train = _write(tmp_path)
    assert _lint(train) == [(16, "MEM102"), (17, "MEM101")]
    assert view_from_disk(str(train)).object_returns == (
        ("train_one_epoch", "criterion", "show_dice", ((0, "inputs"), (1, "targets"))),
    )
    assert _lint(train, project=False) == []  # the file alone cannot tell


@pytest.mark.parametrize(
    "method, args",
    [
        ("show_number", "preds, masks"),  # returns a number
        ("show_detached", "preds, masks"),  # detaches what it is given
        ("show_quiet", "preds, masks"),  # its forward runs under no_grad
        ("show_dice", "preds.detach(), masks"),  # handed nothing with history
        ("show_dice", "masks, masks"),
    ],
)
def test_a_method_whose_value_may_carry_no_history_stays_silent(tmp_path, method, args):
    assert _lint(_write(tmp_path, method, args)) == []


@pytest.mark.parametrize("gate", ["1", "0"])
def test_the_gate_changes_nothing(gate, tmp_path, monkeypatch):
    import memlint.lint.screen as screen

    monkeypatch.setattr(screen, "GATE", gate == "1")
    assert _lint(_write(tmp_path)) == [(16, "MEM102"), (17, "MEM101")]


def test_the_class_of_the_same_module_is_read_too(tmp_path):
    train = tmp_path / "train.py"
    text = textwrap.dedent(_LOSSES) + textwrap.dedent(_TRAIN).replace("from losses import DiceBCE\n", "")
    train.write_text(text.replace("{method}", "show_dice").replace("{args}", "preds, masks"))
    found = _lint(train)
    assert [code for _, code in found] == ["MEM102", "MEM101"]
