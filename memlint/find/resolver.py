"""Which ``[tool.memlint]`` applies to a file: the nearest one up the file's
folder tree, whatever paths were named on the command line (as ruff does), or
the one file ``--config`` names, for every file.

Every front end asks this one resolver: ``memlint check`` per file found (so
``memlint check .``, a list of files from pre-commit and a single file agree),
the flake8 plugin per file flake8 hands it, the language server per document.
A folder's answer is remembered, and a folder's lookup stops at the first
ancestor already answered, so a walk over a tree reads each folder's
pyproject.toml once: linear in the number of folders.
"""

from __future__ import annotations

import os
from pathlib import Path

from memlint.find.config import Config, ConfigUnreadable, load_config, read_config


class ConfigResolver:
    def __init__(self, explicit: str | None = None, *, lenient: bool = False) -> None:
        # lenient: a pyproject.toml that is not TOML at all governs its files
        # with the defaults (its project root kept), and is listed in
        # ``broken`` for the caller to report; strict callers get the error.
        self.lenient = lenient
        self.broken: dict[Path, str] = {}
        # --config: one file for all, read (and checked) once, up front.
        self.forced = load_config(explicit) if explicit else None
        # folder -> (nearest pyproject.toml with a [tool.memlint] table,
        #            nearest pyproject.toml at all), both None when none.
        self._found: dict[str, tuple[Path | None, Path | None]] = {}
        self._configs: dict[Path, Config] = {}
        self._default: Config | None = None
        self._by_folder: dict[str, Config] = {}  # the folder as asked, before resolving links

    def config_for(self, path: str | os.PathLike) -> Config:
        """The settings for a file (its folder's; a folder's own for a folder)."""
        if self.forced is not None:
            return self.forced
        absolute = os.path.abspath(path)
        # A source file found by the walk is a file: no stat needed to say so.
        is_file = absolute.endswith((".py", ".pyi", ".ipynb")) or not os.path.isdir(absolute)
        folder = os.path.dirname(absolute) if is_file else absolute
        known = self._by_folder.get(folder)
        if known is not None:
            return known
        if not os.path.isdir(folder):  # stdin, an unsaved buffer: the working folder's
            folder = os.getcwd()
        return self.config_for_folder(folder)

    def config_for_folder(self, folder: str | os.PathLike) -> Config:
        if self.forced is not None:
            return self.forced
        asked = os.fspath(folder)
        known = self._by_folder.get(asked)
        if known is None:
            known = self._by_folder[asked] = self._inherited(asked) or self._config_of(asked)
        return known

    def _inherited(self, folder: str) -> Config | None:
        """The parent folder's config, already known, when ``folder`` is a
        plain subfolder (not a link) without a pyproject.toml: the nearest
        one is then its parent's. A walk asks per folder; resolving each
        path again cost more than the rest of a warm run's discovery."""
        parent, name = os.path.split(folder)
        known = self._by_folder.get(parent)
        if known is None or name in ("", ".", "..") or os.path.islink(folder):
            return None
        return None if os.path.isfile(os.path.join(folder, "pyproject.toml")) else known

    def _config_of(self, folder: str) -> Config:
        with_table, any_ = self._lookup(str(Path(folder).resolve()))
        path = with_table or any_
        if path is None:
            if self._default is None:
                self._default = Config()
            return self._default
        config = self._configs.get(path)
        if config is None:
            # A broken file raises ConfigError here, for the files it governs.
            config = self._configs[path] = self._read(path)
        return config

    def _read(self, path: Path) -> Config:
        try:
            return read_config(path)
        except ConfigUnreadable as exc:
            if not self.lenient:
                raise
            self.broken[path] = str(exc)
            return Config(root=path.parent.resolve())

    def forget(self) -> None:
        """Drop what was read (a pyproject.toml was edited: the server)."""
        self._found.clear()
        self._configs.clear()
        self.broken.clear()
        self._by_folder.clear()
        self._default = None

    def _lookup(self, folder: str) -> tuple[Path | None, Path | None]:
        """find_pyproject's answer for ``folder``, each folder asked once."""
        pending: list[str] = []
        current = folder
        answer: tuple[Path | None, Path | None] = (None, None)
        while True:
            known = self._found.get(current)
            if known is not None:
                answer = known
                break
            pending.append(current)
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        for here in reversed(pending):  # from the top down, each on its parent's answer
            answer = _own_answer(here, answer)
            self._found[here] = answer
        return answer


def _own_answer(folder: str, parents: tuple[Path | None, Path | None]) -> tuple[Path | None, Path | None]:
    candidate = Path(folder, "pyproject.toml")
    if not candidate.is_file():
        return parents
    try:
        has_table = "[tool.memlint" in candidate.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return parents
    return (candidate if has_table else parents[0]), candidate
