"""The findings cache: a file whose bytes, path and settings were checked
before is not parsed again.

One JSON entry per file, named by a hash of everything that decides its
findings: the memlint source (version, every module of ``memlint`` and of the
rules, so editing a rule invalidates), libcst's and Python's versions, the
rules enabled for that file (after select, ignore and per-file ignores),
whether fix edits are rendered, the file's absolute path and the sha256 of its
bytes. Only ``check`` results are cached; ``--fix`` and ``--diff`` always work
on fresh analysis.

Several runs may share a cache: entries are written to a temporary file and
renamed into place, and an entry that cannot be read or does not match its
name is a miss, rewritten by the next run. A cache that cannot be written is
silently skipped; it never fails a run.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

from memlint.read.source import read_bytes

if TYPE_CHECKING:
    from memlint.lint.finding import Finding
    from memlint.run.results import FileReport

DEFAULT_DIR_NAME = ".memlint_cache"
FORMAT = 2  # bump when the entry layout changes


def default_cache_dir(root: str | os.PathLike) -> str:
    return os.path.join(os.fspath(root), DEFAULT_DIR_NAME)


def resolve_cache_dir(cli_dir: str | None, config_dir: str | None, root: str | os.PathLike) -> str:
    """``--cache-dir`` (relative to the working folder) wins over the
    ``cache-dir`` setting (relative to the project root), then the default."""
    if cli_dir:
        return os.path.abspath(cli_dir)
    if config_dir:
        return os.path.abspath(os.path.join(os.fspath(root), config_dir))
    return os.path.abspath(default_cache_dir(root))


@lru_cache(maxsize=1)
def source_fingerprint() -> str:
    """A hash of the code that produces findings: memlint's modules and the rules."""
    import importlib.util

    import memlint

    folders = list(memlint.__path__)
    spec = importlib.util.find_spec("memlint.rules")
    if spec is not None and spec.submodule_search_locations:
        folders.extend(spec.submodule_search_locations)
    header = f"memlint {memlint.__version__}\0python {sys.version_info[:2]}\0libcst {_libcst_version()}\0"
    return hash_sources(folders, header)


# ``__version__ = "1.8.0"``, or chained as vcs-versioning writes it:
# ``__version__ = version = '1.9.0'``.
_VERSION = re.compile(r"""^__version__\s*=\s*(?:\w+\s*=\s*)*["']([^"']+)["']""", re.MULTILINE)


def _libcst_version() -> str:
    """libcst's version, read without importing libcst (a warm run never
    needs it otherwise: 0.2 s of a 0.5 s run)."""
    import importlib.util

    spec = importlib.util.find_spec("libcst")  # a top-level package: found, not imported
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            try:
                with open(os.path.join(folder, "_version.py"), encoding="utf-8") as fh:
                    match = _VERSION.search(fh.read())
            except OSError:
                continue
            if match:
                return match.group(1)
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("libcst")
    except PackageNotFoundError:  # pragma: no cover - libcst is a dependency
        return "unknown"


def hash_sources(folders: Iterable[str], header: str = "") -> str:
    """sha256 over the names and bytes of every ``.py`` file under ``folders``."""
    h = hashlib.sha256(header.encode())
    for folder in dict.fromkeys(os.path.realpath(f) for f in folders):
        for path in sorted(_python_files(folder)):
            h.update(os.path.relpath(path, folder).encode() + b"\0")
            try:
                with open(path, "rb") as fh:
                    h.update(fh.read())
            except OSError:
                h.update(b"<unreadable>")
            h.update(b"\0")
    return h.hexdigest()


def _python_files(folder: str) -> Iterable[str]:
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d != "__pycache__" and not d.startswith(".")]
        for name in filenames:
            if name.endswith(".py"):
                yield os.path.join(dirpath, name)


def file_digest(path: str) -> str | None:
    """sha256 of the file's bytes (as ``SourceFile.digest``), None if unreadable."""
    data = read_bytes(path, limit=None)
    return None if data is None else hashlib.sha256(data).hexdigest()


