"""What `memlint check` says around the findings: the summary counts the
files that have findings, --statistics prints only its table (as ruff's
does), and the texts that stand for a rule read as text, not templates."""

import re
import textwrap

from memlint.frontends.cli import build_parser
from memlint.rule.registry import all_rules, rule_by_code
from memlint.rule.table import readable_message, render_rule_table

LEAKY = textwrap.dedent(
    """\
    import torch

    def train(model, loader, optimizer):
        for x in loader:
            optimizer.step()
            torch.cuda.empty_cache()
            torch.cuda.empty_cache()
    """
)
CLEAN = "import torch\n\nprint(torch.ones(1))\n"


def test_summary_counts_the_files_with_findings(tmp_path, run_memlint):
    (tmp_path / "train.py").write_text(LEAKY)
    (tmp_path / "clean.py").write_text(CLEAN)
    proc = run_memlint("check", "--no-cache", ".")
    assert proc.returncode == 1
    assert "Found 2 findings in 1 file." in proc.stdout, proc.stdout
    (tmp_path / "other.py").write_text(LEAKY)
    proc = run_memlint("check", "--no-cache", ".")
    assert "Found 4 findings in 2 files." in proc.stdout, proc.stdout


def test_statistics_prints_only_the_table(tmp_path, run_memlint):
    (tmp_path / "a.py").write_text(LEAKY)
    (tmp_path / "b.py").write_text(CLEAN)
    proc = run_memlint("check", "--no-cache", "--statistics", ".")
    assert proc.returncode == 1
    assert proc.stdout == "    2  MEM702  [*] empty-cache-in-loop\n", proc.stdout
    concise = run_memlint("check", "--no-cache", "--statistics", "--output-format", "concise", ".")
    assert concise.stdout == proc.stdout
    clean = run_memlint("check", "--no-cache", "--statistics", "b.py")
    assert clean.returncode == 0 and clean.stdout == ""


def test_rule_texts_render_without_template_fields():
    table = render_rule_table()
    assert not re.search(r"\{\w+\}", table), table
    assert "`total_loss` accumulates a tensor that carries autograd history" in table
    assert "`model.eval()` inside the training loop is never undone" in table
    for rule in all_rules():
        assert "{" not in readable_message(rule.message)


def test_mem403_says_the_saving_once(tmp_path, run_memlint):
    (tmp_path / "net.py").write_text(
        "import torch.nn as nn\nm = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Flatten())\n"
    )
    proc = run_memlint("check", "--no-cache", "--output-format", "concise", "--select", "MEM403", "net.py")
    (line,) = [x for x in proc.stdout.splitlines() if "MEM403" in x]
    message = line.split("MEM403 ", 1)[1]
    assert message.count("in place") == 1 and message.count("transient activation") == 1, message
    assert message.startswith("[*] `ReLU()` after `Conv2d` can run in place")
    assert rule_by_code("MEM403").message not in message


def test_server_help_says_lsp_over_stdio_and_its_settings(run_memlint):
    proc = run_memlint("server", "--help")
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    assert "Language Server Protocol" in text and "over stdio" in text
    assert "[tool.memlint] in the pyproject.toml nearest each file" in text
    for setting in ('"select"', '"ignore"', '"unsafeFixes"', "initializationOptions", "didChangeConfiguration"):
        assert setting in text, setting
    subparsers = build_parser()._subparsers._group_actions[0]
    assert "stdio" in subparsers.choices["server"].description
