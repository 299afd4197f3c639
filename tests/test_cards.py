"""The rules' cards (memlint/gate/cards.py): what the screening reads of a
rule without importing it must be what the rule class says."""

from __future__ import annotations

import pytest

from memlint.gate.cards import CARDS
from memlint.rule import Rule
from memlint.rule.registry import all_rules

RULES = {rule.code: rule for rule in all_rules()}


def test_every_rule_has_a_card_and_every_card_a_rule():
    assert sorted(CARDS) == sorted(RULES), (
        "memlint/gate/cards.py must hold one card per rule: "
        f"add {sorted(RULES.keys() - CARDS.keys())}, remove {sorted(CARDS.keys() - RULES.keys())}"
    )
    assert list(CARDS) == sorted(CARDS)  # the order rules run and report in


@pytest.mark.parametrize("code", sorted(RULES))
def test_the_card_and_the_class_agree(code):
    rule, card = RULES[code], CARDS[code]
    assert (card.name, card.fix_safety, card.default_enabled) == (
        rule.name,
        rule.fix_safety.value,
        rule.default_enabled,
    )
    # What the screening reads is the card's own, not a copy that may drift.
    assert rule.tokens is card.tokens
    assert rule.gate is card.gate
    assert rule.reads_project is card.reads_project


def test_a_rule_class_does_not_write_its_screening_itself():
    with pytest.raises(TypeError, match="MEM702: gate is written on its card"):

        class _Again(Rule):
            code = "MEM702"
            gate = staticmethod(lambda g: True)


def test_a_rule_without_a_card_keeps_its_own_screening():
    class _Probe(Rule):
        code = "MEM999"
        tokens = ("probe",)

    assert _Probe.tokens == ("probe",) and _Probe.gate is None
