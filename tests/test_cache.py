"""The findings cache: same reports warm as cold, keyed on everything that
decides findings, safe to share, never used when writing fixes."""

import json
import multiprocessing
import os
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

import memlint.run.runner as runner
from memlint.rule import Edit, Finding, Fix, Safety
from memlint.run.cache import FindingsCache, cacheable, hash_sources, resolve_cache_dir
from memlint.run.runner import FileReport, Settings, run

# One finding with a safe fix (MEM501) from a rule that reads nothing of the
# project: the file is linted in one pass, with no view to wait for.
LEAKY = textwrap.dedent(
    """\
    import torch

    def train(model, loader, optimizer):
        scaler = torch.cuda.amp.GradScaler()
        for x in loader:
            optimizer.step()
    """
)
CLEAN = "import torch\n\nprint(torch.ones(1))\n"


def write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def _comparable(reports):
    return [(r.path, r.error, r.findings) for r in reports]


@pytest.fixture
def no_processing(monkeypatch):
    """After this, any file the runner has to analyse fails the test."""

    def arm():
        def fail(path, settings):
            raise AssertionError(f"{path} was analysed instead of read from the cache")

        monkeypatch.setattr(runner, "process_file", fail)

    return arm


def test_warm_run_reads_every_report_from_the_cache(tmp_path, no_processing):
    files = [write(tmp_path, f"m{i}.py", LEAKY if i % 2 else CLEAN) for i in range(5)]
    files.append(write(tmp_path, "broken.py", "import torch\ndef f(:\n"))
    cache = FindingsCache(str(tmp_path / "cache"))
    for with_edits in (False, True):
        settings = Settings(with_edits=with_edits)
        cold = run(files, settings, jobs=1, cache=cache)
        assert sum(len(r.findings) for r in cold) == 2 and cold[-1].error
        if with_edits:
            assert cold[1].findings[0].fix.edits  # edits travel through the cache too
    no_processing()
    for with_edits in (False, True):
        settings = Settings(with_edits=with_edits)
        warm = run(files, settings, jobs=1, cache=cache)
        assert _comparable(warm) == _comparable(run_uncached(files, settings))


def run_uncached(files, settings):
    """Reports straight from the engine, bypassing the runner (patched above)."""
    from memlint.fix.fixer import detach
    from memlint.lint.engine import ParseError, lint
    from memlint.read.source import read_source

    reports = []
    for path in files:
        report = FileReport(path=path)
        try:
            findings, module = lint(read_source(path).text, path, runner.rules_for(settings, ()))
            report.findings = detach(findings, module, settings.with_edits)
        except ParseError as exc:
            report.error = str(exc)
        reports.append(report)
    return reports


def test_parallel_run_fills_the_cache(tmp_path, no_processing):
    files = [write(tmp_path, f"pkg/m{i}.py", LEAKY) for i in range(runner.PARALLEL_THRESHOLD + 4)]
    cache = FindingsCache(str(tmp_path / "cache"))
    cold = run(files, Settings(), jobs=2, cache=cache)
    no_processing()
    warm = run(files, Settings(), jobs=2, cache=cache)
    assert _comparable(warm) == _comparable(cold)
    assert [r.path for r in warm] == files


@pytest.mark.parametrize(
    "change",
    ["content", "rules", "per_file_ignores", "with_edits", "fingerprint", "path"],
)
def test_anything_that_decides_findings_changes_the_key(tmp_path, change):
    path = write(tmp_path, "train.py", LEAKY)
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="a" * 64)
    settings = Settings()
    run([path], settings, jobs=1, cache=cache)
    calls = []
    original = runner.process_file

    def counting(p, s):
        calls.append(p)
        return original(p, s)

    runner.process_file = counting
    try:
        if change == "content":
            Path(path).write_text(LEAKY + "\n")
        elif change == "rules":
            settings = Settings(ignore=("MEM501",))
        elif change == "per_file_ignores":
            settings = Settings(per_file_ignores=(("train.py", ("MEM501",)),), root=str(tmp_path))
        elif change == "with_edits":
            settings = Settings(with_edits=True)
        elif change == "fingerprint":
            cache = FindingsCache(str(tmp_path / "cache"), fingerprint="b" * 64)
        elif change == "path":
            path = write(tmp_path, "copy/train.py", LEAKY)
        run([path], settings, jobs=1, cache=cache)
        assert calls == [path]
        run([path], settings, jobs=1, cache=cache)  # and that one is cached now
        assert calls == [path]
    finally:
        runner.process_file = original


def test_selection_that_does_not_change_the_rules_shares_entries(tmp_path, no_processing):
    path = write(tmp_path, "train.py", LEAKY)
    cache = FindingsCache(str(tmp_path / "cache"))
    run([path], Settings(), jobs=1, cache=cache)
    no_processing()
    # ignoring a rule that is not enabled anyway leaves the rule set unchanged
    run([path], Settings(ignore=("MEM403",)), jobs=1, cache=cache)


