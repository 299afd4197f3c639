"""The README stays true: its rule table matches the registry, its flags exist."""

import re
from pathlib import Path

from memlint.cli import build_parser
from memlint.rule_table import END, START, render_rule_table

README = Path(__file__).resolve().parent.parent / "README.md"


def test_rule_table_in_sync():
    text = README.read_text()
    assert START in text and END in text
    table = text.split(START, 1)[1].split(END, 1)[0].strip() + "\n"
    assert table == render_rule_table(), "run `memlint rule --all --markdown` and paste it into README.md"


def test_every_check_flag_is_documented():
    parser = build_parser()
    check = parser._subparsers._group_actions[0].choices["check"]
    text = README.read_text()
    for action in check._actions:
        for flag in action.option_strings:
            if flag.startswith("--") and flag != "--help":
                assert flag in text, f"{flag} is not documented in README.md"


def test_readme_commands_name_shipped_files():
    text = README.read_text()
    for path in re.findall(r"fixtures/[\w/.-]+", text):
        assert (README.parent / path.rstrip(".")).exists(), path
