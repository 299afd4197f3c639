"""The import overlay of a project twin's run: a module the fix changed is
imported from its fixed text, under its original file name.

The twin runs from the original's folder with the original ``sys.path``, so
``import engine``, ``from .utils import x``, packages and ``sys.path``
tweaks resolve exactly as in the original run; only the source a changed
module is compiled from differs. ``__file__``, ``__path__`` and the module's
name are the original's (files it reads beside itself are found), and no
bytecode is read or written for it: the original's ``__pycache__`` never
holds the twin's code. Installed in the measured process (bootstrap.py),
every rank of a launcher's run included.
"""

from __future__ import annotations

import importlib.machinery
import linecache
import os
import sys


def _key(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


class OverlayLoader(importlib.machinery.SourceFileLoader):
    """The original's loader, reading the fixed text in place of the file."""

    def __init__(self, fullname: str, path: str, fixed: str) -> None:
        super().__init__(fullname, path)
        self.fixed = fixed  # the file holding the fixed text

    def get_data(self, path: str) -> bytes:
        if _key(path) == _key(self.path):
            with open(self.fixed, "rb") as fh:
                return fh.read()
        return super().get_data(path)

    def path_stats(self, path: str):
        # No stamp: SourceLoader.get_code then neither trusts a cached .pyc
        # (the original's) nor writes one (which the original run would load).
        raise OSError("memlint verify overlay: no bytecode cache")


class OverlayFinder:
    """A meta path finder placed first: the ordinary path search, then the
    fixed text for a file of the overlay."""

    def __init__(self, overlay: dict[str, str]) -> None:
        self.files = {_key(original): fixed for original, fixed in overlay.items()}
        # The last part of the module names that may hit (a cheap filter:
        # any other import goes straight to the usual finders).
        self.names = {
            os.path.basename(os.path.dirname(p))
            if os.path.basename(p) == "__init__.py"
            else os.path.splitext(os.path.basename(p))[0]
            for p in overlay
        }

    def find_spec(self, fullname, path=None, target=None):
        if fullname.rpartition(".")[2] not in self.names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not spec.origin:
            return None
        fixed = self.files.get(_key(spec.origin))
        if fixed is None:
            return None  # not ours: the usual finders, in their order
        spec.loader = OverlayLoader(fullname, spec.origin, fixed)
        spec.cached = None
        _show_in_tracebacks(spec.origin, fixed)
        return spec

    def invalidate_caches(self) -> None:
        pass


def _show_in_tracebacks(original: str, fixed: str) -> None:
    """Tracebacks of the twin show the lines that ran (the fixed text's)."""
    try:
        with open(fixed, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines(keepends=True)
    except OSError:
        return
    # No mtime: linecache.checkcache keeps the entry (the file on disk differs).
    linecache.cache[original] = (sum(map(len, lines)), None, lines, original)


def install(overlay: dict[str, str]) -> OverlayFinder | None:
    """Put the overlay first on ``sys.meta_path``; None when it is empty."""
    if not overlay:
        return None
    finder = OverlayFinder(overlay)
    sys.meta_path.insert(0, finder)
    return finder
