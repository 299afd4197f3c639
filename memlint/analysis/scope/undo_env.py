"""A name -> value map whose changes since a mark can be undone.

A flow-sensitive walk (``history``) evaluates each branch of an ``if``, a
``try`` or a loop from the same state and then joins the states at their
ends. Copying the whole map per branch costs the number of variables in the
function at every branch, so a long function with many branches is walked in
quadratic time. Here a branch instead marks the map, runs, and undoes its
changes, getting back only the keys it changed: the join then costs the size
of the branch, not of the function.

Keys are dotted names (``x``, ``x.attr``); ``keys_under("x")`` lists the
``x.…`` keys without a scan of the whole map, for the same reason.
"""

from __future__ import annotations

from typing import Any

ABSENT: Any = object()  # the value of a key that is not in the map


class UndoEnv(dict):
    """A dict of dotted names. Change it through ``env[k] = v``, ``del
    env[k]`` and ``pop`` only (``update``/``setdefault`` bypass the journal).

    ``mark()`` starts recording; ``undo(mark)`` puts back the state at the
    mark and returns ``{key: value at the end, or ABSENT}`` for every key
    changed since. Marks nest; undo them innermost first.
    """

    __slots__ = ("_log", "_open", "_under")

    def __init__(self) -> None:
        super().__init__()
        self._log: list[tuple[str, Any]] = []  # (key, value before the change), oldest first
        self._open = 0  # marks not yet ended: record changes while any is open
        self._under: dict[str, set[str]] = {}  # "x" -> {"x.a", "x.a.b"}

    # -- changes ---------------------------------------------------------------
    def __setitem__(self, key: str, value: Any) -> None:
        old = dict.get(self, key, ABSENT)
        if self._open:
            self._log.append((key, old))
        if old is ABSENT and "." in key:
            self._index(key, add=True)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: str) -> None:
        old = dict.get(self, key, ABSENT)
        if old is ABSENT:
            raise KeyError(key)
        self._remove(key, old)

    def pop(self, key: str, default: Any = ABSENT) -> Any:
        old = dict.get(self, key, ABSENT)
        if old is ABSENT:
            if default is ABSENT:
                raise KeyError(key)
            return default
        self._remove(key, old)
        return old

    def _remove(self, key: str, old: Any) -> None:
        if self._open:
            self._log.append((key, old))
        if "." in key:
            self._index(key, add=False)
        dict.__delitem__(self, key)

    def _index(self, key: str, add: bool) -> None:
        parts = key.split(".")
        for i in range(1, len(parts)):
            prefix = ".".join(parts[:i])
            if add:
                self._under.setdefault(prefix, set()).add(key)
            else:
                found = self._under.get(prefix)
                if found is not None:
                    found.discard(key)
                    if not found:
                        del self._under[prefix]

    def keys_under(self, name: str) -> list[str]:
        """The keys that start with ``name + "."``."""
        return list(self._under.get(name, ()))

    # -- marks -----------------------------------------------------------------
    def mark(self) -> int:
        self._open += 1
        return len(self._log)

    def undo(self, mark: int) -> dict[str, Any]:
        log = self._log
        changed: dict[str, Any] = {}
        for key, old in reversed(log[mark:]):
            if key not in changed:
                changed[key] = dict.get(self, key, ABSENT)
            self._restore(key, old)
        del log[mark:]
        self._open -= 1
        if not self._open:
            log.clear()
        return changed

    def _restore(self, key: str, old: Any) -> None:
        """Put back a value without recording it (the undo of one change)."""
        present = dict.__contains__(self, key)
        if old is ABSENT:
            if present:
                if "." in key:
                    self._index(key, add=False)
                dict.__delitem__(self, key)
        else:
            if not present and "." in key:
                self._index(key, add=True)
            dict.__setitem__(self, key, old)
