"""ANSI colour for the terminal formats (text, concise), and when to use it.

Order of precedence: ``--color always|never``, then ``NO_COLOR`` (no-color.org),
then ``FORCE_COLOR`` (force-color.org), then whether the stream is a terminal.
"""

from __future__ import annotations

import os
from typing import TextIO

CHOICES = ("auto", "always", "never")

BOLD, RED, GREEN, YELLOW, BLUE, CYAN, DIM = "1", "31", "32", "33", "34", "36", "2"


def use_color(choice: str, stream: TextIO) -> bool:
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


class Painter:
    """``paint(text, RED, BOLD)``: the text in colour, or unchanged when off."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *codes: str) -> str:
        if not self.enabled or not text:
            return text
        return f"\x1b[{';'.join(codes)}m{text}\x1b[0m"
