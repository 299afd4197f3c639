"""Lint one text: pre-filter, one parse, one batched traversal, suppressions.

This is the single entry point shared by the CLI, the flake8 plugin, notebooks
and the verifier, so every interface reports the same findings.
"""

from __future__ import annotations

from typing import Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper

from memlint.analysis.facts import ModuleFacts
from memlint.noqa import file_is_exempt, is_suppressed, noqa_map
from memlint.rule import Finding, Rule, RuleContext


class ParseError(Exception):
    """The text is not Python that libcst can parse; message has line and reason."""


def parse_module(text: str) -> cst.Module:
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        raise ParseError(f"syntax error at {exc.raw_line}:{exc.raw_column}: {exc.message}") from None
    except (RecursionError, MemoryError) as exc:
        raise ParseError(f"cannot parse: {type(exc).__name__}") from None
    except Exception as exc:  # libcst raises a few other types on odd input
        raise ParseError(f"cannot parse: {exc}") from None


def applicable_rules(text: str, rules: Sequence[type[Rule]]) -> list[type[Rule]]:
    """The pre-filter: rules whose tokens occur in the text at all."""
    return [r for r in rules if any(tok in text for tok in r.tokens)]


def lint_module(
    module: cst.Module, text: str, path: str, rules: Sequence[type[Rule]]
) -> list[Finding]:
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    context = RuleContext(path=path, source=text, module=module, facts_factory=lambda: ModuleFacts(wrapper))
    visitors = [rule(context) for rule in rules]
    wrapper.visit_batched(visitors)
    mapping = noqa_map(text)
    findings = [f for f in context.findings if not is_suppressed(f.code, f.line, mapping)]
    findings.sort(key=lambda f: (f.line, f.column, f.code))
    return findings


def lint(
    text: str, path: str, rules: Sequence[type[Rule]]
) -> tuple[list[Finding], cst.Module | None]:
    """Findings for ``text`` and the module they refer to (None when it was not
    parsed). Raises ParseError when a rule applies but the text does not parse;
    a text no enabled rule can match is never parsed."""
    if file_is_exempt(text):
        return [], None
    active = applicable_rules(text, rules)
    if not active:
        return [], None
    module = parse_module(text)
    return lint_module(module, text, path, active), module


def lint_text(text: str, path: str, rules: Sequence[type[Rule]]) -> list[Finding]:
    return lint(text, path, rules)[0]
