"""The findings cache's index of the files a run saw, loaded once per run.

Per absolute path: the stat stamp its bytes had when they were hashed (size,
mtime, ctime, inode), their digest, and the cache key and report of its last
check without the module summary (``cache.record_of``). A warm run
then neither reads nor hashes a file whose stamp is unchanged, nor opens its
cache entry: one file is read for the whole project instead of every source
file and every entry (transformers + timm, 3,166 files: the warm pass was
the floor of a one-edit re-lint). The summary stays in the entry, read only
when an index of the project is built (runner._views).

When the stamp can be trusted: an edit changes the mtime or, when the mtime
is set back (``touch -d``, ``cp -p``), the ctime, which nobody can set. A
file stamped within ``RACY_NS`` of the moment it was hashed is not recorded
(git's "racily clean" entries): a second edit of the same size inside one
tick of a coarse filesystem clock would keep its mtime and ctime, so such a
file is hashed again by the next run. A file edited without a change of
size, mtime, ctime or inode (a filesystem without timestamps, a clock set
back) is the documented limit: ``--no-cache`` or clearing the cache reads it.

The index is written atomically and only when a record changed; runs that
share a cache keep the last writer's index (the others' records are read
again from the entries next time, never wrongly).
"""

from __future__ import annotations

import json
import os
import time

from memlint.run.cache import file_digest

# Files modified this close to the moment they were hashed are hashed again
# next time: mtime granularity (one jiffy, 2 s on FAT) and a clock skew of a
# network filesystem stay inside it.
RACY_NS = 3_000_000_000
# Past this many records, those not seen by the run that writes are dropped
# (a cache shared by many trees; a dropped record costs one read).
MAX_RECORDS = 200_000
NAME = "warm-index.json"

Stamp = tuple[int, int, int, int]


def stamp_of(st: os.stat_result) -> Stamp:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


class WarmIndex:
    def __init__(self, folder: str) -> None:
        """``folder``: the cache's folder for this memlint build (keys and
        reports depend on it; stamps do not, but live beside them)."""
        self.path = os.path.join(folder, NAME)
        self.records: dict[str, list] = _load(self.path)
        self._seen: set[str] = set()
        self._dirty = False
        self.hashed = 0  # files read and hashed by this run (tests, benches)

    # -- digests --------------------------------------------------------------
    def digest(self, path: str, normal: bool = False) -> str | None:
        """sha256 of the file's bytes: the recorded one while its stamp is
        unchanged, else read and hashed (recorded unless racy). None if
        unreadable. ``normal``: ``path`` is already absolute and normal."""
        full = path if normal else os.path.abspath(path)
        self._seen.add(full)
        try:
            st = os.stat(full)
        except OSError:
            return None
        stamp = stamp_of(st)
        record = self.records.get(full)
        if record is not None and tuple(record[:4]) == stamp:
            return record[4]
        # Stat before the read: a write after the stat changes the stamp
        # the next run sees, so a digest of newer bytes is never trusted wrongly.
        digest = file_digest(full)
        self.hashed += 1
        if digest is None:
            return None
        if record is not None:
            del self.records[full]
            self._dirty = True
        if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > RACY_NS:
            self.records[full] = [*stamp, digest, None, None]
            self._dirty = True
        return digest

    # -- reports ----------------------------------------------------------------
    def report(self, path: str, key: str, normal: bool = False) -> dict | None:
        """The report recorded for ``path`` under ``key`` (cache.record_of's
        shape, without a summary), or None."""
        record = self.records.get(path if normal else os.path.abspath(path))
        if record is None or record[5] != key or not isinstance(record[6], dict):
            return None
        return record[6]

    def note(self, path: str, key: str, data: dict) -> None:
        """Record ``path``'s report under ``key``; only a file whose digest
        this run recorded (its stamp is trusted) is noted."""
        record = self.records.get(os.path.abspath(path))
        if record is None or (record[5] == key and record[6] == data):
            return
        record[5], record[6] = key, data
        self._dirty = True

    def save(self) -> None:
        if not self._dirty:
            return
        records = self.records
        if len(records) > MAX_RECORDS:
            records = {p: r for p, r in records.items() if p in self._seen}
        tmp = f"{self.path}.{os.getpid()}-{os.urandom(4).hex()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            data = json.dumps(records, separators=(",", ":"))  # one C call: json.dump streams in chunks
            with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as fh:
                fh.write(data)
            os.replace(tmp, self.path)
            self._dirty = False
        except (OSError, ValueError):
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _load(path: str) -> dict[str, list]:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            data = json.loads(fh.read())
    except Exception:  # missing, truncated, corrupt: every file is hashed again
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        p: r
        for p, r in data.items()
        if isinstance(r, list) and len(r) == 7 and all(isinstance(v, int) for v in r[:4]) and isinstance(r[4], str)
    }
