"""Run check / fix / diff over many files, in parallel worker processes.

Workers receive paths and settings, and return plain data (findings without
libcst nodes), so nothing heavy crosses process boundaries.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from memlint.parse.collector import collector_paused
from memlint.parse.errors import ParseError
from memlint.read.source import SourceError, read_source, write_inside_tree
from memlint.run.cache import FindingsCache, file_digest
from memlint.run.results import FileReport, Settings, unified_diff
from memlint.run.selection import Layer, select_layers

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

    from memlint.gate.cards import Card
    from memlint.project.states import Changes
    from memlint.project.summary import ModuleSummary
    from memlint.project.view import ProjectView
    from memlint.run.second_pass import Screened

# Below this many files the cost of starting workers outweighs the gain.
PARALLEL_THRESHOLD = 16
# The second pass's files are past the gate (a rule asked for the project):
# libcst on each, the largest files of the project (transformers' trainer.py,
# modeling_utils.py...). A few already fill the workers; one at a time they
# left the other cores idle at the end of a cold run.
SECOND_PASS_THRESHOLD = 4


@lru_cache(maxsize=64)
def rules_for(settings: Settings, ignore_extra: tuple[str, ...]):
    from memlint.rule.registry import rules_by_code

    by_code = rules_by_code()
    return tuple(
        by_code[c] for c in _select(settings, ignore_extra, {c: r.default_enabled for c, r in by_code.items()})
    )


@lru_cache(maxsize=64)
def codes_for(settings: Settings, ignore_extra: tuple[str, ...]) -> tuple[str, ...]:
    """rules_for's codes, without importing a rule (the cache key)."""
    return tuple(_select(settings, ignore_extra, None))


@lru_cache(maxsize=64)
def cards_for(settings: Settings, ignore_extra: tuple[str, ...]) -> tuple[Card, ...]:
    """rules_for's cards (gate/cards.py): the screening without importing a rule."""
    # Imported here: a warm run screens no file and never needs the gate.
    from memlint.gate.cards import CARDS

    return tuple(CARDS[code] for code in codes_for(settings, ignore_extra))


def _select(settings: Settings, ignore_extra: tuple[str, ...], codes: dict[str, bool] | None) -> list[str]:
    """The config's layer, the command line's, then the file's per-file ignores
    (which always remove, whatever was selected: ruff's per-file-ignores)."""
    layers: list[Layer] = [(settings.select, settings.extend_select, settings.ignore), settings.override]
    if ignore_extra:
        layers.append((None, (), ignore_extra))
    return select_layers(layers, codes)


def per_file_ignored(path: str, settings: Settings) -> tuple[str, ...]:
    if not settings.per_file_ignores:
        return ()
    from pathlib import Path

    from memlint.find.discovery import is_excluded

    codes: list[str] = []
    for pattern, pattern_codes in settings.per_file_ignores:
        if is_excluded(path, [pattern], Path(settings.root)):
            codes.extend(pattern_codes)
    return tuple(sorted(set(codes)))


class NeedsProject(Exception):
    """A rule of this file reads its project: the lint waits for the view."""


# process_file's ``view`` before the project's index exists (the first pass).
DEFER = "defer"


def process_file(
    path: str, settings: Settings, view: ProjectView | str | None = DEFER, first: Screened | None = None
) -> FileReport:
    """Check, fix or diff one file. In check mode, ``view`` is the file's
    project view, or DEFER: a file whose rules read the project is then
    returned ``deferred`` (with its summary and its screening, ``screened``)
    for the runner to lint again once every summary of the project is known;
    ``first``: that screening, settled with the view (second_pass.py), so
    the file is not summarised and screened again. Fix, diff and add-noqa
    read the project from disk (project/index.py)."""
    # libcst, the analyses and the rules are imported only for a file that
    # some rule's card lets through (lint/screen.py): a warm run, and a file
    # no rule can report anything in, never import them.
    from memlint.parse.budget import BudgetExceeded

    report = FileReport(path=path)
    try:
        ignored = per_file_ignored(path, settings)
        if path.endswith(".ipynb"):
            from memlint.run.notebook import process_notebook

            return process_notebook(path, settings, rules_for(settings, ignored), view)
        source = read_source(path)
        report.digest = source.digest
        try:
            _process_text(source, settings, ignored, report, project_view=view, first=first)
        except ParseError as exc:
            from memlint.run.script import view_maker

            view_of = view_maker(source.text, exc)
            if view_of is None:
                raise
            try:
                _process_text(source, settings, ignored, report, view_of, project_view=view)
            except ParseError:
                raise exc from None  # the file's own error says more than the view's
    except (SourceError, ParseError) as exc:
        report.error = str(exc)
        report.findings, report.fixed = [], []
    except BudgetExceeded as exc:  # never cached: it depends on the machine, not the bytes
        report.error = exc.reason
        report.findings, report.fixed = [], []
    except RecursionError:
        report.error = "file is nested too deeply to analyse"
    except Exception as exc:  # an internal error in one file must not stop the run
        report.error = f"internal error: {type(exc).__name__}: {exc}"
        report.findings, report.fixed = [], []
    return report


