"""The README stays true and short: its rule table matches the registry, its
commands name shipped files, its links lead to pages the site builds (checked
in test_docs.py), and the reference material lives in docs/."""

import re
from pathlib import Path

from memlint.frontends.cli import build_parser
from memlint.rule.table import END, START, render_rule_table

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
CLI_PAGE = ROOT / "docs" / "cli.md"

# The README's two promises, word for word (.ci/run runs the second).
TRY_IT = "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/memlint check fixtures/examples/"
RUN_TESTS = "python3 -m venv .venv && .venv/bin/pip install -r requirements-dev.txt -e . && .venv/bin/python -m pytest -q -n auto"


def test_rule_table_in_sync():
    text = README.read_text()
    assert START in text and END in text
    table = text.split(START, 1)[1].split(END, 1)[0].strip() + "\n"
    assert table == render_rule_table(), "run `memlint rule --all --markdown` and paste it into README.md"


def test_every_check_flag_is_documented():
    parser = build_parser()
    check = parser._subparsers._group_actions[0].choices["check"]
    text = CLI_PAGE.read_text()
    for action in check._actions:
        for flag in action.option_strings:
            if flag.startswith("--") and flag != "--help":
                assert flag in text, f"{flag} is not documented in docs/cli.md"


def test_readme_commands_name_shipped_files():
    text = README.read_text()
    for path in re.findall(r"fixtures/[\w/.-]+", text):
        assert (README.parent / path.rstrip(".")).exists(), path


def test_readme_keeps_its_two_commands_and_stays_short():
    text = README.read_text()
    assert TRY_IT in text and RUN_TESTS in text
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pip install -q -r requirements-dev.txt -e ." in ci and "python -m pytest -q -n auto" in ci
    assert len(text.splitlines()) < 150, "the README is for newcomers; reference material goes in docs/"
