"""Trackers whose ``update(self, batch=1, **kwargs)`` keeps the keyword values
(project/keyword_trackers.py), read in another module by MEM102."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memlint.project.index import view_from_disk
from memlint.project.summary import ModuleSummary, summarise_text
from memlint.project.trackers import KEYWORDS, tensor_trackers

_SUMS_KEYS = """\
class AverageMeter(object):
    def __init__(self):
        self.val = {}
        self.sum = {}
        self.count = {}

    def update(self, batch=1, **kwargs):
        val = {}
        for k in kwargs:
            val[k] = kwargs[k] / float(batch)
        self.val.update(val)
        for k in kwargs:
            if k not in self.sum:
                self.sum[k] = 0
                self.count[k] = 0
            self.sum[k] += kwargs[k]
            self.count[k] += batch
"""


def _trackers(text: str) -> list[tuple]:
    return [tuple(t) for t in tensor_trackers(ast.parse(textwrap.dedent(text)))]


def test_a_meter_summing_kwargs_by_key_keeps_them():
    assert _trackers(_SUMS_KEYS) == [("AverageMeter", "update", KEYWORDS, "kwargs batch", "sum", 16)]


@pytest.mark.parametrize(
    "body",
    [
        "for k, v in kwargs.items():\n            self.sum[k] = self.sum.get(k, 0) + v * n",
        "for k, v in kwargs.items():\n            self.sum[k] += v * n",
        "for v in kwargs.values():\n            self.values.append(v)",
        "for k in kwargs:\n            self.history[k].append(kwargs[k])",
    ],
)
def test_other_spellings_of_a_keyword_store_keep_them(body):
    text = f"class Meter:\n    def update(self, n=1, **kwargs):\n        {body}\n"
    found = _trackers(text)
    if "get(k, 0)" in body:
        assert found == []  # ``self.sum.get(k, 0) + v``: not ``self.x[k] = self.x[k] + v``, left out
    else:
        assert [(t[2], t[3]) for t in found] == [(KEYWORDS, "kwargs n")]


@pytest.mark.parametrize(
    "body",
    [
        "for k in kwargs:\n            self.sum[k] += kwargs[k].item()",
        "for k in kwargs:\n            self.sum[k] += float(kwargs[k])",
        "for k, v in kwargs.items():\n            self.sum[k] += v.detach()",
        "for k, v in kwargs.items():\n            if isinstance(v, torch.Tensor):\n"
        "                raise TypeError(k)\n            self.sum[k] += v",
        "for k, v in kwargs.items():\n            v = v.item()\n            self.sum[k] += v",
        "for k in kwargs:\n            kwargs[k] = float(kwargs[k])\n        for k in kwargs:\n"
        "            self.sum[k] += kwargs[k]",
        "kwargs.update(self.convert(kwargs))\n        for k in kwargs:\n            self.sum[k] += kwargs[k]",
        "for k in kwargs:\n            self.sum[k] += kwargs[k].data",
        "for k, v in kwargs.items():\n            self.meters[k].update(v)",
        "for k, v in kwargs.items():\n            self.last[k] = v",
    ],
)
def test_a_meter_that_converts_tests_or_replaces_a_keyword_value_is_no_tracker(body):
    text = f"import torch\nclass Meter:\n    def update(self, n=1, **kwargs):\n        {body}\n"
    assert _trackers(text) == []


def test_summaries_carry_keyword_trackers():
    summary = summarise_text("import torch\n" + _SUMS_KEYS)
    assert summary is not None
    assert [tuple(t) for t in summary.tensor_trackers] == [
        ("AverageMeter", "update", KEYWORDS, "kwargs batch", "sum", 17)
    ]
    assert ModuleSummary.from_json(json.loads(json.dumps(summary.to_json()))) == summary


_PROJECT = {
    "setup.py": "",
    "utils/__init__.py": "",
    "utils/meter.py": _SUMS_KEYS,
    "tools/train.py": """\
import torch
from utils.meter import AverageMeter


def train(model, loader, optimizer):
    avg = AverageMeter()
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        avg.update(batch=x.size(0), cls_loss=loss, lr=0.1)
        avg.update(batch=loss, value=loss.item())
""",
}
_MESSAGE = (
    "`avg.update` keeps a tensor that carries autograd history across iterations: `AverageMeter.update`"
    " (utils/meter.py:16) adds it to `self.sum`, so every batch's graph stays alive"
)


def _write(folder: Path) -> None:
    for name, text in _PROJECT.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _check(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--select", "MEM102", *args],
        cwd=folder,
        capture_output=True,
        text=True,
    )


def test_a_keyword_handed_to_another_modules_kwargs_meter_gets_mem102(tmp_path):
    """The loss handed as ``cls_loss=`` lands in ``**kwargs`` and is summed;
    ``batch=loss`` names a parameter the meter only counts with: silent."""
    _write(tmp_path)
    out = _check(tmp_path, "--exit-zero", "--output-format", "json", ".").stdout
    found = [(Path(f["filename"]).name, f["location"]["row"], f["code"], f["message"]) for f in json.loads(out)]
    assert found == [("train.py", 12, "MEM102", _MESSAGE)]
    view = view_from_disk(str(tmp_path / "tools" / "train.py"))
    assert view is not None
    assert ("AverageMeter", "update", KEYWORDS, "kwargs batch", "sum", "utils/meter.py:16") in view.tensor_trackers


@pytest.mark.parametrize("gate", ["1", "0"])
def test_the_gate_lets_a_keyword_tracker_call_through(gate, monkeypatch, tmp_path):
    import memlint.lint.screen as screen
    from memlint.lint.engine import lint_text
    from memlint.rule.registry import all_rules

    monkeypatch.setattr(screen, "GATE", gate == "1")
    _write(tmp_path)
    path = tmp_path / "tools" / "train.py"
    found = lint_text(path.read_text(), str(path), all_rules(), project=lambda: view_from_disk(str(path)))
    assert [(f.code, f.line) for f in found if f.code == "MEM102"] == [("MEM102", 12)]


def test_the_fix_detaches_each_keyword_value_that_carries_history(tmp_path):
    _write(tmp_path)
    out = _check(tmp_path, "--diff", "tools/train.py").stdout
    assert "+        avg.update(batch=x.size(0), cls_loss=loss.detach(), lr=0.1)" in out
