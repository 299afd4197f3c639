"""The warm pass (issue 29 point 6): a run over an unchanged project reads no
source file and no cache entry, only the warm index (run/warm_index.py);
a file whose stamp moved is hashed again; an edit is seen whatever it keeps
of the file's size and mtime; a later warm run compares with the state of
the edit, not with the older one again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import memlint.run.runner as runner
import memlint.run.warm_index as warm_index
from memlint.run.cache import FindingsCache
from memlint.run.results import Settings

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ROOT / "fixtures" / "projects" / "split_training"
EXPECTED = [("amp_setup.py", 7, "MEM501"), ("utils.py", 11, "MEM201")]

# Same length: an edit that keeps the file's size.
LEAKY = "import torch\n\ndef train(model, loader, optimizer):\n    for x in loader:\n        optimizer.step()\n        torch.cuda.empty_cache()\n"
QUIET = LEAKY.replace("torch.cuda.empty_cache()", "print(torch.__version__)")
assert len(LEAKY) == len(QUIET)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """The split_training fixture, its files stamped in the past (outside
    the racy window, so the index records them)."""
    folder = tmp_path / "proj"
    shutil.copytree(PROJECT, folder)
    monkeypatch.setattr(warm_index, "RACY_NS", 0)
    return folder


def _files(folder: Path) -> list[str]:
    return sorted(str(p) for p in folder.glob("*.py"))


def _found(reports) -> list[tuple[str, int, str]]:
    return sorted((os.path.basename(r.path), f.line, f.code) for r in reports for f in r.findings)


class _Counts:
    """What a run read: files hashed, cache entries opened, files linted."""

    def __init__(self, monkeypatch) -> None:
        self.hashed: list[str] = []
        self.entries: list[str] = []
        self.linted: list[str] = []
        real_digest, real_load, real_process = warm_index.file_digest, FindingsCache.load, runner.process_file

        def digest(path):
            self.hashed.append(os.path.basename(path))
            return real_digest(path)

        def load(cache, path, key):
            self.entries.append(os.path.basename(path))
            return real_load(cache, path, key)

        def process(path, settings, *view):
            report = real_process(path, settings, *view)
            if not report.deferred:
                self.linted.append(os.path.basename(path))
            return report

        monkeypatch.setattr(warm_index, "file_digest", digest)
        monkeypatch.setattr(FindingsCache, "load", load)
        monkeypatch.setattr(runner, "process_file", process)

    def clear(self) -> None:
        self.hashed.clear()
        self.entries.clear()
        self.linted.clear()


def test_a_warm_run_reads_no_source_file_and_no_cache_entry(project, tmp_path, monkeypatch):
    files = _files(project)
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="test")
    settings = Settings(root=str(project))
    counts = _Counts(monkeypatch)
    assert _found(runner.run(files, settings, jobs=1, cache=cache)) == EXPECTED
    assert sorted(counts.hashed) == sorted(os.path.basename(f) for f in files)
    counts.clear()
    assert _found(runner.run(files, settings, jobs=1, cache=cache)) == EXPECTED
    assert counts.hashed == [] and counts.entries == [] and counts.linted == []


def test_a_touched_but_unchanged_file_is_hashed_again_and_still_a_hit(project, tmp_path, monkeypatch):
    files = _files(project)
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="test")
    settings = Settings(root=str(project))
    counts = _Counts(monkeypatch)
    runner.run(files, settings, jobs=1, cache=cache)
    utils = project / "utils.py"
    st = utils.stat()
    os.utime(utils, ns=(st.st_atime_ns, st.st_mtime_ns - 5_000_000_000))  # `touch -d`: the bytes stay
    counts.clear()
    assert _found(runner.run(files, settings, jobs=1, cache=cache)) == EXPECTED
    assert counts.hashed == ["utils.py"] and counts.linted == []
    counts.clear()
    runner.run(files, settings, jobs=1, cache=cache)
    assert counts.hashed == []  # its new stamp is recorded


def test_an_edit_that_keeps_the_size_and_the_mtime_is_seen(tmp_path, monkeypatch):
    """``cp -p``, ``touch -d``, an editor restoring the mtime: the ctime,
    which nobody can set, still moves."""
    monkeypatch.setattr(warm_index, "RACY_NS", 0)
    path = tmp_path / "train.py"
    path.write_text(LEAKY)
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="test")
    first = runner.run([str(path)], Settings(), jobs=1, cache=cache)
    assert [f.code for f in first[0].findings] == ["MEM702"]
    st = path.stat()
    time.sleep(0.05)  # past the filesystem clock's tick: the ctime moves
    path.write_text(QUIET)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    again = runner.run([str(path)], Settings(), jobs=1, cache=cache)
    assert again[0].findings == []


def test_a_file_changed_within_the_racy_window_is_never_trusted(tmp_path, monkeypatch):
    """A file stamped within RACY_NS of its hashing is not recorded: a
    second edit in the same clock tick (same size, mtime and ctime) is read."""
    path = tmp_path / "train.py"
    path.write_text(LEAKY)
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="test")
    counts = _Counts(monkeypatch)
    runner.run([str(path)], Settings(), jobs=1, cache=cache)
    assert str(path) not in warm_index.WarmIndex(cache.folder).records
    counts.clear()
    runner.run([str(path)], Settings(), jobs=1, cache=cache)
    assert counts.hashed == ["train.py"]


def test_a_warm_run_after_an_edit_compares_with_the_edits_state(project, tmp_path, monkeypatch):
    """After an edit that changes no view, the kept entries are recorded in
    the new state: the next run finds every state equal and reads no older
    manifest (before, every run after an edit compared the two states again)."""
    from memlint.project.states import StateStore

    files = _files(project)
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="test")
    settings = Settings(root=str(project))
    counts = _Counts(monkeypatch)
    runner.run(files, settings, jobs=1, cache=cache)
    models = project / "models.py"
    models.write_text(models.read_text() + "# an edit\n")
    os.utime(models, ns=(0, time.time_ns() - 10_000_000_000))
    counts.clear()
    assert _found(runner.run(files, settings, jobs=1, cache=cache)) == EXPECTED
    assert counts.linted == ["models.py"]
    loaded: list[str] = []
    real = StateStore.load

    def load(store, state):
        loaded.append(state)
        return real(store, state)

    monkeypatch.setattr(StateStore, "load", load)
    counts.clear()
    assert _found(runner.run(files, settings, jobs=1, cache=cache)) == EXPECTED
    assert loaded == [] and counts.entries == [] and counts.hashed == [] and counts.linted == []
    # And the findings are a cold run's.
    cold = runner.run(files, settings, jobs=1, cache=FindingsCache(str(tmp_path / "cold"), fingerprint="test"))
    assert _found(cold) == EXPECTED


def test_an_unreadable_or_corrupt_index_is_an_empty_one(project, tmp_path):
    files = _files(project)
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="test")
    settings = Settings(root=str(project))
    runner.run(files, settings, jobs=1, cache=cache)
    index = Path(warm_index.WarmIndex(cache.folder).path)
    assert index.is_file()
    for garbage in ("", "{", "[1, 2]", '{"x": [1]}', '{"%s": [1, 2, 3, 4, "d", "k", {"findings": 7}]}' % files[0]):
        index.write_text(garbage)
        assert _found(runner.run(files, settings, jobs=1, cache=cache)) == EXPECTED


WARM_IMPORTS = textwrap.dedent(
    """
    import sys
    from memlint.frontends.cli import main
    main(["check", "--exit-zero", "--quiet", "--cache-dir", sys.argv[1], sys.argv[2]])
    HEAVY = %r
    heavy = sorted(m for m in sys.modules if m in HEAVY)
    open(sys.argv[3], "w").write(",".join(heavy))
    """
)
# configparser (a setup.cfg naming torch) and difflib (--diff): ~5 ms of imports
# that a warm run, the floor of every one-edit re-lint, does not need.
HEAVY = ("libcst", "memlint.project.index", "memlint.project.summary", "configparser", "difflib")


def test_a_warm_run_imports_neither_libcst_nor_the_summaries(project, tmp_path):
    """The project's state is computed without the index's machinery
    (project/manifest.py); the warm run needs neither the rules nor it."""
    cache = tmp_path / "cache"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = tmp_path / "imported.txt"
    run = [sys.executable, "-c", WARM_IMPORTS % (HEAVY,), str(cache), str(project), str(out)]
    subprocess.run(run, env=env, check=True, capture_output=True)
    assert "memlint.project.summary" in out.read_text()  # the cold run summarised the modules
    subprocess.run(run, env=env, check=True, capture_output=True)
    assert out.read_text() == ""