def _process_text(
    source,
    settings: Settings,
    ignored: tuple[str, ...],
    report: FileReport,
    view_of=None,
    project_view: ProjectView | str | None = DEFER,
    first: Screened | None = None,
) -> None:
    """Check, fix or silence one .py file's text; ``view_of``: read it through
    a view (memlint.run.script), when its own text does not parse.
    ``ignored``: the file's per-file ignores."""
    path = source.path
    view = view_of(source.text) if view_of is not None else None
    torch = settings.torch_for(path)  # the project's torch range (migration rules)
    if settings.mode == "check":
        if view is None and first is not None and project_view != DEFER and first.digest == source.digest:
            _check_settled(source.text, path, ignored, report, settings, project_view, first, torch)  # type: ignore[arg-type]
            return
        if view is None:
            # The index's text of a file is its bytes decoded as UTF-8 (index._text).
            utf8 = source.encoding == "utf-8" and path.endswith(".py")
            _check_with_project(source.text, path, ignored, report, settings, project_view, torch, utf8)
            return
        _check_view(view, source.text, path, ignored, report, settings, project_view, torch)
        return
    from memlint.lint.screen import screen

    if view is None and not screen(source.text, cards_for(settings, ignored))[0]:
        return  # no rule can report anything here: nothing to fix or silence
    rules = rules_for(settings, ignored)
    from memlint.fix.fixer import detach, fix_text
    from memlint.lint.add_noqa import add_noqa
    from memlint.lint.engine import lint
    from memlint.project.index import view_from_disk

    def from_disk() -> ProjectView | None:
        return view_from_disk(path)

    if settings.mode == "add-noqa":
        text = view.text if view is not None else source.text
        findings, module = lint(text, path, rules, torch=torch, project=from_disk)
        new_text, report.noqa_added = add_noqa(text, [(f.line, f.code) for f in findings])
        if view is not None and report.noqa_added:
            restored = view.restore(new_text)
            if restored is None:
                raise SourceError(f"cannot add noqa comments: {view.why_unfixable}")
            new_text = restored
        if report.noqa_added:
            write_inside_tree(source, new_text, settings.root)
        if report.noqa_added < len(findings):
            again = view_of(new_text) if view_of is not None else None
            if again is not None:
                from memlint.run.script import lint_view

                report.findings, report.notes = lint_view(again, path, rules, False)
            else:
                findings, module = lint(new_text, path, rules, torch=torch, project=from_disk)
                report.findings = detach(findings, module, False)
        elif view is not None:
            report.notes = [view.note]
        return
    result = fix_text(
        source.text, path, rules, unsafe=settings.unsafe_fixes, view_of=view_of, torch=torch, project=from_disk
    )
    report.findings = detach(result.remaining, None, False)
    report.fixed = detach(result.applied, None, False)
    report.moot = result.moot
    report.notes = list(result.notes)
    if result.changed:
        if settings.mode == "diff":
            report.diff = unified_diff(source, result.text)
            report.fixed_text = result.text
        else:
            write_inside_tree(source, result.text, settings.root)


def _check_with_project(
    text: str,
    path: str,
    ignored: tuple[str, ...],
    report: FileReport,
    settings: Settings,
    view,
    torch=None,
    utf8: bool = False,
) -> None:
    """Check mode: the summary and the screening from one ``ast`` tree; a file
    whose rules read the project is left ``deferred`` until its view is known.
    ``utf8``: ``text`` is the file's bytes decoded as UTF-8 (a word-less file
    then hands back its needle summary, FileReport.needle_summary)."""
    from memlint.lint.screen import screen
    from memlint.parse.guard import python_tree
    from memlint.project.summary import ModuleSummary, summarise, worth_summarising

    tree = python_tree(text) if worth_summarising(text) else None
    if tree is not None:
        report.summary = summarise(tree)
    elif worth_summarising(text):
        report.summary = ModuleSummary()  # Python cannot parse it
    with collector_paused():
        passed, tree = screen(text, cards_for(settings, ignored), tree)
    if report.summary is None and tree is not None and utf8 and view == DEFER:
        # Word-less, but the gate parsed it: the summary the index makes of a
        # module that may call into the viewed ones (summarise_text(text,
        # always=True)), from this tree rather than from the disk in the parent.
        report.needle_summary = summarise(tree)
    if not passed:
        return  # no rule can report anything here: libcst and the rules stay unimported
    if view == DEFER and ("import *" in text or any(card.reads_project for card in passed)):
        # lint() would ask for the view first (engine.with_project: a star
        # import or a rule reading the project) and be deferred: deferred
        # here, before libcst and the rules are imported (an edit of a file
        # then settled with its last view never imports them: kept_views.py).
        _defer(text, report, passed, tree)
        return
    from memlint.fix.covered_fixes import with_covering_fixes
    from memlint.fix.fixer import detach
    from memlint.lint.engine import lint

    rules = rules_for(settings, ignored)
    by_code = {rule.code: rule for rule in rules}
    active = [by_code[card.code] for card in passed]
    used: list[ProjectView | None] = []

    def project() -> ProjectView | None:
        if view == DEFER:
            raise NeedsProject
        used.append(view)  # type: ignore[arg-type]
        return view  # type: ignore[return-value]

    try:
        findings, module = lint(text, path, rules, python_tree=tree, torch=torch, project=project, active=active)
        findings = with_covering_fixes(findings, module, path, rules, torch=torch, project=project)
    except NeedsProject:
        _defer(text, report, passed, tree)
        return
    report.findings = detach(findings, module, settings.with_edits)
    if used and used[0] is not None:
        report.project = used[0].digest()


