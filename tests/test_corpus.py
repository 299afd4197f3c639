"""The development corpus for the MEM1xx/MEM2xx rules (autograd history, grad
mode): realistic training scripts where every line labelled
``# expect: MEMnnn`` raises that code and no other line raises a MEM1xx/MEM2xx
code. ``# missed: MEMnnn`` marks a real instance the analysis does not catch
(a known false negative, counted against recall by the benchmark). Other
families' labels are checked by their own corpus test.
bench/precision_recall.py reports the same comparison as numbers."""

import re
from pathlib import Path

import pytest

from memlint.fix.fixer import fix_text
from memlint.lint.engine import lint_text, parse_module
from memlint.rule.registry import all_rules

CORPUS = Path(__file__).parent / "corpus"
RULES = [r for r in all_rules() if r.code.startswith(("MEM1", "MEM2"))]
CODES = {r.code for r in RULES}
FILES = sorted(CORPUS.glob("*.py"))
LABEL = re.compile(r"#\s*(expect|missed):\s*(MEM\d{3}(?:\s*,\s*MEM\d{3})*)")


def labels(text: str, kind: str = "expect") -> set[tuple[int, str]]:
    out = set()
    for number, line in enumerate(text.splitlines(), 1):
        for m in LABEL.finditer(line):
            if m.group(1) == kind:
                out.update((number, c.strip()) for c in m.group(2).split(",") if c.strip() in CODES)
    return out


def test_rules_present():
    assert CODES == {"MEM101", "MEM102", "MEM103", "MEM104", "MEM201", "MEM202", "MEM203", "MEM204"}


def test_corpus_is_big_enough():
    assert len(FILES) >= 25


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_labels_match_findings(path):
    text = path.read_text()
    found = {(f.line, f.code) for f in lint_text(text, str(path), RULES)}
    want = labels(text)
    assert sorted(found - want) == [], "false alarms"
    assert sorted(want - found) == [], "misses"
    assert not found & labels(text, "missed"), "a known miss is caught now: label it `expect`"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_fixed_corpus_parses_and_is_stable(path):
    text = path.read_text()
    for unsafe in (False, True):
        result = fix_text(text, str(path), RULES, unsafe=unsafe)
        parse_module(result.text)
        assert fix_text(result.text, str(path), RULES, unsafe=unsafe).text == result.text
