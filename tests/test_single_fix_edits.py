"""fixer.single_fix_edits (an editor's quick fix): one finding's fix alone,
as edits against the original text, equal to what `--fix` makes of a file
whose only finding it is."""

import pytest

from memlint.fix.fixer import fix_text, single_fix_edits
from memlint.lint.engine import lint
from memlint.rule.registry import all_rules

CASES = [
    pytest.param(rule, example, id=f"{rule.code}-{i}")
    for rule in all_rules()
    for i, example in enumerate(rule.invalid)
    if example.count == 1 and example.fixed is not None
]


def _apply(text, edits):
    for edit in reversed(edits):  # in order, none overlapping: last first keeps offsets valid
        text = text[: edit.start] + edit.content + text[edit.end :]
    return text


@pytest.mark.parametrize("rule, example", CASES)
def test_quick_fix_matches_fix(rule, example):
    findings, module = lint(example.source, "example.py", [rule])
    (finding,) = findings
    edits = single_fix_edits(example.source, module, finding)
    assert edits is not None
    assert all(a.end <= b.start for a, b in zip(edits, edits[1:]))
    assert _apply(example.source, edits) == fix_text(example.source, "example.py", [rule], unsafe=True).text


def test_a_fix_that_would_break_the_code_is_not_offered():
    rule = next(r for r in all_rules() if r.code == "MEM201")
    source = (
        "import torch\n\ndef validate(model, loader):\n    model.eval()\n    for x, y in loader:\n        model(x)\n"
    )
    findings, module = lint(source, "example.py", [rule])
    assert single_fix_edits(source, module, findings[0]) is not None
    # A NUL byte after the code: the fixed text would not parse, so no fix is offered.
    assert single_fix_edits(source + "\x00", module, findings[0]) is None
