"""A run killed mid-fix leaves every file old or new, and no temporary files.

`memlint check --fix` runs in a subprocess over many files and is stopped with
SIGINT or SIGTERM, sent to it alone or (as a terminal's Ctrl-C does) to its
whole process group, while it is writing. Afterwards each file is exactly its
old text or its fixed text, no `.memlint-*.tmp` file is left, no worker
process outlives the run, and nothing changes any more.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import memlint_exe

from memlint.fix.fixer import fix_text
from memlint.rule.registry import select_rules

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

N_FILES = 160
HELPERS = "".join(f"def helper_{i}(x):\n    y = x * {i}\n    return y + 1\n\n" for i in range(40))


def _old(i: int) -> str:
    return f"# file {i}\nimport torch\n\n{HELPERS}for batch in loader:\n    step(batch)\n    torch.cuda.empty_cache()\n"


def _snapshot(folder) -> dict[str, str]:
    out = {}
    for name in os.listdir(folder):
        try:
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as fh:
                out[name] = fh.read()
        except FileNotFoundError:  # a temporary file, renamed meanwhile
            continue
    return out


def _sigint_as_in_a_terminal() -> None:
    """A process started with SIGINT ignored (``nohup``, a background job of a
    non-interactive shell) hands that on, and Python then leaves Ctrl-C
    ignored, rightly: memlint in such a job must not stop on it. The tests
    play a terminal's Ctrl-C, so the run starts with the default disposition
    whatever the test runner was started under."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


@pytest.mark.parametrize(
    "signum, jobs, group",
    [
        (signal.SIGINT, 1, False),
        (signal.SIGTERM, 1, False),
        (signal.SIGINT, 2, True),  # Ctrl-C in a terminal: parent and workers
        (signal.SIGTERM, 2, False),
        (signal.SIGTERM, 2, True),
    ],
    ids=["sigint-serial", "sigterm-serial", "sigint-group-parallel", "sigterm-parallel", "sigterm-group-parallel"],
)
def test_killed_fix_leaves_old_or_new_files(tmp_path, signum, jobs, group):
    folder = tmp_path / "proj"
    folder.mkdir()
    fixed = fix_text(_old(0), "x.py", select_rules()).text
    assert fixed != _old(0) and fixed.startswith("# file 0\n")
    old = {f"train_{i:03d}.py": _old(i) for i in range(N_FILES)}
    new = {f"train_{i:03d}.py": fixed.replace("# file 0\n", f"# file {i}\n", 1) for i in range(N_FILES)}
    for name, text in old.items():
        (folder / name).write_text(text)

    proc = subprocess.Popen(
        memlint_exe() + ["check", "--fix", "--no-cache", "-q", "-j", str(jobs), "."],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_sigint_as_in_a_terminal,
    )
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if any(text != old[name] for name, text in _snapshot(folder).items() if name in old):
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the run ended before it could be interrupted"
        workers = _children_of(proc.pid) if os.path.isdir("/proc") else []
        if group:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    assert proc.returncode == (130 if signum == signal.SIGINT else 143), err
    assert "memlint: interrupted" in err and "Traceback" not in err, err
    after = _snapshot(folder)
    assert sorted(after) == sorted(old), "stray files: %s" % sorted(set(after) - set(old))
    states = {
        name: "old" if after[name] == old[name] else "new" if after[name] == new[name] else "damaged" for name in old
    }
    assert "damaged" not in states.values(), [n for n, s in states.items() if s == "damaged"]
    assert "new" in states.values() and "old" in states.values(), "the run was not stopped midway"
    # No worker went on writing after the run ended.
    for pid in workers:
        assert not os.path.exists(f"/proc/{pid}") or _zombie(pid), f"worker {pid} outlived the run"
    time.sleep(0.5)
    assert _snapshot(folder) == after


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork", reason="the crash is planted through fork")
def test_worker_that_dies_takes_only_its_file_down(tmp_path, monkeypatch):
    """A worker killed by a crash in native code (here: SIGKILL to itself) or
    by the OOM killer breaks the pool; the run goes on and names the file."""
    from memlint.run import runner

    real = runner.process_file

    def crashing(path, settings):
        if path.endswith("crash.py"):
            os.kill(os.getpid(), signal.SIGKILL)
        return real(path, settings)

    monkeypatch.setattr(runner, "process_file", crashing)
    small = "import torch\nfor batch in loader:\n    step(batch)\n    torch.cuda.empty_cache()\n"
    names = [f"train_{i:02d}.py" for i in range(20)] + ["crash.py"]
    for name in names:
        (tmp_path / name).write_text(small)
    paths = [str(tmp_path / name) for name in names]
    reports = runner.run(paths, runner.Settings(mode="fix"), jobs=2)
    by_name = {os.path.basename(r.path): r for r in reports}
    assert by_name["crash.py"].error == "internal error: the process analysing this file died"
    assert (tmp_path / "crash.py").read_text() == small
    # The pool stops the other worker too (SIGTERM, held back while it
    # writes); a file it had fixed but not reported is found clean on the retry.
    for name in names[:-1]:
        assert by_name[name].error is None, name
        assert "empty_cache" not in (tmp_path / name).read_text()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".memlint-")]
