"""memlint verify on a notebook: its code cells run as one script (magics
masked as `check` masks them) for both twins, or verify refuses with exit
status 2; never a verdict on something that did not run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

pytestmark = pytest.mark.slow

VERIFY = Path(__file__).resolve().parent.parent / "fixtures" / "verify"


def cell(source: str, kind: str = "code") -> dict:
    lines = source.splitlines(keepends=True)
    if kind == "markdown":
        return {"cell_type": "markdown", "metadata": {}, "source": lines}
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": lines}


def notebook(*cells: dict, language: str = "python") -> str:
    return json.dumps(
        {
            "cells": list(cells),
            "metadata": {"kernelspec": {"display_name": language, "language": language, "name": language}},
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    )


def leaky_notebook() -> str:
    """fixtures/verify/mem101_epoch_loss.py cut into cells, with the magics
    and shell escapes a real notebook has."""
    body = (VERIFY / "mem101_epoch_loss.py").read_text().split('"""\n', 1)[1]
    setup, loop = body.split("\nfor epoch", 1)
    return notebook(
        cell("# Training\nThe loop below leaks.", "markdown"),
        cell("%matplotlib inline\n!echo installing\n" + setup.strip() + "\n"),
        cell("%%time\nfor epoch" + loop),
        cell("%%bash\necho not python\n"),
    )


def test_a_notebook_runs_as_one_script_for_both_twins(tmp_path, run_memlint):
    (tmp_path / "train.ipynb").write_text(leaky_notebook())
    lint = run_memlint("check", "--no-cache", "train.ipynb")
    assert "train.ipynb:cell 3:10:9: MEM101" in lint.stdout, lint.stdout
    proc = run_memlint("verify", "train.ipynb", "--device", "cpu", "--steps", 20, "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert data["fixes"] == [
        {"code": "MEM101", "name": "tensor-accumulated-across-iterations", "line": 10, "safety": "safe", "cell": 3}
    ]
    for run in ("original", "fixed"):
        assert data[run]["status"] == "ok" and data[run]["steps"] == 20, data[run]
    assert data["verdict"]["meters"]["graph_nodes"]["status"] == "dropped"
    assert data["verdict"]["results"] == "identical" and data["ok"] is True
    human = run_memlint("verify", "train.ipynb", "--device", "cpu", "--steps", 20)
    assert "fixed MEM101 tensor-accumulated-across-iterations, cell 3, line 10 (safe fix)" in human.stdout
    assert human.stdout.rstrip().endswith("the fix held up")


@pytest.mark.parametrize(
    "text, why",
    [
        (notebook(cell("println(1)"), language="julia"), "no Python code cells to run"),
        (notebook(cell("%%bash\necho hi\n")), "no Python code cells to run"),
        (notebook(cell("import torch\nfor x in range(3):\n"), cell("print(1)\n")), "does not parse, so it cannot run"),
        ('{"cells": 3}', "not a notebook"),
    ],
    ids=["other-kernel", "only-cell-magics", "cells-do-not-parse", "not-a-notebook"],
)
def test_a_notebook_verify_cannot_run_is_refused(tmp_path, run_memlint, text, why):
    (tmp_path / "nb.ipynb").write_text(text)
    proc = run_memlint("verify", "nb.ipynb", "--device", "cpu", "--steps", 5)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.startswith("memlint verify: error: nb.ipynb") and why in proc.stderr
