"""The warm pass's per-file and per-folder work (the floor of a one-edit
re-lint, issue 29 point 6): a cache key finished from its folder's shared
part is the key, and the project roots of a run's folders stat each
ancestor's markers once."""

from __future__ import annotations

import os
from collections import Counter

import memlint.project.roots as roots
import memlint.run.runner as runner
from memlint.run.cache import FindingsCache
from memlint.run.results import Settings


def test_a_key_finished_from_its_head_is_the_files_key(tmp_path):
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="f" * 64)
    head = cache.key_head(("MEM101", "MEM201"), False)
    for path in (str(tmp_path / "a.py"), str(tmp_path / "sub" / "é.py")):
        assert cache.key_of(head, path, "d1") == cache.key(path, "d1", ["MEM101", "MEM201"], False)
    assert cache.key_of(head, str(tmp_path / "a.py"), "d1") != cache.key_of(head, str(tmp_path / "a.py"), "d2")
    edits = cache.key_head(("MEM101", "MEM201"), True)
    assert cache.key_of(edits, str(tmp_path / "a.py"), "d1") == cache.key(
        str(tmp_path / "a.py"), "d1", ["MEM101", "MEM201"], True
    )


def test_the_warm_pass_keys_are_those_the_workers_store_under(tmp_path):
    """_Warm._key (per folder) and _cache_key (per file, the workers') agree:
    else a warm run would miss every entry."""
    (tmp_path / "pkg").mkdir()
    paths = [str(tmp_path / "a.py"), str(tmp_path / "pkg" / "b.py")]
    for p in paths:
        open(p, "w").write("import torch\n")
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="f" * 64)
    settings = Settings(root=str(tmp_path))
    warm = runner._Warm(cache, paths)
    for i, p in enumerate(paths):
        assert warm._key(p, warm.absolute[i], "d", settings) == runner._cache_key(cache, p, "d", settings)


def test_project_roots_stat_each_folders_markers_once(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    deep = root / "a" / "b" / "c"
    for folder in (deep, root / "a" / "d", root / "e"):
        folder.mkdir(parents=True)
    (root / "setup.cfg").write_text("")
    files = [
        str(deep / "x.py"),
        str(root / "a" / "b" / "y.py"),
        str(root / "a" / "d" / "z.py"),
        str(root / "e" / "w.py"),
    ]
    asked: list[str] = []
    real = os.path.exists

    def exists(path):
        if os.path.basename(path) in roots.MARKERS:
            asked.append(os.path.dirname(path))
        return real(path)

    monkeypatch.setattr(roots.os.path, "exists", exists)
    alone = [roots.project_root(f) for f in files]
    assert max(Counter(asked).values()) > len(roots.MARKERS)  # without a memo: the root's, once per file
    asked.clear()
    memo: dict[str, str | None] = {}
    assert [roots.project_root(f, (), memo) for f in files] == alone == [str(root)] * 4
    assert max(Counter(asked).values()) <= len(roots.MARKERS)  # each folder's markers looked for once


def test_the_keys_head_is_hashed_once_per_settings_and_torch_range(tmp_path, monkeypatch):
    """Hundreds of folders share a project's rules and torch range: the
    key's head is hashed once for them all, not once per folder."""
    paths = []
    for folder in ("a", "a/b", "c", "c/d/e"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        paths.append(str(tmp_path / folder / "m.py"))
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="f" * 64)
    settings = Settings(root=str(tmp_path))
    heads = []
    real = FindingsCache.key_head
    monkeypatch.setattr(FindingsCache, "key_head", lambda self, *a: heads.append(a) or real(self, *a))
    warm = runner._Warm(cache, paths)
    keys = [warm._key(p, warm.absolute[i], "d", settings) for i, p in enumerate(paths)]
    assert len(heads) == 1
    heads.clear()
    assert keys == [runner._cache_key(cache, p, "d", settings) for p in paths]


def test_project_roots_ask_each_folder_whether_the_walk_enters_it_once(tmp_path, monkeypatch):
    """roots.walkable with the run's memo: a folder's pyvenv.cfg is looked
    for once, not once per folder below it."""
    import memlint.project.modules as modules

    root = tmp_path / "proj"
    (root / "setup.cfg").parent.mkdir()
    (root / "setup.cfg").write_text("")
    files = []
    for folder in ("a/b/c", "a/b/d", "a/e", "a/b/c/f"):
        (root / folder).mkdir(parents=True, exist_ok=True)
        files.append(str(root / folder / "m.py"))
    (root / "venv_like").mkdir()
    (root / "venv_like" / "pyvenv.cfg").write_text("")
    files.append(str(root / "venv_like" / "m.py"))
    asked: list[tuple[str, str]] = []
    real = modules.skipped_folder
    monkeypatch.setattr(
        modules, "skipped_folder", lambda parent, name, *a: asked.append((parent, name)) or real(parent, name, *a)
    )
    alone = [roots.project_root(f) for f in files]
    asked.clear()
    marks: dict[str, str | None] = {}
    walks: dict[tuple[str, str], bool] = {}
    assert [roots.project_root(f, (), marks, walks) for f in files] == alone
    assert alone[:4] == [str(root)] * 4 and alone[4] != str(root)  # a virtual environment is not walked
    assert max(Counter(asked).values()) == 1
