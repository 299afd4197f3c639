"""Which files a run looks at: directory walks, default and configured excludes."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator
from pathlib import Path

from memlint.find.config import Config, relative_to_root

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")

DEFAULT_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".memlint_cache",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pypackages__",
    "__pycache__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)


def is_excluded(path: str, patterns: list[str], root: Path) -> bool:
    """A pattern matches the path relative to the project root, or any one of
    its components (``build`` excludes every folder named build)."""
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


def exclude_patterns(config: Config) -> list[str]:
    base = list(DEFAULT_EXCLUDE) if config.exclude is None else list(config.exclude)
    return base + list(config.extend_exclude)


def _is_venv(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, "pyvenv.cfg"))


def discover(paths: list[str], config: Config, force_exclude: bool = False) -> Iterator[str]:
    """Files to lint, in a stable order. A file named on the command line is
    linted even if excluded, unless ``force_exclude`` (as pre-commit needs).
    Paths that do not exist are yielded as given so the caller reports them."""
    patterns = exclude_patterns(config)
    seen: set[str] = set()
    for given in paths:
        if os.path.isdir(given):
            for folder, dirs, files in os.walk(given):
                dirs[:] = sorted(
                    d
                    for d in dirs
                    if not is_excluded(os.path.join(folder, d), patterns, config.root)
                    and not _is_venv(os.path.join(folder, d))
                )
                for name in sorted(files):
                    if not name.endswith(SOURCE_SUFFIXES):
                        continue
                    full = os.path.normpath(os.path.join(folder, name))
                    if is_excluded(full, patterns, config.root) or full in seen:
                        continue
                    seen.add(full)
                    yield full
        else:
            if force_exclude and is_excluded(given, patterns, config.root):
                continue
            if given not in seen:
                seen.add(given)
                yield given