def _check_view(
    view, text: str, path: str, ignored: tuple[str, ...], report: FileReport, settings: Settings, project_view, torch
) -> None:
    """Check mode for a file read through a view (run/script.py), with its
    project as any module has it: a rule that reads the project leaves the
    report ``deferred`` (no screening handed over: the second pass lints the
    view again with the view of the project)."""
    from memlint.parse.guard import python_tree
    from memlint.project.summary import summarise, worth_summarising
    from memlint.run.script import lint_view

    if project_view == DEFER and report.summary is None and worth_summarising(text):
        tree = python_tree(text)  # Python reads what libcst could not
        if tree is not None:
            report.summary = summarise(tree)
    used: list[ProjectView | None] = []

    def project() -> ProjectView | None:
        if project_view == DEFER:
            raise NeedsProject
        used.append(project_view)  # type: ignore[arg-type]
        return project_view  # type: ignore[return-value]

    try:
        report.findings, report.notes = lint_view(
            view, path, rules_for(settings, ignored), settings.with_edits, torch=torch, project=project
        )
    except NeedsProject:
        report.deferred = True
        return
    if used and used[0] is not None:
        report.project = used[0].digest()


def _defer(text: str, report: FileReport, passed: list[Card], tree) -> None:
    """``report`` waits for its view, with its screening for the second pass."""
    from memlint.lint import screen as screening
    from memlint.run.second_pass import screened

    report.deferred = True
    report.screened = screened(text, report.digest, passed, tree, report.summary, screening.GATE)


def _check_settled(
    text: str,
    path: str,
    ignored: tuple[str, ...],
    report: FileReport,
    settings: Settings,
    view: ProjectView | None,
    first: Screened,
    torch=None,
) -> None:
    """The second pass of a file whose first pass screened it (``first``:
    its summary and the rules left once the view was known, second_pass.settle):
    libcst and those rules only, as lint() would run them with the view."""
    from memlint.fix.covered_fixes import with_covering_fixes
    from memlint.fix.fixer import detach
    from memlint.lint.engine import lint_module, parse_module

    report.summary = first.summary
    rules = rules_for(settings, ignored)
    by_code = {rule.code: rule for rule in rules}
    with collector_paused():
        module = parse_module(text)  # its nesting guard parses with ``ast`` again: the one repeat left
        findings = lint_module(module, text, path, [by_code[c] for c in first.passed], torch=torch, project=view)
    findings = with_covering_fixes(findings, module, path, rules, torch=torch, project=view)
    report.findings = detach(findings, module, settings.with_edits)
    if view is not None:
        report.project = view.digest()


def _cache_key(cache: FindingsCache, path: str, digest: str, settings: Settings) -> str:
    return cache.key(path, digest, _key_parts(path, settings), settings.with_edits)


def _key_parts(path: str, settings: Settings) -> tuple[str, ...]:
    codes = codes_for(settings, per_file_ignored(path, settings))
    # The project's torch decides MEM501/MEM602/MEM804: editing requirements.txt
    # must not serve findings made under the old pin.
    torch = settings.torch_for(path)
    return (*codes, f"torch={torch!r}")


def _check_and_store(
    path: str,
    settings: Settings,
    cache: FindingsCache | None,
    view: ProjectView | str | None = DEFER,
    state: str | None = None,
    deps: tuple[str, ...] | None = None,
    first: Screened | None = None,
) -> FileReport:
    with collector_paused():  # --fix and --diff too, not only lint()
        # The first pass calls it as it always was (path, settings).
        if view == DEFER:
            report = process_file(path, settings)
        else:
            report = process_file(path, settings, view) if first is None else process_file(path, settings, view, first)
        _forget_trees()
    _store(report, path, settings, cache, state, deps)
    return report


def _forget_trees() -> None:
    """Free the file's ``ast`` tree, which the gate's and the nesting guard's
    one-file caches hold until the next file, while the collector is still
    paused: freed by reference counting now, it is not walked by the
    collection that follows the pause (measured: a cold check's collections
    took 6-8 % of its CPU, mostly walking the last file's tree)."""
    from memlint.parse import guard

    guard.forget_last()
    facts = sys.modules.get("memlint.gate.facts")  # imported only once a file passed the pre-filter
    if facts is not None:
        facts.forget_last()


def _store(
    report: FileReport,
    path: str,
    settings: Settings,
    cache: FindingsCache | None,
    state: str | None,
    deps: tuple[str, ...] | None,
) -> None:
    if report.project is not None:
        report.project_state, report.deps = state, deps
    if cache is not None and settings.mode == "check" and not report.deferred:
        digest = report.digest or file_digest(path)  # notebooks: hashed here
        if digest is not None:
            cache.store(_cache_key(cache, path, digest, settings), report)


