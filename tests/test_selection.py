"""The rule-code table the warm path selects from (memlint.run.selection)
against the rules themselves, and a warm run that never imports libcst."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memlint.rule.registry import all_rules, select_rules
from memlint.run.selection import CODES, known_prefix, select_codes


def test_the_table_is_the_registry():
    found = {r.code: r.default_enabled for r in all_rules()}
    assert CODES == found, (
        "memlint/run/selection.py CODES must list every rule's code and default_enabled: "
        f"add {sorted(found.keys() - CODES.keys())}, remove {sorted(CODES.keys() - found.keys())}"
    )


def test_selection_follows_ruff():
    defaults = [c for c, on in CODES.items() if on]
    assert select_codes() == defaults and "MEM403" not in defaults  # opt-in rules stay out
    assert select_codes(["MEM1"]) == [c for c in CODES if c.startswith("MEM1")]  # select replaces
    assert select_codes(None, [], ["MEM403"]) == sorted([*defaults, "MEM403"])  # extend adds
    assert select_codes(["ALL"], ["MEM4"]) == [c for c in CODES if not c.startswith("MEM4")]
    # The more specific selector wins, either way round.
    assert select_codes(["MEM101"], ["MEM1"]) == ["MEM101"]
    assert "MEM101" not in select_codes(["MEM1"], ["MEM101"])
    assert select_codes(["mem70"]) == ["MEM701", "MEM702", "MEM703"]


@pytest.mark.parametrize(("select", "ignore"), [(None, []), (["MEM1"], ["MEM101"]), (["ALL"], ["MEM5"])])
def test_rules_are_selected_through_the_same_codes(select, ignore):
    assert [r.code for r in select_rules(select, ignore)] == select_codes(select, ignore)


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
        "mods = [m for m in sys.modules if m in ('libcst', 'multiprocessing', 'concurrent.futures.process')"
        " or m.startswith('memlint.rules.')]\n"
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
    assert warm["mods"] == []  # nor the process pool's modules: no worker starts
