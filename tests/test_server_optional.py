"""The server is an optional extra: without pygls, `check` works and
`memlint server` says what to install."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BLOCK_PYGLS = """\
import sys
sys.modules["pygls"] = None
sys.modules["lsprotocol"] = None
"""


def run(tmp_path, *args):
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(BLOCK_PYGLS)
    env = {"PYTHONPATH": f"{site}:{ROOT}", "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "memlint", *args], capture_output=True, text=True, env=env, cwd=tmp_path
    )


def test_check_works_without_the_server_extra(tmp_path):
    (tmp_path / "train.py").write_text(
        "import torch\ndef validate(model, loader):\n    model.eval()\n    for x, y in loader:\n        model(x)\n"
    )
    proc = run(tmp_path, "check", "--no-cache", "train.py")
    assert proc.returncode == 1 and "MEM201" in proc.stdout, proc.stderr


def test_server_without_the_extra_names_it(tmp_path):
    proc = run(tmp_path, "server")
    assert proc.returncode == 2
    # torch-memlint is not on PyPI: the hint names the extra's own packages
    # (which are) and the command for a clone.
    assert "pip install 'pygls>=2.1.1' 'lsprotocol>=2025.0.0'" in proc.stderr
    assert "pip install '.[server]'" in proc.stderr
    assert "torch-memlint[server]" not in proc.stderr
