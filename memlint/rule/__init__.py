"""The rule contract: what a rule is, what it reports, and how a fix is described.

A rule is a libcst visitor. The engine runs every enabled rule in one batched
traversal of the module, so a rule only sees the nodes it asks for through its
``visit_*``/``leave_*`` methods. Facts that need more than one node (imports,
history, grad mode, loop roles) come from ``self.facts``, built once per module
by :mod:`memlint.analysis` and shared by every rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider

from memlint.gate.cards import CARDS

# The findings' data, re-exported: rule authors import the whole contract from here.
from memlint.lint.finding import Edit as Edit
from memlint.lint.finding import Finding, Fix, Safety
from memlint.vocabulary.tokens import TRAINING_CODE_TOKENS as TRAINING_CODE_TOKENS

if TYPE_CHECKING:
    from memlint.analysis.facts import ModuleFacts
    from memlint.find.torch_floor import TorchRange
    from memlint.gate.facts import GateFacts
    from memlint.project.view import ProjectView


# What the screening reads of a rule: written on its card, never on its class.
_SCREENING = ("tokens", "gate", "reads_project")

DOC_SECTIONS = (
    "What it does",
    "Why it matters",
    "Example",
    "Use instead",
    "Fix safety",
    "References",
)
# The order of a rule's page (`memlint rule CODE`): what it flags, why, an
# example and its fix first, all on the first screen; then what it leaves
# alone (the traps) and the finer shapes it reads, which the first sections
# keep short by pointing here.
DOC_ORDER = (
    "What it does",
    "Why it matters",
    "Example",
    "Use instead",
    "Fix safety",
    "When it stays silent",
    "Details",
    "References",
)


@dataclass(frozen=True)
class Invalid:
    """An embedded example that must raise ``code``; ``fixed`` is the exact text
    after fixing (unsafe fixes included), or None when the rule offers no fix."""

    source: str
    fixed: str | None = None
    count: int = 1


@dataclass(frozen=True)
class Valid:
    source: str
    why: str = ""


@dataclass
class RuleContext:
    path: str
    source: str
    module: cst.Module
    facts_factory: object  # callable returning ModuleFacts, built once on first use
    findings: list[Finding] = field(default_factory=list)
    # The torch releases the file's project accepts (find/torch_floor.py);
    # None: not known, and migrations are reported and fixed as for any torch.
    torch: TorchRange | None = None
    _facts: ModuleFacts | None = None

    @property
    def facts(self) -> ModuleFacts:
        if self._facts is None:
            self._facts = self.facts_factory()  # type: ignore[operator]
        return self._facts

    def release(self) -> None:
        """The rules are done: let the facts go (ModuleFacts.release)."""
        if self._facts is not None:
            self._facts.release()
            self._facts = None


class Rule(cst.BatchableCSTVisitor):
    """Base class of every rule. Subclasses set the class attributes below."""

    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    message: ClassVar[str] = ""
    fix_safety: ClassVar[Safety] = Safety.NONE
    default_enabled: ClassVar[bool] = True
    # The screening's attributes come from the rule's card (gate/cards.py,
    # read without importing the rule): the pre-filter's tokens, the gate on
    # Python's ``ast`` facts (None never skips the rule) and whether the rule
    # reads the project. A class without a card (a test's) sets its own.
    tokens: ClassVar[tuple[str, ...]] = TRAINING_CODE_TOKENS
    gate: ClassVar[Callable[[GateFacts], bool] | None] = None
    reads_project: ClassVar[bool] = False
    # The card's gate without its project part, and what the view must hold
    # for that part (gate/cards.py): None for a gate with no project part.
    local_gate: ClassVar[Callable[[GateFacts], bool] | None] = None
    project_matters: ClassVar[Callable[[ProjectView], bool] | None] = None
    # For the rule's page: which facts may come from other modules (empty:
    # only names arriving through a star import, as for every rule).
    project_facts: ClassVar[str] = ""
    # The rule's fixes turn autograd off for the code they touch, so another
    # rule's fix there (a `.detach()` on a tensor that then carries no
    # history) may be needless: ``--fix`` applies them in a round of their
    # own and lints again before any other fix (fix/fixer.py).
    fix_turns_grad_off: ClassVar[bool] = False
    valid: ClassVar[Sequence[Valid]] = ()
    invalid: ClassVar[Sequence[Invalid]] = ()

    METADATA_DEPENDENCIES = (PositionProvider, ParentNodeProvider)

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        card = CARDS.get(cls.code) if "code" in vars(cls) else None
        if card is None:  # a test's rule, or a variant of a rule: its own screening
            return
        for attr in _SCREENING:
            if attr in vars(cls):
                raise TypeError(f"{cls.code}: {attr} is written on its card (memlint/gate/cards.py), not its class")
        cls.tokens = card.tokens
        cls.gate = staticmethod(card.gate) if card.gate is not None else None  # type: ignore[assignment]
        cls.reads_project = card.reads_project
        cls.local_gate = staticmethod(card.local_gate) if card.local_gate is not None else None  # type: ignore[assignment]
        cls.project_matters = (
            staticmethod(card.project_matters) if card.project_matters is not None else None  # type: ignore[assignment]
        )

    def __init__(self, context: RuleContext) -> None:
        super().__init__()
        self.context = context

    @property
    def facts(self) -> ModuleFacts:
        return self.context.facts

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.get_metadata(ParentNodeProvider, node, None)

    def report(
        self,
        node: cst.CSTNode,
        message: str | None = None,
        fix: Fix | None = None,
    ) -> None:
        pos = self.get_metadata(PositionProvider, node)
        self.context.findings.append(
            Finding(
                code=self.code,
                message=message or self.message,
                path=self.context.path,
                line=pos.start.line,
                column=pos.start.column,
                end_line=pos.end.line,
                end_column=pos.end.column,
                fix=fix,
            )
        )

    # -- documentation ---------------------------------------------------
    @classmethod
    def documentation(cls) -> str:
        return _dedent_doc(cls.__doc__ or "")

    @classmethod
    def doc_sections(cls) -> dict[str, str]:
        sections: dict[str, str] = {}
        current = None
        for line in cls.documentation().splitlines():
            m = re.match(r"^##\s+(.*\S)\s*$", line)
            if m:
                current = m.group(1)
                sections[current] = ""
            elif current is not None:
                sections[current] += line + "\n"
        return {k: v.strip() for k, v in sections.items()}

    @classmethod
    def summary(cls) -> str:
        """First sentence of "What it does", for SARIF and listings."""
        text = cls.doc_sections().get("What it does", cls.message)
        return " ".join(text.split("\n\n")[0].split())


def _dedent_doc(doc: str) -> str:
    import inspect

    return inspect.cleandoc(doc)