def _process_chunk(
    items: list[tuple[str, Settings]], cache: FindingsCache | None = None, views: dict | None = None
) -> list[FileReport]:
    return [_check_and_store(p, s, cache, *(views[p] if views is not None else (DEFER,))) for p, s in items]


def run(
    paths: list[str],
    settings: Settings | Sequence[Settings],
    jobs: int | None = None,
    cache: FindingsCache | None = None,
    on_report: Callable[[FileReport], None] | None = None,
) -> list[FileReport]:
    """Reports in the order of ``paths``. ``settings``: one for every file, or
    each file's own (its nearest config's), in the order of ``paths``; the mode
    is the same for all. ``cache`` is used in check mode only: a file whose
    entry is found is not read by a worker at all. ``on_report`` is called as
    each file's report arrives (progress).

    Check mode runs in two passes (the project stage, memlint/project/): the
    first lints every file and returns its summary; a file whose rules read
    the project waits, and is linted in the second pass with its view, built
    from every summary of its project (those of files outside ``paths`` read
    from disk). A cached entry made with a view is used only while the view
    is unchanged."""
    done = on_report or (lambda report: None)
    per_file = [settings] * len(paths) if isinstance(settings, Settings) else list(settings)
    if len(per_file) != len(paths):
        raise ValueError("one Settings per path")
    if not per_file or per_file[0].mode != "check":
        cache = None
    reports: list[FileReport | None] = [None] * len(paths)
    todo = list(range(len(paths)))
    pending: list[int] = []  # cache hits made with a view: valid while it is unchanged
    digests: dict[str, str] = {}
    warm = _Warm(cache, paths) if cache is not None else None
    if warm is not None:
        todo = []
        for i, path in enumerate(paths):
            hit = warm.load(i, path, per_file[i], digests)
            if hit is None:
                todo.append(i)
            elif hit.project is not None:
                reports[i] = hit
                pending.append(i)
            else:
                reports[i] = hit
                done(hit)
    check = bool(per_file) and per_file[0].mode == "check"
    first = done if not check else (lambda r: None if r.deferred else done(r))
    workers = _Workers()
    # The reports, and the second pass's index and views, live to the end of
    # the run: frozen once made (_execute, _second_pass), the collections that
    # follow no longer walk them (an application's own freeze is left as it is).
    keep = check and gc.get_freeze_count() == 0
    try:
        _execute(todo, paths, per_file, cache, jobs, reports, first, None, workers, keep)
        if check:
            waiting = sorted(pending + [i for i in todo if reports[i].deferred])  # type: ignore[union-attr]
            if waiting:
                _second_pass(
                    paths, per_file, cache, jobs, reports, done, pending, waiting, digests, warm, workers, keep
                )
    finally:
        workers.close()
        if keep:
            gc.unfreeze()
    if warm is not None:
        warm.remember(paths, reports, digests)
    return reports  # type: ignore[return-value]


class _Warm:
    """The run's side of the cache: digests and reports through the warm
    index (warm_index.py), each file's key, and the entries read in full
    only when a summary is asked of a report the index held."""

    def __init__(self, cache: FindingsCache, paths: list[str]) -> None:
        self.cache = cache
        from memlint.run.warm_index import WarmIndex

        self.index = WarmIndex(cache.folder)
        self.absolute = _absolute(paths)
        self.keys: dict[int, str] = {}
        self.records: dict[int, dict] = {}  # the index's records this run used
        self.hits: dict[int, FileReport] = {}  # and the reports made of them
        self.untrusted: set[int] = set()  # linted alone after the project stage failed
        self._heads: dict[tuple[int, str], Any] = {}  # key_head's; per_file holds the Settings alive
        self._codes: dict[int, tuple[str, ...]] = {}  # codes_for(settings, ()) by the settings' identity
        self._parts: dict[tuple[int, tuple[str, ...]], Any] = {}  # key_head's by its parts

    def load(self, i: int, path: str, settings: Settings, digests: dict[str, str]) -> FileReport | None:
        full = self.absolute[i]  # every lookup below is by the absolute path
        digest = self.index.digest(full, normal=True)
        if digest is None:
            return None
        digests[full] = digest
        key = self.keys[i] = self._key(path, full, digest, settings)
        data = self.index.report(full, key, normal=True)
        if data is not None:
            from memlint.run.cache import report_from_json

            hit = report_from_json(path, data)
            if hit is not None:
                self.records[i], self.hits[i] = data, hit
                return hit
        return self.cache.load(path, key)

    def _key(self, path: str, full: str, digest: str, settings: Settings) -> str:
        """_cache_key's, with the rules and the torch range of each settings
        and folder found once (thousands of files share them), and the key's
        head hashed once per settings and torch range (a project has one or
        two: hundreds of folders share them)."""
        if settings.per_file_ignores:
            return _cache_key(self.cache, path, digest, settings)
        folder = full[: full.rfind(os.sep)] or os.sep  # os.path.dirname of an absolute, normal path
        # By the settings' identity: hashing a Settings hashes all its fields.
        head = self._heads.get((id(settings), folder))
        if head is None:
            codes = self._codes.get(id(settings))
            if codes is None:
                codes = self._codes[id(settings)] = codes_for(settings, ())
            parts = (*codes, f"torch={settings.torch_for(full)!r}")  # _key_parts's, without per-file ignores
            head = self._parts.get((id(settings), parts))
            if head is None:
                head = self._parts[(id(settings), parts)] = self.cache.key_head(parts, settings.with_edits)
            self._heads[(id(settings), folder)] = head
        return self.cache.key_of(head, full, digest)  # ``full``: absolute and normal, abspath's

    def full(self, i: int, path: str, report: FileReport) -> FileReport:
        """``report`` with what the index left in its entry (summary, view
        reads) read from the entry; both None when the entry is gone."""
        if report.partial:
            entry = self.cache.load(path, self.keys[i]) if i in self.keys else None
            report.summary_json = entry.summary_json if entry is not None else None
            report.deps = entry.deps if entry is not None else None
            report.partial = False
        return report

    def summary_json(self, i: int, path: str, report: FileReport) -> dict | None:
        """``report``'s summary as JSON."""
        self.full(i, path, report)
        if report.summary is not None:
            return report.summary.to_json()
        return report.summary_json

    def remember(self, paths: list[str], reports: list[FileReport | None], digests: dict[str, str]) -> None:
        """Record each checked file's report for the next run, then write the
        index (only if a record changed)."""
        from memlint.run.cache import cacheable, record_of

        for i, report in enumerate(reports):
            key = self.keys.get(i)
            if key is None or report is None or report.deferred or i in self.untrusted:
                continue
            record = self.records.get(i)
            if record is not None and self.hits[i] is report:
                # The index's own record (its view may have been found
                # unchanged in a later state: the state is all that moves).
                if record.get("state") != report.project_state:
                    self.index.note(self.absolute[i], key, {**record, "state": report.project_state})
                continue
            if not cacheable(report):
                continue
            if report.digest is not None and report.digest != digests.get(self.absolute[i]):
                continue  # the file changed while it was read: hashed again next time
            self.index.note(self.absolute[i], key, record_of(key, report))
        self.index.save()


