import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def memlint_exe() -> list[str]:
    """The real installed command (the console script beside this Python)."""
    exe = Path(sys.executable).with_name("memlint")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "memlint"]


@pytest.fixture
def run_memlint(tmp_path):
    import subprocess

    def run(*args, cwd=None, input=None, env=None):
        full_env = dict(os.environ)
        full_env.pop("GITHUB_ACTIONS", None)
        for name in ("NO_COLOR", "FORCE_COLOR"):  # colour only where a test asks for it
            full_env.pop(name, None)
        if env:
            full_env.update(env)
        return subprocess.run(
            memlint_exe() + [str(a) for a in args],
            cwd=cwd or tmp_path,
            input=input,
            capture_output=True,
            text=True,
            env=full_env,
            timeout=300,
        )

    return run


@pytest.fixture
def pytester(pytester):
    """The inner pytest runs read a configuration of their own: give them the
    asyncio setting pyproject.toml gives the outer run, or pytest-asyncio
    (installed for the server's tests) warns in each of them."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    return pytester
