"""`memlint rule CODE` as a user reads it, for every rule: the first screen
says what the rule flags, why it matters, an example and what to write
instead; what it leaves alone and the finer shapes it reads come after."""

from __future__ import annotations

import re

import pytest

from memlint.frontends.cli import main
from memlint.rule import DOC_ORDER, DOC_SECTIONS
from memlint.rule.registry import all_rules, rule_by_code

SCREEN = 40  # lines of a terminal
# Short enough that the example stays on the first screen.
MOST_LINES = {"What it does": 10, "Why it matters": 10, "Fix safety": 12}


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_page_sections_are_in_the_one_order_and_short_up_front(rule):
    titles = list(rule.doc_sections())
    assert set(DOC_SECTIONS) <= set(titles), f"{rule.code} lacks {set(DOC_SECTIONS) - set(titles)}"
    assert all(t in DOC_ORDER for t in titles), f"{rule.code}: a section outside {DOC_ORDER}: {titles}"
    assert titles == sorted(titles, key=DOC_ORDER.index), f"{rule.code}: sections out of order: {titles}"
    for title, most in MOST_LINES.items():
        lines = len(rule.doc_sections()[title].splitlines())
        assert lines <= most, (
            f"{rule.code}: '{title}' has {lines} lines (at most {most}); move the traps to"
            " 'When it stays silent' and the finer shapes to 'Details'"
        )


def _page_opens_with_summary_example_and_fix(rule, page: str) -> None:
    lines = page.splitlines()
    first = "\n".join(lines[:SCREEN])
    assert lines[0] == f"# {rule.name} ({rule.code})"
    summary = " ".join(rule.doc_sections()["What it does"].split())
    assert " ".join(first.split("## What it does", 1)[1].split("## Why it matters")[0].split()) == summary
    assert rule.doc_sections()["Example"] in first, f"{rule.code}: the example is not on the first screen"
    use_instead = rule.doc_sections()["Use instead"]
    assert f"## Use instead\n{use_instead}" in first, f"{rule.code}: what to write instead is not on the first screen"
    headings = re.findall(r"^## (.+)$", page, re.M)
    assert headings == [t for t in DOC_ORDER if t in headings], (rule.code, headings)


def test_the_longest_rule_page_opens_with_summary_example_and_fix(run_memlint):
    proc = run_memlint("rule", "MEM201")  # the real program, on the page that opened with 40 lines of detail
    assert proc.returncode == 0, proc.stderr
    _page_opens_with_summary_example_and_fix(rule_by_code("MEM201"), proc.stdout)


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_every_rule_page_opens_with_summary_example_and_fix(rule, capsys):
    assert main(["rule", rule.code]) == 0
    _page_opens_with_summary_example_and_fix(rule, capsys.readouterr().out)
