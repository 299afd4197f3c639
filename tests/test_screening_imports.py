"""A file no rule can report anything in is checked without libcst: the CLI
(and pre-commit, which runs it) and the flake8 plugin screen it with the
rules' cards (lint/screen.py) and never import libcst, a rule or the fixer;
a file that reaches a rule still gets its finding and its fix."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

# A script without torch, and a model file the gate rejects for every rule
# (it says torch, so the pre-filter lets it through).
NO_TORCH = "import os\n\n\ndef join(x):\n    return os.path.join(x, 'a')\n"
MODEL = textwrap.dedent(
    """\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return torch.relu(self.fc(x))
    """
)
LEAKY = textwrap.dedent(
    """\
    import torch


    def train(model, loader, optimizer):
        for x in loader:
            optimizer.step()
            torch.cuda.empty_cache()
    """
)
HEAVY = ("libcst", "memlint.lint.engine", "memlint.fix.fixer", "memlint.analysis.facts")

# Runs a command in this process and prints its exit status and the heavy
# modules it imported.
PROBE = textwrap.dedent(
    """\
    import json, runpy, sys
    heavy = {heavy!r}
    sys.argv = {argv!r}
    code = None
    try:
        {run}
    except SystemExit as exc:
        code = exc.code
    mods = [m for m in sys.modules if m in heavy or m.startswith("memlint.rules.")]
    print(json.dumps({{"code": code, "mods": mods}}))
    """
)


def _probe(argv: list[str], run: str, cwd) -> tuple[dict, str]:
    script = PROBE.format(heavy=HEAVY, argv=argv, run=run)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=cwd, timeout=300)
    lines = out.stdout.strip().splitlines()
    return json.loads(lines[-1]), "\n".join(lines[:-1])


def _memlint(tmp_path, *args: str) -> tuple[dict, str]:
    return _probe(["memlint", *args], "runpy.run_module('memlint', run_name='__main__')", tmp_path)


def _flake8(tmp_path, path) -> tuple[dict, str]:
    argv = ["flake8", "--isolated", "--jobs=1", "--select=MEM", str(path)]
    return _probe(argv, "from flake8.main.cli import main; sys.exit(main(sys.argv[1:]))", tmp_path)


@pytest.mark.parametrize("text", [NO_TORCH, MODEL], ids=["no-torch", "gate-rejects-all"])
def test_check_and_fix_import_no_libcst_where_no_rule_can_run(tmp_path, text):
    path = tmp_path / "module.py"
    path.write_text(text)
    for args in (["check", "--no-cache"], ["check"], ["check", "--fix"], ["check", "--diff", "--unsafe-fixes"]):
        result, out = _memlint(tmp_path, *args, str(path))
        assert result == {"code": 0, "mods": []}, (args, out)
    assert path.read_text() == text


@pytest.mark.parametrize("text", [NO_TORCH, MODEL], ids=["no-torch", "gate-rejects-all"])
def test_the_flake8_plugin_imports_no_libcst_where_no_rule_can_run(tmp_path, text):
    path = tmp_path / "module.py"
    path.write_text(text)
    result, out = _flake8(tmp_path, path)
    assert result == {"code": 0, "mods": []}, out


def test_a_file_that_reaches_a_rule_gets_its_finding_and_fix(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(LEAKY)
    result, out = _memlint(tmp_path, "check", "--no-cache", str(path))
    assert result["code"] == 1 and "libcst" in result["mods"]
    assert f"{path}:7:9: MEM702" in out
    result, out = _flake8(tmp_path, path)
    assert result["code"] == 1 and f"{path}:7:9: MEM702" in out
    result, _ = _memlint(tmp_path, "check", "--fix", str(path))
    assert result["code"] == 0
    assert path.read_text() == LEAKY.replace("        torch.cuda.empty_cache()\n", "")
