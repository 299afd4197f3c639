"""action.yml: a composite action whose steps run the real command. GitHub
itself is not here, so the steps' scripts run in bash with the inputs in the
environment, as the runner would set them (the install step is left out: it
installs this same package, which the test environment already has)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).parent.parent
LEAKY = "import torch\n\ndef f(loader, optimizer):\n    for x in loader:\n        optimizer.step()\n        torch.cuda.empty_cache()\n"


def _action():
    return yaml.safe_load((ROOT / "action.yml").read_text())


def _step(name):
    return next(s for s in _action()["runs"]["steps"] if s.get("name") == name)


def _run(step, tmp_path, inputs):
    env = dict(os.environ)
    for key, value in step.get("env", {}).items():
        # ${{ inputs.x }} -> the input's value
        name = value.removeprefix("${{ inputs.").removesuffix(" }}")
        env[key] = inputs.get(name, _action()["inputs"].get(name, {}).get("default", ""))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # python3 is this venv's
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.run(["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True)


def test_action_is_a_composite_with_documented_inputs():
    action = _action()
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == {"args", "version", "sarif-file", "python-version"}
    assert all(s.get("shell") == "bash" for s in action["runs"]["steps"] if "run" in s)
    page = (ROOT / "docs" / "integrations.md").read_text()
    assert all(name in page for name in action["inputs"]), "every input is documented in docs/integrations.md"


def test_check_step_annotates_and_fails_on_findings(tmp_path):
    (tmp_path / "train.py").write_text(LEAKY)
    out = _run(_step("memlint check"), tmp_path, {"args": "train.py"})
    assert out.returncode == 1
    assert out.stdout.startswith("::warning file=train.py,line=6,col=9,")
    (tmp_path / "train.py").write_text("print(1)\n")
    assert _run(_step("memlint check"), tmp_path, {"args": "train.py"}).returncode == 0


def test_sarif_step_writes_the_report_and_never_fails(tmp_path):
    (tmp_path / "train.py").write_text(LEAKY)
    step = _step("SARIF report")
    assert step["if"] == "inputs.sarif-file != ''"
    out = _run(step, tmp_path, {"args": "train.py", "sarif-file": "out/memlint.sarif"})
    assert out.returncode == 0, out.stderr
    sarif = json.loads((tmp_path / "out" / "memlint.sarif").read_text())
    assert sarif["runs"][0]["results"][0]["ruleId"] == "MEM702"


def test_install_step_installs_the_actions_own_checkout(tmp_path):
    """Not from PyPI, where torch-memlint is not: with no `version` the step
    installs the checkout the runner put at GITHUB_ACTION_PATH (here, a copy
    of this working tree), and the check step then runs that install."""
    from fresh_venv import clean_env, fresh_venv, working_tree_copy

    step = _step("Install memlint")
    assert "$GITHUB_ACTION_PATH" in step["run"] and "torch-memlint==" in step["run"]
    assert "-q torch-memlint\n" not in step["run"] + "\n"  # no bare PyPI install left
    checkout = working_tree_copy(tmp_path / "action")
    bin_dir = fresh_venv(tmp_path / "venv")
    env = clean_env(bin_dir)
    # No index (torch-memlint is on none); no build isolation, which would fetch setuptools (pip reads
    # PIP_NO_BUILD_ISOLATION=0 as --no-build-isolation); the dependencies come from this environment.
    env.update(GITHUB_ACTION_PATH=str(checkout), PIP_NO_INDEX="1", PIP_NO_BUILD_ISOLATION="0", PIP_NO_DEPS="1")
    # The venv has no pip of its own: `python3 -m pip` is this environment's pip, run for the venv.
    (bin_dir / "python3").unlink(missing_ok=True)
    (bin_dir / "python3").write_text(
        f'#!/bin/sh\nif [ "$1 $2" = "-m pip" ]; then shift 2; exec {sys.executable} -m pip --python {bin_dir / "python"} "$@"; fi\n'
        f'exec {bin_dir / "python"} "$@"\n'
    )
    (bin_dir / "python3").chmod(0o755)
    project = tmp_path / "project"
    project.mkdir()
    installed = subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=project, env=env, capture_output=True, text=True, timeout=600
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    where = subprocess.run(
        [bin_dir / "python", "-c", "import memlint; print(memlint.__file__)"],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert where.stdout.startswith(str(tmp_path / "venv")), where.stdout + where.stderr
    (project / "train.py").write_text(LEAKY)
    check = subprocess.run(
        ["bash", "-e", "-c", _step("memlint check")["run"]],
        cwd=project,
        env=dict(env, MEMLINT_ARGS="train.py"),
        capture_output=True,
        text=True,
    )
    assert check.returncode == 1 and check.stdout.startswith("::warning file=train.py,line=6,col=9,"), (
        check.stdout + check.stderr
    )
