"""Which rule codes a run selects, decided without importing the rules.

A warm ``memlint check`` (every file's findings in the cache) needs only the
selected codes, for the cache key: importing the rules would import libcst and
the analyses, most of a warm run's time. ``CODES`` comes from the rules' cards
(gate/cards.py; tests/test_cards.py fails when a rule is added, removed or
changes its default without its card); ``memlint.rule.registry.select_rules``
selects through the same function, so the two can never disagree.
"""

from __future__ import annotations

from collections.abc import Sequence

from memlint.gate.cards import CARDS

# Every rule's code and whether it runs by default (Rule.default_enabled),
# from the rules' cards (gate/cards.py), which never import a rule.
CODES: dict[str, bool] = {code: card.default_enabled for code, card in CARDS.items()}


def select_codes(
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    extend_select: list[str] | None = None,
    codes: dict[str, bool] | None = None,
) -> list[str]:
    """ruff's selection: ``select`` replaces the default set, ``extend_select``
    adds to it, ``ignore`` removes; entries are codes or prefixes (``MEM1``).
    ``codes``: code -> enabled by default (``CODES`` unless given)."""
    return select_layers([(select, extend_select or [], ignore or [])], codes)


# One layer of selection: (select, extend_select, ignore), as one source of
# settings states it (the config file, then the command line).
Layer = tuple[Sequence[str] | None, Sequence[str], Sequence[str]]


def select_layers(layers: list[Layer], codes: dict[str, bool] | None = None) -> list[str]:
    """ruff's resolution over sources of settings, in order (the config file,
    then the command line, then a file's per-file ignores): a layer with a
    ``select`` starts again from it, so the command line's ``--select`` drops
    the config's selection and its ignores; without one a layer refines what
    the layers before it chose (``extend_select`` adds, ``ignore`` removes).
    Within a layer the more specific selector wins, as in select_codes."""
    table = CODES if codes is None else codes
    chosen = {c for c, default in table.items() if default}
    for select, extend_select, ignore in layers:
        if select:
            chosen = {c for c in table if _matches(c, list(select))}
        if extend_select:
            chosen |= {c for c in table if _matches(c, list(extend_select))}
        if ignore:
            chosen = {c for c in chosen if not _matches_more_specific(c, list(ignore), list(select or []))}
    return sorted(chosen)


def known_prefix(entry: str) -> bool:
    """A code or prefix some rule answers to (``ALL`` included)."""
    entry = entry.upper()
    return entry == "ALL" or any(code.startswith(entry) for code in CODES)


def _matches(code: str, prefixes: list[str]) -> bool:
    return any(p.upper() == "ALL" or code.startswith(p.upper()) for p in prefixes)


def _matches_more_specific(code: str, ignore: list[str], select: list[str]) -> bool:
    # As in ruff: `--select MEM101 --ignore MEM1` keeps MEM101, the more
    # specific selector wins.
    ig = max((len(p) for p in ignore if code.startswith(p.upper()) or p.upper() == "ALL"), default=-1)
    if ig < 0:
        return False
    se = max((len(p) for p in select if code.startswith(p.upper())), default=-1)
    return ig >= se
