"""The rule-code table the warm path selects from (memlint.run.selection)
against the rules themselves, and a warm run that never imports libcst."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest

from memlint.rule.registry import all_rules, select_rules
from memlint.run.selection import CODES, known_prefix, select_codes

ENTRIES = [None, "ALL", "MEM", "MEM1", "MEM10", "MEM101", "MEM4", "MEM403", "MEM7", "mem2", "MEM999"]


def test_the_table_is_the_registry():
    found = {r.code: r.default_enabled for r in all_rules()}
    assert CODES == found, (
        "memlint/run/selection.py CODES must list every rule's code and default_enabled: "
        f"add {sorted(found.keys() - CODES.keys())}, remove {sorted(CODES.keys() - found.keys())}"
    )


@pytest.mark.parametrize(
    ("select", "ignore", "extend"),
    [
        (
            [a] if a else None,
            [b] if b else [],
            [c] if c else [],
        )
        for a, b, c in itertools.product(ENTRIES, ENTRIES[:6] + ["MEM403"], [None, "MEM403", "MEM1"])
    ],
)
def test_codes_and_rules_select_alike(select, ignore, extend):
    assert select_codes(select, ignore, extend) == [r.code for r in select_rules(select, ignore, extend)]


def test_known_prefix():
    assert known_prefix("mem1") and known_prefix("ALL") and known_prefix("MEM403")
    assert not known_prefix("MEM9") and not known_prefix("E501")


def test_a_warm_run_imports_neither_libcst_nor_a_rule(tmp_path):
    (tmp_path / "train.py").write_text(
        "import torch\nfor x, y in loader:\n    total += model(x).sum()\n    loss.backward()\n"
    )
    cache = tmp_path / "cache"
    probe = (
        "import runpy, sys, json\n"
        "sys.argv = ['memlint', 'check', '--cache-dir', sys.argv[1], sys.argv[2]]\n"
        "try:\n"
        "    runpy.run_module('memlint', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "mods = [m for m in sys.modules if m == 'libcst' or m.startswith('memlint.rules.')]\n"
        "print(json.dumps({'code': code, 'mods': mods}))\n"
    )
    runs = []
    for _ in range(2):
        out = subprocess.run(
            [sys.executable, "-c", probe, str(cache), str(tmp_path / "train.py")],
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    assert cold["code"] == warm["code"] == 1  # the same finding, from the cache the second time
    assert "libcst" in cold["mods"]
    assert warm["mods"] == []
