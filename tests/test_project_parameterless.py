"""MEM201 and modules that own no parameter (issue 29, fresh batch: melgan's
``Audio2Mel``). An ``nn.Module`` of another project module that keeps only
buffers and runs functional ops records no graph of its own: a loop that runs
only it is no wasted forward pass. A module with one layer is a model again,
and so is one the summary cannot prove (a constructor argument kept)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from memlint.project.index import view_from_disk
from memlint.project.parameterless import holds_no_parameters

_FEATURES = """\
    import torch
    from torch import nn


    class Spectrogram(nn.Module):
        def __init__(self, n_fft=512, hop=128):
            super().__init__()
            self.register_buffer("window", torch.hann_window(n_fft))
            self.n_fft, self.hop = n_fft, hop
            self.pad = (n_fft - hop) // 2

        def forward(self, audio):
            return torch.stft(audio, self.n_fft, self.hop, window=self.window, return_complex=True).abs()
    {extra}"""

_TRAIN = """\
    from feats import Spectrogram


    def main(net, opt, train_loader, test_loader):
        spec = Spectrogram(n_fft=256).cuda()
        kept = []
        for x in test_loader:
            kept.append(spec(x.cuda()).detach())
        for x in train_loader:
            loss = net(spec(x.cuda()).detach()).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """


def _lint(path: Path) -> list[tuple[int, str]]:
    from memlint.lint.engine import lint_text
    from memlint.rule.registry import all_rules

    rules = [r for r in all_rules() if r.code == "MEM201"]
    view = lambda: view_from_disk(str(path))  # noqa: E731
    return [(f.line, f.code) for f in lint_text(path.read_text(), str(path), rules, project=view)]


def _project(tmp_path: Path, extra: str = "") -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "feats.py").write_text(textwrap.dedent(_FEATURES.format(extra=extra)))
    train = tmp_path / "train.py"
    train.write_text(textwrap.dedent(_TRAIN))
    return train


def test_an_imported_buffers_only_module_runs_no_model(tmp_path):
    train = _project(tmp_path)
    assert _lint(train) == []
    view = view_from_disk(str(train))
    assert view is not None and view.parameterless_classes == ("Spectrogram",)


def test_an_imported_module_with_a_layer_is_a_model(tmp_path):
    layer = "\n\n    class Learned(Spectrogram):\n        def __init__(self):\n            super().__init__()\n            self.proj = nn.Linear(4, 4)\n"
    train = _project(tmp_path, layer)
    train.write_text(train.read_text().replace("Spectrogram", "Learned"))
    assert _lint(train) == [(7, "MEM201")]


def _proved(source: str) -> bool:
    tree = ast.parse(textwrap.dedent(source))
    bindings = {"nn": "torch.nn", "torch": "torch"}
    return holds_no_parameters(tree.body[-1], bindings)  # type: ignore[arg-type]


def test_what_proves_a_module_parameterless():
    assert _proved(textwrap.dedent(_FEATURES.format(extra="")).split("\n\n\n")[-1])
    for body in (
        "self.proj = nn.Linear(4, 4)",  # a layer
        "self.scale = nn.Parameter(torch.ones(1))",
        "self.backbone = backbone",  # handed in, no default
        "self.register_parameter('w', None)",
        "self.add_module('head', head)",
        "setattr(self, 'w', w)",
        "self.t = torch.zeros(3, requires_grad=True)",
        "self.table = make_table()",  # a call: unknown
    ):
        source = f"class M(nn.Module):\n    def __init__(self, backbone, head=None, w=None):\n        {body}\n"
        assert not _proved(source), body
    assert not _proved("class M(Base):\n    pass\n")  # a base not known to be parameterless
    assert _proved("class M(nn.Module):\n    def __init__(self, k=3):\n        self.k = k * 2\n")
