"""Which cached views still hold after some files of the project changed,
decided without building the project's index.

A findings-cache entry linted with a view records the project's state then
(``index.project_state``: a digest of every file and its bytes) and the files
its view read (``ProjectIndex.view_reads``). The state's manifest, each
file's digest, is kept here, in the cache's folder. On a later run in
another state, the changed files are the manifest's difference; the entry's
view is unchanged when none of them

- is a file the view read (its summary, a re-export, an import, a caller
  with whatever it read to resolve its call), and
- now spells one of the module's function or class names (a call of it
  spells the name: a new caller, or a re-export of it), and
- holds a star import (what it exports moves with other modules: we do not
  follow that far, so any one means the index is built).

A changed module whose summary is the same as before (a comment, a
docstring: the lint of this run and the old cache entry say) changes no
view: it is not counted. A file added or removed changes how imports
resolve: the index is built.
Editing one file of a 3,000-file project then needs the view of that file
alone, not of every module that reads the project.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable

from memlint.read.source import read_bytes

# An identifier a call or an import may spell (bytes >= 0x80: non-ASCII names).
_WORD = re.compile(rb"[A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*")
_STAR = re.compile(rb"\bimport[ \t\\\n(]*\*")
# Manifests kept: each is one project's file list with digests (3,000 files:
# ~250 kB); a missing one only means the index is built again.
_KEPT = 32


class StateStore:
    def __init__(self, directory: str) -> None:
        self.folder = os.path.join(os.path.abspath(directory), "states")

    def _entry(self, state: str) -> str:
        return os.path.join(self.folder, state + ".json")

    def load(self, state: str) -> dict[str, str] | None:
        entry = self._entry(state)
        try:
            with open(entry, "rb") as fh:
                data = json.loads(fh.read())
            os.utime(entry)  # in use: pruned last
        except Exception:  # missing, truncated: unknown
            return None
        return data if isinstance(data, dict) else None

    def store(self, state: str, manifest: dict[str, str]) -> None:
        entry = self._entry(state)
        if os.path.exists(entry):
            return
        tmp = f"{entry}.{os.getpid()}-{os.urandom(4).hex()}.tmp"
        try:
            os.makedirs(self.folder, exist_ok=True)
            with open(tmp, "w") as fh:
                json.dump(manifest, fh, separators=(",", ":"))
            os.replace(tmp, entry)
            self._prune()
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass

    def _prune(self) -> None:
        entries = []
        for name in os.listdir(self.folder):
            if name.endswith(".json"):
                path = os.path.join(self.folder, name)
                try:
                    entries.append((os.stat(path).st_mtime_ns, path))
                except OSError:
                    pass
        for _, path in sorted(entries)[:-_KEPT]:
            try:
                os.unlink(path)
            except OSError:
                pass


def module_names(summary_json: dict | None) -> frozenset[str]:
    """The names a call into the module spells last: its functions' (a
    method's own name too) and its classes'; and the words of each checkpoint
    file it loads (``model_final.pth``: a module that starts writing that file
    spells them, and MEM701 judges the load by every writer); the attributes
    of its plain classes."""
    if not summary_json:
        return frozenset()
    names = {str(f["name"]).rpartition(".")[2] for f in summary_json.get("functions", ())}
    names.update(str(c) for c in summary_json.get("classes", ()))
    # A module that starts switching an attribute of its plain classes
    # (``solver.G.eval()``, index._switched_attrs) spells the attribute.
    names.update(str(a) for a in summary_json.get("plain_attrs", ()))
    for loaded in summary_json.get("loaded_files", ()):
        names.update(w.decode("utf-8", "replace") for w in _WORD.findall(str(loaded).encode()))
    return frozenset(names)


class Changes:
    """The files changed between recorded states and the current one, each
    read once for its words."""

    def __init__(self, store: StateStore, same_summary: Callable[[str, str], bool] | None = None) -> None:
        """``same_summary(path, old_digest)``: the module's summary now is the
        one its bytes of ``old_digest`` had (both known)."""
        self.store = store
        self.same_summary = same_summary
        self._changed: dict[tuple[str, str], frozenset[str] | None] = {}
        self._seen: dict[str, bool] = {}  # changed file -> whether a view may see the change
        self._words: dict[str, frozenset[bytes] | None] = {}  # None: a star import

    def changed(self, root: str, old_state: str, state: str, manifest: dict[str, str]) -> frozenset[str] | None:
        """The files (relative to the root) whose bytes differ between
        ``old_state`` and ``state`` (whose ``manifest`` is given); None when
        unknown or a file was added or removed."""
        key = (old_state, state)
        if key not in self._changed:
            old = self.store.load(old_state)
            if old is None or old.keys() != manifest.keys():
                self._changed[key] = None
            else:
                changed = {f for f, d in manifest.items() if old[f] != d}
                self._changed[key] = frozenset(f for f in changed if self._visible(os.path.join(root, f), old[f]))
        return self._changed[key]

    def _visible(self, path: str, old_digest: str) -> bool:
        if self.same_summary is None:
            return True
        key = f"{path}\0{old_digest}"
        if key not in self._seen:
            self._seen[key] = not self.same_summary(path, old_digest)
        return self._seen[key]

    def words(self, path: str) -> frozenset[bytes] | None:
        """The identifiers ``path`` spells now; None when it holds a star import."""
        if path not in self._words:
            data = read_bytes(path) or b""
            self._words[path] = None if _STAR.search(data) else frozenset(_WORD.findall(data))
        return self._words[path]

    def still_holds(
        self,
        root: str,
        old_state: str,
        state: str,
        manifest: dict[str, str],
        reads: Iterable[str] | Callable[[], Iterable[str] | None],
        names: frozenset[str] | Callable[[], frozenset[str]],
    ) -> bool:
        """Whether a view made in ``old_state`` that read ``reads`` (relative
        to ``root``) for a module defining ``names`` is its view in ``state``
        (``reads`` and ``names``: or functions giving them, called only when
        a visible change is to be judged: the module's cache entry is then
        read; reads None: unknown, the view is built)."""
        changed = self.changed(root, old_state, state, manifest)
        if changed is None:
            return False
        if not changed:
            return True
        read = reads() if callable(reads) else reads
        if read is None or not changed.isdisjoint(read):
            return False
        wanted = {n.encode() for n in (names() if callable(names) else names)}
        for rel in changed:
            words = self.words(os.path.join(root, rel))
            if words is None or not words.isdisjoint(wanted):
                return False
        return True
