"""Exclusion patterns: the compiled matcher excludes exactly what fnmatch did.

discovery.is_excluded compiles every pattern once into two regexes (the whole
relative path, and one component); the reference below is the first form, one
fnmatch call per pattern and per component.
"""

from __future__ import annotations

import fnmatch
import itertools
from pathlib import Path

from memlint.find.config import load_config, relative_to_root
from memlint.find.discovery import DEFAULT_EXCLUDE, discover, is_excluded

PATTERNS = [
    *DEFAULT_EXCLUDE,
    "*.pyi",
    "gen/*",
    "./scripts",
    "docs/",
    "src/*/legacy",
    "test_?.py",
    "[!a]*_pb2.py",
    "[ab]uild",
    "**/fixtures/*",
    "a*b*c",
    "",
    "*",
]
PATHS = [
    "x.py",
    "a/b/c.py",
    "build/x.py",
    "src/build/x.py",
    "src/pkg/legacy/y.py",
    "src/pkg/legacy",
    "gen/out.py",
    "gen",
    "scripts/run.py",
    "./scripts/run.py",
    "docs/conf.py",
    "test_1.py",
    "tests/test_12.py",
    "proto/a_pb2.py",
    "proto/b_pb2.py",
    "auild/x.py",
    "x/fixtures/y.py",
    "fixtures/y.py",
    "abc/d.py",
    "aXbYc",
    ".venv/lib/site.py",
    "pkg/__pycache__/m.py",
    "stub.pyi",
]


def reference(path, patterns, root):
    rel = relative_to_root(path, root)
    parts = rel.split("/")
    for pattern in patterns:
        pat = pattern.rstrip("/")
        if pat.startswith("./"):
            pat = pat[2:]
        if fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(rel, pat + "/*"):
            return True
        if "/" not in pat and any(fnmatch.fnmatch(part, pat) for part in parts):
            return True
    return False


def test_every_pattern_alone_and_in_pairs_excludes_what_fnmatch_did(tmp_path):
    root = tmp_path
    groups = [[p] for p in PATTERNS] + [list(pair) for pair in itertools.combinations(PATTERNS[-13:], 2)]
    groups += [PATTERNS, []]
    excluded = 0
    for patterns in groups:
        for rel in PATHS:
            path = str(root / rel)
            expected = reference(path, patterns, root)
            assert is_excluded(path, patterns, root) == expected, (patterns, rel)
            excluded += expected
    assert excluded > 100  # the table exercises both answers


def test_paths_outside_the_root(tmp_path):
    inside = tmp_path / "proj"
    for path in ("/elsewhere/build/x.py", str(tmp_path / "gen" / "a.py"), "relative/build/y.py"):
        for patterns in (["build"], ["gen/*"], ["../*"], list(DEFAULT_EXCLUDE)):
            assert is_excluded(path, patterns, inside) == reference(path, patterns, inside)


def test_discover_walks_the_same_files(tmp_path):
    for rel in ("a.py", "build/b.py", "src/c.py", "src/gen/d.py", "src/e.ipynb", "venvish/f.py", "docs/g.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    (tmp_path / "pyproject.toml").write_text('[tool.memlint]\nextend-exclude = ["src/gen", "docs/"]\n')
    config = load_config(None, Path(tmp_path))
    found = [Path(p).relative_to(tmp_path).as_posix() for p in discover([str(tmp_path)], config)]
    assert found == ["a.py", "src/c.py", "src/e.ipynb", "venvish/f.py"]


def test_a_folders_entries_are_excluded_as_each_path_alone():
    """discover matches a folder's own components once for all its entries
    (_entry_matcher): the same answer as is_excluded of every path."""
    from memlint.find.discovery import _entry_matcher, _excluded

    groups = [[p] for p in PATTERNS] + [PATTERNS, []]
    for patterns in groups:
        for rel in PATHS:
            folder, _, name = rel.rpartition("/")
            prefix = folder + "/" if folder else ""
            assert _entry_matcher(prefix, patterns)(name) == _excluded(rel, patterns), (patterns, rel)


def test_discovered_paths_are_normal_whatever_the_spelling_of_the_folder(tmp_path, monkeypatch):
    (tmp_path / "proj" / "sub").mkdir(parents=True)
    for rel in ("proj/a.py", "proj/sub/b.py"):
        (tmp_path / rel).write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    config = load_config(None, Path(tmp_path))
    for given in ("proj", "./proj", "proj/", "proj/./sub/..", "."):
        assert list(discover([given], config)) == ["proj/a.py", "proj/sub/b.py"], given
    assert list(discover([str(tmp_path / "proj")], config)) == [
        str(tmp_path / "proj" / "a.py"),
        str(tmp_path / "proj" / "sub" / "b.py"),
    ]
