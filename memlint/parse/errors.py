"""The parse's errors, in a module of their own: the runner and the flake8
plugin catch them without importing the engine (and libcst) first."""

from __future__ import annotations


class ParseError(Exception):
    """The text is not Python that libcst can parse; message has line and reason."""


class LibcstLimitation(ParseError):
    """Python parses the text; libcst does not."""
