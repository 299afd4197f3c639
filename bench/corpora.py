"""The benchmark corpora: released wheels from PyPI, unpacked at run time.

Nothing here is committed; each corpus is downloaded with pip into a scratch
folder and only its ``.py`` files are extracted.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

# name -> pinned requirement; --pin NAME=VERSION overrides.
CORPORA = {
    "timm": "timm==1.0.31",
    "transformers": "transformers==5.23.0",
    # Training and evaluation loops, for the precision review (real_code_findings.py).
    "pytorch-lightning": "pytorch-lightning==2.6.6",
    "pytorch-ignite": "pytorch-ignite==0.5.5",
    "accelerate": "accelerate==1.15.0",
    "skorch": "skorch==1.4.0",
    "torchtune": "torchtune==0.6.1",
    "mmengine": "mmengine==0.10.7",
    "fastai": "fastai==2.8.12",
    "torchmetrics": "torchmetrics==1.9.0",
}
# The speed and fix benchmarks' default corpora.
SPEED_CORPORA = ("timm", "transformers")


@dataclass(frozen=True)
class Corpus:
    name: str
    requirement: str
    root: Path  # the folder handed to every tool
    files: int
    lines: int


def fetch(name: str, workdir: Path, requirement: str | None = None) -> Corpus:
    """Download the wheel of ``requirement`` (no dependencies) and unpack its
    ``.py`` files under ``workdir/name``; reuses an earlier unpack."""
    requirement = requirement or CORPORA[name]
    target = workdir / name
    marker = target / ".complete"
    if not (marker.is_file() and marker.read_text() == requirement):
        wheels = workdir / "wheels" / name
        wheels.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
                "--dest",
                str(wheels),
                requirement,
            ],
            check=True,
        )
        wheel = _newest(wheels, requirement.split("==")[0])
        target.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel) as zf:
            for member in zf.namelist():
                if member.endswith(".py") and ".dist-info/" not in member:
                    zf.extract(member, target)
        marker.write_text(requirement)
    files = sorted(p for p in target.rglob("*.py"))
    lines = 0
    for p in files:
        with open(p, "rb") as fh:
            lines += fh.read().count(b"\n")
    return Corpus(name=name, requirement=requirement, root=target, files=len(files), lines=lines)


def _newest(folder: Path, project: str) -> Path:
    stem = project.replace("-", "_").lower()
    wheels = [p for p in folder.glob("*.whl") if p.name.lower().startswith(stem + "-")]
    if not wheels:
        raise SystemExit(f"no wheel for {project} in {folder}")
    return max(wheels, key=os.path.getmtime)
