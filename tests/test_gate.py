"""The gate (gate/facts.py) only skips work whose result is "no finding".

Every rule's examples (and their fixed texts), the mutated examples of the
fuzz tests, the planted-bug corpus (tests/corpus) and the fixtures are linted
and fixed with the gate on and off, every rule selected (opt-in ones too):
findings and fixes must be identical, through the engine and through the
flake8 plugin. Any rule whose declared condition is not necessary fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_robustness_fuzz import MUTATIONS

from memlint.fix.fixer import fix_text
from memlint.frontends.flake8_plugin import Flake8Checker
from memlint.lint import engine, screen
from memlint.lint.engine import lint
from memlint.rule.registry import all_rules

ROOT = Path(__file__).resolve().parent.parent
RULES = list(all_rules())


def _examples() -> dict[str, str]:
    texts: dict[str, str] = {}
    for rule in RULES:
        for kind, examples in (("invalid", rule.invalid), ("valid", rule.valid)):
            for i, ex in enumerate(examples):
                texts[f"{rule.code}-{kind}-{i}"] = ex.source
                if getattr(ex, "fixed", None):
                    texts[f"{rule.code}-{kind}-{i}-fixed"] = ex.fixed
    return texts


EXAMPLES = _examples()
MUTATED = {
    f"{key}-{name}": mutated
    for key, text in EXAMPLES.items()
    if not key.endswith("-fixed")
    for name, mutate in MUTATIONS.items()
    if (mutated := mutate(text)) is not None
}
FILES = sorted(p for folder in (ROOT / "tests" / "corpus", ROOT / "fixtures") for p in folder.rglob("*.py"))


def _findings(text: str) -> list[tuple]:
    try:
        found, _ = lint(text, "example.py", RULES)
    except engine.ParseError as exc:
        return [("error", str(exc))]
    return [(f.code, f.line, f.column, f.end_line, f.end_column, f.message, f.fix and f.fix.title) for f in found]


def _fixed(text: str) -> tuple:
    try:
        result = fix_text(text, "example.py", RULES, unsafe=True)
    except engine.ParseError as exc:
        return ("error", str(exc))
    return result.text, [(f.code, f.line) for f in result.applied], [(f.code, f.line) for f in result.remaining]


def _flake8(text: str) -> list:
    checker = Flake8Checker(None, text.splitlines(keepends=True), "example.py")
    checker.rules = RULES
    return list(checker.run())


def _same_with_and_without_gate(monkeypatch, text: str, full: bool = True) -> None:
    """``full``: fixes and the flake8 plugin too (the mutated examples, over
    3,000 texts, compare findings only, to keep the suite's time in bounds)."""
    monkeypatch.setattr(screen, "GATE", False)
    off = _findings(text), _fixed(text) if full else None, _flake8(text) if full else None
    monkeypatch.setattr(screen, "GATE", True)
    on = _findings(text), _fixed(text) if full else None, _flake8(text) if full else None
    assert on[0] == off[0], "findings differ with the gate on"
    assert on[1] == off[1], "fixes differ with the gate on"
    assert on[2] == off[2], "flake8 results differ with the gate on"


@pytest.mark.parametrize("key", sorted(EXAMPLES))
def test_examples_same_with_gate(monkeypatch, key):
    _same_with_and_without_gate(monkeypatch, EXAMPLES[key])


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(MUTATED))
def test_mutated_examples_same_with_gate(monkeypatch, key):
    _same_with_and_without_gate(monkeypatch, MUTATED[key], full=False)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_corpus_and_fixtures_same_with_gate(monkeypatch, path):
    _same_with_and_without_gate(monkeypatch, path.read_text(encoding="utf-8"))
