"""The screening: which rules may report anything in a text, decided before
libcst, a rule class or the fixer is imported.

A file travels read -> pre-filter (a substring scan for each rule's tokens)
-> gate (each rule's necessary condition on Python's ``ast`` tree) -> the
rules left. The screening reads a rule's ``code``, ``tokens``, ``gate`` and
``reads_project`` only, which a rule's card (gate/cards.py) holds without
importing the rule: the runner and the flake8 plugin screen with cards and
import libcst and the rules only when some card passes, so a file without
torch, or one the gate rejects for every rule, is checked without libcst.
The engine (engine.py) screens rule classes through the same functions.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol, TypeVar

from memlint.lint.noqa import file_is_exempt
from memlint.parse.guard import python_tree

if TYPE_CHECKING:
    from memlint.gate.facts import GateFacts


class Screened(Protocol):
    """What the screening reads: a rule's card, or a rule class."""

    @property
    def code(self) -> str: ...

    @property
    def tokens(self) -> tuple[str, ...]: ...

    @property
    def gate(self) -> Callable[[GateFacts], bool] | None: ...

    @property
    def reads_project(self) -> bool: ...


S = TypeVar("S", bound=Screened)
T = TypeVar("T", str, bytes)


def screen(text: str, candidates: Sequence[S], tree: ast.Module | None = None) -> tuple[list[S], ast.Module | None]:
    """The candidates that may report something in ``text`` (a file that
    opts out with ``# memlint: noqa`` has none), and Python's tree of it
    when it was built (``tree``, or parsed here once)."""
    if file_is_exempt(text):
        return [], tree
    return rules_to_run(text, candidates, tree)


def applicable_rules(text: str, rules: Sequence[S]) -> list[S]:
    """The pre-filter: rules whose tokens occur in the text at all.

    Tokens such as ``.to(`` or ``scale(`` hold punctuation, and Python allows
    ``x . to (dev)``: where such spacing occurs (``_SPACED``), a token also
    counts when it occurs in the text without spaces, tabs and line
    continuations. A token found in the text is found there too (squeezing
    removes none of its characters but spaces, which its squeezed form lacks
    as well), so only tokens holding other spacing characters need the text
    itself: one scan of the squeezed text per token. The squeezed text is
    UTF-8 bytes: a text holding one character past ASCII is stored with two
    or four bytes a character, which the squeeze copies and every scan reads;
    in UTF-8 a token is found exactly where it is found in the text (no byte
    of a multi-byte character is ASCII, and UTF-8 never finds a character
    inside another), and half of transformers' files hold such a character.
    """
    if not _SPACED.search(text):
        in_text = _finder(text)
        return [rule for rule in rules if any(map(in_text, rule.tokens))]
    if len(set(rules)) != len(rules):  # a rule listed twice: the order of the first form
        return _two_scans(text, rules)
    in_text, in_squeezed = _finder(text), _finder(_squeeze_utf8(text))

    def occurs(token: str) -> bool:
        squeezed, text_too = _token_forms(token)
        return in_squeezed(squeezed) or (text_too and in_text(token))

    return [rule for rule in rules if any(map(occurs, rule.tokens))]


@lru_cache(maxsize=1024)
def _token_forms(token: str) -> tuple[bytes, bool]:
    """The token as looked for in the squeezed text (UTF-8, as _squeeze_utf8
    makes it), and whether it must also be looked for in the text (it holds
    a character, other than a space, that the squeeze removes, so an
    occurrence in the text may not survive it)."""
    return token.replace(" ", "").encode("utf-8", "surrogatepass"), any(c in token for c in "\t\f\\\r\n")


def _two_scans(text: str, rules: Sequence[S]) -> list[S]:
    """The pre-filter's first form: the text, then the squeezed text for the
    rules left (their order kept as it always was)."""
    occurs = _finder(text)
    chosen: list[S] = []
    left: list[S] = []
    for rule in rules:
        (chosen if any(map(occurs, rule.tokens)) else left).append(rule)
    if left:
        occurs = _finder(_squeeze(text))
        chosen += [r for r in left if any(occurs(tok.replace(" ", "")) for tok in r.tokens)]
        chosen.sort(key=list(rules).index)
    return chosen


def _finder(text: T) -> Callable[[T], bool]:
    """``token in text``, each token scanned once: rules share tokens
    (``torch``, ``zero_grad``, ``scaler``, ``LR``...), and a scan of a token
    that is absent reads the whole text."""
    seen: dict[T, bool] = {}

    def occurs(token: T) -> bool:
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


def _squeeze_utf8(text: str) -> bytes:
    """``_squeeze(text)`` as UTF-8 (lone surrogates kept, as three bytes
    each): the squeeze removes ASCII spacing only, which no byte of another
    character's encoding can be, so it commutes with the encoding."""
    data = text.encode("utf-8", "surrogatepass")
    if b"\\\n" in data or b"\\\r" in data:
        return _SPACING_UTF8.sub(b"", data)
    data = data.replace(b" ", b"")
    if b"\t" in data:
        data = data.replace(b"\t", b"")
    if b"\f" in data:
        data = data.replace(b"\f", b"")
    return data


# The gate (memlint/gate/) on or off: only the tests and the benchmark turn
# it off, to prove it changes nothing (MEMLINT_GATE=0 for a whole run).
GATE = os.environ.get("MEMLINT_GATE", "1") != "0"


def rules_to_run(text: str, rules: Sequence[S], tree: ast.Module | None = None) -> tuple[list[S], ast.Module | None]:
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
    from memlint.gate.facts import enabled_by_gate, facts_of  # only for a text the pre-filter lets through

    return enabled_by_gate(active, facts_of(tree)), tree


_SPACING = re.compile(r"[ \t\f]+|\\\r?\n")
_SPACING_UTF8 = re.compile(_SPACING.pattern.encode())
# Spacing that can split a token: around a dot or an opening bracket.
_SPACED = re.compile(r"[ \t\f]\.|\.[ \t\f]|\w[ \t\f]+[(\[]|[(\[][ \t\f]|\\\r?\n")
