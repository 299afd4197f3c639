"""The warm pass (issue 29 point 6): a run over an unchanged project reads no
source file and no cache entry, only the warm index (run/warm_index.py);
a file whose stamp moved is hashed again; an edit is seen whatever it keeps
of the file's size and mtime; a later warm run compares with the state of
the edit, not with the older one again."""

from __future__ import annotations

import json
import marshal
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


def test_an_index_in_another_format_is_never_trusted(project, tmp_path):
    """The index is marshal behind a header (a fast read and write); the
    same records as JSON (the old format), under another header, or with a
    corrupt payload are ignored: here they claim every file is clean."""
    files = _files(project)
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="test")
    settings = Settings(root=str(project))
    runner.run(files, settings, jobs=1, cache=cache)
    index = Path(warm_index.WarmIndex(cache.folder).path)
    records = warm_index.decode(index.read_bytes())
    assert {os.path.abspath(f) for f in files} <= set(records)
    for record in records.values():
        if isinstance(record[6], dict):
            record[6]["findings"] = []
    clean = warm_index.encode(records)
    assert _found(runner.run(files, settings, jobs=1, cache=cache)) == EXPECTED  # the real index
    payload = clean[len(warm_index.HEADER) :]
    foreign = (
        json.dumps(records).encode(),
        b"memlint warm index 0 marshal 4\n" + payload,
        warm_index.HEADER + payload[: len(payload) // 2],
        warm_index.HEADER + marshal.dumps([records]),
        warm_index.HEADER + marshal.dumps(records),
        warm_index.HEADER + marshal.dumps(({p: tuple(r) for p, r in records.items()}, {})),
    )
    for data in foreign:
        index.write_bytes(data)
        assert warm_index.decode(data) == {}
        assert _found(runner.run(files, settings, jobs=1, cache=cache)) == EXPECTED
    index.write_bytes(clean)  # the poisoned index, in the format: trusted (what the test above relies on)
    assert _found(runner.run(files, settings, jobs=1, cache=cache)) == []


def test_the_project_walk_is_skipped_until_a_folder_changes(project, tmp_path, monkeypatch):
    """A warm run stats the folders the last walk listed instead of walking
    the project; an entry added, removed or renamed (a file, a folder, a
    pyvenv.cfg that makes a folder a skipped virtual environment) is seen."""
    import memlint.project.modules as modules

    files = _files(project)
    settings = Settings(root=str(project))
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="test")
    walked: list[str] = []
    real = modules.project_files

    def counting(root, *args):
        walked.append(root)
        return real(root, *args)

    monkeypatch.setattr(modules, "project_files", counting)

    def check(expect_walk: bool) -> None:
        walked.clear()
        reports = runner.run(files, settings, jobs=1, cache=cache)
        assert bool(walked) == expect_walk
        cold = runner.run(files, settings, jobs=1, cache=FindingsCache(str(tmp_path / "cold"), fingerprint="test"))
        assert _found(reports) == _found(cold)
        shutil.rmtree(tmp_path / "cold")
        walks = warm_index.WarmIndex(cache.folder).walks
        assert len(walks) == 1
        ((root, (_, _, listed)),) = walks.items()
        assert listed == real(root)
        time.sleep(0.05)  # the next change is in a later tick of a coarse clock

    check(True)
    check(False)  # nothing changed: no walk
    pkg = project / "pkg"
    changes = [
        lambda: (project / "new.py").write_text(LEAKY),
        lambda: (project / "new.py").rename(project / "renamed.py"),
        lambda: (project / "renamed.py").unlink(),
        lambda: pkg.mkdir(),
        lambda: (pkg / "deep.py").write_text(LEAKY),
        lambda: (pkg / "pyvenv.cfg").write_text("home = /usr\n"),
        lambda: (pkg / "pyvenv.cfg").unlink(),
        lambda: (pkg / "deep.py").rename(pkg / "deeper.py"),
        lambda: shutil.rmtree(pkg),
    ]
    for change in changes:
        change()
        check(True)
        check(False)


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


def test_reports_made_when_the_project_stage_failed_are_never_kept(project, tmp_path, monkeypatch):
    """A failure in the project stage lints the waiting files alone so the run
    goes on; those reports lack every cross-module fact and must not be
    trusted by the next run (neither the warm index nor the findings cache)."""
    files = _files(project)
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="test")
    settings = Settings(root=str(project))

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in the project stage")

    with monkeypatch.context() as patch:
        patch.setattr(runner, "_states", broken)
        alone = _found(runner.run(files, settings, jobs=1, cache=cache))
    assert alone != EXPECTED  # the cross-module finding needs the project
    assert _found(runner.run(files, settings, jobs=1, cache=cache)) == EXPECTED
    # The findings cache alone (no warm index) holds no project-less entry either.
    with monkeypatch.context() as patch:
        patch.setattr(runner, "_states", broken)
        runner.run(files, settings, jobs=1, cache=FindingsCache(str(tmp_path / "other"), fingerprint="test"))
    (tmp_path / "other" / warm_index.NAME).unlink(missing_ok=True)
    assert (
        _found(runner.run(files, settings, jobs=1, cache=FindingsCache(str(tmp_path / "other"), fingerprint="test")))
        == EXPECTED
    )


def test_an_edit_that_starts_switching_a_plain_class_attribute_re_lints_its_module(tmp_path, monkeypatch):
    """main.py gets the Solver from a factory and starts switching its ``G``
    to eval mode, spelling no name of solver.py: solver.py's view changes
    (its MEM202 falls silent). Before, the kept entry was trusted: the edit
    spelled none of the names the view was judged by (states.module_names)."""
    folder = tmp_path / "proj"
    folder.mkdir()
    wordless = ROOT / "fixtures" / "projects" / "wordless_callers"
    shutil.copy(wordless / "model.py", folder / "model.py")
    # Its checkpoint's name spells no ``G`` (its words count as the module's names).
    (folder / "solver.py").write_text((wordless / "solver.py").read_text().replace('"G.ckpt"', '"weights.pt"'))
    (folder / "factory.py").write_text(
        "from solver import Solver\n\n\ndef make_solver():\n    return Solver(loader=[])\n"
    )
    main = folder / "main.py"
    main.write_text("import torch\nfrom factory import make_solver\n\nsolver = make_solver()\n")
    monkeypatch.setattr(warm_index, "RACY_NS", 0)
    files = _files(folder)
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="test")
    settings = Settings(root=str(folder))
    assert [c for _, _, c in _found(runner.run(files, settings, jobs=1, cache=cache))] == ["MEM202"]
    main.write_text(main.read_text() + "solver.G.eval()\n")
    os.utime(main, ns=(0, time.time_ns() - 10_000_000_000))
    assert _found(runner.run(files, settings, jobs=1, cache=cache)) == []
    assert (
        _found(runner.run(files, settings, jobs=1, cache=FindingsCache(str(tmp_path / "cold"), fingerprint="test")))
        == []
    )
