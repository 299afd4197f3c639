"""The runner's second pass without redoing the first's work.

A file whose rules read the project waits for its view (runner.py). Its
first pass already parsed it with ``ast``, summarised it and screened it;
the second used to do all three again before libcst (on transformers, 271
files: about a third of their first-pass cost was spent twice). Now the
first pass hands the screening's outcome to the parent (``Screened``), and
the parent settles, with the view in hand, which rules still run
(``settle``: the engine's with_project, from the cards): a file left with
none is reported there, without a worker reading it again; the others go
to a worker with the rules to run and the summary, and meet ``ast`` once
more only for the nesting guard before libcst. A card whose local gate
passed only for a call that may build a project model class is asked again
with the view's model classes (gate/project_gate.py, ``class_bound``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memlint.gate.cards import CARDS

if TYPE_CHECKING:
    import ast

    from memlint.project.summary import ModuleSummary
    from memlint.project.view import ProjectView


@dataclass(frozen=True)
class Screened:
    """What the first pass learnt of a waiting file, for the second.
    ``passed``: the codes the screening let through, in order;
    ``local_misses``: those whose gate holds only for what another module
    may hold (a card's ``local_gate`` fails), dropped unless the view holds
    it (``project_matters``); ``digest``: the bytes screened (a file changed
    in between is screened again); ``class_bound``: codes whose local gate
    passed only for a call that may build a project model class, with the
    callees' spellings (gate/project_gate.py): a local miss unless the view
    makes one of them a model class."""

    digest: str
    passed: tuple[str, ...]
    local_misses: frozenset[str]
    summary: ModuleSummary | None
    class_bound: dict[str, frozenset[str]] = field(default_factory=dict)
    # Of the local misses whose card has project paths (Card.project_parts),
    # those the file's facts allow: the view must hold what one of them needs.
    parts: dict[str, frozenset[int]] = field(default_factory=dict)


def screened(
    text: str, digest: str | None, passed: list, tree: ast.Module | None, summary: ModuleSummary | None, gate: bool
) -> Screened | None:
    """The first pass's outcome for a waiting file, or None when the second
    pass must screen it again: a star import (with_project then reruns every
    pre-filtered rule, ungated, when the view binds its names)."""
    if digest is None or "import *" in text:
        return None
    misses: set[str] = set()
    bound: dict[str, frozenset[str]] = {}
    parts: dict[str, frozenset[int]] = {}
    if tree is not None and gate:  # without a tree or the gate, engine._without_project drops nothing
        from memlint.gate.facts import facts_of

        facts = None
        for card in passed:
            if card.project_matters is not None and card.local_gate is not None:
                facts = facts if facts is not None else facts_of(tree)  # the screening's, not walked again
                if not card.local_gate(facts):
                    misses.add(card.code)
        if facts is not None:
            from memlint.gate.project_gate import class_bound, held_parts

            bound = class_bound(passed, facts, misses)
            for card in passed:
                held = held_parts(card, facts) if card.code in misses else None
                if held is not None:
                    parts[card.code] = held
    return Screened(digest, tuple(card.code for card in passed), frozenset(misses), summary, bound, parts)


def settle(first: Screened, view: ProjectView | None) -> tuple[str, ...]:
    """The codes left to run with ``view`` (None: no project): engine.with_project's
    choice, made from the cards in the parent."""

    from memlint.gate.project_gate import parts_matter, ruled_out

    def dropped(code: str) -> bool:
        card = CARDS[code]
        missed = code in first.local_misses or (code in first.class_bound and ruled_out(first.class_bound[code], view))
        return missed and card.project_matters is not None and not parts_matter(card, first.parts.get(code), view)

    return tuple(code for code in first.passed if not dropped(code))


def matters_of(view: ProjectView) -> list[str]:
    """The codes whose card says ``view`` holds what their project part needs:
    settle's every question of the view, kept (warm index) so that the same
    view settles a later edit of its file without being built again."""
    return [code for code, card in CARDS.items() if card.project_matters is not None and card.project_matters(view)]


def settle_known(first: Screened, matters: frozenset[str]) -> tuple[str, ...]:
    """settle's codes with a view whose matters_of is ``matters``: a
    class-bound code is kept (its view's model classes are not at hand), and
    so is a code whose card's whole project part holds there, whatever paths
    the file's facts allow (``parts``; what the view holds per path is not kept)."""

    def dropped(code: str) -> bool:
        return code in first.local_misses and CARDS[code].project_matters is not None and code not in matters

    return tuple(code for code in first.passed if not dropped(code))
