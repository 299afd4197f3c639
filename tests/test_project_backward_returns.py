"""A method of another module's class that returns the loss it backpropagated
(project/backward_returns.py): ``loss, preds = model.train_step(x, y)`` then
``losses.append(loss)`` keeps every batch's graph (MEM102), when every class
the project gives ``model`` hands back that loss."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from memlint.project.backward_returns import backward_returned
from memlint.project.index import build_index, view_from_disk

_MODELS = """\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 1)
            self.optimizer = torch.optim.SGD(self.parameters(), lr=0.1)

        def train_step(self, x, y):
            self.train()
            self.optimizer.zero_grad()
            loss = ((self.fc(x) - y) ** 2).mean()
            loss.backward()
            self.optimizer.step()
            return loss, self.fc(x)

        def number_step(self, x, y):
            self.optimizer.zero_grad()
            loss = ((self.fc(x) - y) ** 2).mean()
            loss.backward()
            self.optimizer.step()
            return loss.item(), y

        def bare_step(self, x, y):
            loss = ((self.fc(x) - y) ** 2).mean()
            loss.backward()
            return loss
    """

_TRAIN = """\
    import torch

    from models import Net


    def prepare():
        model = Net()
        model = model.cuda()
        return model, 0


    def train(model, loader):
        for epoch in range(3):
            losses = []
            for x, y in loader:
                {bind} = model.{method}(x, y)
                losses.append({stored})
            print(len(losses))


    if __name__ == "__main__":
        model, start = prepare()
        train(model, [])
    """


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _lint(path: Path, select: str = "MEM102") -> list[tuple[int, str]]:
    from memlint.lint.engine import lint_text
    from memlint.rule.registry import all_rules

    rules = [r for r in all_rules() if r.code == select]
    return [
        (f.line, f.code)
        for f in lint_text(path.read_text(), str(path), rules, project=lambda: view_from_disk(str(path)))
    ]


def _fact(source: str):
    fn = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    return backward_returned(fn)


# -- the summary's fact --------------------------------------------------------


def test_a_tuple_return_holding_the_backpropagated_loss():
    assert _fact(
        """\
        def step(self, x):
            loss = self.net(x).mean()
            loss.backward()
            return loss, x
        """
    ) == (2, (0,))


def test_a_bare_return_of_the_loss():
    assert _fact(
        """\
        def step(self, x):
            loss = self.net(x).mean()
            loss.backward()
            return loss
        """
    ) == (0, (0,))


@pytest.mark.parametrize(
    "body",
    [
        # a number, a detached copy: no history handed back
        "loss = f(x)\nloss.backward()\nreturn loss.item(), x",
        "loss = f(x)\nloss.backward()\nreturn loss.detach()",
        # detached in place after the backward
        "loss = f(x)\nloss.backward()\nloss.detach_()\nreturn loss",
        # the backward only in one arm: it may not run
        "loss = f(x)\nif x:\n    loss.backward()\nreturn loss",
        # rebound after the backward: another value
        "loss = f(x)\nloss.backward()\nloss = 0.0\nreturn loss",
        # returns of another shape, or one without the loss
        "loss = f(x)\nloss.backward()\nif x:\n    return loss, x\nreturn loss",
        "loss = f(x)\nloss.backward()\nif x:\n    return x, loss\nreturn loss, x",
        # a return before the backward
        "loss = f(x)\nif x:\n    return loss\nloss.backward()\nreturn loss",
        # a parameter: whatever the caller gave
        "x.backward()\nreturn x",
    ],
)
def test_no_fact(body):
    source = "def step(self, x):\n" + textwrap.indent(body, "    ") + "\n"
    assert _fact(source) is None


# -- across modules --------------------------------------------------------------


def test_the_stored_loss_of_a_typed_train_step_is_reported(tmp_path):
    _write(
        tmp_path,
        {"models.py": _MODELS, "train.py": _TRAIN.format(bind="loss, out", method="train_step", stored="loss")},
    )
    assert _lint(tmp_path / "train.py") == [(17, "MEM102")]
    view = view_from_disk(str(tmp_path / "train.py"))
    assert view is not None
    assert view.object_backwards == (("train", "model", "train_step", 2, (0,)),)


def test_a_bare_returned_loss_is_reported(tmp_path):
    _write(tmp_path, {"models.py": _MODELS, "train.py": _TRAIN.format(bind="loss", method="bare_step", stored="loss")})
    assert _lint(tmp_path / "train.py") == [(17, "MEM102")]


@pytest.mark.parametrize(
    ("bind", "method", "stored"),
    [
        ("loss, out", "number_step", "loss"),  # ``loss.item()``: a number
        ("loss, out", "train_step", "out"),  # the other element: unknown here
        ("loss, out", "missing_step", "loss"),  # no such method in the class
    ],
)
def test_silent_without_the_fact(tmp_path, bind, method, stored):
    _write(tmp_path, {"models.py": _MODELS, "train.py": _TRAIN.format(bind=bind, method=method, stored=stored)})
    assert _lint(tmp_path / "train.py") == []


def test_an_installed_class_is_not_read(tmp_path):
    train = _TRAIN.format(bind="loss, out", method="train_step", stored="loss").replace(
        "from models import Net", "from somepackage.models import Net"
    )
    _write(tmp_path, {"models.py": _MODELS, "train.py": train})
    assert _lint(tmp_path / "train.py") == []


def test_a_receiver_some_caller_types_otherwise_is_silent(tmp_path):
    other = """\
        class Other:
            def train_step(self, x, y):
                return x, y
        """
    train = (
        _TRAIN.format(bind="loss, out", method="train_step", stored="loss")
        .replace("        train(model, [])", "        train(model, [])\n        train(Other(), [])")
        .replace("from models import Net", "from models import Net\n    from other import Other")
    )
    _write(tmp_path, {"models.py": _MODELS, "other.py": other, "train.py": train})
    assert _lint(tmp_path / "train.py") == []


def test_the_root_package_imported_by_its_own_name(tmp_path):
    """GraphSAINT: ``graphsaint/setup.py`` makes ``graphsaint/`` the root, and
    its scripts import ``graphsaint.models`` (run from the folder above)."""
    pkg = tmp_path / "graphsaint"
    train = _TRAIN.format(bind="loss, out", method="train_step", stored="loss").replace(
        "from models import Net", "from graphsaint.models import Net"
    )
    _write(pkg, {"setup.py": "", "__init__.py": "", "models.py": _MODELS, "scripts/train.py": train})
    assert _lint(pkg / "scripts" / "train.py") == [(17, "MEM102")]
    index = build_index(str(pkg))
    assert index is not None
    assert index.resolve("graphsaint.models.Net", str(pkg / "scripts" / "train.py")) == (str(pkg / "models.py"), "Net")


def test_a_name_rebound_to_its_own_move_keeps_its_type(tmp_path):
    """``model = Net()`` then ``model = model.cuda()``: still a ``Net``."""
    _write(tmp_path, {"models.py": _MODELS, "train.py": _TRAIN.format(bind="loss", method="bare_step", stored="loss")})
    index = build_index(str(tmp_path))
    assert index is not None
    types = index.typed_objects().receiver_types(str(tmp_path / "train.py"), "prepare", "model")
    assert types == (f"{tmp_path / 'models.py'}\0Net",)


# -- the gate's part (gate/method_stores.py) ---------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(m, xs):\n    loss, out = m.step(1)\n    xs.append(loss)\n", True),
        ("def f(m, d):\n    loss = m.step(1)\n    d['k'] = loss\n", True),
        ("def f(m, xs):\n    loss = m.step(1)\n    xs += [loss]\n", True),
        # ``self``'s own method, an imported module's function: not a typed receiver
        ("def f(self, xs):\n    loss = self.step(1)\n    xs.append(loss)\n", False),
        ("import numpy as np\ndef f(xs):\n    a = np.zeros(1)\n    xs.append(a)\n", False),
        # bound in one function, stored in another: scopes are not matched
        # (a necessary condition; the view and the rule settle it)
        ("def f(m):\n    loss = m.step(1)\ndef g(xs, loss):\n    xs.append(loss)\n", True),
        ("def f(m, xs):\n    loss = m.step(1)\n    xs.append(other)\n", False),
        ("def f(m, xs):\n    loss = m.step(1)\n    xs.append(1)\n", False),
    ],
)
def test_the_gate_part(source, expected):
    from memlint.gate.facts import GateFacts
    from memlint.gate.method_stores import stores_a_method_result

    assert stores_a_method_result(GateFacts(ast.parse(source))) is expected