class FindingsCache:
    """Entries for one memlint build under ``directory``. Picklable, so worker
    processes write their own entries."""

    def __init__(self, directory: str, fingerprint: str | None = None) -> None:
        self.directory = os.path.abspath(directory)
        self.fingerprint = fingerprint or source_fingerprint()
        self._folder = os.path.join(self.directory, f"v{FORMAT}", self.fingerprint[:20])

    # -- keys ---------------------------------------------------------------
    def key(self, path: str, digest: str, codes: Iterable[str], with_edits: bool) -> str:
        return self.key_of(self.key_head(codes, with_edits), os.path.abspath(path), digest)

    def key_head(self, codes: Iterable[str], with_edits: bool):
        """The hash of what a key shares with every file checked with the
        same rules, to be finished by ``key_of``: a warm run makes it once
        per folder, not the rules' string and its hash once per file."""
        parts = (self.fingerprint, "edits" if with_edits else "-", ",".join(codes), "")
        return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape"))

    @staticmethod
    def key_of(head, absolute: str, digest: str) -> str:
        """``key``'s value from ``key_head``'s hash, ``absolute``: os.path.abspath of the path."""
        h = head.copy()
        h.update(f"{absolute}\0{digest}".encode("utf-8", "surrogateescape"))
        return h.hexdigest()

    def _entry(self, key: str) -> str:
        return os.path.join(self._folder, key[:2], key + ".json")

    @property
    def folder(self) -> str:
        """This build's entries (and run/warm_index.py's index) live here."""
        return self._folder

    # -- reading --------------------------------------------------------------
    def load(self, path: str, key: str) -> FileReport | None:
        """The cached report of ``path`` under ``key``; None when absent or unusable."""
        try:
            with open(self._entry(key), "rb") as fh:
                data = json.loads(fh.read())
            if data.get("key") != key:
                return None
            return _report_from_json(path, data)
        except Exception:  # missing, truncated, corrupt, from another layout: a miss
            return None

    # -- writing --------------------------------------------------------------
    def store(self, key: str, report: FileReport) -> bool:
        """Write the entry atomically; False when the cache is not writable."""
        if not cacheable(report):
            return False
        entry = self._entry(key)
        folder = os.path.dirname(entry)
        try:
            if not os.path.isdir(folder):
                self._prepare()
                os.makedirs(folder, exist_ok=True)
            payload = json.dumps(_report_to_json(key, report), separators=(",", ":")).encode()
            _write_atomic(entry, payload)
        except OSError:
            return False
        return True

    def _prepare(self) -> None:
        """Create the cache folder with a ``.gitignore`` of ``*`` in it, so the
        cache never shows up in ``git status`` wherever it lives."""
        os.makedirs(self.directory, exist_ok=True)
        for name, text in ((".gitignore", "# Created by memlint.\n*\n"), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
            path = os.path.join(self.directory, name)
            if not os.path.exists(path):
                try:
                    _write_atomic(path, text.encode())
                except OSError:
                    pass


# A standard marker that backup tools skip (https://bford.info/cachedir/).
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by memlint.\n"
)


def cacheable(report: FileReport) -> bool:
    """Results that depend on the bytes alone. An internal error may be a bug
    fixed by the next edit of memlint (the key changes then, but keep the cache
    honest anyway); a read error may be a passing permission problem."""
    if report.partial:  # its summary and reads are still in the entry: never overwrite it without
        return False
    if report.error is None:
        return True
    return report.error.startswith(_CONTENT_ERRORS)


# Errors that the bytes alone decide (engine.ParseError, source.SourceError).
_CONTENT_ERRORS = (
    "syntax error",
    "cannot parse",
    "file is nested too deeply",
    "binary file",
    "not valid UTF-8",
    "bad encoding declaration",
    "cannot decode as",
)


def _write_atomic(path: str, data: bytes) -> None:
    """Write a uniquely named sibling, then rename it over ``path``: a reader
    sees the old entry or the new one, never a part."""
    tmp = f"{path}.{os.getpid()}-{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# -- (de)serialisation: plain JSON, never pickle (a cache may be shared) ------


