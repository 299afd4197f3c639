"""Document state and coalescing: the newest text wins, with no fixed delay.

Every open/change/save marks its document (a text document, or a notebook as a
whole) as due. One worker lints due documents one at a time, reading the text
only when it starts on it, so edits that arrive while it is busy collapse into
one lint of the newest text; results for a text that was edited meanwhile are
dropped rather than published, since a newer lint is already due.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class LintQueue:
    def __init__(self, lint: Callable[[str], Awaitable[None]]) -> None:
        self._lint = lint
        self._due: dict[str, None] = {}  # insertion-ordered set of keys
        self._wake: asyncio.Event | None = None
        self._worker: asyncio.Task | None = None  # held so the task is not collected

    def request(self, key: str) -> None:
        """Mark ``key`` due; call from the event loop."""
        self._due[key] = None
        if self._wake is None:
            self._wake = asyncio.Event()
            self._worker = asyncio.get_running_loop().create_task(self._run())
        self._wake.set()

    def discard(self, key: str) -> None:
        self._due.pop(key, None)

    def is_due(self, key: str) -> bool:
        """Whether a newer text of ``key`` is waiting (its current result is stale)."""
        return key in self._due

    async def _run(self) -> None:
        assert self._wake is not None
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._due:
                key = next(iter(self._due))
                del self._due[key]
                try:
                    await self._lint(key)
                except Exception:  # the worker must outlive any one document
                    log.exception("linting %s failed", key)
