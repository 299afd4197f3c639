"""The development corpus of the MEM3xx, MEM4xx, MEM502-MEM507, MEM703 and
MEM801-MEM803 rules (files ``opt_*``, ``inplace_*``, ``amp_*``, ``hygiene_*``):
every line labelled ``# expect: MEMnnn`` raises that code and no other line
raises one of these codes; ``# missed: MEMnnn`` marks a known false negative.
tests/test_corpus.py checks the MEM1xx/MEM2xx labels of the whole corpus;
bench/precision_recall_rules_3_to_8.py prints these as numbers."""

import re
from pathlib import Path

import pytest

from memlint.fix.fixer import fix_text
from memlint.lint.engine import lint_text, parse_module
from memlint.rule.registry import all_rules

CORPUS = Path(__file__).parent / "corpus"
CODES = {
    "MEM301",
    "MEM302",
    "MEM303",
    "MEM304",
    "MEM305",
    "MEM401",
    "MEM402",
    "MEM403",
    "MEM502",
    "MEM503",
    "MEM504",
    "MEM505",
    "MEM506",
    "MEM507",
    "MEM703",
    "MEM801",
    "MEM802",
    "MEM803",
}
RULES = [r for r in all_rules() if r.code in CODES]
FILES = sorted(p for prefix in ("opt_", "inplace_", "amp_", "hygiene_") for p in CORPUS.glob(f"{prefix}*.py"))
LABEL = re.compile(r"#\s*(expect|missed):\s*(MEM\d{3}(?:\s*,\s*MEM\d{3})*)")


def expected(text: str, kind: str = "expect") -> set[tuple[int, str]]:
    out = set()
    for number, line in enumerate(text.splitlines(), 1):
        for m in LABEL.finditer(line):
            if m.group(1) == kind:
                out.update((number, c.strip()) for c in m.group(2).split(",") if c.strip() in CODES)
    return out


def test_all_rules_present():
    assert {r.code for r in RULES} == CODES


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_labels_match_findings(path):
    text = path.read_text()
    found = {(f.line, f.code) for f in lint_text(text, str(path), RULES)}
    want = expected(text)
    assert sorted(found - want) == [], "false alarms"
    assert sorted(want - found) == [], "misses"
    assert not found & expected(text, "missed"), "a known miss is caught now: label it `expect`"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_fixes_parse_and_are_stable(path):
    text = path.read_text()
    result = fix_text(text, str(path), RULES, unsafe=True)
    parse_module(result.text)
    assert fix_text(result.text, str(path), RULES, unsafe=True).text == result.text
    fixable = {f.code for f in result.remaining if f.fix is not None}
    assert not fixable, result.remaining
