"""The hooks in .pre-commit-hooks.yaml, run by the real `pre-commit try-repo`.

try-repo installs a repository's committed HEAD, so the working tree (with
its uncommitted changes) is copied into a scratch repository and committed
there. pre-commit then pip-installs memlint from it into a virtualenv of its
own under a temporary PRE_COMMIT_HOME: libcst comes from PyPI, torch is only
an extra and is never installed. That install is slow, so one module-scoped
setup serves every assertion.
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
PRE_COMMIT = str(Path(sys.executable).with_name("pre-commit"))
GIT_ID = ["-c", "user.name=memlint tests", "-c", "user.email=tests@memlint.invalid", "-c", "commit.gpgsign=false"]

LEAKY = textwrap.dedent(
    """\
    import torch

    def train(model, loader, optimizer):
        for x in loader:
            optimizer.step()
            torch.cuda.empty_cache()
    """
)
CLEAN = "import torch\n\nprint(torch.ones(1))\n"
NOTEBOOK = {
    "cells": [
        {
            "cell_type": "code",
            "execution_count": 1,
            "metadata": {},
            "outputs": [],
            "source": ["import torch\n", "for b in loader:\n", "    torch.cuda.empty_cache()\n", "    step(b)"],
        },
    ],
    "metadata": {"kernelspec": {"language": "python", "name": "python3", "display_name": "Python 3"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def git(*args, cwd):
    subprocess.run(["git", *GIT_ID, *args], cwd=cwd, check=True, capture_output=True, text=True)


def snapshot_of_working_tree(dest: Path) -> Path:
    """Tracked and untracked-but-not-ignored files, committed in a new repo."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    git("init", "-q", cwd=dest)
    git("add", "-A", cwd=dest)
    git("commit", "-q", "-m", "snapshot", cwd=dest)
    return dest


def section(output: str, hook_id: str) -> str:
    """What pre-commit printed for one hook (from its status line on)."""
    blocks = output.split("- hook id: ")
    for i, block in enumerate(blocks[1:], 1):
        if block.split("\n", 1)[0].strip() == hook_id:
            status = blocks[i - 1].rstrip("\n").rsplit("\n", 1)[-1]
            return status + "\n" + block
    raise AssertionError(f"no output for hook {hook_id}:\n{output}")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """Two try-repo runs (each installs the hooks afresh, which is what makes
    them slow): one over files that must pass, one running both hooks over
    files that must not."""
    repo = snapshot_of_working_tree(tmp_path_factory.mktemp("memlint-repo"))
    root = tmp_path_factory.mktemp("project")
    git("init", "-q", cwd=root)
    env = dict(
        os.environ, PRE_COMMIT_HOME=str(tmp_path_factory.mktemp("pre-commit-home")), PIP_DISABLE_PIP_VERSION_CHECK="1"
    )
    for key in ("VIRTUAL_ENV", "PYTHONPATH", "GITHUB_ACTIONS", "PRE_COMMIT"):
        env.pop(key, None)
    files = {
        "pyproject.toml": '[tool.memlint]\nextend-exclude = ["vendored"]\n',
        "clean.py": CLEAN,
        "vendored/leaky.py": LEAKY,
        "bad.py": LEAKY,
        "nb.ipynb": json.dumps(NOTEBOOK, indent=1) + "\n",
        # A nested project whose own settings hold for its files, though
        # pre-commit names them beside others on one command line.
        "sub/pyproject.toml": '[tool.memlint]\nignore = ["MEM702"]\n',
        "sub/leaky.py": LEAKY,
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git("add", "-A", cwd=root)

    def try_repo(*hook_and_files):
        return subprocess.run(
            [PRE_COMMIT, "try-repo", str(repo), *hook_and_files],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )

    passing = try_repo("memlint", "--verbose", "--files", "clean.py", "vendored/leaky.py", "sub/leaky.py")
    failing = try_repo("--verbose", "--files", "bad.py", "nb.ipynb", "clean.py", "vendored/leaky.py", "sub/leaky.py")
    return root, files, passing, failing


def test_hooks_file_declares_both_hooks():
    declared = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(declared) == {"memlint", "memlint-fix"}
    for hook in declared.values():
        assert hook["language"] == "python"
        assert set(hook["types_or"]) >= {"python", "jupyter"}
        assert "--force-exclude" in hook["entry"].split()
    assert "--exit-non-zero-on-fix" in declared["memlint-fix"]["entry"].split()


def test_clean_file_passes_and_configured_excludes_hold(project):
    _, _, passing, _ = project
    assert passing.returncode == 0, passing.stdout + passing.stderr
    out = section(passing.stdout, "memlint")
    # vendored/ was left out; sub/leaky.py was checked with sub/'s settings.
    assert "Passed" in out and "All checks passed! (2 files checked)" in out


def test_check_hook_fails_and_prints_the_findings(project):
    _, _, _, failing = project
    assert failing.returncode == 1, failing.stdout + failing.stderr
    out = section(failing.stdout, "memlint")
    assert "Failed" in out
    assert "bad.py:6:9: MEM702" in out
    assert "nb.ipynb:cell 1:3:5: MEM702" in out
    assert "vendored" not in out and "sub/leaky.py" not in out


def test_fix_hook_rewrites_the_files_and_fails(project):
    root, files, _, failing = project
    out = section(failing.stdout, "memlint-fix")
    assert "Failed" in out and "exit code: 1" in out
    assert "Fixed 2 findings." in out
    fixed = (root / "bad.py").read_text()
    assert "empty_cache" not in fixed and fixed.startswith("import torch\n")
    notebook = json.loads((root / "nb.ipynb").read_text())
    assert notebook["cells"][0]["source"] == ["import torch\n", "for b in loader:\n", "    step(b)"]
    # The nested project's config ignores MEM702: its file is not rewritten.
    for name in ("clean.py", "vendored/leaky.py", "pyproject.toml", "sub/leaky.py"):
        assert (root / name).read_text() == files[name]


def test_fixed_files_then_pass(project, run_memlint):
    root, _, _, _ = project
    proc = run_memlint("check", "--force-exclude", "bad.py", "nb.ipynb", "vendored/leaky.py", cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
