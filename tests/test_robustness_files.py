"""Odd files: encodings, newlines, binary, huge, links, permissions, races.

Every file either comes back byte-exact outside the edited span, or is left
alone with one message naming it and the reason; the run goes on; the exit
status is 1 for files that cannot be read or parsed and 2 only for usage,
configuration and internal errors.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import os
import signal
import stat
import sys
import threading

import pytest

from memlint.fix import fixer
from memlint.frontends import cli
from memlint.lint.engine import ParseError, parse_module
from memlint.read.source import MAX_FILE_BYTES, SourceError, decode_source, read_bytes, read_source, write_atomic
from memlint.run.runner import Settings, process_file

LOOP = "import torch\nfor batch in loader:\n    step(batch)\n    torch.cuda.empty_cache()\n    log(batch)\n"
REMOVED = "    torch.cuda.empty_cache()"


def _newlines(text: str, nl: str) -> bytes:
    return text.replace("\n", nl).encode()


def _fixable_cases() -> dict[str, tuple[bytes, bytes]]:
    """name -> (bytes on disk, bytes expected after --fix): only the
    empty_cache line goes; every other byte stays."""
    cases: dict[str, tuple[bytes, bytes]] = {}

    def add(name: str, before: bytes, removed: bytes) -> None:
        assert before.count(removed) == 1, name
        cases[name] = (before, before.replace(removed, b""))

    for name, nl in (("lf", "\n"), ("crlf", "\r\n"), ("lone_cr", "\r")):
        add(f"newline_{name}.py", _newlines(LOOP, nl), (REMOVED + nl).encode())
    mixed = b"import torch\r\nfor batch in loader:\n    step(batch)\r\n    torch.cuda.empty_cache()\n    log(batch)\r\n"
    add("newline_mixed.py", mixed, b"    torch.cuda.empty_cache()\n")
    latin1 = (
        b"# -*- coding: latin-1 -*-\n# caf\xe9 cr\xe8me\nimport torch\nfor batch in loader:\n"
        b"    step(batch)  # \xe9t\xe9\n    torch.cuda.empty_cache()\nname = '\xe9\xe8\xff'\n"
    )
    add("cookie_latin1.py", latin1, b"    torch.cuda.empty_cache()\n")
    cp1252 = b"#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\n" + LOOP.encode() + b"euro = '\x80'\n"
    add("cookie_cp1252_line2.py", cp1252, b"    torch.cuda.empty_cache()\n")
    # A codec the project registers for itself (FCGF's ``future_fstrings``):
    # unknown here, but the bytes are UTF-8, which is what it decodes them as.
    project_codec = "# -*- coding: future_fstrings -*-\n# ünï\n".encode() + LOOP.encode()
    add("cookie_project_codec.py", project_codec, b"    torch.cuda.empty_cache()\n")
    bom = codecs.BOM_UTF8 + "# ünïcödé 日本語 🚀\n".encode() + _newlines(LOOP, "\r\n")
    add("bom_crlf.py", bom, b"    torch.cuda.empty_cache()\r\n")
    add("no_final_newline.py", LOOP.encode() + b"print('end')", b"    torch.cuda.empty_cache()\n")
    add("tabs.py", LOOP.replace("    ", "\t").encode(), b"\ttorch.cuda.empty_cache()\n")
    add("form_feed.py", b"\x0c\n" + LOOP.encode() + b"\x0c\ndef f():\n    pass\n", b"    torch.cuda.empty_cache()\n")
    trailing = LOOP.replace("step(batch)\n", "step(batch)   \t\n").encode() + b"x = 1   \n\n\n"
    add("trailing_whitespace.py", trailing, b"    torch.cuda.empty_cache()\n")
    long_line = b"BLOB = '" + b"x" * 1_000_000 + b"'\n" + LOOP.encode() + b"# " + b"y" * 100_000 + b"\n"
    add("very_long_lines.py", long_line, b"    torch.cuda.empty_cache()\n")
    comment = LOOP.replace("    torch.cuda", "    # keep this comment\n    torch.cuda").encode()
    add("comment_above.py", comment, b"    torch.cuda.empty_cache()\n")
    return cases


# name -> (bytes, the reason the message must give)
def _bad_cases() -> dict[str, tuple[bytes, str]]:
    return {
        "latin1_no_cookie.py": (b"import torch\nname = 'caf\xe9'\n", "not valid UTF-8"),
        "wrong_cookie.py": (b"# coding: ascii\nimport torch\nname = '\xc3\xa9'\n", "cannot decode as ascii"),
        # An unknown codec over bytes that are not UTF-8: nothing says how to read them.
        "bogus_cookie.py": (b"# -*- coding: klingon -*-\nimport torch\nname = 'caf\xe9'\n", "bad encoding declaration"),
        "bom_vs_cookie.py": (codecs.BOM_UTF8 + b"# coding: latin-1\nimport torch\n", "byte order mark"),
        "binary.py": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR torch", "binary file"),
        "syntax_error.py": (b"import torch\nfor x in :\n    torch.cuda.empty_cache()\n", "syntax error"),
        "unterminated.py": (b"import torch\ns = '''never closed\n", "syntax error"),
        # Without the nesting guard these two crash libcst's native parser
        # (a segfault that would take the whole run down).
        "deep_brackets.py": (b"import torch\nx = " + b"(" * 100_000 + b"1" + b")" * 100_000 + b"\n", "nested"),
        # Python parses a flat 20,000-long ``and`` where libcst would not: a loop
        # that a rule may flag keeps the file past the gate (a file no rule can
        # fire in is never handed to libcst, so it needs no guard).
        "long_and_chain.py": (
            b"import torch\nx = " + b" and ".join([b"a"] * 20_000) + b"\n" + LOOP.encode(),
            "nested too deeply",
        ),
        "long_attribute_chain.py": (b"import torch\nx = a" + b".b" * 5_000 + b"\n", "nested too deeply"),
        "huge.py": (b"import torch\n" + b"x = 1\n" * (MAX_FILE_BYTES // 6 + 1000), "too large"),
    }


def _make_tree(root) -> None:
    (root / "pyproject.toml").write_text("[tool.memlint]\nselect = ['ALL']\n")
    for name, (before, _) in _fixable_cases().items():
        (root / name).write_bytes(before)
    for name, (data, _) in _bad_cases().items():
        (root / name).write_bytes(data)
    (root / "empty.py").write_bytes(b"")
    (root / "only_bom.py").write_bytes(codecs.BOM_UTF8)


def _message_for(stderr: str, name: str) -> str:
    lines = [line for line in stderr.splitlines() if f"{name}:" in line and "error" in line]
    assert len(lines) == 1, f"expected one message naming {name}:\n{stderr}"
    return lines[0]


def test_odd_files_in_one_run(tmp_path, run_memlint):
    """One run over every kind of odd file: the good ones are fixed byte-exact,
    each bad one gets one message naming it and why, nothing crashes."""
    proj = tmp_path / "proj"
    proj.mkdir()
    _make_tree(proj)
    (proj / "executable.py").write_text(LOOP)
    (proj / "executable.py").chmod(0o750)
    proc = run_memlint("check", "--fix", "--no-cache", "proj")
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for name, (_, expected) in _fixable_cases().items():
        assert (proj / name).read_bytes() == expected, name
    assert (proj / "executable.py").read_text() == LOOP.replace(REMOVED + "\n", "")
    assert stat.S_IMODE((proj / "executable.py").stat().st_mode) == 0o750
    for name, (data, reason) in _bad_cases().items():
        assert reason in _message_for(proc.stderr, name), name
        assert (proj / name).read_bytes() == data, name
    assert (proj / "empty.py").read_bytes() == b""
    assert (proj / "only_bom.py").read_bytes() == codecs.BOM_UTF8
    assert "empty.py" not in proc.stderr and "only_bom.py" not in proc.stderr
    assert not [p for p in os.listdir(proj) if p.startswith(".memlint-")]


def test_fixed_files_still_compile_and_second_fix_is_noop(tmp_path):
    for name, (_before, expected) in _fixable_cases().items():
        text = decode_source(expected).text
        compile(text, name, "exec", dont_inherit=True)
        path = tmp_path / name
        path.write_bytes(expected)
        report = process_file(str(path), Settings(mode="fix", select=("MEM702",)))
        assert report.error is None and not report.fixed, name
        assert path.read_bytes() == expected, name


def _main(*args: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main([*args])
    return code, err.getvalue()


@pytest.mark.parametrize("name", sorted(_bad_cases()))
def test_unreadable_or_unparsable_file_exits_1(tmp_path, name):
    data, reason = _bad_cases()[name]
    path = tmp_path / name
    path.write_bytes(data)
    for mode in ([], ["--fix", "--unsafe-fixes"]):
        code, err = _main("check", "--no-cache", "--select", "ALL", *mode, str(path))
        assert code == 1, err
        assert f"{path}: " in err and reason in err
        assert "internal error" not in err
        assert path.read_bytes() == data


def test_internal_error_exits_2_and_run_continues(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text(LOOP)
    (tmp_path / "b.py").write_text(LOOP)
    real = fixer.fix_text

    def broken(text, path, *args, **kwargs):
        if path.endswith("a.py"):
            raise RuntimeError("boom")
        return real(text, path, *args, **kwargs)

    monkeypatch.setattr(fixer, "fix_text", broken)
    code, err = _main("check", "--no-cache", "--fix", "-j", "1", str(tmp_path))
    assert code == 2
    assert "a.py: internal error: RuntimeError: boom" in err
    assert (tmp_path / "a.py").read_text() == LOOP
    assert "empty_cache" not in (tmp_path / "b.py").read_text()


def test_usage_and_config_errors_exit_2(tmp_path):
    assert _main("check", "--no-such-option")[0] == 2
    assert _main("check", "--select", "NOPE999", str(tmp_path))[0] == 2
    (tmp_path / "pyproject.toml").write_text("[tool.memlint]\nselect = 'MEM702'\n")
    code, err = _main("check", str(tmp_path))
    assert code == 2 and "pyproject.toml" in err


# -- links --------------------------------------------------------------------


def test_symlinks(tmp_path, run_memlint):
    proj, outside = tmp_path / "proj", tmp_path / "outside"
    proj.mkdir()
    (outside / "pkg").mkdir(parents=True)
    (proj / "pyproject.toml").write_text("[tool.memlint]\n")
    (proj / "real.py").write_text(LOOP)
    (proj / "inside_link.py").symlink_to(proj / "real.py")
    (outside / "target.py").write_text(LOOP)
    (outside / "pkg" / "train.py").write_text(LOOP)
    (proj / "outside_link.py").symlink_to(outside / "target.py")
    (proj / "dangling.py").symlink_to(tmp_path / "missing.py")
    (proj / "vendor").symlink_to(outside / "pkg", target_is_directory=True)

    proc = run_memlint("check", "--fix", "--no-cache", ".", "vendor/train.py", cwd=proj)
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # A link inside the tree is written through; the link stays a link.
    assert (proj / "inside_link.py").is_symlink()
    assert "empty_cache" not in (proj / "real.py").read_text()
    # Links that lead out of the tree are never written through.
    assert (outside / "target.py").read_text() == LOOP
    assert (outside / "pkg" / "train.py").read_text() == LOOP
    assert "symlink points outside the project" in _message_for(proc.stderr, "outside_link.py")
    assert "symlink points outside the project" in _message_for(proc.stderr, "vendor/train.py")
    assert "broken symbolic link" in _message_for(proc.stderr, "dangling.py")


# -- permissions, special files --------------------------------------------------


def test_read_only_file_is_not_written(tmp_path):
    path = tmp_path / "ro.py"
    path.write_text(LOOP)
    path.chmod(0o444)
    code, err = _main("check", "--no-cache", "--fix", str(path))
    assert code == 1
    assert f"{path}: file is read-only; not written" in err
    assert path.read_text() == LOOP
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    assert os.listdir(tmp_path) == ["ro.py"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_folder_is_reported(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    path = folder / "train.py"
    path.write_text(LOOP)
    folder.chmod(0o555)
    try:
        code, err = _main("check", "--no-cache", "--fix", str(path))
    finally:
        folder.chmod(0o755)
    assert code == 1 and f"{path}: " in err and "not written" in err
    assert path.read_text() == LOOP


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_does_not_hang(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "ok.py").write_text(LOOP)
    code, err = _main("check", "--no-cache", "--fix", str(tmp_path))
    assert code == 1
    assert "pipe.py: not a regular file" in err
    assert "empty_cache" not in (tmp_path / "ok.py").read_text()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_project_stage_reads_skip_fifos_and_huge_files(tmp_path):
    # The project stage peeks into modules it never lints; a FIFO must read as
    # unknown at once rather than block, and a file past the linted size too.
    from memlint.read.source import MAX_FILE_BYTES, read_bytes
    from memlint.run.cache import file_digest

    os.mkfifo(tmp_path / "pipe.py")
    assert read_bytes(str(tmp_path / "pipe.py")) is None
    assert file_digest(str(tmp_path / "pipe.py")) is None
    big = tmp_path / "big.py"
    big.write_bytes(b"#" * (MAX_FILE_BYTES + 1))
    assert read_bytes(str(big)) is None
    assert read_bytes(str(big), limit=None) == big.read_bytes()
    assert file_digest(str(big)) is not None


def test_file_changed_between_read_and_write(tmp_path, monkeypatch):
    path = tmp_path / "train.py"
    path.write_text(LOOP)
    edits = []
    real = fixer.fix_text

    def fix_while_someone_edits(*args, **kwargs):
        result = real(*args, **kwargs)
        edits.append(LOOP + f"# saved from the editor meanwhile ({len(edits)})\n")
        path.write_text(edits[-1])
        return result

    monkeypatch.setattr(fixer, "fix_text", fix_while_someone_edits)
    report = process_file(str(path), Settings(mode="fix"))
    assert report.error == "file changed on disk since it was read; not written"
    assert path.read_text() == edits[-1]
    code, err = _main("check", "--no-cache", "--fix", str(path))
    assert code == 1 and f"{path}: file changed on disk since it was read; not written" in err
    assert path.read_text() == edits[-1]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give files away")
def test_owner_is_kept_when_root_fixes(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(LOOP)
    os.chown(path, 4242, 4343)
    report = process_file(str(path), Settings(mode="fix"))
    assert report.error is None and report.fixed
    info = path.stat()
    assert (info.st_uid, info.st_gid) == (4242, 4343)


# -- reading and writing, unit by unit ------------------------------------------


def test_messages_say_where_decoding_failed():
    with pytest.raises(SourceError, match=r"not valid UTF-8 at byte 13 \(0xe9, line 3 column 6\)"):
        decode_source(b"x=1\ny=2\nz = '\xe9'\n")
    with pytest.raises(SourceError, match=r"cannot decode as ascii at byte \d+ \(0xc3, line 2"):
        decode_source(b"# coding: ascii\nx = '\xc3\xa9'\n")


def test_directory_and_missing_file(tmp_path):
    with pytest.raises(SourceError, match="is a directory"):
        read_source(str(tmp_path))
    with pytest.raises(SourceError, match="no such file"):
        read_source(str(tmp_path / "nope.py"))


def test_project_peeks_read_bytes_or_nothing(tmp_path):
    """The project stage's peeks into other modules: bytes as stored (no
    decoding, BOM and CRLF kept), None for a folder or a missing file, so an
    unreadable module is unknown rather than an error."""
    module = tmp_path / "m.py"
    module.write_bytes(b"\xef\xbb\xbfimport torch\r\n")
    assert read_bytes(str(module)) == b"\xef\xbb\xbfimport torch\r\n"
    assert read_bytes(str(tmp_path)) is None
    assert read_bytes(str(tmp_path / "missing.py")) is None


def test_huge_file_is_refused_before_it_is_read(tmp_path, monkeypatch):
    path = tmp_path / "big.py"
    with open(path, "wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)  # sparse: nothing to read anyway
    with pytest.raises(SourceError, match=r"too large to analyse \(5\.2 MB, limit 5 MB\)"):
        read_source(str(path))


def _source(path, text=LOOP):
    path.write_text(text)
    return read_source(str(path))


def test_write_goes_through_a_synced_temporary_file_in_the_same_folder(tmp_path, monkeypatch):
    path = tmp_path / "train.py"
    source = _source(path)
    path.chmod(0o604)
    seen = {}
    real_replace, real_fsync = os.replace, os.fsync

    def replace(src, dst):
        seen["tmp"], seen["synced_before_rename"] = src, seen.get("fsync", False)
        return real_replace(src, dst)

    def fsync(fd):
        seen["fsync"] = True
        return real_fsync(fd)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "fsync", fsync)
    write_atomic(source, "x = 1\n")
    assert os.path.dirname(seen["tmp"]) == str(tmp_path)
    assert seen["synced_before_rename"]
    assert path.read_text() == "x = 1\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o604
    assert os.listdir(tmp_path) == ["train.py"]


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_failed_write_leaves_old_file_and_no_temporary(tmp_path, monkeypatch, failure):
    path = tmp_path / "train.py"
    source = _source(path)

    def fail(fd):
        raise failure

    monkeypatch.setattr(os, "fsync", fail)
    expected = SourceError if isinstance(failure, OSError) else KeyboardInterrupt
    with pytest.raises(expected) as info:
        write_atomic(source, "x = 1\n")
    if expected is SourceError:
        assert "No space left on device" in str(info.value) and "not written" in str(info.value)
    assert path.read_text() == LOOP
    assert os.listdir(tmp_path) == ["train.py"]


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX only")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("other_thread", [False, True], ids=["one thread", "another thread waiting"])
def test_signal_during_write_waits_for_the_rename(tmp_path, monkeypatch, signum, other_thread):
    """A signal that lands mid-write takes effect once the new file is in
    place: never a half-written file, never a stray temporary file. With
    another thread alive (the language server, a test runner's worker) the
    kernel may hand the signal to that thread, which no mask of ours covers."""
    done = threading.Event()
    waiter = threading.Thread(target=done.wait)
    if other_thread:
        waiter.start()
    path = tmp_path / "train.py"
    source = _source(path)
    real_fsync = os.fsync

    def fsync_then_signal(fd):
        os.kill(os.getpid(), signum)
        return real_fsync(fd)

    class Interrupted(BaseException):
        pass

    def handler(*_):
        raise Interrupted

    previous = signal.signal(signum, handler)
    try:
        monkeypatch.setattr(os, "fsync", fsync_then_signal)
        with pytest.raises(Interrupted):
            write_atomic(source, "x = 1\n")
    finally:
        signal.signal(signum, previous)
        done.set()
        if other_thread:
            waiter.join()
    assert path.read_text() == "x = 1\n"
    assert os.listdir(tmp_path) == ["train.py"]


def test_unencodable_fix_is_not_written(tmp_path):
    path = tmp_path / "latin.py"
    path.write_bytes(b"# coding: latin-1\nx = '\xe9'\n")
    source = read_source(str(path))
    with pytest.raises(SourceError, match="cannot be encoded as iso-8859-1"):
        write_atomic(source, "# coding: latin-1\nx = '\u20ac'\n")
    assert path.read_bytes() == b"# coding: latin-1\nx = '\xe9'\n"


def test_nesting_guard_accepts_deep_but_real_code():
    # Deeper than anything in torch or the standard library, still accepted.
    parse_module("x = " + "(" * 150 + "1" + ")" * 150 + "\n")
    parse_module("x = a" + ".b" * 300 + "\n")
    parse_module("x = " + " and ".join(["a"] * 300) + "\n")
    with pytest.raises(ParseError, match="nested too deeply"):
        parse_module("x = " + " or ".join(["a"] * 1000) + "\n")


def test_lone_cr_text_round_trips_through_the_fixer():
    from memlint.fix.fixer import fix_text
    from memlint.rule.registry import select_rules

    text = LOOP.replace("\n", "\r")
    result = fix_text(text, "x.py", select_rules(["MEM702"]))
    assert result.text == text.replace(REMOVED + "\r", "")


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip(reason="POSIX file semantics")