def _second_pass(
    paths: list[str],
    per_file: list[Settings],
    cache: FindingsCache | None,
    jobs: int | None,
    reports: list[FileReport | None],
    done: Callable[[FileReport], None],
    pending: list[int],
    waiting: list[int],
    digests: dict[str, str],
    warm: _Warm | None,
    workers: _Workers | None = None,
    keep: bool = False,
) -> None:
    """Lint again, with its view, each waiting file (deferred by the first
    pass, or a cache hit made with a view) whose view may have changed.
    ``keep``: freeze the index and views once made (run())."""
    for r in reports:
        if r is not None and r.digest is not None:
            digests[os.path.abspath(r.path)] = r.digest
    deps: dict[str, tuple[str, ...]] = {}
    # A view reads the summaries of the modules that hold a name of the
    # modules viewed with it (index.needles_for): every module that reads the
    # project is in the group, viewed or kept, as in a cold run of these paths.
    group = list(waiting)
    try:
        projects = _states(paths, waiting, digests, warm)
        states = {p: state for p, (_, state, _) in projects.items()}
        # An entry made when every file of the project had the bytes it has
        # now: its view is the same, no index needed (a warm run).
        unchanged = {
            i
            for i in pending
            if states.get(paths[i]) is not None and reports[i].project_state == states[paths[i]]  # type: ignore[union-attr]
        }
        if warm is not None:
            from memlint.run import kept_views

            judge = kept_views.changes(paths, reports, warm, per_file, _cache_key)
            # ... or when no file changed since touches what its view read.
            others = [i for i in pending if i not in unchanged]
            kept = _unaffected(paths, others, reports, projects, warm, judge) if others else set()  # type: ignore[arg-type]
            # An edited file settled with its last view's answers: no index.
            edited = [i for i in waiting if i not in unchanged and i not in pending]
            settled_kept = kept_views.settle_edited(paths, edited, reports, projects, warm, judge) if edited else {}
            for i, (view_digest, view_deps) in settled_kept.items():
                report = reports[i]
                report.screened = None  # type: ignore[union-attr]
                report.deferred, report.project = False, view_digest  # type: ignore[union-attr]
                _store(report, paths[i], per_file[i], cache, states[paths[i]], view_deps)  # type: ignore[arg-type]
                warm.index.note_settled(warm.absolute[i], warm.keys[i], view_digest)
            # Their views are those of this state: recorded so (the warm
            # index), the next run compares its state with this one, not
            # with the older one again (a warm run after an edit).
            for i in kept:
                reports[i].project_state = states[paths[i]]  # type: ignore[union-attr]
            if (kept or settled_kept) and cache is not None:
                _keep_manifests(sorted(kept | settled_kept.keys()), paths, projects, cache)
            unchanged |= kept | settled_kept.keys()
        for i in sorted(unchanged):
            done(reports[i])  # type: ignore[arg-type]
        waiting = [i for i in waiting if i not in unchanged]
        if waiting and warm is not None:
            # The index reads every module's summary: those the warm index
            # held are read from their entries now.
            for i, r in enumerate(reports):
                if r is not None and r.partial:
                    warm.summary_json(i, paths[i], r)
        with collector_paused():  # the index and views live to the end of the pass (see _execute)
            views = _views(paths, waiting, reports, cache, digests, deps, group) if waiting else {}  # type: ignore[arg-type]
            if keep:
                gc.freeze()
        if views and cache is not None:
            _keep_manifests(waiting, paths, projects, cache)
    except Exception:  # a bug in the project stage must not stop the run: lint as if alone
        states, views, deps = {}, {}, {}
        # ... but keep none of those reports: they lack every cross-module fact,
        # and a later run (the bug fixed, or a passing failure) must not trust them.
        cache = None
        if warm is not None:
            warm.untrusted.update(waiting)
    again = []
    settled: dict[str, Screened | None] = {}
    for i in waiting:
        report = reports[i]
        view = views.get(paths[i])
        if i in pending and report is not None and view is not None and report.project == view.digest():
            report.project_state, report.deps = states.get(paths[i]), deps.get(paths[i])
            # The next run needs no index. A cache hit has no digest of its own:
            # the one this run read (it was never stored again before).
            digest = report.digest or digests.get(os.path.abspath(report.path))
            if cache is not None and digest is not None:
                cache.store(_cache_key(cache, report.path, digest, per_file[i]), report)
            done(report)
            continue
        handed = report.screened if report is not None else None
        if handed is not None:
            report.screened = None  # type: ignore[union-attr]
            from memlint.run.second_pass import settle

            codes = settle(handed, view)
            if not codes:  # the view rules out every rule left: no worker reads the file again
                report.deferred, report.project = False, view.digest() if view is not None else None  # type: ignore[union-attr]
                key = warm.keys.get(i) if warm is not None else None
                if key is not None and view is not None and report.digest == digests.get(warm.absolute[i]):  # type: ignore[union-attr]
                    from memlint.run.second_pass import matters_of

                    # What settle asked of this view: its file's next edit is settled without it.
                    warm.index.note_settled(warm.absolute[i], key, report.project, matters_of(view))  # type: ignore[union-attr, arg-type]
                _store(report, paths[i], per_file[i], cache, states.get(paths[i]), deps.get(paths[i]))  # type: ignore[arg-type]
                done(report)  # type: ignore[arg-type]
                continue
            handed = replace(handed, passed=codes, local_misses=frozenset(), class_bound={}, parts={})
        settled[paths[i]] = handed
        again.append(i)
    jobs_views = {
        paths[i]: (views.get(paths[i]), states.get(paths[i]), deps.get(paths[i]), settled[paths[i]]) for i in again
    }
    _execute(again, paths, per_file, cache, jobs, reports, done, jobs_views, workers)


