"""The gate asked again once the file's project is known, before libcst.

The first pass screens a file without its project: a call of a name
imported from another module of it (``Net(cfg)`` after ``from .models import
Net``) may build a model (eval._may_be_a_project_class), so MEM202's gate lets
through every file with a function that returns such a call. On transformers
that is most modeling files (``return BaseModelOutput(...)``, imported
relatively): each then waited for its view and went through libcst for no
finding. The view says which of those names are model classes
(ProjectView.model_classes, all that objects._fresh reads). Where it holds
none of the names the file calls, the gate's answer is the one it gives
with no project class at all: asked in the first pass, on the tree it
already holds (``class_bound``), and settled in the parent with the view
(``ruled_out``), so such a file is never parsed again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memlint.gate.cards import Card
    from memlint.gate.facts import GateFacts

# Off: the second pass as before (tests/test_project_gate.py proves the same findings).
ENABLED = True

# The cards whose local gate reads project classes (compute_builds_module).
READS_PROJECT_CLASSES = frozenset({"MEM202"})


def class_bound(passed: list[Card], facts: GateFacts, misses: set[str]) -> dict[str, frozenset[str]]:
    """code -> the callee spellings that must include a project model class
    for the card's local gate to pass: the cards whose local gate passed only
    for what a project class may build."""
    if not ENABLED:
        return {}
    bound: dict[str, frozenset[str]] = {}
    closed = None
    for card in passed:
        if card.code not in READS_PROJECT_CLASSES or card.code in misses or card.local_gate is None:
            continue
        closed = closed if closed is not None else facts.given_project_classes(frozenset())
        if not card.local_gate(closed):
            from memlint.gate.eval import project_class_spellings

            bound[card.code] = project_class_spellings(facts)
    return bound


def ruled_out(spellings: frozenset[str], view: Any) -> bool:
    """The view (a project.view.ProjectView; None: no project, no class)
    makes none of ``spellings`` a model class: the local gate fails."""
    return view is None or spellings.isdisjoint(view.model_classes)


def held_parts(card: Card, facts: GateFacts) -> frozenset[int] | None:
    """The project paths (``Card.project_parts``, by index) the file's facts
    allow, for a card whose local gate failed; None: the card has none (its
    ``project_matters`` decides)."""
    if not card.project_parts or not ENABLED:
        return None
    return frozenset(i for i, (needs, _matters) in enumerate(card.project_parts) if needs(facts))


def parts_matter(card: Card, held: frozenset[int] | None, view: Any) -> bool:
    """The view holds what one of the ``held`` paths needs (None: what the
    card's project part needs, ``project_matters``): the rule may find
    something the file's own facts do not show."""
    if view is None or card.project_matters is None:
        return False
    if held is None:
        return card.project_matters(view)
    return any(card.project_parts[i][1](view) for i in held)
