"""MEM202 and model classes of other modules (issue 29, twenty-third batch:
pytorch-vqvae's ``VectorQuantizedVAE``). A class imported from another
project module and built fresh is in train mode; evaluating it under
``no_grad`` without ``eval()`` matters only when it holds a layer that reads
the mode (project/mode_layers.py): BatchNorm, Dropout, a tracking
InstanceNorm, ``training=self.training``, there or in the project classes it
builds. Convolutions only (melgan's ``Generator``), a class keeping its own
mode, a caller that switches to eval first, a norm built only on request
(IMDN's ``conv_block``): silent."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from memlint.project.index import view_from_disk
from memlint.project.mode_layers import entry_of, mode_entries
from memlint.project.summary import ModuleSummary, module_bindings

_NETS = """\
    import torch
    from torch import nn


    class Coder(nn.Module):
        def __init__(self, dim=8):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(3, dim, 3), {layer}, nn.ReLU())

        def forward(self, x):
            return self.body(x)
    {extra}"""

_TRAIN = """\
    import torch
    import torch.nn.functional as F

    from nets import Coder


    def validate(loader, model):
        total = 0.0
        with torch.no_grad():
            for x, y in loader:
                total += F.mse_loss(model(x), y).item()
        return total


    def main(train_loader, test_loader):
        model = Coder().cuda()
        opt = torch.optim.Adam(model.parameters())
        for epoch in range(10):
            for x, y in train_loader:
                opt.zero_grad()
                F.mse_loss(model(x), y).backward()
                opt.step()
            {before}validate(test_loader, model)
    """


def _lint(path: Path) -> list[tuple[int, str]]:
    from memlint.lint.engine import lint_text
    from memlint.rule.registry import all_rules

    rules = [r for r in all_rules() if r.code == "MEM202"]
    view = lambda: view_from_disk(str(path))  # noqa: E731
    return [(f.line, f.code) for f in lint_text(path.read_text(), str(path), rules, project=view)]


def _project(
    tmp_path: Path, layer: str, extra: str = "", before: str = "", files: dict[str, str] | None = None
) -> Path:
    (tmp_path / ".git").mkdir(parents=True)
    (tmp_path / "nets.py").write_text(textwrap.dedent(_NETS.format(layer=layer, extra=extra)))
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    train = tmp_path / "train.py"
    train.write_text(textwrap.dedent(_TRAIN.format(before=before)))
    return train


def test_an_imported_class_with_batch_norm_is_evaluated_in_train_mode(tmp_path):
    train = _project(tmp_path, "nn.BatchNorm2d(dim)")
    assert _lint(train) == [(10, "MEM202")]
    view = view_from_disk(str(train))
    assert view is not None and view.mode_classes == ("Coder",)


def test_an_imported_class_of_convolutions_only_is_silent(tmp_path):
    train = _project(tmp_path, "nn.Identity()")
    assert _lint(train) == []
    view = view_from_disk(str(train))
    assert view is not None and "Coder" in view.model_classes and view.mode_classes == ()


def test_dropout_of_zero_and_an_untracked_instance_norm_read_no_mode(tmp_path):
    assert _lint(_project(tmp_path / "a", "nn.Dropout(0.0)")) == []
    assert _lint(_project(tmp_path / "b", "nn.InstanceNorm2d(dim)")) == []
    assert _lint(_project(tmp_path / "c", "nn.InstanceNorm2d(dim, track_running_stats=True)")) == [(10, "MEM202")]
    assert _lint(_project(tmp_path / "d", "nn.Dropout(p=0.1)")) == [(10, "MEM202")]


def test_a_class_switched_to_eval_by_its_constructor_is_silent(tmp_path):
    train = _project(tmp_path, "nn.BatchNorm2d(dim)")
    nets = tmp_path / "nets.py"
    nets.write_text(nets.read_text().replace("super().__init__()", "super().__init__()\n        self.eval()"))
    assert _lint(train) == []


def test_a_caller_switching_to_eval_first_is_silent(tmp_path):
    train = _project(tmp_path, "nn.BatchNorm2d(dim)", before="model.eval()\n        ")
    assert _lint(train) == []


def test_a_layer_of_a_class_built_in_a_third_module_counts(tmp_path):
    blocks = """\
    from torch import nn


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(0.1)
    """
    train = _project(tmp_path, "blocks.Block()", extra="\n    import blocks\n", files={"blocks.py": blocks})
    assert _lint(train) == [(10, "MEM202")]


def test_a_function_one_deep_counts_two_deep_does_not(tmp_path):
    blocks = """\
    from torch import nn


    def norm(kind, c):
        return nn.BatchNorm2d(c) if kind == "batch" else nn.InstanceNorm2d(c)


    def conv_block(c, kind=None):
        return nn.Sequential(nn.Conv2d(c, c, 3), norm(kind, c) if kind else nn.Identity())


    def bn_block(c):
        return nn.Sequential(nn.Conv2d(c, c, 3), nn.BatchNorm2d(c))
    """
    two_deep = _project(
        tmp_path / "a", "B.conv_block(dim)", extra="\n    import blocks as B\n", files={"blocks.py": blocks}
    )
    assert _lint(two_deep) == []
    one_deep = _project(
        tmp_path / "b", "B.bn_block(dim)", extra="\n    import blocks as B\n", files={"blocks.py": blocks}
    )
    assert _lint(one_deep) == [(10, "MEM202")]


def _entries(source: str) -> list[str]:
    tree = ast.parse(textwrap.dedent(source))
    bindings, _ = module_bindings(tree)
    return mode_entries(tree, [n.name for n in tree.body if isinstance(n, ast.ClassDef)], bindings)


def test_the_entries_name_layers_callees_and_own_modes():
    entries = _entries(
        """\
        import torch.nn.functional as F
        from torch import nn
        from torchvision import models
        from blocks import *


        class Pre(nn.Module):
            def forward(self, x):
                return F.dropout(x, 0.5, training=self.training)


        class Own(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm1d(4)
                self.eval()


        class Wrap(nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b = Pre(), Starred(len([1]))


        class Res(models.ResNet):
            pass


        def plain():
            return nn.Linear(2, 2)
        """
    )
    assert entry_of(entries, "Pre") == "*"
    assert entry_of(entries, "Own") is None
    assert entry_of(entries, "Wrap") == "Pre,Starred"
    assert entry_of(entries, "Res") == "*"
    assert entry_of(entries, "plain") is None


def test_the_entries_survive_the_summary_cache():
    summary = ModuleSummary(mode_entries=["Coder=*", "Wrap=blocks.Block"])
    assert ModuleSummary.from_json(summary.to_json()).mode_entries == ["Coder=*", "Wrap=blocks.Block"]
