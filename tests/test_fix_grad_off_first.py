"""``--fix`` applies the fixes that turn autograd off (MEM201's decorator and
``with`` block) in a round of their own: the findings other rules made with
grad on in that code (MEM101/MEM102's ``.detach()``) are gone once it is
off, so their fixes are not applied on top."""

from __future__ import annotations

import textwrap

from memlint.fix.fixer import fix_text
from memlint.rule.registry import all_rules

SOURCE = textwrap.dedent(
    """\
    import torch


    def validate(model, loader, criterion):
        model.eval()
        outputs = []
        total = 0
        for x, y in loader:
            out = model(x)
            total += criterion(out, y)
            outputs.append(out)
        return total / len(loader), outputs


    def train(model, loader, criterion, optimizer):
        running = 0
        for x, y in loader:
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss
        return running
    """
)


def _rules(*codes: str):
    return [r for r in all_rules() if r.code in codes]


def test_grad_off_fix_goes_first_and_other_fixes_in_its_code_vanish():
    result = fix_text(SOURCE, "v.py", _rules("MEM101", "MEM102", "MEM201"))
    assert "@torch.no_grad()\ndef validate" in result.text
    assert "total += criterion(out, y)\n" in result.text  # no `.detach()` under no_grad
    assert "outputs.append(out)\n" in result.text
    assert "running += loss.detach()" in result.text or "running += loss.item()" in result.text
    assert sorted(f.code for f in result.applied) == ["MEM101", "MEM201"]
    assert result.remaining == []
    # The training loop's fix, applied a round later below the new decorator
    # line, is reported at the line of the text --fix was given.
    (running,) = [f for f in result.applied if f.code == "MEM101"]
    assert SOURCE.splitlines()[running.line - 1].strip() == "running += loss"


def test_without_the_grad_off_rule_the_detach_fixes_apply():
    result = fix_text(SOURCE, "v.py", _rules("MEM101", "MEM102"))
    assert "outputs.append(out.detach())" in result.text
    assert sorted(f.code for f in result.applied) == ["MEM101", "MEM101", "MEM102"]


def test_only_mem201_turns_grad_off():
    assert {r.code for r in all_rules() if r.fix_turns_grad_off} == {"MEM201"}
