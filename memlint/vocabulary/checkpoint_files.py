"""Checkpoint file names as a path spells them (``osp.join(d, "model_final.pth")``):
what links a module that saves a checkpoint to one that loads it (MEM701,
project/checkpoint_files.py)."""

from __future__ import annotations

_EXTENSIONS = (".pth", ".pt", ".ckpt", ".tar", ".bin", ".pkl", ".pickle", ".model")


def file_name(value: object) -> str | None:
    """The file name of a string that names a checkpoint file, else None."""
    if not isinstance(value, str) or not value.lower().endswith(_EXTENSIONS):
        return None
    name = value.replace("\\", "/").rsplit("/", 1)[-1]
    return name if len(name) > 1 and "{" not in name else None
