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
