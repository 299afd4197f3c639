"""Checkpoint file names as a path spells them (``osp.join(d, "model_final.pth")``):
what links a module that saves a checkpoint to one that loads it (MEM701,
project/checkpoint_files.py)."""

from __future__ import annotations

import re

_EXTENSIONS = (".pth", ".pt", ".ckpt", ".tar", ".bin", ".pkl", ".pickle", ".model")


def file_name(value: object) -> str | None:
    """The file name of a string that names a checkpoint file, else None."""
    if not isinstance(value, str) or not value.lower().endswith(_EXTENSIONS):
        return None
    name = value.replace("\\", "/").rsplit("/", 1)[-1]
    return name if len(name) > 1 and "{" not in name else None


def may_name_same(a: str, b: str) -> bool:
    """Two file names, either a pattern whose ``*`` stands for any text
    (``*_*.pkl`` from ``"{}_{}.pkl".format(...)``), that may name the same
    file: one, its fields filled with a word, matches the other."""
    return _matches(a, b) or _matches(b, a)


def _matches(pattern: str, name: str) -> bool:
    regex = ".*".join(re.escape(part) for part in pattern.split("*"))
    return re.fullmatch(regex, name.replace("*", "x")) is not None
