"""Colour on a terminal and its conventions, and the progress line, through
the real command (a pseudo-terminal stands in for the terminal)."""

import io
import os
import pty
import select
import subprocess

import pytest
from conftest import memlint_exe

from memlint.reporters.progress import Progress

LEAKY = "import torch\n\ndef f(loader, optimizer):\n    for x in loader:\n        optimizer.step()\n        torch.cuda.empty_cache()\n"
ANSI = "\x1b["


@pytest.mark.parametrize(
    "env, args, coloured",
    [
        ({}, [], False),  # piped
        ({"FORCE_COLOR": "1"}, [], True),
        ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, [], False),  # NO_COLOR wins
        ({"NO_COLOR": "1"}, ["--color", "always"], True),  # the flag wins over both
        ({"FORCE_COLOR": "1"}, ["--color", "never"], False),
        ({}, ["--color", "always"], True),
    ],
)
def test_color_conventions(tmp_path, run_memlint, env, args, coloured):
    (tmp_path / "t.py").write_text(LEAKY)
    for fmt in ("text", "concise"):
        out = run_memlint("check", "--output-format", fmt, *args, "t.py", env=env)
        assert out.returncode == 1
        assert (ANSI in out.stdout) is coloured
        plain = out.stdout
        if coloured:
            import re

            plain = re.sub(r"\x1b\[[0-9;]*m", "", out.stdout)
        assert "t.py:6:9: MEM702 [*] " in plain


@pytest.mark.parametrize("fmt", ["json", "sarif", "github", "junit"])
def test_machine_formats_never_coloured(tmp_path, run_memlint, fmt):
    (tmp_path / "t.py").write_text(LEAKY)
    assert ANSI not in run_memlint("check", "--output-format", fmt, "--color", "always", "t.py").stdout


def _run_with_terminal_stderr(args, cwd):
    """Run memlint with stderr on a pseudo-terminal; stdout piped."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    proc = subprocess.Popen(memlint_exe() + args, cwd=cwd, stdout=subprocess.PIPE, stderr=follower, env=env)
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            break
        try:
            data = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    stdout = proc.stdout.read().decode()
    proc.wait(timeout=120)
    os.close(leader)
    return proc.returncode, stdout, b"".join(chunks).decode(errors="replace")


def test_progress_on_a_terminal_for_a_long_run(tmp_path):
    # Long enough on any machine to pass the half second the line waits for.
    padding = "".join(f"\ndef helper_{i}(x):\n    return torch.relu(x) * {i}\n" for i in range(150))
    for i in range(60):
        (tmp_path / f"t{i:02d}.py").write_text(LEAKY + padding + "\n" * i)
    code, stdout, terminal = _run_with_terminal_stderr(["check", "--no-cache", "-j", "1", "."], tmp_path)
    assert code == 1
    assert "/60 files" in terminal and "finding" in terminal
    assert terminal.endswith("\r\x1b[K"), "the line is cleared before the report is printed"
    assert "/60 files" not in stdout


def test_no_progress_when_quiet_or_piped(tmp_path, run_memlint):
    for i in range(20):
        (tmp_path / f"t{i:02d}.py").write_text(LEAKY)
    code, _, terminal = _run_with_terminal_stderr(["check", "--no-cache", "-q", "-j", "1", "."], tmp_path)
    assert code == 1 and "files" not in terminal
    piped = run_memlint("check", "--no-cache", "-j", "1", ".")
    assert "files," not in piped.stderr


def test_progress_waits_then_throttles():
    stream = io.StringIO()
    bar = Progress(3, stream, delay=3600)
    bar.update(1)
    bar.close()
    assert stream.getvalue() == "", "a short run draws nothing"
    stream = io.StringIO()
    bar = Progress(3, stream, delay=0, interval=3600)
    bar.update(1)
    bar.update(0)
    bar.update(2)
    assert stream.getvalue().count("\r[") == 2, "the first update and the last are drawn, the rest throttled"
    assert stream.getvalue().endswith("3/3 files, 3 findings\x1b[K")
    bar.close()
    assert stream.getvalue().endswith("\r\x1b[K")
