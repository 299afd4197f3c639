"""The Pythons memlint supports are the ones CI proves: requires-python's
floor and the newest classifier each get a smoke run of the built wheel
(.ci/run -> .ci/python_smoke); the tools check the code for the floor."""

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
FLOOR = "3.10"  # 3.9 lacks ast.match_case, which the gate reads (and is past its end of life)


def _versions() -> list[str]:
    return [
        c.rsplit(" ", 1)[-1]
        for c in PROJECT["project"]["classifiers"]
        if c.startswith("Programming Language :: Python :: 3.")
    ]


def test_the_floor_is_declared_everywhere_it_matters():
    assert PROJECT["project"]["requires-python"] == f">={FLOOR}"
    assert _versions()[0] == FLOOR and "3.13" in _versions()
    assert "Programming Language :: Python :: 3 :: Only" in PROJECT["project"]["classifiers"]
    assert PROJECT["tool"]["ruff"]["target-version"] == "py" + FLOOR.replace(".", "")
    assert PROJECT["tool"]["mypy"]["python_version"] == FLOOR


def test_ci_smoke_runs_the_floor_and_the_newest_python():
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'for version in "$floor" "$newest"' in ci and ".ci/python_smoke" in ci
    assert "python -m build" in ci
    smoke = (ROOT / ".ci" / "python_smoke").read_text()
    for step in ("memlint check", "memlint rule MEM101", "flake8 --select MEM", "tests/test_rule_examples.py"):
        assert step in smoke, step
    assert os.access(ROOT / ".ci" / "python_smoke", os.X_OK)


def _interpreter(version: str) -> str | None:
    found = shutil.which(f"python{version}")
    candidates = ([found] if found else []) + sorted(
        glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}"))
    )
    for candidate in candidates:
        if subprocess.run([candidate, "-c", ""], capture_output=True).returncode == 0:
            return candidate
    return None


def test_the_floor_interpreter_compiles_memlint_and_has_every_ast_node_it_names():
    """Cheap proof on the floor itself (CI's smoke run installs and runs the
    wheel there): every module compiles, and every ``ast.X`` memlint names
    exists there or is guarded by ``hasattr`` (on 3.9, ``ast.match_case`` did
    not: `memlint check` died at import)."""
    python = _interpreter(FLOOR)
    if python is None:
        pytest.skip(f"no Python {FLOOR} on this machine (CI requires one)")
    sources = [str(p) for folder in ("memlint", "rules") for p in (ROOT / folder).rglob("*.py")]
    code = (
        "import ast, sys\n"
        "missing = set()\n"
        "for path in sys.argv[1:]:\n"
        "    tree = compile(open(path, encoding='utf-8').read(), path, 'exec', flags=ast.PyCF_ONLY_AST)\n"
        "    nodes = list(ast.walk(tree))\n"
        "    guarded = {n.args[1].value for n in nodes if isinstance(n, ast.Call) and getattr(n.func, 'id', '')\n"
        "               in ('hasattr', 'getattr') and len(n.args) > 1 and isinstance(n.args[1], ast.Constant)}\n"
        "    for node in nodes:\n"
        "        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == 'ast':\n"
        "            if not hasattr(ast, node.attr) and node.attr not in guarded:\n"
        "                missing.add(node.attr)\n"
        "print(sys.version_info[:2], sorted(missing))\n"
    )
    proc = subprocess.run([python, "-c", code, *sources], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "(3, 10) []", proc.stdout
    assert sys.version_info >= (3, 10)
