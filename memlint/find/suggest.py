"""The nearest known spelling of a mistyped key or rule code, for error messages."""

from __future__ import annotations

from collections.abc import Iterable


def did_you_mean(word: str, known: Iterable[str], cutoff: float = 0.75) -> str:
    """`` (did you mean 'select'?)`` for a close match, else the empty string.

    The cutoff is high on purpose: a wrong suggestion misleads more than none."""
    import difflib  # only on an error path: every clean run imports this module

    match = difflib.get_close_matches(word, list(known), n=1, cutoff=cutoff)
    return f" (did you mean '{match[0]}'?)" if match else ""
