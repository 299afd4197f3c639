"""The project classes a module's classes derive from whose modules write
every model state they save from the CPU: a subclass loads what its family
saves.

cszn/KAIR: ``models/model_base.py``'s ``ModelBase.save_network`` moves
every entry of a network's state dict ``.cpu()`` before ``torch.save`` (its
``save_optimizer`` saves ``optimizer.state_dict()`` from the GPU, read only
by ``load_optimizer``); ``models/model_vrt.py``'s ``ModelVRT(ModelPlain)``,
``ModelPlain(ModelBase)`` in ``models/model_plain.py``, overrides
``load_network``: ``network.load_state_dict(torch.load(load_path))``. The
path is a parameter, so no file name ties the load to a writer
(checkpoint_links.py); the class does: the checkpoints it reads back are
the ones its family writes, as a module that saves only CPU states reads
its own back (cpu_saves.py).

``cpu_saving_bases(index, path, summary)``: the bases ``path``'s classes
import (summary.subclassed, as the imports spell them) whose family (that
base's module, then the modules of the project bases its module imports,
transitively) holds at least one save of a model's state and none that may
not be on the CPU (summary.model_saves). A module of the family the index
cannot read, or a family larger than ``_MAX_FAMILY`` modules: no answer.
"""

from __future__ import annotations

_MAX_FAMILY = 16


def cpu_saving_bases(index, path: str, summary, known: dict[str, tuple[bool, frozenset[str]]]) -> tuple[str, ...]:
    """``known``: the verdicts already reached per base module, with the
    modules each read (noted again for the view that reuses it)."""
    if not summary.subclassed or summary.model_saves == "other":
        return ()
    found = []
    for spelled in dict.fromkeys(summary.subclassed):
        target = index.resolve(spelled, path)
        if target is None or not target[1] or target[0] == path:
            continue
        verdict = known.get(target[0])
        if verdict is None:
            verdict = known[target[0]] = _family_saves_cpu(index, target[0])
        else:
            for module in verdict[1]:
                index._note_read(module)
        if verdict[0]:
            found.append(spelled)
    return tuple(found)


def _family_saves_cpu(index, start: str) -> tuple[bool, frozenset[str]]:
    seen = {start}
    todo = [start]
    saved = False
    while todo:
        module = todo.pop()
        held = index.full_summary(module)
        if held is None or held.model_saves == "other":
            # Unknown (it may write a model's state from the GPU), or it does.
            return False, frozenset(seen)
        saved = saved or held.model_saves == "cpu"
        for spelled in held.subclassed:
            target = index.resolve(spelled, module)
            if target is not None and target[1] and target[0] not in seen:
                if len(seen) >= _MAX_FAMILY:
                    return False, frozenset(seen)
                seen.add(target[0])
                todo.append(target[0])
    return saved, frozenset(seen)
