"""``[tool.memlint]`` in the nearest pyproject.toml, validated key by key."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from memlint.find.suggest import did_you_mean

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

OUTPUT_FORMATS = ("text", "concise", "json", "json-lines", "sarif", "github", "gitlab", "junit", "rdjson")


class ConfigError(Exception):
    """A broken configuration; the message names the file and the key."""


class ConfigUnreadable(ConfigError):
    """A configuration file that cannot be read as TOML at all: a project's
    packaging file may be broken in a table that is not memlint's, so a run
    over many files checks the files it governs with the defaults instead."""


@dataclass
class Config:
    path: Path | None = None  # the pyproject.toml it came from
    root: Path = field(default_factory=Path.cwd)  # where relative patterns start
    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] | None = None
    extend_exclude: list[str] = field(default_factory=list)
    unsafe_fixes: bool = False
    output_format: str | None = None
    cache_dir: str | None = None
    torch_version: str | None = None  # the oldest torch the project supports (find/torch_floor.py)


_LIST_KEYS = {"select", "extend-select", "ignore", "exclude", "extend-exclude"}
_KNOWN = _LIST_KEYS | {"per-file-ignores", "unsafe-fixes", "output-format", "cache-dir", "torch-version"}


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml that has a [tool.memlint] table, else the
    nearest pyproject.toml at all (so a project root is still found)."""
    first = None
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            if first is None:
                first = candidate
            try:
                if "[tool.memlint" in candidate.read_text(encoding="utf-8", errors="replace"):
                    return candidate
            except OSError:
                continue
    return first


def load_config(explicit: str | None = None, start: Path | None = None) -> Config:
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"{explicit}: no such config file")
    else:
        path = find_pyproject((start or Path.cwd()).resolve())
        if path is None:
            return Config()
    return read_config(path)


def read_config(path: Path) -> Config:
    """The settings in ``path``: ``[tool.memlint]`` of a pyproject.toml, or a
    TOML file with the keys at its top level."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigUnreadable(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigUnreadable(f"{path}: invalid TOML: {exc}") from None
    # A standalone memlint.toml-style file given with --config may hold the
    # keys at the top level; a pyproject.toml holds them under [tool.memlint].
    if path.name == "pyproject.toml" or "tool" in data:
        table = data.get("tool", {}).get("memlint", {})
    else:
        table = data
    return parse_table(table, path)


def parse_table(table: object, path: Path) -> Config:
    where = f"{path}: [tool.memlint]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    config = Config(path=path, root=path.parent.resolve())
    for key, value in table.items():
        if key not in _KNOWN:
            hint = did_you_mean(key, _KNOWN)
            raise ConfigError(f"{where}: unknown key '{key}'{hint} (known: {', '.join(sorted(_KNOWN))})")
        if key in _LIST_KEYS:
            if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                raise ConfigError(f"{where}: '{key}' must be a list of strings")
            setattr(config, key.replace("-", "_"), list(value))
        elif key == "per-file-ignores":
            if not isinstance(value, dict) or not all(
                isinstance(v, list) and all(isinstance(c, str) for c in v) for v in value.values()
            ):
                raise ConfigError(f"{where}: 'per-file-ignores' must map glob patterns to lists of codes")
            config.per_file_ignores = {k: list(v) for k, v in value.items()}
        elif key == "unsafe-fixes":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: 'unsafe-fixes' must be true or false")
            config.unsafe_fixes = value
        elif key == "output-format":
            if value not in OUTPUT_FORMATS:
                raise ConfigError(f"{where}: 'output-format' must be one of {', '.join(OUTPUT_FORMATS)}")
            config.output_format = value
        elif key == "cache-dir":
            if not isinstance(value, str):
                raise ConfigError(f"{where}: 'cache-dir' must be a string")
            config.cache_dir = value
        elif key == "torch-version":
            from memlint.find.torch_floor import TorchVersionError, range_of_setting

            if not isinstance(value, str):
                raise ConfigError(f"{where}: 'torch-version' must be a string such as \"1.8\"")
            try:
                range_of_setting(value, where)
            except TorchVersionError as exc:
                raise ConfigError(f"{where}: {exc}") from None
            config.torch_version = value
    _check_codes(config, where)
    return config


def _check_codes(config: Config, where: str) -> None:
    from memlint.run.selection import CODES, known_prefix

    for key in ("select", "extend_select", "ignore"):
        for code in getattr(config, key) or []:
            if not known_prefix(code):
                raise ConfigError(
                    f"{where}: '{key.replace('_', '-')}' has unknown rule code '{code}'{did_you_mean(code.upper(), CODES)}"
                )
    for pattern, codes in config.per_file_ignores.items():
        for code in codes:
            if not known_prefix(code):
                raise ConfigError(
                    f"{where}: 'per-file-ignores' entry '{pattern}' has unknown rule code '{code}'"
                    f"{did_you_mean(code.upper(), CODES)}"
                )


def relative_to_root(path: str, root: Path) -> str:
    try:
        return os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    except ValueError:  # different drive on Windows
        return path.replace(os.sep, "/")
