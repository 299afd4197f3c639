"""An edited file settled with its last view (run/kept_views.py, issue 29
point 6): a comment appended to a module that waited only for a card's
project part (MEM802: a loop and a project import, no ``.step()`` of its
own) builds no index and imports no rule; a change elsewhere that its view reads, or a file
added, builds it, and the finding it makes is reported."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import memlint.project.index as index_module
import memlint.run.runner as runner
from memlint.run.cache import FindingsCache
from memlint.run.results import Settings

TRAINER = """\
import torch
from torch.optim import lr_scheduler


class Trainer(torch.nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.opt = torch.optim.Adam(net.parameters())
        self.sched = lr_scheduler.StepLR(self.opt, step_size=10)

    def update(self, x):
        self.opt.zero_grad()
        self.net(x).mean().backward()
        self.opt.step()

    def update_learning_rate(self):
        {body}
"""

TRAIN = """\
import torch

from trainer import Trainer

trainer = Trainer(net)
for x in loader:
    trainer.update_learning_rate()
    trainer.update(x)
"""


def _project(tmp_path: Path, body: str | None) -> list[str]:
    (tmp_path / ".git").mkdir()
    if body is not None:
        (tmp_path / "trainer.py").write_text(textwrap.dedent(TRAINER.format(body=body)))
    (tmp_path / "train.py").write_text(TRAIN)
    return sorted(str(p) for p in tmp_path.glob("*.py"))


def _run(files: list[str], cache: FindingsCache, root: Path) -> list[tuple[str, int, str]]:
    reports = runner.run(files, Settings(root=str(root)), jobs=1, cache=cache)
    return sorted((os.path.basename(r.path), f.line, f.code) for r in reports for f in r.findings)


def _counting(monkeypatch) -> list[str]:
    built: list[str] = []
    real = index_module.build_index

    def counting(root, *args, **kwargs):
        built.append(root)
        return real(root, *args, **kwargs)

    monkeypatch.setattr(index_module, "build_index", counting)
    return built


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def test_a_comment_in_a_settled_file_builds_no_index(tmp_path, monkeypatch):
    files = _project(tmp_path, "print('no scheduler stepped')")
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="test")
    built = _counting(monkeypatch)
    assert _run(files, cache, tmp_path) == []
    assert built  # the cold run settles train.py with its view
    imported: list[object] = []  # the rules (and libcst): never asked for
    real_rules = runner.rules_for
    monkeypatch.setattr(runner, "rules_for", lambda *a: imported.append(a) or real_rules(*a))
    for n in range(2):  # and again after the first edit: the edit's state is kept
        built.clear()
        _append(tmp_path / "train.py", f"# edit {n}\n")
        assert _run(files, cache, tmp_path) == []
        assert built == [] and imported == []
    assert _run(files, None, tmp_path) == []  # type: ignore[arg-type]


def test_a_changed_module_the_view_read_builds_the_index(tmp_path, monkeypatch):
    """trainer.py's method starts stepping the scheduler, and train.py gets
    a comment (its summary unchanged): its old view would keep MEM802 silent."""
    files = _project(tmp_path, "print('no scheduler stepped')")
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="test")
    built = _counting(monkeypatch)
    assert _run(files, cache, tmp_path) == []
    trainer = tmp_path / "trainer.py"
    trainer.write_text(trainer.read_text().replace("print('no scheduler stepped')", "self.sched.step()"))
    _append(tmp_path / "train.py", "# edit\n")
    built.clear()
    assert _run(files, cache, tmp_path) == [("train.py", 7, "MEM802")]
    assert built
    assert _run(files, None, tmp_path) == [("train.py", 7, "MEM802")]  # type: ignore[arg-type]


def test_a_file_added_builds_the_index(tmp_path, monkeypatch):
    """train.py's import of trainer resolved nowhere; trainer.py appears."""
    files = _project(tmp_path, None)
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="test")
    built = _counting(monkeypatch)
    assert _run(files, cache, tmp_path) == []
    (tmp_path / "trainer.py").write_text(textwrap.dedent(TRAINER.format(body="self.sched.step()")))
    _append(tmp_path / "train.py", "# edit\n")
    built.clear()
    files = sorted(str(p) for p in tmp_path.glob("*.py"))
    assert _run(files, cache, tmp_path) == [("train.py", 7, "MEM802")]
    assert built
