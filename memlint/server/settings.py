"""Which rules run on a document: ``[tool.memlint]`` of the nearest
pyproject.toml, then the client's own settings on top.

Client settings (``initializationOptions`` or ``workspace/didChangeConfiguration``,
either bare or under a ``memlint`` key)::

    {"select": ["MEM1"], "ignore": ["MEM403"], "unsafeFixes": true}

``select`` replaces the configured selection (its ignores included), ``ignore``
adds to the configured ignores and ``unsafeFixes`` overrides ``unsafe-fixes``,
as the same command-line options do for ``memlint check``. The config is the
one ``memlint check`` uses for the same file (memlint.find.resolver).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memlint.find.config import Config, ConfigError
from memlint.find.resolver import ConfigResolver
from memlint.rule import Rule
from memlint.run.results import Settings
from memlint.run.runner import per_file_ignored, rules_for
from memlint.run.selection import known_prefix


@dataclass(frozen=True)
class ClientSettings:
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    unsafe_fixes: bool | None = None

    @classmethod
    def from_json(cls, data: Any) -> ClientSettings:
        """Settings as a client sends them; raises ConfigError on bad values."""
        if isinstance(data, dict) and isinstance(data.get("memlint"), dict):
            data = data["memlint"]
        if not isinstance(data, dict):
            return cls()
        select = _codes(data, "select")
        unsafe = data.get("unsafeFixes", data.get("unsafe_fixes"))
        if unsafe is not None and not isinstance(unsafe, bool):
            raise ConfigError("client setting 'unsafeFixes' must be true or false")
        return cls(select=select, ignore=_codes(data, "ignore") or (), unsafe_fixes=unsafe)


def _codes(data: dict, key: str) -> tuple[str, ...] | None:
    value = data.get(key)
    if value is None:
        return None
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise ConfigError(f"client setting '{key}' must be a list of rule codes")
    codes = tuple(v.strip().upper() for v in value if v.strip())
    for code in codes:
        if not known_prefix(code):
            raise ConfigError(f"client setting '{key}' has unknown rule code '{code}'")
    return codes


@dataclass(frozen=True)
class DocumentSettings:
    rules: tuple[type[Rule], ...]
    unsafe_fixes: bool


class SettingsStore:
    """Configs per folder, read once and dropped when a pyproject.toml changes."""

    def __init__(self) -> None:
        self.client = ClientSettings()
        self._resolver = ConfigResolver()

    def forget_configs(self) -> None:
        self._resolver.forget()

    def config_for(self, path: str) -> Config:
        return self._resolver.config_for_folder(Path(path).resolve().parent)

    def for_document(self, path: str) -> DocumentSettings:
        """Raises ConfigError when the pyproject.toml that applies is broken."""
        config = self.config_for(path)
        client = self.client
        settings = Settings(
            select=tuple(config.select) if config.select is not None else None,
            extend_select=tuple(config.extend_select),
            ignore=tuple(config.ignore),
            override=(client.select or None, (), client.ignore),
            per_file_ignores=tuple((k, tuple(v)) for k, v in config.per_file_ignores.items()),
            root=str(config.root),
        )
        rules = rules_for(settings, per_file_ignored(path, settings))
        unsafe = config.unsafe_fixes if client.unsafe_fixes is None else client.unsafe_fixes
        return DocumentSettings(rules=tuple(rules), unsafe_fixes=unsafe)
