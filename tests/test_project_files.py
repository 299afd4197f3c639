"""The project's own files agree with the package: one version source, the licence it declares."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib

import memlint

ROOT = Path(__file__).resolve().parent.parent


def test_changelog_newest_release_is_the_package_version():
    releases = re.findall(r"^## (\d+\.\d+\.\d+)\b", (ROOT / "CHANGELOG.md").read_text(), re.MULTILINE)
    assert releases, "CHANGELOG.md lists no release heading (## X.Y.Z)"
    assert releases[0] == memlint.__version__


def test_version_is_read_from_the_package_only():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "memlint.__version__"}


def test_license_file_matches_the_declared_license():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    # An SPDX expression (PEP 639): setuptools stops building the old
    # ``{text = ...}`` table in 2027, and the file ships in the wheel.
    assert project["project"]["license"] == "MIT"
    assert project["project"]["license-files"] == ["LICENSE"]
    assert "setuptools>=77" in project["build-system"]["requires"][0]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
