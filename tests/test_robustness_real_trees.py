"""Real code: the installed torch package's own source and the standard library.

Copies of every file of torch's nn, optim and utils, 300 standard library
files evenly spaced, and the standard library's deliberately odd files (bad
encodings, bad syntax, BOMs, CRLF, Python 2 grammar), 643 files in all, go
through `check --fix --unsafe-fixes` with every rule. No internal error; a
file that cannot be read or parsed is reported and left byte for byte; every
fixed file still compiles; a second fix changes nothing.

MEMLINT_REAL_TREE_TORCH / MEMLINT_REAL_TREE_STDLIB set the sample sizes (a
number, or `all`). bench/fix_corpus.py does the same on whole third-party
packages.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sysconfig
import warnings

import pytest

from memlint.read.source import SourceError, read_source
from memlint.run.runner import Settings, run

pytestmark = pytest.mark.slow

TORCH_PARTS = ("nn", "optim", "utils")
# The standard library's own odd files, linted whatever the sample size.
STDLIB_ODD = (
    "test/tokenizedata",
    "test/encoded_modules",
    "lib2to3/tests/data",
    "test/badsyntax_future3.py",
    "test/test_fstring.py",
    "test/test_grammar.py",
    "test/test_patma.py",
    "test/test_unicode_identifiers.py",
    "test/test_source_encoding.py",
    "pydoc_data/topics.py",
)
CONTENT_ERRORS = (
    "syntax error",
    "cannot parse",
    "file is nested too deeply",
    "file is too large",
    "binary file",
    "not valid UTF-8",
    "bad encoding declaration",
    "cannot decode as",
)


def _py_files(folder: str) -> list[str]:
    found = []
    for path, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in ("site-packages", "__pycache__"))
        found += [os.path.join(path, f) for f in sorted(files) if f.endswith(".py")]
    return found


def _sample(files: list[str], variable: str, default: int) -> list[str]:
    wanted = os.environ.get(variable, str(default))
    if wanted == "all" or int(wanted) >= len(files):
        return files
    step = len(files) / int(wanted)
    return [files[int(i * step)] for i in range(int(wanted))]


def _corpus() -> dict[str, str]:
    """Copy target (relative) -> original path."""
    chosen: dict[str, str] = {}
    spec = importlib.util.find_spec("torch")  # finds, does not import
    if spec is not None and spec.origin:
        root = os.path.dirname(spec.origin)
        files = [f for part in TORCH_PARTS for f in _py_files(os.path.join(root, part))]
        for path in _sample(files, "MEMLINT_REAL_TREE_TORCH", 10_000):
            chosen[os.path.join("torch", os.path.relpath(path, root))] = path
    stdlib = sysconfig.get_paths()["stdlib"]
    odd = []
    for part in STDLIB_ODD:
        full = os.path.join(stdlib, part)
        odd += _py_files(full) if os.path.isdir(full) else [full] if os.path.isfile(full) else []
    for path in _sample(_py_files(stdlib), "MEMLINT_REAL_TREE_STDLIB", 300) + odd:
        chosen[os.path.join("stdlib", os.path.relpath(path, stdlib))] = path
    return chosen


def _compiles(path: str) -> bool:
    try:
        text = read_source(path).text
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, path, "exec", dont_inherit=True)
    except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def test_torch_and_stdlib_fix_without_internal_error(tmp_path):
    corpus = _corpus()
    assert len(corpus) > 100
    copies = []
    for rel, original in corpus.items():
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(original, target)
        copies.append(str(target))
    before = {path: open(path, "rb").read() for path in copies}
    compiled = {path for path in copies if _compiles(path)}

    settings = Settings(mode="fix", unsafe_fixes=True, select=("ALL",), root=str(tmp_path))
    reports = run(copies, settings, jobs=2)

    internal = [f"{r.path}: {r.error}" for r in reports if r.error and not r.error.startswith(CONTENT_ERRORS)]
    assert not internal, "\n".join(internal)
    errors = [r for r in reports if r.error]
    for r in errors:
        assert open(r.path, "rb").read() == before[r.path], f"{r.path} changed although: {r.error}"
    changed = [path for path in copies if open(path, "rb").read() != before[path]]
    assert sorted(changed) == sorted(r.path for r in reports if r.fixed)
    broken = [path for path in changed if path in compiled and not _compiles(path)]
    assert not broken, f"fixed files that no longer compile: {broken}"

    after = {path: open(path, "rb").read() for path in changed}
    again = run(changed, settings, jobs=2) if changed else []
    refixed = [r.path for r in again if r.fixed or r.error]
    assert not refixed, f"a second --fix changed or failed on: {refixed}"
    assert {path: open(path, "rb").read() for path in changed} == after

    print(
        f"\nreal trees: {len(copies)} files linted, {len(errors)} reported unreadable or unparsable, "
        f"{sum(len(r.findings) for r in reports)} findings left, {sum(len(r.fixed) for r in reports)} fixes "
        f"in {len(changed)} files, 0 broken, 0 changed by a second fix"
    )
    for r in errors:
        print(f"  {os.path.relpath(r.path, tmp_path)}: {r.error}")