def _report_to_json(key: str, report: FileReport, summary: bool = True) -> dict:
    """The entry of ``report``; without ``summary``: the warm index's record,
    whose module summary and view reads stay in the entry (read only when
    an index is built or a file of the project changed)."""
    out: dict = {
        "key": key,
        "error": report.error,
        "findings": [_finding_to_json(f) for f in report.findings],
        "notes": list(report.notes),
    }
    # The project stage: the module's summary (so a warm run builds the
    # project's index without reading a file) and the digest of the project
    # view its findings depend on (checked against the current one on load).
    if not summary:  # the entry holds more: a summary, or a view's reads
        has_reads = report.project is not None and report.deps is not None
        out["partial"] = report.summary is not None or report.summary_json is not None or has_reads or report.partial
    elif report.summary is not None:
        out["summary"] = report.summary.to_json()
    elif report.summary_json is not None:
        out["summary"] = report.summary_json
    if report.project is not None:
        out["project"] = report.project
        out["state"] = report.project_state
        if report.deps is not None and summary:
            out["deps"] = list(report.deps)
    return out


def _finding_to_json(f: Finding) -> dict:
    out: dict = {
        "code": f.code,
        "message": f.message,
        "line": f.line,
        "column": f.column,
        "end_line": f.end_line,
        "end_column": f.end_column,
        "cell": f.cell,
    }
    if f.fix is not None:
        out["fix"] = {
            "title": f.fix.title,
            "safety": f.fix.safety.value,
            "imports": list(f.fix.imports),
            "edits": [[e.start, e.end, e.content, e.start_pos, e.end_pos] for e in f.fix.edits],
        }
    return out


def record_of(key: str, report: FileReport) -> dict:
    """The warm index's record of ``report`` (run/warm_index.py): its entry
    without the summary, the view's reads and the key (the index holds it)."""
    data = _report_to_json(key, report, summary=False)
    del data["key"]
    return data


def report_from_json(path: str, data: dict) -> FileReport | None:
    """An entry's (or a warm index record's) report; None when it is unusable."""
    try:
        return _report_from_json(path, data)
    except Exception:
        return None


def _report_from_json(path: str, data: dict) -> FileReport:
    from memlint.run.results import FileReport

    error = data["error"]
    if error is not None and not isinstance(error, str):
        raise ValueError("bad error field")
    notes = data.get("notes", [])
    if not isinstance(notes, list) or (notes and not all(isinstance(n, str) for n in notes)):
        raise ValueError("bad notes field")
    # Most of a warm run's thousands of reports hold no finding: no list built.
    found = data["findings"]
    findings = [] if found == [] else [_finding_from_json(path, d) for d in found]
    report = FileReport(path=path, findings=findings, error=error, notes=notes)
    if data.get("summary") is not None:
        report.summary_json = data["summary"]  # made a ModuleSummary only if an index needs it
    report.partial = data.get("partial") is True
    project, state = data.get("project"), data.get("state")
    report.project = None if project is None else str(project)
    report.project_state = None if state is None else str(state)
    deps = data.get("deps")
    report.deps = tuple(str(d) for d in deps) if isinstance(deps, list) else None
    return report


def _finding_from_json(path: str, d: dict) -> Finding:
    from memlint.lint.finding import Edit, Finding, Fix, Safety

    fix = None
    if d.get("fix") is not None:
        fd = d["fix"]
        edits = tuple(Edit(int(s), int(e), str(c), _pos(sp), _pos(ep)) for s, e, c, sp, ep in fd["edits"])
        fix = Fix(
            title=str(fd["title"]),
            replacements=(),
            safety=Safety(fd["safety"]),
            imports=tuple(str(m) for m in fd["imports"]),
            edits=edits,
        )
    cell = d.get("cell")
    return Finding(
        code=str(d["code"]),
        message=str(d["message"]),
        path=path,
        line=int(d["line"]),
        column=int(d["column"]),
        end_line=int(d["end_line"]),
        end_column=int(d["end_column"]),
        fix=fix,
        cell=None if cell is None else int(cell),
    )


def _pos(value) -> tuple[int, int] | None:
    if value is None:
        return None
    line, column = value
    return (int(line), int(column))