def _states(
    paths: list[str], waiting: list[int], digests: dict[str, str], warm: _Warm | None = None
) -> dict[str, tuple[str, str | None, dict[str, str] | None]]:
    """Each waiting file's project: its root, project/index.project_state and
    manifest (every file's digest; those not checked through the warm index:
    a file whose stamp is unchanged is not read)."""
    from memlint.project.manifest import project_manifest, state_of

    roots = _roots(paths, waiting, warm.absolute if warm is not None else None)
    by_root: dict[str, tuple[str, str | None, dict[str, str] | None]] = {}
    out = {}
    for i in waiting:
        root = roots[i]
        if root not in by_root:
            if warm is not None:
                manifest = project_manifest(root, digests, warm.index.digest, warm.index.project_files)
            else:
                manifest = project_manifest(root, digests)
            by_root[root] = (root, state_of(manifest) if manifest is not None else None, manifest)
        out[paths[i]] = by_root[root]
    return out


def _absolute(paths: list[str]) -> list[str]:
    """os.path.abspath of each path, the working folder read once (abspath
    asks the system for it per relative path)."""
    cwd = os.getcwd()
    return [os.path.normpath(p if os.path.isabs(p) else os.path.join(cwd, p)) for p in paths]


def _roots(paths: list[str], indices: Iterable[int], absolute: list[str] | None = None) -> dict[int, str]:
    """The project root of each ``paths[i]`` (roots.project_root with the
    run's common root), looked up once per folder: it depends on the folder
    alone, and hundreds of files share one."""
    from memlint.project.roots import common_root, project_root

    absolute = absolute or _absolute(paths)
    checked = [common_root(absolute, normal=True)]
    by_folder: dict[str, str] = {}
    marks: dict[str, str | None] = {}
    walks: dict[tuple[str, str], bool] = {}
    out = {}
    for i in indices:
        folder = os.path.dirname(absolute[i])
        root = by_folder.get(folder)
        if root is None:
            root = by_folder[folder] = project_root(paths[i], checked, marks, walks)
        out[i] = root
    return out


