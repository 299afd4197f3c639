"""What a newcomer runs first, through the real program: the shipped example
(check, then verify), the help, and the messages a first mistake gets."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "fixtures" / "examples" / "train_leaky.py"


def test_shipped_example_is_checked_with_findings(run_memlint):
    proc = run_memlint("check", "--no-cache", EXAMPLE.parent)
    assert proc.returncode == 1
    assert {"MEM101", "MEM201", "MEM501", "MEM702"} <= {c for c in proc.stdout.split() if c.startswith("MEM")}


def test_shipped_example_verify_shows_memory_dropped(run_memlint):
    # The example is the README's demo of "proves the fix on a real run": its
    # original must run on the torch it is installed with (a keyword recent
    # releases reject made it crash, so memory was never compared) and run
    # enough steps for growth to be judged.
    pytest.importorskip("torch")
    proc = run_memlint("verify", "--json", EXAMPLE)
    assert proc.returncode == 0, proc.stderr
    outcome = json.loads(proc.stdout)
    assert outcome["original"]["status"] == "ok", outcome["original"]
    assert outcome["verdict"]["memory"] == "dropped"
    assert outcome["verdict"]["results"] == "identical"
    assert not any("too few steps" in note for note in outcome["verdict"]["notes"])
