"""Where a file's project starts: the nearest folder holding a project marker."""

from __future__ import annotations

import os
from collections.abc import Iterable

MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def marked_root(path: str, memo: dict[str, str | None] | None = None) -> str | None:
    """The nearest folder at or above ``path``'s folder with a marker, or
    None. ``memo``: each folder's answer, kept by the caller for one run (the
    hundreds of folders of a project share their parents: a stat per marker
    and folder once, not once per folder below it)."""
    # A source file (what a walk yields) is no folder: no stat to say so.
    source = path.endswith((".py", ".pyi", ".ipynb"))
    folder = os.path.dirname(os.path.abspath(path)) if source or not os.path.isdir(path) else os.path.abspath(path)
    seen = []
    found = None
    while True:
        if memo is not None and folder in memo:
            found = memo[folder]
            break
        seen.append(folder)
        if any(os.path.exists(os.path.join(folder, m)) for m in MARKERS):
            found = folder
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    if memo is not None:
        memo.update(dict.fromkeys(seen, found))
    return found


def walkable(root: str, path: str, memo: dict[tuple[str, str], bool] | None = None) -> bool:
    """Whether the project's walk from ``root`` reaches ``path``'s folder.
    ``memo``: each (root, folder)'s answer, kept by the caller for one run
    (the folders of a project share their parents: their stats once)."""
    folder = os.path.dirname(os.path.abspath(path))
    rel = os.path.relpath(folder, root)
    if rel == ".":
        return True
    if memo is None:
        memo = {}
    return _walkable_folder(root, folder, rel.split(os.sep), memo)


def _walkable_folder(root: str, folder: str, parts: list[str], memo: dict[tuple[str, str], bool]) -> bool:
    """``folder`` (``root`` joined with ``parts``) is reached by the walk:
    its parent is, and the walk enters it (``..``, outside the root: never)."""
    from memlint.project.modules import skipped_folder

    if not parts:
        return True
    known = memo.get((root, folder))
    if known is None:
        parent = os.path.dirname(folder) if len(parts) > 1 else root
        known = _walkable_folder(root, parent, parts[:-1], memo) and not skipped_folder(parent, parts[-1])
        memo[(root, folder)] = known
    return known


def common_root(paths: Iterable[str], normal: bool = False) -> str:
    """The deepest folder holding every one of ``paths`` (``normal``: each
    already absolute and normal, abspath's)."""
    absolute = (lambda p: p) if normal else os.path.abspath
    # A source file (what a walk yields: a run's thousands of paths) is no
    # folder: no stat to say so.
    folders = list(
        dict.fromkeys(  # each folder once: a run's files share a few hundred
            os.path.dirname(absolute(p))
            if p.endswith((".py", ".pyi", ".ipynb")) or not os.path.isdir(p)
            else absolute(p)
            for p in paths
        )
    )
    if not folders:
        return os.getcwd()
    try:
        return os.path.commonpath(folders)
    except ValueError:  # different drives
        return folders[0]


def root_limit(root: str) -> int:
    """How many files the project at ``root`` may hold (modules.project_files)."""
    from memlint.project.modules import MAX_FILES, MAX_UNMARKED_FILES

    return MAX_FILES if any(os.path.exists(os.path.join(root, m)) for m in MARKERS) else MAX_UNMARKED_FILES


def project_root(
    path: str,
    checked: Iterable[str] = (),
    memo: dict[str, str | None] | None = None,
    walks: dict[tuple[str, str], bool] | None = None,
) -> str:
    """The project ``path`` belongs to: its marked root, else the common root
    of the checked paths (``path``'s own folder when none are given). A marked
    root from which the file sits in a skipped folder (a hidden one, a
    virtual environment, ``build``: a tree kept inside another repository's
    ``.cache``) is not its project. ``memo``: marked_root's; ``walks``:
    walkable's."""
    found = marked_root(path, memo)
    if found is not None and walkable(found, path, walks):
        return found
    paths = list(checked) or [path]
    root = common_root(paths)
    here = os.path.abspath(path)
    return root if here.startswith(root.rstrip(os.sep) + os.sep) else os.path.dirname(here)
