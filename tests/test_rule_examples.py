"""Every embedded example of every rule becomes its own test case."""

import libcst as cst
import pytest

from memlint.fix.fixer import fix_text
from memlint.lint.engine import lint_text
from memlint.rule.registry import all_rules

INVALID = [
    pytest.param(rule, i, ex, id=f"{rule.code}-invalid-{i}")
    for rule in all_rules()
    for i, ex in enumerate(rule.invalid)
]
VALID = [
    pytest.param(rule, i, ex, id=f"{rule.code}-valid-{i}") for rule in all_rules() for i, ex in enumerate(rule.valid)
]


@pytest.mark.parametrize("rule, index, example", INVALID)
def test_invalid_example_is_flagged_and_fixed(rule, index, example):
    findings = lint_text(example.source, "example.py", [rule])
    codes = [f.code for f in findings]
    assert codes == [rule.code] * example.count, findings
    result = fix_text(example.source, "example.py", [rule], unsafe=True)
    expected = example.fixed if example.fixed is not None else example.source
    assert result.text == expected
    cst.parse_module(result.text)
    # Fixing twice changes nothing more.
    assert fix_text(result.text, "example.py", [rule], unsafe=True).text == result.text
    if example.fixed is not None and rule.fix_safety.value == "unsafe":
        # Unsafe fixes are never applied by a plain --fix.
        assert fix_text(example.source, "example.py", [rule], unsafe=False).text == example.source


@pytest.mark.parametrize("rule, index, example", VALID)
def test_valid_example_is_silent(rule, index, example):
    assert lint_text(example.source, "example.py", [rule]) == []
