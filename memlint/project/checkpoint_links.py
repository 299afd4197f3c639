"""The writers of a checkpoint a module loads when none of its own folder
writes it: modules of other folders linked to it by an import.

A relative path names a file of the working folder, and two modules run in
one process share it: ``models/memo.py`` saves
``"{}_{}.pkl".format("checkpoints/finetune_" + name, task)`` from a
``copy.deepcopy(net)`` it moved ``.cpu()``, and imports ``utils/inc_net.py``,
whose ``load_checkpoint`` reads ``f"checkpoints/finetune_{name}_0.pkl"``
(the tenth batch's PyCIL). A folder's own writers decide its loads
(index._cpu_saved_files: scripts side by side); only a load with none is
linked so, and then every module of the project that may write the file
counts, linked or not: the load holds CPU tensors only when all of them save
CPU state. No import link between the load and some writer: unknown writer,
no answer (the load stays reported)."""

from __future__ import annotations

import os
from collections.abc import Callable

from memlint.vocabulary.checkpoint_files import may_name_same

# (folder, file name) -> [(module, saved from a CPU state)], as index._savers.
Savers = dict[tuple[str, str], list[tuple[str, bool]]]


def may_write(saved: str, name: str) -> bool:
    """A saver's file name (or pattern) may name the file ``name`` reads."""
    return saved == name or (("*" in saved or "*" in name) and may_name_same(saved, name))


def linked_writers(
    reader: str,
    name: str,
    savers: Savers,
    imported: Callable[[str], frozenset[str]],
) -> list[tuple[str, bool]]:
    """Every writer in the project of a file ``name`` may read, when one of
    them, in another folder, imports ``reader``'s module or is imported by
    it (``imported(path)``: the project files ``path`` imports); else []."""
    writers = [w for (_folder, saved), found in savers.items() if may_write(saved, name) for w in found]
    folder = os.path.dirname(reader)
    mine = imported(reader)
    for other, _cpu in writers:
        if os.path.dirname(other) != folder and (other in mine or reader in imported(other)):
            return writers
    return []


def import_reader(index) -> Callable[[str], frozenset[str]]:
    """``imported(path)`` for linked_writers over a ProjectIndex: the project
    files ``path``'s imports name, as written (``from utils.inc_net import
    AdaptiveNet``: utils/inc_net.py) and, through a package's re-export, where
    the name is defined. Each module read once per call of its user."""
    known: dict[str, frozenset[str]] = {}

    def imported(path: str) -> frozenset[str]:
        found = known.get(path)
        if found is None:
            held = index._neighbour(path)
            imports = held.get("imports", {}) if isinstance(held, dict) else held.imports if held else {}
            files = set()
            extra = index._sys_paths(path)
            for value in imports.values():
                for target in (index.modules.resolve(value, path, extra), index.resolve(value, path)):
                    if target is not None:
                        files.add(target[0])
            found = known[path] = frozenset(files)
        return found

    return imported