def _unaffected(
    paths: list[str],
    pending: list[int],
    reports: list[FileReport],
    projects: dict[str, tuple[str, str | None, dict[str, str] | None]],
    warm: _Warm,
    changes: Changes,
) -> set[int]:
    """The cache hits made in an earlier state of their project whose view
    no file changed since can touch (project/states.py; ``changes``:
    kept_views.changes): kept as they are, so one edit builds the view of
    the edited file, not of every module."""
    from memlint.project.states import module_names

    out = set()
    for i in pending:
        report = reports[i]
        root, state, manifest = projects.get(paths[i], ("", None, None))
        if state is None or manifest is None or report.project_state is None:
            continue
        if report.deps is None and not report.partial:
            continue

        # Read from the entry only when a file changed that a view may see.
        def reads(i: int = i, report: FileReport = report) -> tuple[str, ...] | None:
            return warm.full(i, paths[i], report).deps

        def names(i: int = i, report: FileReport = report) -> frozenset[str]:
            return module_names(warm.summary_json(i, paths[i], report))

        if changes.still_holds(root, report.project_state, state, manifest, reads, names):
            out.add(i)
    return out


def _keep_manifests(
    waiting: list[int], paths: list[str], projects: dict[str, tuple[str, str | None, dict[str, str] | None]], cache
) -> None:
    """Record the manifest of each state views were built in: the entries
    stored with it are judged against it later (_unaffected)."""
    from memlint.project.states import StateStore

    store = StateStore(cache.directory)
    for state, manifest in {
        projects[paths[i]][1]: projects[paths[i]][2] for i in waiting if paths[i] in projects
    }.items():
        if state is not None and manifest is not None:
            store.store(state, manifest)


def _views(
    paths: list[str],
    waiting: list[int],
    reports: list[FileReport | None],
    cache: FindingsCache | None,
    digests: dict[str, str] | None = None,
    deps: dict[str, tuple[str, ...]] | None = None,
    group: list[int] | None = None,
) -> dict[str, ProjectView | None]:
    """The project view of each waiting file. The summaries come from this
    run's reports (cache hits included), then from the summary store or the
    disk for the project's files that were not checked (``digests``: the
    bytes this run read, by absolute path)."""
    from memlint.project.index import build_index, needles_for, triage_for
    from memlint.project.store import SummaryStore

    store = SummaryStore(cache.directory) if cache is not None else None
    # Others (no training word, unreadable, outside the checked paths): from disk.
    known: dict[str, ModuleSummary | dict | None] = {}
    # Word-less files' needle summaries, made by the workers: (digest, summary).
    prepared: dict[str, tuple[str, ModuleSummary]] = {}
    for r in reports:
        if r is not None and r.needle_summary is not None and r.digest is not None:
            prepared[os.path.abspath(r.path)] = (r.digest, r.needle_summary)
            r.needle_summary = None
        if r is not None and (r.summary is not None or r.summary_json is not None):
            # A cache hit's summary stays JSON: the index reads the few it needs.
            known[r.path] = r.summary if r.summary is not None else r.summary_json
    # The index is built for every module of ``group`` (default: the waiting
    # ones) in a project where one waits; only the waiting are viewed.
    groups: dict[str, list[str]] = {}
    for i, root in _roots(paths, waiting if group is None else group).items():
        groups.setdefault(root, []).append(paths[i])
    todo = {paths[i] for i in waiting}
    views: dict[str, ProjectView | None] = {}
    for root, members in groups.items():
        viewed = [p for p in members if p in todo]
        if not viewed:
            continue
        own = [_summary_of(known, p) for p in members]
        needles = needles_for(own)
        # Needle holders that cannot call into the members are summarised
        # only if a view asks (one file checked cold: project/narrow.py).
        index = build_index(
            root,
            known=known,
            store=store,
            needles=needles,
            viewed=members,
            digests=digests,
            prepared=prepared,
            triage=triage_for(needles, own, members),
        )
        # Each view reads hundreds of the same modules (transformers: 143,000
        # reads, ~1,000 files): os.path.relpath once per file, not per read.
        relative: dict[str, str] = {}
        for path in viewed:
            views[path] = index.view_for(path) if index is not None else None
            if index is not None and deps is not None:
                reads = index.view_reads.get(os.path.abspath(path), frozenset())
                deps[path] = tuple(sorted(_relative(p, root, relative) for p in reads))
    return views


def _relative(path: str, root: str, seen: dict[str, str]) -> str:
    """os.path.relpath(path, root), remembered in ``seen`` (one ``root``)."""
    found = seen.get(path)
    if found is None:
        found = seen[path] = os.path.relpath(path, root)
    return found


def _summary_of(known: dict, path: str) -> ModuleSummary | None:
    from memlint.project.summary import ModuleSummary

    found = known.get(path)
    if isinstance(found, dict):
        found = known[path] = ModuleSummary.from_json(found)
    return found


