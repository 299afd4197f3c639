"""The state of a project: every file and the digest of its bytes.

Equal states give equal views, so a findings-cache entry linted with a view
in this state is reused without building the project's index
(runner._second_pass). Kept apart from index.py: a warm run computes the
state, and must not import the summaries' machinery to do it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable

from memlint.project.modules import project_files
from memlint.read.source import read_bytes


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def project_state(root: str, digests: dict[str, str]) -> str | None:
    """A digest of every file of the project at ``root`` and its bytes
    (``digests``: those already known, by absolute path; the others are
    read). Equal states give equal views, so a cached entry made in this
    state is reused without building the index; None for too large a folder."""
    manifest = project_manifest(root, digests)
    return state_of(manifest) if manifest is not None else None


def project_manifest(
    root: str,
    digests: dict[str, str],
    read: Callable[[str], str | None] | None = None,
    walk: Callable[[str, int], list[str] | None] | None = None,
) -> dict[str, str] | None:
    """Every file of the project at ``root`` (relative to it, in the walk's
    order) and the digest of its bytes (project_state's ``digests``; the
    others from ``read``, the warm index's, which trusts an unchanged stat,
    else read and hashed). ``walk``: project_files or the warm index's,
    which trusts an unchanged stat of every folder the last walk listed."""
    from memlint.project.roots import root_limit

    root = os.path.abspath(root)
    files = (walk or project_files)(root, root_limit(root))
    if files is None:
        return None
    prefix = root.rstrip(os.sep) + os.sep
    out = {}
    for f in files:  # under ``root`` as the walk joined them: already absolute and normal
        digest = digests.get(f)
        if digest is None:
            digest = read(f) if read is not None else _read_digest(f)
        out[f[len(prefix) :] if f.startswith(prefix) else os.path.relpath(f, root)] = digest or "-"
    return out


def _read_digest(path: str) -> str | None:
    data = read_bytes(path)
    return None if data is None else digest_of(data)


def state_of(manifest: dict[str, str]) -> str:
    h = hashlib.sha256()
    for rel, digest in manifest.items():
        h.update(f"{rel}\0{digest}\0".encode("utf-8", "surrogateescape"))
    return h.hexdigest()
