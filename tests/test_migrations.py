"""The migration table (memlint/rule/migrations.py): every row is a fact its
rule acts on, so adding a migration is a row plus an example."""

import re

import pytest

from memlint.fix.fixer import fix_text
from memlint.lint.engine import lint_text
from memlint.rule.migrations import MIGRATIONS, lookup, rows
from memlint.rule.registry import rule_by_code


def _call(row):
    """A call of the row's symbol in the old spelling."""
    symbol = row.symbol.replace("*", "StepLR")
    module = ".".join(symbol.split(".")[:3])
    if row.keyword and not row.replacement:  # an argument the fix removes
        return f"import {module}\nobj = {symbol}(opt, {row.keyword}=True)\n"
    return f"import {module}\nobj = {symbol}(fn, x)\n" if row.keyword else f"import {module}\nobj = {symbol}()\n"


@pytest.mark.parametrize("row", MIGRATIONS, ids=lambda r: f"{r.rule}-{r.symbol}")
def test_every_row_is_reported_and_fixed_by_its_rule(row):
    rule = rule_by_code(row.rule)
    source = _call(row)
    findings = lint_text(source, "m.py", [rule])
    assert [f.code for f in findings] == [row.rule], source
    assert findings[0].fix is not None and findings[0].fix.safety == row.safety
    fixed = fix_text(source, "m.py", [rule], unsafe=True).text
    if row.device:  # torch.amp.X("cuda") / X(device_type="cuda")
        assert f"torch.amp.{row.replacement.rpartition('.')[2]}(" in fixed and f'"{row.device}"' in fixed
    elif row.replacement:
        assert f"{row.replacement})" in fixed
    else:
        assert row.keyword not in fixed


@pytest.mark.parametrize("row", MIGRATIONS, ids=lambda r: f"{r.rule}-{r.symbol}")
def test_every_row_is_well_formed(row):
    rule = rule_by_code(row.rule)
    assert rule is not None and rule.fix_safety == row.safety
    assert re.fullmatch(r"\d+\.\d+", row.since)
    # An argument migration names its argument; a moved symbol names where it went.
    assert row.keyword or row.replacement.startswith("torch.")


@pytest.mark.parametrize("code", sorted({row.rule for row in MIGRATIONS}))
def test_every_migration_rule_has_an_invalid_example_per_kind_of_row(code):
    rule = rule_by_code(code)
    sources = "".join(example.source for example in rule.invalid)
    for row in rows(code):
        # A module's every member: the argument is what the example shows.
        name = row.keyword if row.symbol.endswith(".*") else row.symbol.rpartition(".")[2]
        assert name in sources


def test_lookup_matches_a_module_wildcard_only_for_its_direct_members():
    assert lookup("MEM804", "torch.optim.lr_scheduler.OneCycleLR").keyword == "verbose"
    assert lookup("MEM804", "torch.optim.lr_scheduler.sub.StepLR") is None
    assert lookup("MEM804", "timm.scheduler.CosineLRScheduler") is None
    assert lookup("MEM804", None) is None
    assert lookup("MEM501", "torch.cuda.amp.GradScaler").replacement == "torch.amp.GradScaler"
    assert lookup("MEM501", "torch.amp.GradScaler") is None
    assert lookup("MEM602", "torch.utils.checkpoint.checkpoint_sequential").positional == 3


def test_the_amp_rows_share_one_release():
    # MEM501's messages name one release for the whole torch.cuda.amp API.
    assert {row.since for row in rows("MEM501")} == {"2.4"}
