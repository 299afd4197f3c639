"""Which files a run looks at: directory walks, default and configured excludes."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path

from memlint.find.config import Config, relative_to_root
from memlint.find.resolver import ConfigResolver

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
    return _excluded(relative_to_root(path, root), patterns)


def _excluded(rel: str, patterns: list[str]) -> bool:
    """is_excluded of the path ``rel`` relative to the root (with ``/``)."""
    whole, component = _matchers(tuple(patterns))
    if whole is not None and whole.match(os.path.normcase(rel)):
        return True
    return component is not None and any(component.match(os.path.normcase(part)) for part in rel.split("/"))


def _entry_matcher(prefix: str, patterns: list[str]) -> Callable[[str], bool]:
    """``_excluded(prefix + name, patterns)`` for the entries ``name`` of one
    folder (``prefix``: its path relative to the root, with a trailing ``/``,
    or empty): the folder's own components are matched once, not again for
    each of its files (every component of a deep path, per file, was a third
    of a warm run's discovery)."""
    whole, component = _matchers(tuple(patterns))
    if component is not None and prefix and any(component.match(os.path.normcase(p)) for p in prefix[:-1].split("/")):
        return lambda name: True
    if whole is None and component is None:
        return lambda name: False

    def excluded(name: str) -> bool:
        if whole is not None and whole.match(os.path.normcase(prefix + name)):
            return True
        return component is not None and any(component.match(os.path.normcase(p)) for p in name.split("/"))

    return excluded


@lru_cache(maxsize=64)
def _matchers(patterns: tuple[str, ...]) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
    """Every pattern in two regexes, compiled once: one for the whole relative
    path (``pat`` or ``pat/*``) and one for a component (patterns without a
    slash). fnmatch would compile and case-fold each pattern again per path,
    a million calls on transformers' 2,860 files; this matches the same paths
    (``fnmatch.fnmatch`` is ``fnmatchcase`` on ``os.path.normcase`` of both)."""
    whole: list[str] = []
    component: list[str] = []
    for pattern in patterns:
        pat = pattern.rstrip("/")
        if pat.startswith("./"):
            pat = pat[2:]
        whole += [fnmatch.translate(os.path.normcase(pat)), fnmatch.translate(os.path.normcase(pat + "/*"))]
        if "/" not in pat:
            component.append(fnmatch.translate(os.path.normcase(pat)))
    return _either(whole), _either(component)


def _either(regexes: list[str]) -> re.Pattern[str] | None:
    return re.compile("|".join(regexes)) if regexes else None


def exclude_patterns(config: Config) -> list[str]:
    base = list(DEFAULT_EXCLUDE) if config.exclude is None else list(config.exclude)
    return base + list(config.extend_exclude)


def _is_venv(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, "pyvenv.cfg"))


def discover(paths: list[str], config: Config | ConfigResolver, force_exclude: bool = False) -> Iterator[str]:
    """Files to lint, in a stable order. A file named on the command line is
    linted even if excluded, unless ``force_exclude`` (as pre-commit needs).
    Paths that do not exist are yielded as given so the caller reports them.

    ``config``: one Config for every file, or a resolver: then each folder
    walked is filtered by the excludes of the config nearest to it, relative
    to that config's folder (a nested project's excludes hold inside it)."""
    config_for = config.config_for if isinstance(config, ConfigResolver) else (lambda path: config)
    seen: set[str] = set()
    for given in paths:
        if os.path.isdir(given):
            for folder, dirs, files in os.walk(given):
                here = config_for(folder)
                patterns = exclude_patterns(here)
                # Each entry's path relative to the root is the folder's and
                # its name (is_excluded's, without a relpath per file).
                base = relative_to_root(folder, here.root)
                prefix = "" if base == "." else base + "/"
                excluded = _entry_matcher(prefix, patterns)
                dirs[:] = sorted(d for d in dirs if not excluded(d) and not _is_venv(os.path.join(folder, d)))
                # normpath(join(folder, name)) of a listed name (no separator,
                # never ``.`` or ``..``): the folder normalised once.
                normal = os.path.normpath(folder)
                head = "" if normal == os.curdir else os.path.join(normal, "")
                for name in sorted(files):
                    if not name.endswith(SOURCE_SUFFIXES):
                        continue
                    full = head + name
                    if excluded(name) or full in seen:
                        continue
                    seen.add(full)
                    yield full
        else:
            if force_exclude:
                own = config_for(given)
                if is_excluded(given, exclude_patterns(own), own.root):
                    continue
            if given not in seen:
                seen.add(given)
                yield given