def test_editing_a_rule_module_changes_the_fingerprint(tmp_path):
    rules = tmp_path / "rules"
    write(rules, "mem999_x.py", "X = 1\n")
    before = hash_sources([str(rules)], "memlint 1")
    assert hash_sources([str(rules)], "memlint 1") == before
    write(rules, "mem999_x.py", "X = 2\n")
    assert hash_sources([str(rules)], "memlint 1") != before
    write(rules, "mem999_x.py", "X = 1\n")
    write(rules, "sub/new_rule.py", "")
    assert hash_sources([str(rules)], "memlint 1") != before
    assert hash_sources([str(rules)], "memlint 2") != hash_sources([str(rules)], "memlint 1")


@pytest.mark.parametrize("garbage", [b"", b"{", b"\x00\xff", b'{"key": "other"}', b"[]", b'{"key": null}'])
def test_corrupt_entries_are_misses_and_get_rewritten(tmp_path, garbage):
    path = write(tmp_path, "train.py", LEAKY)
    cache = FindingsCache(str(tmp_path / "cache"))
    first = run([path], Settings(), jobs=1, cache=cache)
    entries = list((tmp_path / "cache").rglob("*.json"))
    assert len(entries) == 1
    entries[0].write_bytes(garbage)
    again = run([path], Settings(), jobs=1, cache=cache)
    assert _comparable(again) == _comparable(first)
    assert json.loads(entries[0].read_text())["findings"]


def test_entry_with_wrong_field_types_is_a_miss(tmp_path):
    path = write(tmp_path, "train.py", LEAKY)
    cache = FindingsCache(str(tmp_path / "cache"))
    run([path], Settings(), jobs=1, cache=cache)
    entry = next((tmp_path / "cache").rglob("*.json"))
    data = json.loads(entry.read_text())
    data["findings"][0]["line"] = "six"
    entry.write_text(json.dumps(data))
    key = data["key"]
    assert cache.load(path, key) is None


def test_cache_folder_ignores_itself_for_git(tmp_path):
    path = write(tmp_path, "train.py", LEAKY)
    run([path], Settings(), jobs=1, cache=FindingsCache(str(tmp_path / "deep" / "cache")))
    assert (tmp_path / "deep" / "cache" / ".gitignore").read_text().splitlines()[-1] == "*"


def test_unwritable_cache_never_fails_the_run(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    path = write(tmp_path, "train.py", LEAKY)
    reports = run([path], Settings(), jobs=1, cache=FindingsCache(str(blocker / "cache")))
    assert len(reports[0].findings) == 1 and reports[0].error is None


def test_only_content_errors_are_cached():
    assert cacheable(FileReport(path="a.py", error="syntax error at 1:7: bad"))
    assert cacheable(FileReport(path="a.py", error="cannot decode as utf-8 at byte 3: invalid"))
    assert not cacheable(FileReport(path="a.py", error="internal error: KeyError: 'x'"))
    assert not cacheable(FileReport(path="a.py", error="permission denied"))
    assert not cacheable(FileReport(path="a.py", error="no such file"))


def test_round_trip_keeps_every_field(tmp_path):
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="f" * 64)
    edit = Edit(3, 9, "x.detach()", (2, 4), (2, 10))
    finding = Finding(
        code="MEM102",
        message="m",
        path="nb.ipynb",
        line=2,
        column=4,
        end_line=2,
        end_column=10,
        fix=Fix("Detach", (), Safety.UNSAFE, imports=("torch",), edits=(edit,)),
        cell=3,
    )
    plain = Finding(code="MEM702", message="n", path="nb.ipynb", line=5, column=0, end_line=5, end_column=3)
    key = cache.key("nb.ipynb", "0" * 64, ["MEM102", "MEM702"], True)
    assert cache.store(key, FileReport(path="nb.ipynb", findings=[finding, plain]))
    loaded = cache.load("elsewhere/nb.ipynb", key)
    assert loaded.findings == [replace(finding, path="elsewhere/nb.ipynb"), replace(plain, path="elsewhere/nb.ipynb")]


def _hammer(directory: str, key: str, rounds: int) -> int:
    cache = FindingsCache(directory, fingerprint="c" * 64)
    finding = Finding(code="MEM702", message="m" * 2000, path="a.py", line=1, column=0, end_line=1, end_column=1)
    report = FileReport(path="a.py", findings=[finding] * 20)
    bad = 0
    for _ in range(rounds):
        cache.store(key, report)
        loaded = cache.load("a.py", key)
        if loaded is None or loaded.findings != report.findings:
            bad += 1
    return bad


