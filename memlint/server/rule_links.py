"""Where a diagnostic's code links to: the rule's own module, whose docstring
is its documentation (``memlint rule CODE`` prints the same text). The link
works offline and always matches the installed version."""

from __future__ import annotations

import inspect
from functools import lru_cache
from pathlib import Path

from memlint.registry import rule_by_code


@lru_cache(maxsize=None)
def rule_link(code: str) -> str:
    rule = rule_by_code(code)
    source = inspect.getsourcefile(rule) if rule is not None else None
    if source is None:
        return Path(inspect.getsourcefile(rule_by_code) or ".").resolve().as_uri()
    return Path(source).resolve().as_uri()
