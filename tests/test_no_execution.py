"""`check` and `--fix` read code; they never import or run it.

A project is planted whose every module, if imported or run, leaves a marker
file: plain modules (enough of them to use worker processes), `__init__`,
`__main__`, `conftest`, `setup`, a notebook cell, and a fake `torch` package
first on PYTHONPATH (so importing torch would leave a marker too, and would
fail as it does where torch is not installed). After check, fix and unsafe
fix runs, no marker exists.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import memlint_exe

N_MODULES = 24  # more than the runner's parallel threshold: workers are used


def _planting(marker_dir, name: str) -> str:
    marker = os.path.join(str(marker_dir), name)
    return (
        f"open({marker!r}, 'w').write('imported')\n"
        "import torch\n"
        "for batch in loader:\n"
        "    step(batch)\n"
        "    torch.cuda.empty_cache()\n"
    )


def _plant(tmp_path):
    proj, markers, shadow = tmp_path / "proj", tmp_path / "markers", tmp_path / "shadow"
    for folder in (proj / "pkg", markers, shadow / "torch"):
        folder.mkdir(parents=True)
    for i in range(N_MODULES):
        (proj / f"module_{i:02d}.py").write_text(_planting(markers, f"module_{i:02d}"))
    for name in ("setup", "conftest", "__main__"):
        (proj / f"{name}.py").write_text(_planting(markers, name))
    (proj / "pkg" / "__init__.py").write_text(_planting(markers, "pkg_init"))
    guarded = "".join("    " + line + "\n" for line in _planting(markers, "main").splitlines())
    (proj / "script.py").write_text("import torch\nif __name__ == '__main__':\n" + guarded)
    cell = _planting(markers, "notebook")
    notebook = {
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": cell}],
        "metadata": {"kernelspec": {"language": "python", "name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (proj / "notebook.ipynb").write_text(json.dumps(notebook))
    marker = os.path.join(str(markers), "torch")
    (shadow / "torch" / "__init__.py").write_text(
        f"open({marker!r}, 'w').write('imported')\nraise ImportError('torch is not installed here')\n"
    )
    return proj, markers, shadow


def _env(shadow) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("GITHUB_ACTIONS", None)
    env["PYTHONPATH"] = str(shadow)
    return env


def test_check_and_fix_never_import_or_run_user_code(tmp_path):
    proj, markers, shadow = _plant(tmp_path)
    before = {p: p.read_text() for p in proj.rglob("*.py")}
    runs = [
        ["check", "--no-cache", "--select", "ALL", "--output-format", "json", "."],
        ["check", "--no-cache", "--diff", "."],
        ["check", "--no-cache", "--fix", "--unsafe-fixes", "--select", "ALL", "."],
    ]
    for args in runs:
        proc = subprocess.run(
            memlint_exe() + args, cwd=proj, env=_env(shadow), capture_output=True, text=True, timeout=300
        )
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
        assert os.listdir(markers) == [], f"{args}: user code ran: {os.listdir(markers)}"
    # The fix did happen, statically.
    fixed = [p for p, text in before.items() if p.read_text() != text]
    assert len(fixed) >= N_MODULES
    assert all("empty_cache" not in p.read_text() for p in fixed)


def test_in_process_api_imports_no_torch_and_nothing_from_the_project(tmp_path):
    proj, markers, shadow = _plant(tmp_path)
    probe = (
        "import sys\n"
        "from memlint.frontends.cli import main\n"
        "for args in (['check'], ['check', '--fix', '--unsafe-fixes']):\n"
        f"    main(args + ['--no-cache', '--select', 'ALL', '-q', '-j', '1', {str(proj)!r}])\n"
        "torch = sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.'))\n"
        "project = sorted(m for m, mod in list(sys.modules.items())\n"
        f"                 if str(getattr(mod, '__file__', '') or '').startswith({str(proj)!r}))\n"
        "print('TORCH', torch, 'PROJECT', project)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=_env(shadow), capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert "TORCH [] PROJECT []" in proc.stdout, proc.stdout + proc.stderr
    assert os.listdir(markers) == []
