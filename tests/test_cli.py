"""The real `memlint` command, in subprocesses."""

import json
import stat
import textwrap

import libcst as cst

LEAKY = textwrap.dedent(
    """\
    import torch

    def train(model, loader, optimizer):
        for x in loader:
            optimizer.step()
            torch.cuda.empty_cache()
    """
)
CLEAN = "import torch\n\nprint(torch.ones(1))\n"


def write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_check_reports_and_exits_1(tmp_path, run_memlint):
    write(tmp_path, "train.py", LEAKY)
    proc = run_memlint("check", "train.py")
    assert proc.returncode == 1
    assert "train.py:6:9: MEM702" in proc.stdout
    assert "torch.cuda.empty_cache()" in proc.stdout  # the excerpt
    assert "Found 1 finding" in proc.stdout


def test_clean_exits_0(tmp_path, run_memlint):
    write(tmp_path, "ok.py", CLEAN)
    proc = run_memlint("check", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "All checks passed" in proc.stdout


def test_default_path_is_current_folder(tmp_path, run_memlint):
    write(tmp_path, "pkg/train.py", LEAKY)
    proc = run_memlint("check")
    assert proc.returncode == 1
    assert "MEM702" in proc.stdout


def test_fix_then_check_is_clean_and_second_fix_is_noop(tmp_path, run_memlint):
    path = write(tmp_path, "train.py", LEAKY)
    path.chmod(0o640)
    proc = run_memlint("check", "--fix", "train.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fixed = path.read_text()
    assert "empty_cache" not in fixed
    cst.parse_module(fixed)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert run_memlint("check", "train.py").returncode == 0
    again = run_memlint("check", "--fix", "--exit-non-zero-on-fix", "train.py")
    assert again.returncode == 0
    assert path.read_text() == fixed


def test_exit_non_zero_on_fix(tmp_path, run_memlint):
    write(tmp_path, "train.py", LEAKY)
    assert run_memlint("check", "--fix", "--exit-non-zero-on-fix", "train.py").returncode == 1


def test_diff_writes_nothing(tmp_path, run_memlint):
    path = write(tmp_path, "train.py", LEAKY)
    proc = run_memlint("check", "--diff", "train.py")
    assert proc.returncode == 1
    assert "-        torch.cuda.empty_cache()" in proc.stdout
    assert proc.stdout.startswith("--- a/train.py")
    assert path.read_text() == LEAKY


def test_show_fixes_and_statistics(tmp_path, run_memlint):
    write(tmp_path, "a.py", LEAKY)
    write(tmp_path, "b.py", LEAKY)
    stats = run_memlint("check", "--statistics", ".")
    assert "    2  MEM702  [*] empty-cache-in-loop" in stats.stdout
    proc = run_memlint("check", "--fix", "--show-fixes", ".")
    assert "Fixed:" in proc.stdout and proc.stdout.count("MEM702") == 2


def test_select_and_ignore(tmp_path, run_memlint):
    write(tmp_path, "train.py", LEAKY)
    assert run_memlint("check", "--ignore", "MEM7", "train.py").returncode == 0
    assert run_memlint("check", "--select", "MEM1", "train.py").returncode == 0
    assert run_memlint("check", "--select", "MEM7", "train.py").returncode == 1
    # the more specific selector wins, as in ruff
    assert run_memlint("check", "--select", "MEM702", "--ignore", "MEM7", "train.py").returncode == 1
    bad = run_memlint("check", "--select", "XYZ9", "train.py")
    assert bad.returncode == 2 and "XYZ9" in bad.stderr


def test_exit_zero(tmp_path, run_memlint):
    write(tmp_path, "train.py", LEAKY)
    assert run_memlint("check", "--exit-zero", "train.py").returncode == 0


def test_noqa(tmp_path, run_memlint):
    write(tmp_path, "train.py", LEAKY.replace("empty_cache()", "empty_cache()  # noqa: MEM7"))
    assert run_memlint("check", "train.py").returncode == 0
    write(tmp_path, "train.py", "# memlint: noqa\n" + LEAKY)
    assert run_memlint("check", "train.py").returncode == 0


def test_output_formats(tmp_path, run_memlint):
    write(tmp_path, "train.py", LEAKY)
    data = json.loads(run_memlint("check", "--output-format", "json", "train.py").stdout)
    assert data[0]["code"] == "MEM702"
    assert data[0]["location"] == {"row": 6, "column": 9}
    assert data[0]["fix"]["applicability"] == "safe"
    edit = data[0]["fix"]["edits"][0]
    assert edit["content"] == "" and edit["location"]["row"] == 6
    sarif = json.loads(run_memlint("check", "--output-format", "sarif", "train.py").stdout)
    result = sarif["runs"][0]["results"][0]
    assert sarif["version"] == "2.1.0"
    assert result["ruleId"] == "MEM702"
    assert result["locations"][0]["physicalLocation"]["region"]["startColumn"] == 9
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "train.py"
    gh = run_memlint("check", "--output-format", "github", "train.py").stdout
    assert gh.startswith("::warning file=train.py,line=6,col=9,")
    concise = run_memlint("check", "--output-format", "concise", "train.py").stdout
    assert concise.splitlines()[0].startswith("train.py:6:9: MEM702 [*] ")


def test_config_pyproject(tmp_path, run_memlint):
    write(tmp_path, "train.py", LEAKY)
    write(tmp_path, "pyproject.toml", '[tool.memlint]\nignore = ["MEM702"]\n')
    assert run_memlint("check", ".").returncode == 0
    write(tmp_path, "pyproject.toml", '[tool.memlint]\nper-file-ignores = {"train.py" = ["MEM7"]}\n')
    assert run_memlint("check", ".").returncode == 0
    write(tmp_path, "pyproject.toml", '[tool.memlint]\nextend-exclude = ["train.py"]\n')
    assert run_memlint("check", ".").returncode == 0
    # a path named explicitly is linted unless --force-exclude
    assert run_memlint("check", "train.py").returncode == 1
    assert run_memlint("check", "--force-exclude", "train.py").returncode == 0
    write(tmp_path, "pyproject.toml", '[tool.memlint]\noutput-format = "concise"\n')
    assert run_memlint("check", ".").stdout.startswith("train.py:6:9")


def test_broken_config_names_file_and_key(tmp_path, run_memlint):
    write(tmp_path, "train.py", LEAKY)
    write(tmp_path, "pyproject.toml", '[tool.memlint]\nselct = ["MEM1"]\n')
    proc = run_memlint("check", ".")
    assert proc.returncode == 2
    assert "pyproject.toml" in proc.stderr and "selct" in proc.stderr
    write(tmp_path, "pyproject.toml", '[tool.memlint]\nignore = "MEM1"\n')
    proc = run_memlint("check", ".")
    assert proc.returncode == 2 and "'ignore' must be a list" in proc.stderr
    write(tmp_path, "pyproject.toml", "[tool.memlint\n")
    proc = run_memlint("check", ".")
    assert proc.returncode == 2 and "invalid TOML" in proc.stderr


def test_unreadable_pyproject_checks_its_files_with_the_defaults(tmp_path, run_memlint):
    # A project's packaging file broken in a table that is not memlint's (an
    # unterminated triple-quoted string in [tool.black]): named with its
    # reason, the files it governs are still checked, and the exit code is 2.
    write(tmp_path, "proj/pyproject.toml", "[tool.black]\nexclude = '''\n(\n  /(\n    \\.git\n)\n")
    write(tmp_path, "proj/train.py", LEAKY)
    write(tmp_path, "other/train.py", LEAKY)
    proc = run_memlint("check", "--output-format", "concise", "proj", "other")
    assert proc.returncode == 2
    assert "pyproject.toml: invalid TOML" in proc.stderr and "checked with the default settings" in proc.stderr
    assert "proj/train.py:" in proc.stdout and "other/train.py:" in proc.stdout
    # --config names the file to use: broken, it still stops the run.
    proc = run_memlint("check", "--config", "proj/pyproject.toml", "proj")
    assert proc.returncode == 2 and "invalid TOML" in proc.stderr and not proc.stdout.strip()


def test_bad_input_reported_and_run_continues(tmp_path, run_memlint):
    write(tmp_path, "a_good.py", LEAKY)
    write(tmp_path, "b_syntax.py", "import torch\nfor x in y:\n    torch.cuda.empty_cache(\n")
    (tmp_path / "c_latin1.py").write_bytes(b"import torch\nname = '\xe9t\xe9'\n")
    (tmp_path / "d_binary.py").write_bytes(b"\x00\x01torch\x02")
    proc = run_memlint("check", ".", "missing.py")
    assert proc.returncode == 1
    assert "MEM702" in proc.stdout
    assert "b_syntax.py: syntax error" in proc.stderr
    assert "c_latin1.py: not valid UTF-8" in proc.stderr
    assert "d_binary.py: binary file" in proc.stderr
    assert "missing.py: no such file" in proc.stderr
    before = (tmp_path / "b_syntax.py").read_bytes()
    run_memlint("check", "--fix", ".")
    assert (tmp_path / "b_syntax.py").read_bytes() == before
    assert "empty_cache" not in (tmp_path / "a_good.py").read_text()


def test_walk_skips_venvs_and_git(tmp_path, run_memlint):
    write(tmp_path, ".venv/lib/x.py", LEAKY)
    write(tmp_path, "env/pyvenv.cfg", "")
    write(tmp_path, "env/lib/y.py", LEAKY)
    write(tmp_path, ".git/z.py", LEAKY)
    write(tmp_path, "build/w.py", LEAKY)
    assert run_memlint("check", ".").returncode == 0


def test_parallel_run_matches_serial(tmp_path, run_memlint):
    for i in range(40):
        write(tmp_path, f"m{i:02d}.py", LEAKY if i % 3 == 0 else CLEAN)
    serial = run_memlint("check", "-j", "1", "--output-format", "concise", ".")
    parallel = run_memlint("check", "-j", "2", "--output-format", "concise", ".")
    assert serial.stdout == parallel.stdout
    assert serial.stdout.count("MEM702") == 14


def test_rule_command(run_memlint):
    proc = run_memlint("rule", "MEM702")
    assert proc.returncode == 0
    assert "## What it does" in proc.stdout and "empty-cache-in-loop" in proc.stdout
    listing = run_memlint("rule", "--all")
    assert "MEM702  empty-cache-in-loop" in listing.stdout
    assert run_memlint("rule", "MEM999").returncode == 2


def test_usage_error_exits_2(run_memlint):
    assert run_memlint("check", "--output-format", "xml").returncode == 2
    assert run_memlint().returncode == 2


def test_summary_does_not_claim_success_when_files_were_not_checked(tmp_path, run_memlint):
    write(tmp_path, "clean.py", "import torch\nx = torch.ones(1)\n")
    (tmp_path / "bad.py").write_bytes(b"import torch\nname = '\xe9'\n")
    proc = run_memlint("check", ".")
    assert proc.returncode == 1
    assert "All checks passed" not in proc.stdout
    assert "No findings (1 file checked)" in proc.stdout
    assert "1 file could not be checked" in proc.stderr
    proc = run_memlint("check", "missing.py")
    assert proc.returncode == 1 and "(0 files checked)" in proc.stdout


def test_closed_pipe_ends_quietly(tmp_path):
    """`memlint check | head -1`: the reader leaves early; no traceback."""
    import subprocess

    from conftest import memlint_exe

    for i in range(400):  # more output than a pipe buffers
        write(tmp_path, f"t{i}.py", LEAKY)
    proc = subprocess.Popen(
        memlint_exe() + ["check", "--no-cache", "."], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    proc.stdout.readline()
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
