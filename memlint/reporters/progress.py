"""A progress line on stderr for long runs: files done of the total and the
findings so far. It stays silent for the first half second, so short runs
(pre-commit, editors) never see it, and redraws at most ten times a second.
Hand-written rather than a library: importing one would cost a short run
more than this whole module does."""

from __future__ import annotations

import time
from typing import TextIO

WIDTH = 24


class Progress:
    def __init__(self, total: int, stream: TextIO, delay: float = 0.5, interval: float = 0.1) -> None:
        self.total, self.stream = total, stream
        self.done = self.findings = 0
        self.start = time.monotonic()
        self.delay, self.interval = delay, interval
        self.last_draw = float("-inf")
        self.drawn = False

    def update(self, findings: int) -> None:
        self.done += 1
        self.findings += findings
        now = time.monotonic()
        if now - self.start >= self.delay and (now - self.last_draw >= self.interval or self.done == self.total):
            self.last_draw = now
            self._draw()

    def line(self) -> str:
        filled = WIDTH * self.done // max(self.total, 1)
        bar = "=" * filled + (">" if filled < WIDTH else "") + " " * max(WIDTH - filled - 1, 0)
        s = "" if self.findings == 1 else "s"
        return f"[{bar}] {self.done}/{self.total} files, {self.findings} finding{s}"

    def _draw(self) -> None:
        self.stream.write("\r" + self.line() + "\x1b[K")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
