"""Reading source files the way Python does, and writing them back byte-exact.

The decoded text keeps its newlines untranslated (libcst round-trips them), and
``SourceFile.encode`` restores the original encoding and BOM, so everything
outside an edited span is preserved byte for byte.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import os
import tokenize
from dataclasses import dataclass


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
            raise SourceError("not valid UTF-8 and no PEP 263 encoding declaration") from None
        raise SourceError(f"bad encoding declaration: {exc}") from None
    bom = data.startswith(codecs.BOM_UTF8)
    body = data[len(codecs.BOM_UTF8):] if bom else data
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    try:
        text = body.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        reason = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
        where = f" at byte {exc.start}" if isinstance(exc, UnicodeDecodeError) else ""
        if encoding == "utf-8" and not _has_cookie(data):
            raise SourceError(f"not valid UTF-8{where} ({reason}) and no PEP 263 encoding declaration") from None
        raise SourceError(f"cannot decode as {encoding}{where}: {reason}") from None
    return SourceFile(path=path, text=text, encoding=encoding, bom=bom, digest=digest)


def _has_cookie(data: bytes) -> bool:
    import re

    head = data.split(b"\n", 2)[:2]
    return any(re.match(rb"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+", line) for line in head)


def read_source(path: str) -> SourceFile:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise SourceError("no such file") from None
    except IsADirectoryError:
        raise SourceError("is a directory") from None
    except PermissionError:
        raise SourceError("permission denied") from None
    except OSError as exc:
        raise SourceError(exc.strerror or str(exc)) from None
    return decode_source(data, path)


def write_atomic(source: SourceFile, text: str) -> None:
    """Replace ``source.path`` with ``text`` atomically, keeping mode bits.

    Refuses when the file changed on disk since it was read. The temporary file
    lives in the same folder so the final rename never crosses filesystems.
    """
    import tempfile

    target = os.path.realpath(source.path)
    try:
        with open(target, "rb") as fh:
            current = fh.read()
    except OSError as exc:
        raise SourceError(f"cannot re-read before writing: {exc.strerror or exc}") from None
    if hashlib.sha256(current).hexdigest() != source.digest:
        raise SourceError("file changed on disk since it was read; not written")
    if not os.access(target, os.W_OK):
        raise SourceError("file is read-only; not written")
    folder = os.path.dirname(target) or "."
    mode = os.stat(target).st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=".memlint-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(source.encode(text))
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
