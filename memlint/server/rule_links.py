"""Where a diagnostic's code links to: the rule's page on the documentation
site, generated from the same rule class that ``memlint rule CODE`` prints."""

from __future__ import annotations

from memlint import rule_doc_url


def rule_link(code: str) -> str:
    return rule_doc_url(code)
