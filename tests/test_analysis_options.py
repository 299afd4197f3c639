"""options.py: a module's command-line declarations, read in one walk for
both facts that ask them (option_defaults.py, option_choices.py)."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.option_choices import OptionChoices
from memlint.analysis.scope.option_defaults import OptionDefaults
from memlint.analysis.scope.options import ModuleOptions

_SOURCE = """\
import argparse
parser = argparse.ArgumentParser()
parser.add_argument('--n', type=int, default=1)
parser.add_argument('--base', choices=[A, B], default=B)
parser.add_argument('--twice', default=1)
parser.add_argument('--twice', default=1)
args = parser.parse_args()
args.base = C
"""


def _attr(spelled: str) -> cst.BaseExpression:
    return cst.parse_expression(spelled)


def test_one_walk_serves_both_facts(monkeypatch):
    walks = []
    import memlint.analysis.scope.options as options_module

    real = options_module.visit_fast
    monkeypatch.setattr(options_module, "visit_fast", lambda *a: walks.append(1) or real(*a))
    options = ModuleOptions(cst.parse_module(_SOURCE))
    assert OptionDefaults(options).default(_attr("args.n")) == 1
    assert OptionChoices(options).values(_attr("args.base")) is None  # assigned by the module
    assert len(walks) == 1


def test_declaration_is_the_single_call():
    options = ModuleOptions(cst.parse_module(_SOURCE))
    assert options.declaration(_attr("args.n")) is not None
    assert options.declaration(_attr("args.twice")) is None  # declared twice
    assert options.declaration(_attr("args.missing")) is None
    assert options.declaration(_attr("other.n")) is None  # not a parsed namespace
    assert options.declaration(_attr("args.base")) is not None
    assert options.declaration(_attr("args.base"), unassigned=True) is None  # ``args.base = C``


def test_module_facts_share_one_reading():
    from libcst.metadata import MetadataWrapper

    from memlint.analysis.facts import ModuleFacts

    facts = ModuleFacts(MetadataWrapper(cst.parse_module(_SOURCE)))
    assert facts.options is facts.options
    assert facts.checkpoints._declared is facts.options
