"""Every name a module's star imports may bring, when the project knows them all.

``from bts_dataloader import *`` binds what bts_dataloader.py binds at module
level (its ``__all__``, or its names without a leading underscore), and what
its own star imports bring: all of it in the summaries (``imports``,
``defines``, ``stars``, ``all_names``). A name none of them binds is not
brought by the star import, so a module that binds it no other way cannot
run the line that uses it as written (``BtsModel`` of bts_test.py, bound
only by ``vars()[key] = val`` from a module named at run time): MEM701 reads
a model built from it as it reads one built from an undefined name (state_loads.py
``_undefined``), whether or not the module star-imports something.

The set is known only when every star import, followed through the star
imports of the modules it reaches (at most ``hops`` deep), is a project
module with a summary whose module-level names are all listed: no loop,
``with`` or ``match`` at module level (summary.open_names). A name bound
otherwise by a star source (``globals()[k] = v``, ``exec``) is missed: read
as undefined, it makes the rule silent, never louder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from memlint.project.summary import ModuleSummary


def star_names(
    path: str,
    summary: Callable[[str], ModuleSummary | None],
    sources: Callable[[str], list[str]],
    exports: Callable[[str], Mapping[str, object]],
    hops: int,
) -> tuple[str, ...] | None:
    """The names ``path``'s star imports bring, sorted; None when one of them
    (or of their own, ``hops`` deep) is not a project module whose
    module-level names the summary lists. ``sources``: the project modules a
    module's star imports resolve to; ``exports``: what ``from <module>
    import *`` binds, by name (index.ProjectIndex._exports)."""
    own = summary(path)
    if own is None or not own.stars:
        return None
    if not _all_closed(path, own, summary, sources, hops):
        return None
    found: set[str] = set()
    for source in sources(path):
        found.update(exports(source))
    return tuple(sorted(found))


def _all_closed(
    path: str,
    own: ModuleSummary,
    summary: Callable[[str], ModuleSummary | None],
    sources: Callable[[str], list[str]],
    hops: int,
) -> bool:
    """Each star import of ``path`` resolves to a project module whose
    names are all listed, and so does each of theirs, ``hops`` deep."""
    todo = [(path, own, 0)]
    seen = {path}
    while todo:
        where, held, depth = todo.pop()
        found = sources(where)
        if len(found) != len(held.stars):
            return False  # a star import of a library, or of nothing the project holds
        for source in found:
            if source in seen:
                continue
            seen.add(source)
            read = summary(source)
            if read is None or read.open_names or (read.stars and depth + 1 >= hops):
                return False
            if read.stars:
                todo.append((source, read, depth + 1))
    return True
