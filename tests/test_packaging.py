"""The built wheel holds every subpackage (rules/ is installed as memlint.rules)."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_contains_every_subpackage(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    (wheel,) = tmp_path.glob("torch_memlint-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    packages = {str(p.parent.relative_to(ROOT)) for p in ROOT.glob("memlint/**/__init__.py")}
    for package in packages | {"rules"}:
        target = "memlint/rules" if package == "rules" else package
        assert f"{target}/__init__.py" in names, f"{target} missing from the wheel"
    for rule_module in (ROOT / "rules").glob("mem*.py"):
        assert f"memlint/rules/{rule_module.name}" in names
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    requires = [line for line in text.splitlines() if line.startswith("Requires-Dist:")]
    runtime = [r for r in requires if "extra ==" not in r]
    assert all(r.split()[1].startswith(("libcst", "tomli")) for r in runtime), runtime
    assert any("torch" in r and 'extra == "verify"' in r for r in requires)
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    entries = zipfile.ZipFile(wheel).read(entry).decode()
    assert "memlint = memlint.frontends.cli:main" in entries and "flake8.extension" in entries


@pytest.mark.slow
def test_built_wheel_installs_and_runs_in_a_fresh_environment(tmp_path):
    """What CI ships: `python -m build` makes the sdist and, from it, the
    wheel; the wheel goes into a fresh environment, whose own `memlint` then
    checks the shipped example and explains a rule. A file missing from the
    sdist or the wheel (a rule, package data) fails here."""
    from fresh_venv import clean_env, fresh_venv, pip_install, working_tree_copy

    source = working_tree_copy(tmp_path / "clone")
    dist = tmp_path / "dist"
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--no-isolation",
            "--skip-dependency-check",
            "--outdir",
            str(dist),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (sdist,) = dist.glob("torch_memlint-*.tar.gz")
    (wheel,) = dist.glob("torch_memlint-*-py3-none-any.whl")
    bin_dir = fresh_venv(tmp_path / "venv")
    installed = pip_install(bin_dir, str(wheel))
    assert installed.returncode == 0, installed.stderr
    env = clean_env(bin_dir)
    where = subprocess.run(
        [bin_dir / "python", "-c", "import memlint, memlint.rules; print(memlint.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert where.stdout.startswith(str(tmp_path / "venv")), (
        where.stdout + where.stderr
    )  # the wheel's, not the checkout's
    check = subprocess.run(
        [bin_dir / "memlint", "check", "--no-cache", str(ROOT / "fixtures" / "examples")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert check.returncode == 1 and "MEM101" in check.stdout and "Found " in check.stdout, check.stdout + check.stderr
    rule = subprocess.run(
        [bin_dir / "memlint", "rule", "MEM101"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert rule.returncode == 0 and "tensor-accumulated-across-iterations" in rule.stdout, rule.stderr
    assert sdist.stat().st_size > 0


def test_ci_builds_the_wheel_and_installs_it():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python -m build" in ci
    assert "tests/test_packaging.py" in ci or "pytest" in ci  # the test above runs in CI's pytest