def test_concurrent_writers_and_readers_never_see_a_partial_entry(tmp_path):
    key = FindingsCache(str(tmp_path), fingerprint="c" * 64).key("a.py", "1" * 64, ["MEM702"], False)
    ctx = multiprocessing.get_context("spawn" if os.name == "nt" else "fork")
    with ctx.Pool(3) as pool:
        results = pool.starmap(_hammer, [(str(tmp_path / "cache"), key, 150)] * 3)
    assert results == [0, 0, 0]
    assert not [p for p in (tmp_path / "cache").rglob("*.tmp")]


def test_cache_dir_resolution(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "project"
    assert resolve_cache_dir(None, None, root) == str(root / ".memlint_cache")
    assert resolve_cache_dir(None, "build/lintcache", root) == str(root / "build" / "lintcache")
    assert resolve_cache_dir("here", "ignored", root) == str(tmp_path / "here")


# -- through the command line -------------------------------------------------


def _poison(cache_dir: Path) -> None:
    """Make every cached report claim the file is clean: the entries and
    the warm index's records (run/warm_index.py)."""
    from memlint.run import warm_index

    for entry in cache_dir.rglob(warm_index.NAME):
        records = warm_index.decode(entry.read_bytes())
        assert records  # the run wrote one: an unread index would not prove the poison answered
        for record in records.values():
            if isinstance(record[6], dict):
                record[6]["findings"] = []
        entry.write_bytes(warm_index.encode(records))
    for entry in cache_dir.rglob("*.json"):
        data = json.loads(entry.read_text())
        data["findings"] = []
        entry.write_text(json.dumps(data))


def test_cli_default_cache_is_used_for_check_only(tmp_path, run_memlint):
    write(tmp_path, "pyproject.toml", "[tool.memlint]\n")
    write(tmp_path, "src/train.py", LEAKY)
    assert run_memlint("check", "src").returncode == 1
    cache_dir = tmp_path / ".memlint_cache"
    assert (cache_dir / ".gitignore").is_file()
    _poison(cache_dir)
    assert run_memlint("check", "src").returncode == 0  # the (poisoned) cache answered
    assert run_memlint("check", "--no-cache", "src").returncode == 1
    diff = run_memlint("check", "--diff", "src")
    assert diff.returncode == 1 and "torch.cuda.amp" in diff.stdout  # --diff ignores the cache
    fixed = run_memlint("check", "--fix", "src")
    assert fixed.returncode == 0 and "torch.cuda.amp" not in (tmp_path / "src" / "train.py").read_text()


def test_cli_no_cache_writes_nothing_and_cache_dir_is_honoured(tmp_path, run_memlint):
    write(tmp_path, "train.py", LEAKY)
    assert run_memlint("check", "--no-cache", "train.py").returncode == 1
    assert not (tmp_path / ".memlint_cache").exists()
    assert run_memlint("check", "--cache-dir", "elsewhere", "train.py").returncode == 1
    assert list((tmp_path / "elsewhere").rglob("*.json"))
    assert not (tmp_path / ".memlint_cache").exists()


def test_cli_config_cache_dir(tmp_path, run_memlint):
    write(tmp_path, "pyproject.toml", '[tool.memlint]\ncache-dir = "tmp/lint"\n')
    write(tmp_path, "train.py", LEAKY)
    run_memlint("check", "train.py")
    assert list((tmp_path / "tmp" / "lint").rglob("*.json"))


def test_cli_json_output_is_identical_warm(tmp_path, run_memlint):
    write(tmp_path, "train.py", LEAKY)
    write(tmp_path, "ok.py", CLEAN)
    for fmt in ("json", "sarif", "text"):
        cold = run_memlint("check", "--output-format", fmt, ".")
        warm = run_memlint("check", "--output-format", fmt, ".")
        assert (warm.returncode, warm.stdout) == (cold.returncode, cold.stdout)
        assert warm.stdout == run_memlint("check", "--no-cache", "--output-format", fmt, ".").stdout


@pytest.mark.parametrize(
    "text",
    [
        "__version__ = '1.9.0'\n",
        'version: str\n__version__: str\n__version__ = version = "1.9.0"\n',  # vcs-versioning's chain
    ],
)
def test_libcst_version_is_read_from_its_file_without_package_metadata(tmp_path, monkeypatch, text):
    import importlib.metadata
    import importlib.util
    from types import SimpleNamespace

    from memlint.run import cache as cache_module

    (tmp_path / "_version.py").write_text(text)
    spec = SimpleNamespace(submodule_search_locations=[str(tmp_path)])
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: spec)

    def no_metadata(name):  # the fallback costs a warm run ~45 ms
        raise AssertionError("read package metadata")

    monkeypatch.setattr(importlib.metadata, "version", no_metadata)
    assert cache_module._libcst_version() == "1.9.0"


def test_libcst_version_of_the_installed_libcst_is_read_from_its_file(monkeypatch):
    import importlib.metadata

    from memlint.run import cache as cache_module

    expected = importlib.metadata.version("libcst")
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "metadata")
    assert cache_module._libcst_version() == expected
