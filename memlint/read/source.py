"""Reading source files the way Python does, and writing them back byte-exact.

The decoded text keeps its newlines untranslated (libcst round-trips them), and
``SourceFile.encode`` restores the original encoding and BOM, so everything
outside an edited span is preserved byte for byte.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import io
import os
import signal
import stat
import threading
import tokenize
from dataclasses import dataclass

# Beyond this, libcst needs minutes and gigabytes for one file (measured: a
# 6 MB module took over 10 minutes and 3.5 GB); such files are generated, and
# skipping them with a message beats a run that never ends.
MAX_FILE_BYTES = 5 * 1024 * 1024


class SourceError(Exception):
    """A file that cannot be linted; the message names the reason."""


@dataclass(frozen=True)
class SourceFile:
    path: str
    text: str
    encoding: str
    bom: bool
    digest: str  # sha256 of the bytes read, to detect changes before writing

    def encode(self, text: str) -> bytes:
        data = text.encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data


def decode_source(data: bytes, path: str = "<string>") -> SourceFile:
    digest = hashlib.sha256(data).hexdigest()
    if b"\x00" in data:
        raise SourceError("binary file (contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if "invalid or missing encoding declaration" in str(exc):
            where = _bad_utf8_position(data)
            raise SourceError(f"not valid UTF-8{where} and no PEP 263 encoding declaration") from None
        if "encoding problem: utf-8" in str(exc) and data.startswith(codecs.BOM_UTF8):
            raise SourceError("bad encoding declaration: it contradicts the UTF-8 byte order mark") from None
        if "unknown encoding" not in str(exc) or _bad_utf8_position(data):
            raise SourceError(f"bad encoding declaration: {exc}") from None
        # A codec the project installs for itself (``future_fstrings``,
        # ``future_annotations``: they rewrite newer syntax for older Pythons)
        # over bytes that are UTF-8 anyway: read them as UTF-8, which is what
        # the codec decodes them as; written back as UTF-8, byte for byte.
        encoding = "utf-8"
    bom = data.startswith(codecs.BOM_UTF8)
    body = data[len(codecs.BOM_UTF8) :] if bom else data
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    try:
        text = body.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        reason = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
        where = _position(body, exc.start) if isinstance(exc, UnicodeDecodeError) else ""
        if encoding == "utf-8" and not _has_cookie(data):
            raise SourceError(f"not valid UTF-8{where} ({reason}) and no PEP 263 encoding declaration") from None
        raise SourceError(f"cannot decode as {encoding}{where}: {reason}") from None
    return SourceFile(path=path, text=text, encoding=encoding, bom=bom, digest=digest)


def _position(data: bytes, offset: int) -> str:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f" at byte {offset} (0x{data[offset]:02x}, line {line} column {column})"


def _bad_utf8_position(data: bytes) -> str:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _position(data, exc.start)
    return ""


def _has_cookie(data: bytes) -> bool:
    import re

    head = data.split(b"\n", 2)[:2]
    return any(re.match(rb"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+", line) for line in head)


def read_bytes(path: str, limit: int | None = MAX_FILE_BYTES) -> bytes | None:
    """The bytes of ``path``; None when it cannot be read. The project stage
    reads modules it only peeks into: an unreadable one is unknown, which is
    silent, and ``read_source`` reports it where it is linted. Only regular
    files are opened, and none past ``limit`` bytes (the linted size): a FIFO
    named ``*.py`` beside a checked file must not hang the project stage."""
    try:
        with open(path, "rb", opener=_open_regular) as fh:
            data = fh.read() if limit is None else fh.read(limit + 1)
    except (OSError, SourceError):
        return None
    return None if limit is not None and len(data) > limit else data


def read_source(path: str) -> SourceFile:
    try:
        with open(path, "rb", opener=_open_regular) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > MAX_FILE_BYTES:
                raise SourceError(_too_large(size))
            data = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        if os.path.islink(path):
            raise SourceError("broken symbolic link (its target does not exist)") from None
        raise SourceError("no such file") from None
    except IsADirectoryError:
        raise SourceError("is a directory") from None
    except PermissionError:
        raise SourceError("permission denied") from None
    except OSError as exc:
        raise SourceError(exc.strerror or str(exc)) from None
    if len(data) > MAX_FILE_BYTES:  # it grew while being read
        raise SourceError(_too_large(len(data)))
    return decode_source(data, path)


def _too_large(size: int) -> str:
    return (
        f"file is too large to analyse ({size / 1e6:.1f} MB, limit {MAX_FILE_BYTES // (1024 * 1024)} MB); "
        "skipped (exclude it, e.g. with extend-exclude)"
    )


def _open_regular(path: str, flags: int) -> int:
    """Open without blocking, and only regular files: a FIFO or a device
    named ``*.py`` would otherwise hang the run or stream forever."""
    fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "is a directory" if stat.S_ISDIR(mode) else "not a regular file (a FIFO, socket or device)"
            raise SourceError(kind)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_atomic(source: SourceFile, text: str) -> None:
    """Replace ``source.path`` with ``text`` atomically, keeping mode bits.

    Refuses when the file changed on disk since it was read, or is read-only.
    The temporary file lives in the same folder so the final rename never
    crosses filesystems; SIGINT and SIGTERM wait until the rename (or the
    clean-up) is done, so a killed run leaves the old file or the new one and
    no temporary file.
    """
    import tempfile

    target = os.path.realpath(source.path)
    try:
        data = source.encode(text)
    except UnicodeEncodeError as exc:
        reason = f"the fixed text cannot be encoded as {source.encoding} ({exc.reason}); not written"
        raise SourceError(reason) from None
    try:
        with open(target, "rb") as fh:
            current = fh.read()
        info = os.stat(target)
    except OSError as exc:
        raise SourceError(f"cannot re-read before writing: {exc.strerror or exc}") from None
    if hashlib.sha256(current).hexdigest() != source.digest:
        raise SourceError("file changed on disk since it was read; not written")
    # os.access alone says yes to root; a file with no write bit is read-only
    # for everyone here (the rename would replace it regardless).
    if not os.access(target, os.W_OK) or not info.st_mode & 0o222:
        raise SourceError("file is read-only; not written")
    folder = os.path.dirname(target) or "."
    with _signals_deferred():
        try:
            fd, tmp = tempfile.mkstemp(prefix=".memlint-", suffix=".tmp", dir=folder)
        except OSError as exc:
            raise SourceError(f"cannot create a file in its folder ({exc.strerror or exc}); not written") from None
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, stat.S_IMODE(info.st_mode))
            _keep_owner(tmp, info)
            os.replace(tmp, target)
        except BaseException as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            if isinstance(exc, OSError):
                raise SourceError(f"cannot write ({exc.strerror or exc}); not written") from None
            raise


def _keep_owner(path: str, info: os.stat_result) -> None:
    """Only root can give a file away: keep a user's file theirs when root fixes it."""
    if hasattr(os, "chown") and (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
        try:
            os.chown(path, info.st_uid, info.st_gid)
        except OSError:
            pass


_DEFERRED = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextlib.contextmanager
def _signals_deferred():
    """Hold back SIGINT/SIGTERM/SIGHUP for the few system calls of a write;
    they are delivered (and their handlers run) as soon as it is done.

    A signal mask covers only the calling thread: in a process with other
    threads (the language server, pytest-xdist's workers) the kernel hands a
    process-wide signal to a thread that does not block it, and the handler
    then runs mid-write. So the main thread also swaps in handlers that only
    record what arrived, and raises it again once the file is in place."""
    if threading.current_thread() is not threading.main_thread():
        with _signals_masked():
            yield
        return
    arrived: list[int] = []
    # A handler installed outside Python reads as None and cannot be put back.
    previous = {signum: signal.getsignal(signum) for signum in _DEFERRED}
    previous = {signum: handler for signum, handler in previous.items() if handler is not None}
    for signum in previous:
        signal.signal(signum, lambda signum, _frame: arrived.append(signum))
    try:
        with _signals_masked():
            yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(arrived):
            signal.raise_signal(signum)


@contextlib.contextmanager
def _signals_masked():
    if not hasattr(signal, "pthread_sigmask"):  # Windows: best effort only
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _DEFERRED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def write_inside_tree(source: SourceFile, text: str, root: str) -> None:
    """Write ``text`` over ``source`` unless a symlink leads it out of the tree
    it was found in (the project ``root``)."""
    target = _link_leaving_tree(source.path, root)
    if target is not None:
        raise SourceError(f"symlink points outside the project ({target}); not written")
    write_atomic(source, text)


def _link_leaving_tree(path: str, root: str) -> str | None:
    """The real path when a symlink (the file itself or a folder on its way)
    leads out of the tree it was found in, else None. The tree is the project
    root, or the file's own folder when the path was named outside the root."""
    absolute = os.path.abspath(path)
    real = os.path.realpath(path)
    if real == absolute:
        return None
    if _inside(absolute, os.path.abspath(root)):
        tree = os.path.realpath(root)
    else:
        tree = os.path.realpath(os.path.dirname(absolute))
    return None if _inside(real, tree) else real


def _inside(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # different drives on Windows
        return False
