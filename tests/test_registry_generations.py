"""The rules found once must not outlive the modules they were checked
against: a host that drops memlint's modules from sys.modules and imports
them again (pytester's in-process runs restore a snapshot, so a test suite
using memlint's pytest plugin does this) must still get every finding. Found
on a GPU machine, where 7 verify tests saw no MEM101/MEM201 after such a run."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROGRAM = textwrap.dedent(
    """
    import sys
    from memlint.lint.engine import lint_text
    from memlint.rule.registry import select_rules

    text = open(sys.argv[1], encoding="utf-8").read()
    snapshot = dict(sys.modules)
    first = [f.code for f in lint_text(text, sys.argv[1], select_rules())]
    for name in [m for m in sys.modules if m not in snapshot]:
        del sys.modules[name]
    again = [f.code for f in lint_text(text, sys.argv[1], select_rules())]
    print(first, again)
    assert first == again == ["MEM101"], (first, again)
    """
)


def test_findings_survive_modules_dropped_and_imported_again():
    script = ROOT / "fixtures" / "verify" / "mem101_epoch_loss.py"
    done = subprocess.run([sys.executable, "-c", PROGRAM, str(script)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
