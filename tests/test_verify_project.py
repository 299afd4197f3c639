"""memlint verify on a script whose leaks are fixed in other modules of its
project: the twin is the project's (every module the script imports that
``check --fix`` changes), made from the findings ``memlint check`` reports on
the tree, and run through an import overlay that leaves the files untouched.

fixtures/verify/project/: ``train.py`` is clean; ``lib/engine.py`` holds a
per-epoch ``evaluate()`` without ``no_grad`` (MEM201, known from train.py's
call) summing the loss tensor (MEM101), an epoch total of the loss tensor
(MEM101), and a ``validate()`` that train.py calls under ``no_grad`` (silent).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ROOT / "fixtures" / "verify" / "project"
SPLIT = ROOT / "fixtures" / "projects" / "split_training"
ENGINE_FIXES = [("MEM101", "lib/engine.py", 20), ("MEM201", "lib/engine.py", 29), ("MEM101", "lib/engine.py", 30)]


def _twin(script: Path, select=None, unsafe=False):
    from memlint.verify.project_twin import project_twin

    return project_twin(str(script), script.read_text(encoding="utf-8"), select, unsafe)


def _checked(run_memlint, tree: Path, files) -> set[tuple[str, str, int]]:
    """What ``memlint check`` reports on the tree, in ``files``."""
    proc = run_memlint("check", "--no-cache", "--output-format", "json", tree)
    wanted = {os.path.realpath(f) for f in files}
    return {
        (f["code"], os.path.relpath(f["filename"], tree).replace(os.sep, "/"), f["location"]["row"])
        for f in json.loads(proc.stdout)
        if os.path.realpath(f["filename"]) in wanted
    }


def _reported(twin) -> set[tuple[str, str, int]]:
    return {(f.code, f.path, f.line) for f in twin.findings} | {(f.code, f.path, f.line) for f in twin.left}


def test_the_closure_is_every_project_module_the_script_imports():
    from memlint.verify.project_twin import import_closure

    script = PROJECT / "train.py"
    closure = import_closure(str(script), script.read_text(), str(PROJECT))
    assert [os.path.relpath(p, PROJECT) for p in closure] == [
        "train.py",
        os.path.join("lib", "__init__.py"),
        os.path.join("lib", "engine.py"),
        os.path.join("lib", "metrics.py"),  # `from .metrics import EpochLoss`
    ]


def test_the_twin_fixes_the_helper_module_not_the_script():
    twin = _twin(PROJECT / "train.py")
    assert twin.root == str(PROJECT)
    assert twin.text == (PROJECT / "train.py").read_text()  # nothing to fix in the script
    assert [(f.code, f.path, f.line, f.safety) for f in twin.findings] == [(*x, "safe") for x in ENGINE_FIXES]
    assert twin.left == [] and twin.remaining == []
    engine = str(PROJECT / "lib" / "engine.py")
    assert list(twin.modules) == [engine]
    fixed = twin.modules[engine]
    assert "@torch.no_grad()\ndef evaluate(" in fixed and "epoch_total += loss.item()" in fixed
    # validate() is called under no_grad in train.py: the project view keeps it silent.
    assert "@torch.no_grad()\ndef validate(" not in fixed


@pytest.mark.parametrize("script", [PROJECT / "train.py", SPLIT / "train.py"])
def test_the_twin_reports_exactly_what_check_reports_on_the_tree(script, run_memlint):
    from memlint.verify.project_twin import import_closure

    twin = _twin(script)
    closure = import_closure(str(script), script.read_text(), str(script.parent))
    checked = _checked(run_memlint, script.parent, closure)
    assert checked and _reported(twin) == checked


def test_a_finding_only_the_project_shows_is_fixed_where_check_reports_it():
    """fixtures/projects/split_training: train.py calls utils.evaluate() with
    autograd on (MEM201 in utils.py), and amp_setup.py's ``torch`` arrives
    through ``from utils import *`` (MEM501). The script alone has nothing."""
    from memlint.read.source import read_source
    from memlint.verify.twin import make_twin

    script = SPLIT / "train.py"
    assert make_twin(read_source(str(script)), None, False).findings == []  # the file alone
    twin = _twin(script)
    where = {(f.code, f.path) for f in twin.findings}
    assert ("MEM201", "utils.py") in where and ("MEM501", "amp_setup.py") in where
    assert {os.path.basename(p) for p in twin.modules} == {"utils.py", "amp_setup.py"}
    # validate() (called under no_grad) and distill_targets() (its caller
    # backpropagates) stay as they are.
    utils = twin.modules[str(SPLIT / "utils.py")]
    assert utils.count("@torch.no_grad()") == 1 and "@torch.no_grad()\ndef evaluate(" in utils


def test_a_finding_left_in_a_module_says_where_and_why(tmp_path):
    (tmp_path / "setup.cfg").write_text("")
    (tmp_path / "loop.py").write_text(
        textwrap.dedent(
            """\
            import torch
            import torch.nn.functional as F
            def val(net, data_loader):
                correct = 0
                for data, target in data_loader:
                    with torch.no_grad():
                        output = net(data)
                        correct += (output.argmax(1) == target).sum().item()
                return correct
            def train(net, optimizer, data_loader, val_loader, epochs):
                for e in range(epochs):
                    net.train()
                    for data, target in data_loader:
                        optimizer.zero_grad()
                        F.cross_entropy(net(data), target).backward()
                        optimizer.step()
                    val_acc = val(net, val_loader)
            """
        )
    )
    script = tmp_path / "main.py"
    script.write_text("from loop import train\n\ntrain(None, None, [], [], 1)\n")
    twin = _twin(script)
    assert twin.findings == [] and twin.modules == {}
    assert [(x.code, x.path) for x in twin.left] == [("MEM202", "loop.py")]
    assert twin.left[0].why.startswith("has an unsafe fix") and "--unsafe-fixes" in twin.left[0].why
    fixed = _twin(script, unsafe=True)
    assert [(f.code, f.path, f.safety) for f in fixed.findings] == [("MEM202", "loop.py", "unsafe")]
    assert list(fixed.modules) == [str(tmp_path / "loop.py")]


def test_select_limits_the_project_twin_as_it_limits_check():
    twin = _twin(PROJECT / "train.py", select=["MEM201"])
    assert [(f.code, f.path) for f in twin.findings] == [("MEM201", "lib/engine.py")]


# -- the import overlay --------------------------------------------------------

OVERLAY_RUN = """\
import json, sys
sys.path.insert(0, sys.argv[1])
from memlint.verify import overlay
overlay.install(json.loads(sys.argv[2]))
sys.path.insert(0, sys.argv[3])
import pkg.mod as mod
print(json.dumps([mod.VALUE, mod.HELPER, mod.__file__, mod.beside()]))
"""


def test_the_overlay_imports_the_fixed_text_under_the_original_name(tmp_path):
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "helper.py").write_text("NAME = 'helper'\n")
    (project / "pkg" / "data.txt").write_text("beside")
    original = project / "pkg" / "mod.py"
    body = (
        "import os\nfrom .helper import NAME as HELPER\nVALUE = {}\n"
        "def beside():\n    return open(os.path.join(os.path.dirname(__file__), 'data.txt')).read()\n"
    )
    original.write_text(body.format(1))
    fixed = tmp_path / "fixed_mod.py"
    fixed.write_text(body.format(2))

    def run(mapping):
        cmd = [sys.executable, "-c", OVERLAY_RUN, str(ROOT), json.dumps(mapping), str(project)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
        return json.loads(proc.stdout)

    # The fixed text runs as pkg.mod: its relative import, __file__ and the
    # files beside it are the original's.
    assert run({str(original): str(fixed)}) == [2, "helper", str(original), "beside"]
    # The original is untouched, and no bytecode of the twin was cached for it.
    assert original.read_text() == body.format(1)
    assert run({})[0] == 1


# -- a real run ------------------------------------------------------------------


@pytest.mark.slow
def test_verify_fixes_the_helper_module_and_memory_drops():
    pytest.importorskip("torch")
    from memlint.verify.cli import Options, verify
    from memlint.verify.report import render_human, to_json
    from memlint.verify.verdict import GRAPH, TENSOR

    before = {p: p.read_bytes() for p in PROJECT.rglob("*.py")}
    out = verify(Options(script=str(PROJECT / "train.py"), steps=20, device="cpu"))
    assert {p: p.read_bytes() for p in PROJECT.rglob("*.py")} == before
    assert out.fixed is not None and out.fixed_modules == ["lib/engine.py"]
    # evaluate() kept every batch's graph and activations until it returned.
    assert out.original.meters[TENSOR].peak > 2 * out.fixed.meters[TENSOR].peak
    assert out.original.meters[GRAPH].peak > 10 * out.fixed.meters[GRAPH].peak
    assert (out.memory, out.results, out.ok) == ("dropped", "identical", True), render_human(out)
    text = render_human(out)
    assert "  fixed MEM201 inference-without-no-grad, lib/engine.py:29 (safe fix)" in text
    assert text.rstrip().endswith("OK memory dropped, results identical: the fix held up")
    data = to_json(out)
    assert [(f["code"], f["path"], f["line"]) for f in data["fixes"]] == ENGINE_FIXES
    assert data["project"] == {"root": str(PROJECT), "fixed_modules": ["lib/engine.py"]}
    assert data["left"] == []


@pytest.mark.parametrize("select,unsafe", [(None, False), (["MEM201", "MEM1"], True)])
def test_the_twin_checks_each_file_with_the_settings_check_gives_it(tmp_path, select, unsafe):
    import argparse

    from memlint.find.resolver import ConfigResolver
    from memlint.frontends.cli import _settings
    from memlint.verify.project_twin import check_settings

    (tmp_path / "pyproject.toml").write_text(
        '[tool.memlint]\nextend-select = ["MEM403"]\nignore = ["MEM702"]\ntorch-version = "2.1"\n'
        '[tool.memlint.per-file-ignores]\n"lib/*" = ["MEM101"]\n'
    )
    config = ConfigResolver().config_for(str(tmp_path / "train.py"))
    args = argparse.Namespace(
        unsafe_fixes=True if unsafe else None,
        add_noqa=False,
        diff=False,
        fix=False,
        select=select,
        extend_select=[],
        ignore=[],
    )
    assert check_settings(config, select, unsafe) == _settings(args, config, "text")


def test_a_script_that_does_not_parse_is_refused(tmp_path):
    from memlint.lint.engine import ParseError

    script = tmp_path / "train.py"
    script.write_text("import torch\ndef (:\n")
    with pytest.raises(ParseError, match="syntax error"):
        _twin(script)
