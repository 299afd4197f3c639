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
again from the entries next time, never wrongly). It is stored with marshal
behind a header naming its format (3,166 records: ~4 ms to read and write,
against ~35 ms as JSON, a tenth of a one-edit re-lint's own work); a file
without the header, or whose payload does not decode to the records' shape,
is an empty index: every file is hashed again, nothing is trusted.

It also keeps, per project view digest, the codes whose card says the view
matters (``project_matters``, gate/cards.py), and per file the cache key of
its last report settled with a view (a file saved just before the run is
never recorded above: racy): an edited file whose summary and view did not
move is settled with them, without an index (run/kept_views.py).
"""

from __future__ import annotations

import marshal
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
NAME = "warm-index.bin"
# Names the payload's format: another memlint's (or a JSON) index is ignored.
HEADER = b"memlint warm index 2 marshal 4\n"

Stamp = tuple[int, int, int, int]


def stamp_of(st: os.stat_result) -> Stamp:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


class WarmIndex:
    def __init__(self, folder: str) -> None:
        """``folder``: the cache's folder for this memlint build (keys and
        reports depend on it; stamps do not, but live beside them)."""
        self.path = os.path.join(folder, NAME)
        self.records, self.walks, self.verdicts, self.settled = _load(self.path)
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

    # -- the project's files --------------------------------------------------
    def project_files(self, root: str, limit: int) -> list[str] | None:
        """project_files(root, limit): the last walk's files while every
        folder it listed keeps its stamp (adding, removing or renaming an
        entry moves its folder's mtime and ctime; an edit of a file's bytes is
        the digests' business), else walked again and recorded unless a
        folder changed within RACY_NS of the walk's start (a change in the
        same clock tick as the listing would keep its stamp)."""
        from memlint.project.modules import project_files

        walk = self.walks.get(root)
        if walk is not None and walk[0] == limit:
            try:
                if all(_folder_stamp(os.stat(f)) == tuple(st) for f, *st in walk[1]):
                    return list(walk[2])
            except OSError:
                pass
        folders: list[str] = []
        # Before the walk: a folder changed while or after it was listed has
        # a later stamp, so it is never recorded with the listing it missed.
        start = time.time_ns()
        files = project_files(root, limit, folders)
        if walk is not None:
            del self.walks[root]
            self._dirty = True
        if files is None:
            return None
        stamps = []
        try:
            for f in folders:
                st = os.stat(f)
                if start - max(st.st_mtime_ns, st.st_ctime_ns) <= RACY_NS:
                    return files
                stamps.append([f, *_folder_stamp(st)])
        except OSError:
            return files
        self.walks[root] = [limit, stamps, files]
        self._dirty = True
        return files

    # -- reports ----------------------------------------------------------------
    def last_settled(self, full: str) -> str | None:
        """The cache key of the last report of ``full`` (absolute, normal)
        settled with a view, whatever its bytes now."""
        return self.settled.get(full)

    def verdict(self, view: str) -> frozenset[str] | None:
        """The codes whose card's project part matters in the view of digest
        ``view``, if known."""
        codes = self.verdicts.get(view)
        return None if codes is None else frozenset(codes)

    def note_settled(self, full: str, key: str, view: str, codes: list[str] | None = None) -> None:
        """``full``'s report of cache key ``key`` was settled with the view
        of digest ``view``, whose matters are ``codes`` (None: known)."""
        if codes is not None and self.verdicts.get(view) != codes:
            self.verdicts[view] = codes
            self._dirty = True
        if self.settled.get(full) != key:
            self.settled[full] = key
            self._dirty = True

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
        verdicts, settled = self.verdicts, self.settled
        if len(records) > MAX_RECORDS:
            records = {p: r for p, r in records.items() if p in self._seen}
        if len(settled) > MAX_RECORDS or len(verdicts) > MAX_RECORDS:
            # Only this run's: a dropped one costs one index build.
            settled = {p: k for p, k in settled.items() if p in self._seen}
            verdicts = {}
        tmp = f"{self.path}.{os.getpid()}-{os.urandom(4).hex()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            data = encode(records, self.walks, verdicts, settled)
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, self.path)
            self._dirty = False
        except (OSError, ValueError):
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _folder_stamp(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def encode(
    records: dict[str, list],
    walks: dict[str, list] | None = None,
    verdicts: dict[str, list] | None = None,
    settled: dict[str, str] | None = None,
) -> bytes:
    return HEADER + marshal.dumps((records, walks or {}, verdicts or {}, settled or {}), 4)


def decode(data: bytes) -> dict[str, list]:
    """The records in ``data``; {} for anything but encode's output with
    every record in its shape (a foreign or corrupt file is never trusted)."""
    return decode_all(data)[0]


def decode_all(data: bytes) -> tuple[dict[str, list], dict[str, list], dict[str, list], dict[str, str]]:
    """decode's records, the project walks (WarmIndex.project_files) in
    their shape: root -> [limit, [[folder, mtime, ctime, inode], ...], files],
    the views' verdicts: view digest -> [code, ...], and the files' last
    settled keys: path -> key."""
    if not data.startswith(HEADER):
        return {}, {}, {}, {}
    try:
        payload = marshal.loads(memoryview(data)[len(HEADER) :])
    except Exception:  # truncated, corrupt: every file is hashed again
        return {}, {}, {}, {}
    if not (type(payload) is tuple and len(payload) == 4 and all(type(p) is dict for p in payload)):
        return {}, {}, {}, {}
    records, walks, verdicts, settled = payload
    return (
        _records(records),
        {r: w for r, w in walks.items() if isinstance(r, str) and _walk_shape(w)},
        {
            v: c
            for v, c in verdicts.items()
            if isinstance(v, str) and type(c) is list and all(isinstance(code, str) for code in c)
        },
        {p: k for p, k in settled.items() if isinstance(p, str) and isinstance(k, str)},
    )


def _walk_shape(w: object) -> bool:
    return (
        type(w) is list
        and len(w) == 3
        and type(w[0]) is int
        and type(w[1]) is list
        and all(
            type(f) is list and len(f) == 4 and isinstance(f[0], str) and all(type(v) is int for v in f[1:])
            for f in w[1]
        )
        and type(w[2]) is list
        and all(isinstance(f, str) for f in w[2])
    )


def _records(records: dict) -> dict[str, list]:
    return {
        p: r
        for p, r in records.items()
        if isinstance(p, str)
        and type(r) is list
        and len(r) == 7
        and type(r[0]) is int  # no generator per record: thousands are checked per run
        and type(r[1]) is int
        and type(r[2]) is int
        and type(r[3]) is int
        and isinstance(r[4], str)
        and (r[5] is None or isinstance(r[5], str))
        and (r[6] is None or type(r[6]) is dict)
    }


def _load(path: str) -> tuple[dict[str, list], dict[str, list], dict[str, list], dict[str, str]]:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:  # missing: every file is hashed again
        return {}, {}, {}, {}
    return decode_all(data)
