"""What a newcomer runs first, through the real program: the shipped example
(check, then verify), the help, and the messages a first mistake gets."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "fixtures" / "examples" / "train_leaky.py"


def test_shipped_example_is_checked_with_findings(run_memlint):
    proc = run_memlint("check", "--no-cache", EXAMPLE.parent)
    assert proc.returncode == 1
    assert {"MEM101", "MEM201", "MEM501", "MEM702"} <= {c for c in proc.stdout.split() if c.startswith("MEM")}


def test_shipped_example_verify_shows_memory_dropped(run_memlint):
    # The example is the README's demo of "proves the fix on a real run": its
    # original must run on the torch it is installed with (a keyword recent
    # releases reject made it crash, so memory was never compared) and run
    # enough steps for growth to be judged.
    pytest.importorskip("torch")
    proc = run_memlint("verify", "--json", EXAMPLE)
    assert proc.returncode == 0, proc.stderr
    outcome = json.loads(proc.stdout)
    assert outcome["original"]["status"] == "ok", outcome["original"]
    assert outcome["verdict"]["memory"] == "dropped"
    assert outcome["verdict"]["results"] == "identical"
    assert not any("too few steps" in note for note in outcome["verdict"]["notes"])
    # Every finding is gone from the twin, also the one `@torch.no_grad()`
    # made moot, at the lines `memlint check` gave (not "could not be applied").
    assert outcome["left"] == []
    assert ("MEM101", 57) in [(f["code"], f["line"]) for f in outcome["fixes"]]


def test_check_help_explains_paths_codes_and_exit_status(run_memlint):
    proc = run_memlint("check", "--help")
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    assert "PATH files and folders to check (default: .)" in text
    assert "--select CODES" in text and "comma-separated" in text
    assert "concise: one line per finding" in text  # each format said once, with what it is for
    assert "exit status: 0 nothing to report, 1 findings remain" in text
    assert "`memlint COMMAND --help`" in " ".join(run_memlint("--help").stdout.split())


def test_a_folder_with_no_python_file_is_said_not_passed_silently(tmp_path, run_memlint):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "notes.txt").write_text("no code here\n")
    proc = run_memlint("check", "src")
    assert proc.returncode == 0
    assert "memlint: warning: no Python files or notebooks found under src" in proc.stderr
    # pre-commit names files and --force-exclude may drop every one of them: no warning there.
    assert "warning" not in run_memlint("check", "--force-exclude", "src").stderr
    assert "warning" not in run_memlint("check", "-q", "src").stderr


def test_a_mistyped_config_key_or_code_gets_the_spelling_it_meant(tmp_path, run_memlint):
    (tmp_path / "train.py").write_text("import torch\n")
    (tmp_path / "pyproject.toml").write_text('[tool.memlint]\nselct = ["MEM1"]\n')
    proc = run_memlint("check", ".")
    assert proc.returncode == 2 and "unknown key 'selct' (did you mean 'select'?)" in proc.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.memlint]\nper_file_ignores = {}\n")
    assert "(did you mean 'per-file-ignores'?)" in run_memlint("check", ".").stderr
    (tmp_path / "pyproject.toml").write_text('[tool.memlint]\nignore = ["MEM1O1"]\n')
    assert "unknown rule code 'MEM1O1' (did you mean 'MEM101'?)" in run_memlint("check", ".").stderr
    (tmp_path / "pyproject.toml").unlink()
    proc = run_memlint("check", "--ignore", "MEM2O1", ".")
    assert proc.returncode == 2 and "(did you mean 'MEM201'?)" in proc.stderr
    # No close code: no guess, but where the codes are.
    assert "`memlint rule --all` lists the codes" in run_memlint("check", "--select", "MEM9", ".").stderr


def test_rule_with_a_mistyped_code_or_name_suggests_the_rule(run_memlint):
    proc = run_memlint("rule", "MEM2O1")
    assert proc.returncode == 2 and "unknown rule 'MEM2O1' (did you mean 'MEM201'?)" in proc.stderr
    assert "(did you mean 'inference-without-no-grad'?)" in run_memlint("rule", "inference-without-nograd").stderr
    assert "`memlint rule --all` lists them" in run_memlint("rule", "MEM999").stderr
    assert "--all to list them" in run_memlint("rule").stderr


def test_shipped_example_fix_adds_no_grad_and_no_needless_detach(run_memlint):
    # `validate` gets `@torch.no_grad()`; its `total += loss` then holds no
    # graph, so MEM101's `.detach()` there would be noise in the README's diff.
    proc = run_memlint("check", "--no-cache", "--diff", EXAMPLE)
    added = [line for line in proc.stdout.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert "+@torch.no_grad()" in added
    assert not any("F.cross_entropy(logits, y.to(device)).detach()" in line for line in added), added
    assert "+        epoch_loss += loss.item()" in added  # the training loop's accumulation is still fixed
    # `check` announced 7 fixable findings: the summary accounts for all 7.
    assert "Would fix 7 findings (1 of them by the others' fixes)." in proc.stderr
