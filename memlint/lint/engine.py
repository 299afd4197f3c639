"""Lint one text: pre-filter, one parse, one batched traversal, suppressions.

This is the single entry point shared by the CLI, the flake8 plugin, notebooks
and the verifier, so every interface reports the same findings.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Sequence
from functools import lru_cache

import libcst as cst
from libcst.metadata import MetadataWrapper

from memlint.analysis.facts import ModuleFacts
from memlint.gate.facts import GateFacts, enabled_by_gate
from memlint.lint.noqa import file_is_exempt, is_suppressed, noqa_map
from memlint.parse.budget import file_budget
from memlint.parse.collector import collector_paused
from memlint.parse.guard import TooDeep, check_nesting, python_tree
from memlint.parse.traversal import run_batched
from memlint.parse.unvalidated import parse_unvalidated
from memlint.rule import Finding, Rule, RuleContext


class ParseError(Exception):
    """The text is not Python that libcst can parse; message has line and reason."""


class LibcstLimitation(ParseError):
    """Python parses the text; libcst does not."""


def parse_module(text: str, python_tree: ast.Module | None = None) -> cst.Module:
    try:
        python_error = check_nesting(text, python_tree)  # texts that would crash or hang libcst's parser
    except TooDeep as exc:
        raise ParseError(str(exc)) from None
    try:
        # Validation finds nothing in text Python has parsed (parse/unvalidated.py).
        return cst.parse_module(text) if python_error is not None else parse_unvalidated(text)
    except cst.ParserSyntaxError as exc:
        if python_error is not None:  # Python places and words it better
            where = f"{python_error.lineno}:{max((python_error.offset or 1) - 1, 0)}"
            raise ParseError(f"syntax error at {where}: {python_error.msg}") from None
        if _python_parses(text):
            raise LibcstLimitation(
                f"cannot parse code that Python accepts (a libcst limitation): {exc.message}"
            ) from None
        raise ParseError(f"syntax error at {exc.raw_line}:{exc.raw_column}: {exc.message}") from None
    except (RecursionError, MemoryError) as exc:
        raise ParseError(f"cannot parse: {type(exc).__name__}") from None
    except Exception as exc:  # libcst raises a few other types on odd input
        raise ParseError(f"cannot parse: {exc}") from None


def _python_parses(text: str) -> bool:
    """check_nesting returns None both when Python parsed the text and when it
    could not tell; this tells them apart (only on the rare failure path)."""
    return python_tree(text) is not None


def applicable_rules(text: str, rules: Sequence[type[Rule]]) -> list[type[Rule]]:
    """The pre-filter: rules whose tokens occur in the text at all.

    Tokens such as ``.to(`` or ``scale(`` hold punctuation, and Python allows
    ``x . to (dev)``: where such spacing occurs (``_SPACED``), a token also
    counts when it occurs in the text without spaces, tabs and line
    continuations. A token found in the text is found there too (squeezing
    removes none of its characters but spaces, which its squeezed form lacks
    as well), so only tokens holding other spacing characters need the text
    itself: one scan of the squeezed text per token.
    """
    if not _SPACED.search(text):
        in_text = _finder(text)
        return [rule for rule in rules if any(map(in_text, rule.tokens))]
    if len(set(rules)) != len(rules):  # a rule listed twice: the order of the first form
        return _two_scans(text, rules)
    in_text, in_squeezed = _finder(text), _finder(_squeeze(text))

    def occurs(token: str) -> bool:
        squeezed, text_too = _token_forms(token)
        return in_squeezed(squeezed) or (text_too and in_text(token))

    return [rule for rule in rules if any(map(occurs, rule.tokens))]


@lru_cache(maxsize=1024)
def _token_forms(token: str) -> tuple[str, bool]:
    """The token as looked for in the squeezed text, and whether it must also be
    looked for in the text (it holds a character, other than a space, that
    the squeeze removes, so an occurrence in the text may not survive it)."""
    return token.replace(" ", ""), any(c in token for c in "\t\f\\\r\n")


def _two_scans(text: str, rules: Sequence[type[Rule]]) -> list[type[Rule]]:
    """The pre-filter's first form: the text, then the squeezed text for the
    rules left (their order kept as it always was)."""
    occurs = _finder(text)
    chosen, left = [], []
    for rule in rules:
        (chosen if any(map(occurs, rule.tokens)) else left).append(rule)
    if left:
        occurs = _finder(_squeeze(text))
        chosen += [r for r in left if any(occurs(tok.replace(" ", "")) for tok in r.tokens)]
        chosen.sort(key=list(rules).index)
    return chosen


def _finder(text: str) -> Callable[[str], bool]:
    """``token in text``, each token scanned once: rules share tokens
    (``torch``, ``zero_grad``, ``scaler``, ``LR``...), and a scan of a token
    that is absent reads the whole text."""
    seen: dict[str, bool] = {}

    def occurs(token: str) -> bool:
        found = seen.get(token)
        if found is None:
            found = seen[token] = token in text
        return found

    return occurs


def _squeeze(text: str) -> str:
    """``_SPACING.sub("", text)``. Without a line continuation that is every
    space, tab and form feed deleted, which ``str.replace`` does several
    times faster than the regex (the pre-filter's costliest step on large
    corpora)."""
    if "\\\n" in text or "\\\r" in text:
        return _SPACING.sub("", text)
    text = text.replace(" ", "")
    if "\t" in text:
        text = text.replace("\t", "")
    if "\f" in text:
        text = text.replace("\f", "")
    return text


# The gate (analysis/gate.py) on or off: only the tests and the benchmark turn
# it off, to prove it changes nothing (MEMLINT_GATE=0 for a whole run).
GATE = os.environ.get("MEMLINT_GATE", "1") != "0"


def rules_to_run(
    text: str, rules: Sequence[type[Rule]], tree: ast.Module | None = None
) -> tuple[list[type[Rule]], ast.Module | None]:
    """The pre-filter, then the gate on Python's tree (``tree``, or parsed
    here, once: the nesting guard reuses it). Returns the rules that may
    report something in ``text`` and the tree. A text Python cannot parse is
    not gated: libcst's parse reports the error as before."""
    active = applicable_rules(text, rules)
    if not active or not GATE:
        return active, tree
    if tree is None:
        tree = python_tree(text)
        if tree is None:
            return active, None
    return enabled_by_gate(active, GateFacts(tree)), tree


_SPACING = re.compile(r"[ \t\f]+|\\\r?\n")
# Spacing that can split a token: around a dot or an opening bracket.
_SPACED = re.compile(r"[ \t\f]\.|\.[ \t\f]|\w[ \t\f]+[(\[]|[(\[][ \t\f]|\\\r?\n")


def lint_module(
    module: cst.Module, text: str, path: str, rules: Sequence[type[Rule]], *, noqa: bool = True
) -> list[Finding]:
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    context = RuleContext(path=path, source=text, module=module, facts_factory=lambda: ModuleFacts(wrapper))
    visitors = [rule(context) for rule in rules]
    try:
        with file_budget(path):  # raises budget.BudgetExceeded: the file is not checked
            run_batched(wrapper, visitors, text)
    finally:
        context.release()
    # flake8 applies its own noqa and may be told not to (--disable-noqa).
    # Tokenizing for noqa comments is only worth it when there is a finding.
    mapping = noqa_map(text) if noqa and context.findings else {}
    findings = [f for f in context.findings if not is_suppressed(f.code, f.line, mapping)]
    findings.sort(key=lambda f: (f.line, f.column, f.code))
    return findings


def lint(
    text: str, path: str, rules: Sequence[type[Rule]], *, noqa: bool = True, python_tree: ast.Module | None = None
) -> tuple[list[Finding], cst.Module | None]:
    """Findings for ``text`` and the module they refer to (None when it was not
    parsed). Raises ParseError when a rule applies but the text does not parse;
    a text no enabled rule can match (pre-filter, gate) is never parsed by libcst. ``python_tree``: the
    ``ast`` tree of ``text``, when the caller already has one."""
    if file_is_exempt(text):
        return [], None
    with collector_paused():
        active, python_tree = rules_to_run(text, rules, python_tree)
        if not active:
            return [], None
        module = parse_module(text, python_tree)
        return lint_module(module, text, path, active, noqa=noqa), module


def lint_text(text: str, path: str, rules: Sequence[type[Rule]]) -> list[Finding]:
    return lint(text, path, rules)[0]
