"""fix/covered_fixes.py: a finding that a grad-off fix ends carries that fix."""

from __future__ import annotations

import textwrap

from memlint.fix.covered_fixes import with_covering_fixes
from memlint.lint.engine import lint
from memlint.rule.registry import all_rules

SOURCE = textwrap.dedent(
    """\
    import torch


    def train(model, loader, optimizer):
        losses = []
        for x, y in loader:
            loss = model(x).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss)
        return losses


    def validate(model, loader, criterion):
        model.eval()
        total = 0
        for x, y in loader:
            total += criterion(model(x), y)
        return total / len(loader)
    """
)


def _covered(rules):
    findings, module = lint(SOURCE, "loops.py", rules)
    return findings, with_covering_fixes(findings, module, "loops.py", rules)


def test_the_grad_off_fix_covers_only_what_it_ends():
    rules = [r for r in all_rules() if r.default_enabled]
    before, after = _covered(rules)
    by_line = {(f.code, f.line): f for f in after}
    assert sorted(by_line) == [("MEM101", 19), ("MEM102", 11), ("MEM201", 18)]
    decorator = by_line["MEM201", 18].fix
    ended = by_line["MEM101", 19].fix
    assert ended is not None and decorator is not None
    assert ended.replacements == decorator.replacements and ended.safety is decorator.safety
    assert ended.title == f"{decorator.title} (MEM201's fix, which ends this finding too)"
    kept = {(f.code, f.line): f for f in before}["MEM102", 11]
    assert by_line["MEM102", 11] is kept  # the decorator does not reach the training loop


def test_without_a_grad_off_rule_nothing_changes():
    rules = [r for r in all_rules() if r.default_enabled and not r.fix_turns_grad_off]
    before, after = _covered(rules)
    assert after == before and {f.code for f in after} == {"MEM101", "MEM102"}
