"""A fresh virtual environment for the install tests, without an index.

It sees the packages of the environment running the tests (libcst, flake8,
pytest) through a .pth file, which adds their folder to sys.path without
running that folder's own .pth files: memlint's editable install there stays
off, so what the new environment imports as memlint is what was installed
into it (its site-packages comes first)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def fresh_venv(dest: Path) -> Path:
    """Create the environment; returns its bin folder."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(dest)], check=True, timeout=120)
    (site,) = dest.glob("lib/python*/site-packages")
    ours = sysconfig.get_paths()["purelib"]
    (site / "_memlint_tests_dependencies.pth").write_text(ours + "\n", encoding="utf-8")
    return dest / "bin"


def pip_install(bin_dir: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """This environment's pip installing into the new one: no index, no build isolation."""
    return subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "-q", "--no-deps", "--no-index"]
        + ["--no-build-isolation", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def working_tree_copy(dest: Path) -> Path:
    """The files git tracks or would add (ignored ones left out): what a clone
    of the branch holds, uncommitted changes included."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


def clean_env(bin_dir: Path) -> dict[str, str]:
    """The environment a user's shell would give the new venv's commands."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "GITHUB_ACTIONS")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env
