"""Where a file's project starts: the nearest folder holding a project marker."""

from __future__ import annotations

import os
from collections.abc import Iterable

MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def marked_root(path: str) -> str | None:
    """The nearest folder at or above ``path``'s folder with a marker, or None."""
    folder = os.path.dirname(os.path.abspath(path)) if not os.path.isdir(path) else os.path.abspath(path)
    while True:
        if any(os.path.exists(os.path.join(folder, m)) for m in MARKERS):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def common_root(paths: Iterable[str]) -> str:
    """The deepest folder holding every one of ``paths``."""
    folders = [os.path.abspath(p) if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) for p in paths]
    if not folders:
        return os.getcwd()
    try:
        return os.path.commonpath(folders)
    except ValueError:  # different drives
        return folders[0]


def project_root(path: str, checked: Iterable[str] = ()) -> str:
    """The project ``path`` belongs to: its marked root, else the common root
    of the checked paths (``path``'s own folder when none are given)."""
    found = marked_root(path)
    if found is not None:
        return found
    paths = list(checked) or [path]
    root = common_root(paths)
    here = os.path.abspath(path)
    return root if here.startswith(root.rstrip(os.sep) + os.sep) else os.path.dirname(here)
