"""Where a diagnostic's code links to: the rule's documentation, wherever
``memlint.docs_url`` (MEMLINT_DOCS_URL) says it is, as SARIF and JSON say."""

from __future__ import annotations

from memlint import rule_doc_url


def rule_link(code: str) -> str:
    return rule_doc_url(code)
