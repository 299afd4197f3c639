"""The fixed twin: made by the same engine as ``memlint check --fix``, or given
with ``--fixed``; and which findings the twin no longer has. The twin of a
script whose project memlint reads (every module it imports) is made in
project_twin.py."""

from __future__ import annotations

import collections
from dataclasses import dataclass, field

from memlint.fix.fixer import fix_text
from memlint.lint.engine import lint_text
from memlint.read.source import SourceFile
from memlint.rule import Finding, Safety
from memlint.rule.registry import select_rules


@dataclass(frozen=True)
class FixedFinding:
    code: str
    name: str
    line: int
    safety: str  # "safe" | "unsafe" | "none" (a hand-made twin fixed what memlint only reports)
    message: str
    cell: int | None = None  # a notebook's cell (1-based, every cell counted); line is then within it
    path: str | None = None  # the file, relative to the project root (a project twin's)

    @property
    def where(self) -> str:
        return f"cell {self.cell}, line {self.line}" if self.cell is not None else f"line {self.line}"

    def as_json(self) -> dict:
        data = {"code": self.code, "name": self.name, "line": self.line, "safety": self.safety}
        if self.cell is not None:
            data["cell"] = self.cell
        if self.path is not None:
            data["path"] = self.path
        return data


@dataclass(frozen=True)
class LeftFinding:
    """A finding ``memlint check`` reports that the twin does not fix, and why."""

    code: str
    name: str
    path: str  # relative to the project root
    line: int  # in the original file
    why: str

    def as_json(self) -> dict:
        return {"code": self.code, "name": self.name, "path": self.path, "line": self.line, "why": self.why}


@dataclass
class Twin:
    text: str
    findings: list[FixedFinding]
    remaining: list[str]  # codes memlint still reports on the twin
    why_unfixed: dict[str, str] = field(default_factory=dict)  # code -> why its findings were left
    # A project twin's: the other modules the fix changed (absolute path of
    # the original -> its fixed text), each finding left with its place, the
    # project's root. Empty for a single-file twin.
    modules: dict[str, str] = field(default_factory=dict)
    left: list[LeftFinding] = field(default_factory=list)
    root: str | None = None

    @property
    def unsafe(self) -> list[FixedFinding]:
        return [f for f in self.findings if f.safety == "unsafe"]


def why_left(finding: Finding, unsafe: bool) -> str:
    """Why memlint left ``finding`` in the twin."""
    if finding.fix is not None and finding.fix.safety is Safety.UNSAFE and not unsafe:
        return "has an unsafe fix (it may change results): add --unsafe-fixes to apply it"
    if finding.fix is None:
        return "has no automatic fix: write it and pass the fixed script with --fixed"
    return "has a fix that could not be applied here"


def _why_unfixed(remaining: list[Finding], unsafe: bool) -> dict[str, str]:
    """Per code, why memlint left a finding in the twin."""
    out: dict[str, str] = {}
    for f in remaining:
        out.setdefault(f.code, why_left(f, unsafe))
    return out


def _rule_names(rules) -> dict[str, str]:
    return {r.code: r.name for r in rules}


def _fixed(finding: Finding, names: dict[str, str]) -> FixedFinding:
    return FixedFinding(
        code=finding.code,
        name=names.get(finding.code, ""),
        line=finding.line,
        safety=finding.fix_safety.value,
        message=finding.message,
    )


def make_twin(source: SourceFile, select: list[str] | None, unsafe: bool) -> Twin:
    """Fix ``source`` as ``memlint check --fix`` would. Raises
    memlint.lint.engine.ParseError when the script does not parse."""
    rules = select_rules(select=select)
    result = fix_text(source.text, source.path, rules, unsafe=unsafe)
    names = _rule_names(rules)
    return Twin(
        text=result.text,
        findings=[_fixed(f, names) for f in result.applied],
        remaining=[f.code for f in result.remaining],
        why_unfixed=_why_unfixed(result.remaining, unsafe),
    )


def explicit_twin(source: SourceFile, fixed: SourceFile, select: list[str] | None) -> Twin:
    """A twin the user wrote: the findings it fixed are those of the original
    whose code memlint reports fewer times on the twin."""
    rules = select_rules(select=select)
    names = _rule_names(rules)
    before = lint_text(source.text, source.path, rules)
    after = lint_text(fixed.text, fixed.path, rules)
    left = collections.Counter(f.code for f in after)
    gone: list[FixedFinding] = []
    for finding in before:
        if left[finding.code]:
            left[finding.code] -= 1
        else:
            gone.append(_fixed(finding, names))
    return Twin(text=fixed.text, findings=gone, remaining=[f.code for f in after])
