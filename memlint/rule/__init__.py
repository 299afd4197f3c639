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

# The findings' data, re-exported: rule authors import the whole contract from here.
from memlint.lint.finding import Edit as Edit
from memlint.lint.finding import Finding, Fix, Safety

if TYPE_CHECKING:
    from memlint.analysis.facts import ModuleFacts
    from memlint.find.torch_floor import TorchRange
    from memlint.gate.facts import GateFacts

# The pre-filter of rules about training code: real training scripts often
# import model, data and helpers from local modules and never say ``torch``,
# but they call the training verbs (issue 14, item 7).
TRAINING_CODE_TOKENS = ("torch", "backward", "zero_grad", ".step(")

DOC_SECTIONS = (
    "What it does",
    "Why it matters",
    "Example",
    "Use instead",
    "Fix safety",
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
    # Pre-filter: a file that contains none of these substrings cannot hold a
    # finding of this rule and is not parsed for it.
    tokens: ClassVar[tuple[str, ...]] = TRAINING_CODE_TOKENS
    # The gate (analysis/gate.py): a condition on Python's ``ast`` facts that
    # every file holding a finding of this rule satisfies. It must be
    # necessary, never a heuristic; None (the default) never skips the rule.
    gate: ClassVar[Callable[[GateFacts], bool] | None] = None
    # True when the rule asks ``facts.project`` (facts from other modules of
    # the project): the engine then builds the file's project view for it.
    reads_project: ClassVar[bool] = False
    # For the rule's page: which facts may come from other modules (empty:
    # only names arriving through a star import, as for every rule).
    project_facts: ClassVar[str] = ""
    valid: ClassVar[Sequence[Valid]] = ()
    invalid: ClassVar[Sequence[Invalid]] = ()

    METADATA_DEPENDENCIES = (PositionProvider, ParentNodeProvider)

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
