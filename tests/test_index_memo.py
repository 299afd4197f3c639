"""The project index answers repeated questions from memory: import
resolution (ModuleMap.resolve) and the modules switching an attribute
(_switched_attrs) are worked out once, not once per view."""

from __future__ import annotations

import os
from types import SimpleNamespace

from memlint.project import modules as modules_module
from memlint.project.index import ProjectIndex
from memlint.project.modules import ModuleMap
from memlint.project.summary import ModuleSummary


def _files(root: str) -> list[str]:
    return [os.path.join(root, p) for p in ("pkg/__init__.py", "pkg/engine.py", "pkg/a.py", "pkg/b.py", "train.py")]


def test_resolve_asked_again_from_the_same_folder_joins_no_path(tmp_path, monkeypatch):
    root = str(tmp_path)
    modules = ModuleMap(root, _files(root))
    first = modules.resolve("pkg.engine.evaluate", os.path.join(root, "pkg", "a.py"))
    relative = modules.resolve(".engine.evaluate", os.path.join(root, "pkg", "a.py"))
    assert first == relative == (os.path.join(root, "pkg", "engine.py"), "evaluate")

    def no_join(*parts):
        raise AssertionError(f"path joined again: {parts}")

    # modules.py's own ``os``, with a path.join that fails (pytest needs the real one).
    path = SimpleNamespace(join=no_join, dirname=os.path.dirname, abspath=os.path.abspath, isabs=os.path.isabs)
    monkeypatch.setattr(modules_module, "os", SimpleNamespace(path=path))
    # Another module of the same package: the same answers, from memory.
    assert modules.resolve("pkg.engine.evaluate", os.path.join(root, "pkg", "b.py")) == first
    assert modules.resolve(".engine.evaluate", os.path.join(root, "pkg", "b.py")) == first


def test_resolve_memo_keeps_each_folder_and_sys_path_apart(tmp_path):
    root = str(tmp_path)
    files = [*_files(root), os.path.join(root, "tools", "engine.py"), os.path.join(root, "tools", "run.py")]
    modules = ModuleMap(root, files)
    # ``import engine`` from a script folder is its neighbour; from the root it is unknown.
    assert modules.resolve("engine", os.path.join(root, "tools", "run.py")) == (files[5], "")
    assert modules.resolve("engine", os.path.join(root, "train.py")) is None
    assert modules.resolve("engine", os.path.join(root, "train.py"), (os.path.join(root, "tools"),)) == (files[5], "")
    assert modules.resolve("engine", os.path.join(root, "train.py")) is None


class _CountingItems(dict):
    scans = 0

    def items(self):
        type(self).scans += 1
        return super().items()


def test_switched_attrs_scans_the_summaries_once_for_every_view(tmp_path):
    root = str(tmp_path)
    solver = ModuleSummary(plain_attrs=["G"])
    other = ModuleSummary(plain_attrs=["G", "D"])
    user = ModuleSummary(attr_switches=["G"])
    paths = [os.path.join(root, n) for n in ("solver.py", "other.py", "main.py")]
    index = ProjectIndex(root, dict(zip(paths, [solver, other, user])))
    index.summaries = _CountingItems(index.summaries)
    assert index._switched_attrs(paths[0], solver) == ("G",)
    assert index._switched_attrs(paths[1], other) == ("G",)
    assert index._switched_attrs(paths[2], ModuleSummary(plain_attrs=["G"])) == ()  # its own switch is not another's
    assert _CountingItems.scans == 1
