"""The torch versions a project declares it runs on: its floor, and its ceiling.

A fix that writes ``torch.amp.GradScaler("cuda")`` breaks a project that
still supports torch 1.8, and a deprecation of torch 2.4 does not concern a
project pinned to 2.1. So the rules that report torch API migrations
(rule/migrations.py) ask what range of torch the checked file's project
accepts. The answer is read, statically, from the project's own files in the
file's folder or the nearest folder above it that declares torch:

- ``pyproject.toml``: ``[project] dependencies`` and ``optional-dependencies``;
- ``requirements*.txt`` and ``requirements/*.txt``, following ``-r`` and
  ``-c`` includes;
- ``setup.py``: the literal ``install_requires`` and ``extras_require`` of
  the ``setup(...)`` call, read with ``ast`` (never executed), a list bound
  to a module-level name included;
- ``setup.cfg``: ``[options] install_requires`` and ``[options.extras_require]``;
- conda environment files, by the names people give them (``environment*.yml``,
  ``conda*.yml``, ``*env*.yml``, ``.yaml`` too) when they hold a top-level
  ``dependencies:`` list: conda's ``pytorch`` in it (``pytorch=1.8`` is
  conda's ``1.8.*``) and the ``pip:`` section's ``torch``; other YAML (a
  config that merely names torch) is not read.

The ``torch-version`` setting of ``[tool.memlint]`` overrides them all, as
ruff's ``target-version`` does: it names the oldest torch the project
supports. The climb stops at a project root (a folder holding ``.git``,
``setup.py``, a ``pyproject.toml`` with a ``[project]``, ``[build-system]``
or ``[tool.poetry]`` table, or a ``setup.cfg`` with ``[options]``) once it is
read; a ``setup.cfg`` or ``pyproject.toml`` of tool settings alone (a
vendored library's flake8 and pytest configuration) does not end it.

Several requirements combine conservatively: the floor is the lowest lower
bound any of them states (a fix must work on every torch the project
accepts), the ceiling the highest upper bound, and none as soon as one
requirement sets no upper bound. A bare ``torch`` says nothing: no floor.

A requirement written as an equality (``torch==1.0.0``, conda's
``pytorch=1.8``) also names the torch the project's authors ran
(``TorchRange.pinned``): behaviour that changed in a release
(``TorchRange.predates``: MEM802's scheduler order, MEM602's argument) is
judged by it even where another file allows newer releases (a later
``setup.py`` saying ``<1.4``), as the code was written for the pin.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Version = tuple[int, ...]

# A conda environment file's name: ``environment*.yml``, ``conda*.yml``,
# ``*env*.yml`` (``conda_env.yml``, ``env-gpu.yaml``); read only when it holds
# a top-level ``dependencies:`` list (_environment).
_ENVIRONMENT_NAME = re.compile(r"^(?:environment|conda)[^/]*\.ya?ml$|^[^/]*env[^/]*\.ya?ml$", re.IGNORECASE)
# The top-level key of the list, and any other top-level line that ends it.
_DEPENDENCIES = re.compile(r"^dependencies\s*:\s*(?:#.*)?$")
_TOP_LEVEL = re.compile(r"^[^\s#-]")
# ``torch``, extras, then the specifiers up to a marker, URL or comment.
_PEP508 = re.compile(r"^\s*torch(?![\w.-])\s*(?:\[[^\]]*\])?\s*(?P<spec>[^;@#]*)", re.IGNORECASE)
_CLAUSE = re.compile(r"^\s*(===|==|!=|~=|<=|>=|<|>)\s*v?([0-9][0-9A-Za-z.*+!_-]*)\s*$")
_RELEASE = re.compile(r"^(?:\d+!)?(\d+(?:\.\d+)*)")
# A conda dependency line: ``- pytorch=1.8``, ``- pytorch::pytorch >=1.8``,
# ``- pytorch 1.8.*``; and a pip line in the pip section: ``- torch==1.8.1``.
_CONDA_LINE = re.compile(r"^\s*-\s*(?:[\w.-]+::)?(?P<name>pytorch|torch)(?![\w.-])\s*(?P<spec>[^#]*)", re.IGNORECASE)


class TorchVersionError(ValueError):
    """A ``torch-version`` setting that is not a version."""


@dataclass(frozen=True)
class TorchRange:
    """The torch releases a project accepts, and where that was read.

    ``floor``: the oldest (None: no lower bound is declared). ``ceiling``:
    the newest, excluded unless ``ceiling_included`` (None: no upper bound).
    ``where``: the file and line (``requirements.txt:3``) or the setting;
    ``requirement``: the text as written there."""

    floor: Version | None
    ceiling: Version | None
    ceiling_included: bool
    where: str
    requirement: str
    # The releases the project pins with an equality (``torch==1.0.0``,
    # conda's ``pytorch=1.8``): the torch its authors ran. None: no pin.
    pinned: TorchRange | None = None

    def older_than(self, version: str) -> bool:
        """Some accepted release predates ``version`` (a fix that needs it
        would break there)."""
        needed = parse_version(version)
        if needed is None:
            return False
        if self.floor is not None:
            return _cmp(self.floor, needed) < 0
        # No lower bound: every release below the ceiling is accepted.
        return self.ceiling is not None and _cmp(self.ceiling, needed) <= 0

    def reaches(self, version: str) -> bool:
        """Some accepted release is ``version`` or newer (a deprecation made
        there concerns the project)."""
        since = parse_version(version)
        if since is None or self.ceiling is None:
            return True
        order = _cmp(self.ceiling, since)
        return order > 0 or (order == 0 and self.ceiling_included)

    def predates(self, version: str) -> bool:
        """The code was written for a torch older than ``version``: every
        release the project accepts is older, or every release it pins is
        (the pin names the torch it ran on, whatever range another file
        allows)."""
        return not self.reaches(version) or (self.pinned is not None and not self.pinned.reaches(version))

    def describe(self) -> str:
        """``torch 1.8`` / ``torch <2.0``: how a message names the range."""
        if self.floor is not None:
            return f"torch {format_version(self.floor)}"
        if self.ceiling is not None:
            return f"torch {'<=' if self.ceiling_included else '<'}{format_version(self.ceiling)}"
        return "torch (any version)"


def parse_version(text: str) -> Version | None:
    """The release numbers of a version (``1.8.1+cu111`` -> (1, 8, 1)), or None."""
    match = _RELEASE.match(text.strip())
    if match is None:
        return None
    return tuple(int(part) for part in match.group(1).split("."))


def format_version(version: Version) -> str:
    return ".".join(map(str, version))


def _cmp(a: Version, b: Version) -> int:
    width = max(len(a), len(b))
    a, b = a + (0,) * (width - len(a)), b + (0,) * (width - len(b))
    return (a > b) - (a < b)


def _next_release(version: Version, depth: int) -> Version:
    """The first release after every ``version[:depth].*``: (1, 8) at depth 2 -> (1, 9)."""
    head = version[:depth] if len(version) >= depth else version + (0,) * (depth - len(version))
    return head[:-1] + (head[-1] + 1,)


def range_of_specifiers(spec: str, where: str, requirement: str) -> TorchRange | None:
    """The range PEP 440 specifiers (``>=1.8,<2.0``, ``==1.8.*``, ``~=1.8.1``)
    accept; None when they bound nothing (a bare ``torch``, ``!=`` only) or do
    not parse."""
    floor: Version | None = None
    ceiling: Version | None = None
    included = False
    pins = True  # every clause an equality

    def lower(v: Version) -> None:
        nonlocal floor
        if floor is None or _cmp(v, floor) > 0:
            floor = v

    def upper(v: Version, inclusive: bool) -> None:
        nonlocal ceiling, included
        if ceiling is None or _cmp(v, ceiling) < 0 or (_cmp(v, ceiling) == 0 and not inclusive):
            ceiling, included = v, inclusive

    for clause in filter(None, (c.strip() for c in spec.split(","))):
        match = _CLAUSE.match(clause)
        if match is None:
            return None
        op, text = match.groups()
        version = parse_version(text)
        if version is None:
            return None
        pins = pins and op in ("==", "===")
        if op in ("==", "===") and text.endswith(".*"):
            lower(version)
            upper(_next_release(version, len(version)), False)
        elif op in ("==", "==="):
            lower(version)
            upper(version, True)
        elif op == "~=":
            lower(version)
            upper(_next_release(version, max(len(version) - 1, 1)), False)
        elif op in (">=", ">"):
            lower(version)
        elif op in ("<=", "<"):
            upper(version, op == "<=")
    if floor is None and ceiling is None:
        return None
    found = TorchRange(floor, ceiling, included, where, requirement)
    return pinning(found) if pins else found


def pinning(found: TorchRange) -> TorchRange:
    """``found``, read from an equality, as the pin it also is."""
    return replace(found, pinned=replace(found, pinned=None))


def range_of_requirement(line: str, where: str) -> TorchRange | None:
    """The range of one PEP 508 requirement if it names torch, else None."""
    match = _PEP508.match(line)
    if match is None:
        return None
    rest = line[match.end("spec") :].lstrip()
    if rest.startswith("@"):
        return None  # a direct reference (URL, path): no version to read
    return range_of_specifiers(match.group("spec").strip(), where, line.strip())


def range_of_setting(value: str, where: str) -> TorchRange:
    """The ``torch-version`` setting: the oldest torch the project supports."""
    version = parse_version(value) if re.fullmatch(r"\d+(\.\d+){0,2}", value.strip()) else None
    if version is None:
        raise TorchVersionError(f'\'torch-version\' must be a release such as "1.8" or "2.3.1", not {value!r}')
    return TorchRange(version, None, False, where, f'torch-version = "{value}"')


def combine(ranges: list[TorchRange]) -> TorchRange | None:
    """One range for several requirements: the lowest floor (cited), the
    highest ceiling, no ceiling if one of them has none."""
    if not ranges:
        return None
    floors = [r for r in ranges if r.floor is not None]
    cited = min(floors, key=lambda r: r.floor or ()) if floors else ranges[0]
    if any(r.ceiling is None for r in ranges):
        ceiling, included = None, False
    else:
        top = max(ranges, key=lambda r: (r.ceiling or (), r.ceiling_included))
        ceiling, included = top.ceiling, top.ceiling_included
    if len(floors) < len(ranges):
        floor = None  # one requirement sets no lower bound: any old torch is accepted
        cited = next(r for r in ranges if r.floor is None)
    else:
        floor = cited.floor
    # Several pins (``requirements.txt`` and ``environment.yml``): the code
    # ran on each of them, so the newest one counts.
    pins = [r.pinned for r in ranges if r.pinned is not None]
    pinned = combine(pins) if pins else None
    return TorchRange(floor, ceiling, included, cited.where, cited.requirement, pinned)


# == where the requirements are ===============================================


def torch_range_for(path: str | os.PathLike, setting: TorchRange | None = None) -> TorchRange | None:
    """The torch range of the project the file ``path`` belongs to; ``setting``
    (from ``torch-version``) wins when given."""
    if setting is not None:
        return setting
    return _range_from(os.path.dirname(os.path.abspath(path)))  # asked per file: no Path objects


@lru_cache(maxsize=4096)
def _range_from(folder: str) -> TorchRange | None:
    # Strings, not Path objects: asked for each folder of a warm run's files.
    parent = os.path.dirname(folder)
    if not _may_declare(folder):  # one listing, not a stat per project file name
        return None if parent == folder else _range_from(parent)
    here = Path(folder)
    found = declared_in(here)
    if found is not None:
        return combine(found)
    if parent == folder or _ends_climb(here):
        return None
    return _range_from(parent)


def _ends_climb(folder: Path) -> bool:
    """Whether ``folder`` is a project root the climb stops at. A
    ``setup.cfg`` or ``pyproject.toml`` holding only tool settings (flake8,
    pytest, isort, black: a vendored library's lint configuration) declares
    no package, so the requirements above it still apply."""
    if (folder / ".git").exists() or (folder / "setup.py").exists():
        return True
    return _declares_package(folder / "pyproject.toml", _PYPROJECT_TABLES) or _declares_package(
        folder / "setup.cfg", _SETUP_CFG_SECTIONS
    )


# The sections that make a file a package's declaration (build backend,
# metadata with dependencies), not a tool's configuration.
_PYPROJECT_TABLES = re.compile(r"^\s*\[\s*(?:project|build-system|tool\.poetry)\s*[\].]", re.MULTILINE)
_SETUP_CFG_SECTIONS = re.compile(r"^\s*\[\s*options\s*[\].]", re.MULTILINE)


def _declares_package(path: Path, sections: re.Pattern[str]) -> bool:
    try:
        text = _read(path)
    except OSError:
        return path.exists()  # unreadable: a root, as before
    return text is not None and sections.search(text) is not None


# Every name declared_in and the root markers look for (lower case: a
# case-insensitive filesystem finds ``Setup.py`` too).
_LOOKED_FOR = frozenset(("pyproject.toml", "setup.py", "setup.cfg", "requirements", ".git"))


def is_environment_file(name: str) -> bool:
    """A file name conda environment files are given (their content decides
    whether one is read: _environment)."""
    return _ENVIRONMENT_NAME.match(name) is not None


def _may_declare(folder: str) -> bool:
    """Whether the folder holds a file that declared_in reads or a root
    marker; False only when its listing shows none (most source folders)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return True  # unknown: ask the readers
    for name in names:
        low = name.lower()
        if (
            low in _LOOKED_FOR
            or (low.startswith("requirements") and low.endswith(".txt"))
            or (low.endswith((".yml", ".yaml")) and is_environment_file(low))
        ):
            return True
    return False


def declared_in(folder: Path) -> list[TorchRange] | None:
    """Every torch requirement with a version the folder's project files
    hold; [] when torch is named without a version; None when not at all."""
    named = False
    ranges: list[TorchRange] = []
    for reader in (_pyproject, _setup_py, _setup_cfg, _requirements_files, _environment):
        try:
            got = reader(folder)
        except (OSError, ValueError, SyntaxError, RecursionError, AttributeError, TypeError):
            continue  # a broken or odd project file says nothing; it is not memlint's to report
        if got is not None:
            named = True
            ranges.extend(got)
    return ranges if named else None


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None


def _from_lines(lines: list[str], relpath: str, text: str) -> list[TorchRange] | None:
    """Requirements given as strings; their line found in ``text`` for citing."""
    named = False
    ranges = []
    for line in lines:
        if not isinstance(line, str) or _PEP508.match(line) is None:
            continue
        named = True
        where = f"{relpath}:{_line_of(text, line)}"
        found = range_of_requirement(line, where)
        if found is not None:
            ranges.append(found)
    return ranges if named else None


def _line_of(text: str, needle: str) -> int:
    index = text.find(needle)
    return text.count("\n", 0, index) + 1 if index >= 0 else 1


def _pyproject(folder: Path) -> list[TorchRange] | None:
    text = _read(folder / "pyproject.toml")
    if text is None or "torch" not in text:
        return None
    project = tomllib.loads(text).get("project", {})
    lines = list(project.get("dependencies", []) or [])
    for extra in (project.get("optional-dependencies", {}) or {}).values():
        lines.extend(extra or [])
    return _from_lines(lines, "pyproject.toml", text)


def _setup_cfg(folder: Path) -> list[TorchRange] | None:
    text = _read(folder / "setup.cfg")
    if text is None or "torch" not in text:
        return None
    # Imported here: only a setup.cfg naming torch needs it, and a warm run
    # (which finds every folder's torch range) would import it for nothing.
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    lines: list[str] = []
    try:
        parser.read_string(text)
        if parser.has_option("options", "install_requires"):
            lines += parser.get("options", "install_requires").splitlines()
        if parser.has_section("options.extras_require"):
            for _, value in parser.items("options.extras_require"):
                lines += value.splitlines()
    except configparser.Error as exc:  # declared_in's: says nothing
        raise ValueError(str(exc)) from exc
    return _from_lines([line.strip() for line in lines], "setup.cfg", text)


def _setup_py(folder: Path) -> list[TorchRange] | None:
    text = _read(folder / "setup.py")
    if text is None or "torch" not in text:
        return None
    tree = ast.parse(text)
    # Module-level lists, for ``install_requires=requirements``.
    bound: dict[str, ast.expr] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            bound[stmt.targets[0].id] = stmt.value
    lines: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            if kw.arg == "install_requires":
                lines += _strings(kw.value, bound)
            elif kw.arg == "extras_require":
                value = bound.get(kw.value.id, kw.value) if isinstance(kw.value, ast.Name) else kw.value
                if isinstance(value, ast.Dict):
                    for item in value.values:
                        lines += _strings(item, bound)
    return _from_lines(lines, "setup.py", text)


def _strings(expr: ast.expr, bound: dict[str, ast.expr]) -> list[str]:
    """The string literals of a list or tuple literal (or of the one a name is bound to)."""
    if isinstance(expr, ast.Name):
        expr = bound.get(expr.id, expr)
    if isinstance(expr, (ast.List, ast.Tuple)):
        return [e.value for e in expr.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _requirements_files(folder: Path) -> list[TorchRange] | None:
    files = sorted(folder.glob("requirements*.txt"))
    sub = folder / "requirements"
    if sub.is_dir():
        files += sorted(sub.glob("*.txt"))
    named = False
    ranges: list[TorchRange] = []
    seen: set[Path] = set()
    for path in files:
        got = _requirements(path, folder, seen)
        if got is not None:
            named = True
            ranges.extend(got)
    return ranges if named else None


def _requirements(path: Path, root: Path, seen: set[Path]) -> list[TorchRange] | None:
    resolved = path.resolve()
    if resolved in seen or not path.is_file():
        return None
    seen.add(resolved)
    text = path.read_text(encoding="utf-8", errors="replace")
    relpath = os.path.relpath(path, root).replace(os.sep, "/")
    named = False
    ranges: list[TorchRange] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].strip()
        include = re.match(r"^(?:-r|-c|--requirement|--constraint)[\s=]+(\S+)", line)
        if include:
            got = _requirements(path.parent / include.group(1), root, seen)
            if got is not None:
                named = True
                ranges.extend(got)
            continue
        if line.startswith("-") or _PEP508.match(line) is None:
            continue
        named = True
        # Options after the requirement (``--hash``, ``-f``) are not specifiers.
        found = range_of_requirement(re.split(r"\s-", line, maxsplit=1)[0], f"{relpath}:{number}")
        if found is not None:
            ranges.append(found)
    return ranges if named else None


def _environment(folder: Path) -> list[TorchRange] | None:
    """Every conda environment file of the folder (by its name) that lists
    torch among its ``dependencies:``; a file that names torch elsewhere (a
    config) says nothing."""
    named = False
    ranges: list[TorchRange] = []
    names = sorted(n for n in os.listdir(folder) if n.lower().endswith((".yml", ".yaml")) and is_environment_file(n))
    for name in names:
        text = _read(folder / name)
        if text is None or "torch" not in text:
            continue
        for number, line in _dependency_lines(text):
            match = _CONDA_LINE.match(line)
            if match is None:
                continue
            named = True
            found = _conda_range(match.group("name").lower(), match.group("spec").strip(), f"{name}:{number}", line)
            if found is not None:
                ranges.append(found)
    return ranges if named else None


def _dependency_lines(text: str) -> list[tuple[int, str]]:
    """The lines (numbered from 1) of the top-level ``dependencies:`` list,
    its ``pip:`` section included; not ``channels: [- pytorch]``."""
    lines: list[tuple[int, str]] = []
    inside = False
    for number, line in enumerate(text.splitlines(), 1):
        if _DEPENDENCIES.match(line):
            inside = True
        elif _TOP_LEVEL.match(line):
            inside = False
        elif inside:
            lines.append((number, line))
    return lines


def _conda_range(name: str, spec: str, where: str, line: str) -> TorchRange | None:
    """conda's match specs: ``=1.8`` and ``1.8`` are ``1.8.*``, ``=1.8.1=build``
    carries a build string; comparison operators read as in PEP 440. A pip
    line (``torch``) is PEP 440 itself."""
    requirement = line.strip().lstrip("-").strip()
    if name == "torch":
        return range_of_specifiers(spec, where, requirement)
    fuzzy = re.fullmatch(r"=?\s*([0-9][0-9.]*?)(\.\*)?(?:[= ]\S+)?", spec)
    if fuzzy:
        version = parse_version(fuzzy.group(1))
        if version is None:
            return None
        return pinning(TorchRange(version, _next_release(version, len(version)), False, where, requirement))
    exact = re.fullmatch(r"(==|>=|<=|!=|~=|<|>)\s*([0-9][0-9.*]*)(?:=\S+)?", spec)  # a build string after it
    return range_of_specifiers(f"{exact.group(1)}{exact.group(2)}" if exact else spec, where, requirement)
