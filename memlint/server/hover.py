"""Hover on a finding: the rule's explanation and its example, from the
rule's own documentation (what ``memlint rule CODE`` prints)."""

from __future__ import annotations

from collections.abc import Sequence

from memlint.rule import Finding
from memlint.rule.registry import rule_by_code


def covers(finding: Finding, line: int, column: int) -> bool:
    """Whether (1-based line, 0-based column in code points) lies in the finding."""
    start, end = (finding.line, finding.column), (finding.end_line, finding.end_column)
    return start <= (line, column) <= end


def hover_markdown(findings: Sequence[Finding], line: int, column: int) -> str | None:
    parts = []
    for code in dict.fromkeys(f.code for f in findings if covers(f, line, column)):
        rule = rule_by_code(code)
        if rule is None:
            continue
        sections = rule.doc_sections()
        text = [f"**{rule.code}** `{rule.name}` (fix: {rule.fix_safety.value})"]
        for title in ("What it does", "Why it matters", "Example", "Use instead"):
            if sections.get(title):
                text.append(f"**{title}**\n\n{sections[title]}")
        parts.append("\n\n".join(text))
    return "\n\n---\n\n".join(parts) or None