def _execute(
    todo: list[int],
    paths: list[str],
    per_file: list[Settings],
    cache: FindingsCache | None,
    jobs: int | None,
    reports: list[FileReport | None],
    done: Callable[[FileReport], None],
    views: dict | None,
    workers: _Workers | None = None,
    keep: bool = False,
) -> None:
    """Lint ``paths[i]`` for every i in ``todo`` into ``reports``, in worker
    processes when there are enough of them (``workers``'s, kept for the
    run's next pass; else a pool of this call's own). ``keep``: freeze what
    the reports hold once gathered (run() unfreezes it)."""
    jobs = jobs or os.cpu_count() or 1
    if jobs <= 1 or len(todo) < (PARALLEL_THRESHOLD if views is None else SECOND_PASS_THRESHOLD):
        for i in todo:
            reports[i] = _check_and_store(
                paths[i], per_file[i], cache, *(views[paths[i]] if views is not None else (DEFER, None))
            )
            done(reports[i])  # type: ignore[arg-type]
        if keep:
            gc.freeze()
        return
    # Biggest files first, in small chunks, so no worker is left with a large
    # file at the end while the others idle; workers start once per run.
    todo = sorted(todo, key=lambda i: -_size(paths[i]))
    # The rules (libcst, the analyses: ~0.15 CPU s) imported once here: forked
    # workers inherit them instead of each importing them on its first file.
    # A registry that fails to load is reported per file by the workers.
    with contextlib.suppress(Exception):
        for one in dict.fromkeys(per_file):
            rules_for(one, ())
    # The pool's modules (multiprocessing: ~40 ms) only where a pool starts:
    # a warm run never needs them.
    from concurrent.futures import as_completed
    from concurrent.futures.process import BrokenProcessPool

    size = max(1, min(16, len(todo) // (jobs * 8)))
    chunks = [todo[i : i + size] for i in range(0, len(todo), size)]
    own = workers is None
    workers = workers if workers is not None else _Workers()
    pool = workers.get(min(jobs, len(chunks)))
    orphans: list[int] = []
    try:
        futures = {}
        for chunk in chunks:
            items = [(paths[i], per_file[i]) for i in chunk]
            chunk_views = {p: views[p] for p, _ in items} if views is not None else None
            futures[pool.submit(_process_chunk, items, cache, chunk_views)] = chunk
        # The parent only gathers here (every worker is forked by now, so
        # none inherits the pause): what it unpickles lives to the end of the
        # run, and each full collection walked all it had gathered so far.
        with collector_paused():
            for future in as_completed(futures):
                chunk = futures[future]
                try:
                    results = future.result()
                except BrokenProcessPool:
                    orphans.extend(chunk)  # a worker died: its chunk and every one not done yet
                    continue
                for i, report in zip(chunk, results):
                    reports[i] = report
                    done(report)
            if keep:
                gc.freeze()  # before any collection walks what was gathered
        if orphans:
            workers.close()  # broken: the next pass starts a pool of its own
        for i in sorted(orphans):
            reports[i] = _process_alone(paths[i], per_file[i], cache, views[paths[i]] if views is not None else None)
            done(reports[i])  # type: ignore[arg-type]
    except BaseException:
        # Interrupted (Ctrl-C, SIGTERM): stop now rather than finish every
        # queued chunk, as leaving a `with` block would.
        workers.stop()
        raise
    if own:
        workers.close()


class _Workers:
    """A run's worker processes: started (forked) by the first pass that
    needs them and kept for the second, so they never carry what the parent
    builds in between. A pool forked after the project index held the
    parent's ~140 MB in each worker (transformers: 541 MB for the tree)."""

    def __init__(self) -> None:
        self.pool: ProcessPoolExecutor | None = None
        self.size = 0

    def get(self, size: int) -> ProcessPoolExecutor:
        """A pool of at least ``size`` workers (a smaller one is replaced)."""
        if self.pool is not None and self.size < size:
            self.close()
        if self.pool is None:
            from concurrent.futures import ProcessPoolExecutor

            self.pool, self.size = ProcessPoolExecutor(max_workers=size, initializer=_worker_signals), size
        return self.pool

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()
            self.pool = None

    def stop(self) -> None:
        if self.pool is not None:
            _stop_workers(self.pool)
            self.pool = None


def _process_alone(path: str, settings: Settings, cache: FindingsCache | None, view: tuple | None = None) -> FileReport:
    """A file left over when a worker died (a crash in native code, the OOM
    killer), in a process of its own: the file that kills it is reported,
    the others are linted as usual."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(max_workers=1, initializer=_worker_signals)
    try:
        views = {path: view} if view is not None else None
        report = pool.submit(_process_chunk, [(path, settings)], cache, views).result()[0]
    except BrokenProcessPool:
        report = FileReport(path=path, error="internal error: the process analysing this file died")
    except BaseException:
        _stop_workers(pool)
        raise
    pool.shutdown()
    return report


def _worker_signals() -> None:
    """Workers leave Ctrl-C to the parent, which stops them, and die on
    SIGTERM (the parent's handler is inherited through fork). A write in
    progress holds both signals back until its rename is done. The worker's
    inherited heap is frozen."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # What the worker inherits (the rules, libcst: imported before the fork)
    # lives as long as it does: frozen, its collections walk only its own
    # objects, and leave the parent's pages shared.
    gc.freeze()


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    # Python 3.14 has terminate_workers(); before it, the processes are only
    # reachable through this attribute (which shutdown() clears).
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        try:
            process.terminate()
        except (OSError, ValueError, AttributeError):
            pass
    for process in processes:
        try:
            process.join(timeout=30)
        except (OSError, ValueError, AttributeError, AssertionError):
            pass


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
