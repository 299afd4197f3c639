"""An edited file whose view did not move, settled without the project's index.

A file that waits for its view only because of a card's project part
(``project_matters``: MEM802 on a module with a loop, a project import and
a bare method call in a loop, without a ``.step()`` of its own) is settled in the parent once the view is
known (second_pass.settle): most of transformers' and timm's model files
are, and their view rules every waiting rule out. Editing such a file (a
comment, a line inside a function) lints it again, and settling it asked for
its view: the project's index, built from ~1,900 summaries (bert: ~5 s CPU
against 0.3 s for the rest of the re-lint).

Its view is the one its last report was settled with when the file's
summary did not change and no other changed file touches what that view
read (project/states.py: the same judgement as for a cache hit made with a
view, runner._unaffected). The warm index keeps what settle asked of each
view (second_pass.matters_of, by the view's digest), so the new screening
is settled with those answers; a file left with a rule to run, or any doubt
(no record of the last report, of its view's answers, of its state's
manifest, a file added or removed), builds the index as before.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memlint.project.states import Changes
    from memlint.run.results import FileReport, Settings


def changes(
    paths: list[str],
    reports: list[FileReport | None],
    warm: Any,
    per_file: list[Settings],
    cache_key: Callable[[Any, str, str, Settings], str],
) -> Changes:
    """The run's judge of which changed files a view may see; a checked
    module whose summary now is its old entry's is not counted. ``warm``:
    the runner's _Warm; ``cache_key``: its key of a file's entry."""
    from memlint.project.states import Changes, StateStore

    cache = warm.cache
    where = {os.path.abspath(p): i for i, p in enumerate(paths)}

    def same_summary(path: str, old_digest: str) -> bool:
        i = where.get(path)
        report = reports[i] if i is not None else None
        if i is None or report is None:
            return False
        now = warm.summary_json(i, paths[i], report)
        old = cache.load(paths[i], cache_key(cache, paths[i], old_digest, per_file[i]))
        then = old.summary_json if old is not None else None
        return (
            now is not None and then is not None and json.dumps(now, sort_keys=True) == json.dumps(then, sort_keys=True)
        )

    return Changes(StateStore(cache.directory), same_summary)


def settle_edited(
    paths: list[str],
    candidates: list[int],
    reports: list[FileReport | None],
    projects: dict[str, tuple[str, str | None, dict[str, str] | None]],
    warm: Any,
    judge: Changes,
) -> dict[int, tuple[str, tuple[str, ...]]]:
    """Of ``candidates`` (waiting files linted by this run's first pass),
    those whose last view still holds and settles every rule left: index ->
    (the view's digest, the files it read)."""
    from memlint.project.states import module_names
    from memlint.run.second_pass import settle_known

    out: dict[int, tuple[str, tuple[str, ...]]] = {}
    for i in candidates:
        report = reports[i]
        first = report.screened if report is not None else None
        if report is None or first is None or first.digest != report.digest or report.summary is None:
            continue
        root, state, manifest = projects.get(paths[i], ("", None, None))
        old_key = warm.index.last_settled(warm.absolute[i])
        if state is None or manifest is None or old_key is None or i not in warm.keys:
            continue
        # Its entry (the bytes it had then): the view, its state, its reads.
        entry = warm.cache.load(paths[i], old_key)
        if entry is None or entry.project is None or entry.project_state is None or entry.deps is None:
            continue
        matters = warm.index.verdict(entry.project)
        if matters is None or settle_known(first, matters):
            continue  # unknown answers, or a rule to run with the view itself
        names = module_names(report.summary.to_json())
        if judge.still_holds(root, entry.project_state, state, manifest, entry.deps, names):
            out[i] = (entry.project, entry.deps)
    return out
