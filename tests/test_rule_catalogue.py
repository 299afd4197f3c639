"""Every rule is complete: documented, exemplified, and in the catalogue."""

import re
from pathlib import Path

import pytest

from memlint.rule import DOC_SECTIONS, Safety
from memlint.rule.registry import all_rules

RULES_MD = Path(__file__).resolve().parents[2] / "shared" / "RULES.md"


def test_there_are_rules():
    assert len(all_rules()) >= 1


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_is_complete(rule):
    assert re.fullmatch(r"MEM\d{3}", rule.code)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
    assert rule.message and rule.tokens
    sections = rule.doc_sections()
    for section in DOC_SECTIONS:
        assert sections.get(section), f"{rule.code} lacks a '{section}' section"
    assert len(rule.invalid) >= 2, f"{rule.code} needs two invalid examples"
    assert len(rule.valid) >= 2, f"{rule.code} needs two valid examples"
    has_fixed = any(ex.fixed is not None for ex in rule.invalid)
    assert has_fixed == (rule.fix_safety is not Safety.NONE), "fix safety and examples disagree"


def test_codes_and_names_unique():
    codes = [r.code for r in all_rules()]
    names = [r.name for r in all_rules()]
    assert len(codes) == len(set(codes))
    assert len(names) == len(set(names))


@pytest.mark.skipif(not RULES_MD.exists(), reason="shared/RULES.md is not beside this checkout")
def test_codes_match_catalogue():
    text = RULES_MD.read_text()
    catalogue = dict(re.findall(r"^\| (MEM\d{3}) \| ([a-z0-9-]+)", text, re.M))
    for rule in all_rules():
        assert rule.code in catalogue, f"{rule.code} is not in RULES.md"
        assert catalogue[rule.code].startswith(rule.name), (rule.code, rule.name)
