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
