"""A project none of whose modules puts anything on a GPU (``ProjectView.moves_nothing``).

The fact is the whole project's: every module holds none of gpu_moves.py's
device calls and imports none of its frameworks (a module with a training
word, by its summary; one without, by its text's words). A model and a
checkpoint of such a project are on the CPU, so ``torch.load`` makes no GPU
copy (MEM701, torchMoji).

What a view read to tell is noted as the view's reads (its cache entry's
dependencies, project/states.py): a verdict of "moves" depends on the one
module found moving; "moves nothing" on every module of the project (any one
may start moving: its summary's ``gpu_moves`` changes, so the edit is seen).
The modules are read moving-likely first (a ``.cuda(``, then a ``.to(``, in
the text), so that a project that moves, nearly every one, costs a few reads.
"""

from __future__ import annotations

from typing import Any

from memlint.project.gpu_moves import may_move

# Words of a text that make its module likely to move something, most
# likely first: such modules are read first (a module only spelling
# ``torch.device`` or ``cuda`` in a docstring is read last, rarely at all).
_LIKELY = ((b".cuda(",), (b".to(", b"DataParallel"))


def _rank(data: bytes) -> int:
    return next((i for i, words in enumerate(_LIKELY) if any(w in data for w in words)), len(_LIKELY))


def moves_nothing(index: Any) -> tuple[bool, tuple[str, ...]]:
    """Whether no module of ``index``'s project (a ProjectIndex) may put
    anything on a GPU, and the files the answer depends on."""
    pending: list[tuple[int, str]] = []
    files = sorted(index.modules.files)
    for path in files:
        data = index.source_bytes(path)
        if may_move(data):
            pending.append((_rank(data), path))
    for _later, path in sorted(pending):
        summary = index.full_summary(path)
        if summary is None or summary.gpu_moves:  # a module without a training word: its words count
            return False, (path,)
    return True, tuple(files)
