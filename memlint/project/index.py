"""The project index: every module's summary, imports resolved, callers
listed per callee, and each checked module's ``ProjectView``.

Built in one pass over the summaries (linear in the project): each call site
is resolved once to the file and function it names; a view reads only the
entries of its own module and of the modules it star-imports.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator

from memlint.project.applied_functions import quiet_applied
from memlint.project.arg_modes import may_set_mode
from memlint.project.array_helpers import array_helper_at, names_gradients
from memlint.project.backward_returns import backward_receivers
from memlint.project.checkpoint_links import import_reader, linked_writers
from memlint.project.cpu_projects import moves_nothing
from memlint.project.cpu_receivers import cpu_only_users
from memlint.project.eval_forwards import eval_off_receivers
from memlint.project.family_saves import cpu_saving_bases
from memlint.project.forward_returns import returned_receivers

# The project's state (a digest of every file's bytes) lives in manifest.py,
# which a warm run imports without the summaries' machinery.
from memlint.project.grad_forwards import grad_forward_classes, grad_receivers
from memlint.project.grad_off_anywhere import grad_never_off
from memlint.project.local_imports import local_model_classes
from memlint.project.manifest import digest_of, project_manifest, project_state, state_of  # noqa: F401
from memlint.project.method_evals import method_evals
from memlint.project.method_modes import asked_methods
from memlint.project.mode_layers import ALL as MODE_ALL
from memlint.project.mode_layers import entry_of
from memlint.project.modules import ModuleMap, project_files
from memlint.project.narrow import EAGER, LAZY, NONE, Triage
from memlint.project.needle_scan import holds_needle
from memlint.project.off_forwards import off_receivers, partly_off_receivers
from memlint.project.package_attrs import package_binding
from memlint.project.plain_forwards import trained_receivers
from memlint.project.returned_loads import mixed_loader
from memlint.project.roots import project_root
from memlint.project.star_names import star_names
from memlint.project.stray_modules import StrayModules
from memlint.project.summary import (
    ON,
    UNKNOWN,
    CallSite,
    FunctionFacts,
    ModuleSummary,
    summarise_text,
    worth_summarising,
)
from memlint.project.typed_objects import TypedObjects, forwards_by_name, model_methods, named_forwards, object_facts
from memlint.project.unknown_classes import unknown_classes
from memlint.project.view import Caller, ProjectView
from memlint.project.wrapped_args import PASSED, WRAPPED
from memlint.project.wrapper_evals import object_evals
from memlint.project.zeroed_grads import clearing_functions, inherited_clears
from memlint.read.source import read_bytes
from memlint.vocabulary import checkpoint_files as checkpoint_names
from memlint.vocabulary.loading import loading_name

# How many re-exports (``from .engine import evaluate`` in ``__init__.py``)
# and nested star imports are followed before giving up: unknown.
_MAX_HOPS = 4
# How deep a model's tree of project classes (a class building a class
# building ...) is followed: networks nest blocks five or six deep
# (generator > encoder > res-blocks > res-block > conv-block > norm).
_MAX_NESTING = 12

# A call whose name starts with "load" (torch.load, load_state_dict, load_checkpoint):
# only a module holding one may ask whether its project moves nothing.
_LOAD_CALL = re.compile(rb"load\w*\s*\(")


# Roots of imports a package's star import may bring besides its models:
# calling one of them never gives a model on a device.
_SAFE_IMPORTS = frozenset({"__future__", "torch", "numpy", "math", "os", "sys", "random", "collections", "functools"})


class ProjectIndex:
    def __init__(
        self,
        root: str,
        summaries: dict[str, ModuleSummary | dict | None],
        wanted: frozenset[str] | None = None,
        lazy: dict[str, frozenset[str]] | None = None,
        lazy_from: tuple = (None, {}),
    ) -> None:
        """``summaries``: every project file's summary, None for a file with no
        training word (its exports are read from disk if another module asks),
        or its JSON (a cache entry's: made into a ModuleSummary only if asked;
        of its calls, only those of a ``wanted`` name are read).
        ``wanted``: the only function names whose callers are asked for (the
        viewed modules'); None for all. Other calls are never resolved.
        ``lazy``: files left unsummarised (None in ``summaries``) until
        asked (narrow.py), with the lazily asked words each holds;
        ``lazy_from``: the summary store and the needles to make them as
        build_index would have (None for a file holding no needle)."""
        self.root = os.path.abspath(root)
        self.wanted = wanted
        self.summaries = {os.path.abspath(p): s for p, s in summaries.items()}
        self.modules = ModuleMap(self.root, list(self.summaries))
        self._exports_only: dict[str, ModuleSummary] = {}
        self._strays: tuple[ModuleMap, StrayModules] | None = None  # _stray_cpu_class, per module map
        # importer -> (its sys.path folders, the files read to find them)
        self._sys_path_cache: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {}
        # method_still: method name -> (every definition moves nothing, the modules defining it).
        self._method_defs: dict[str, tuple[bool, set[str]]] = {}
        # (file, class) -> (a CPU class with all it needs, the files read to tell), _cpu_class_of
        self._cpu_deep: dict[tuple[str, str], tuple[bool, frozenset[str]]] = {}
        self._mode_deep: dict[tuple[str, str], tuple[bool, frozenset[str]]] = {}
        # Per file: its classes whose ``__call__`` backpropagates or steps (trainer_classes).
        self._call_trainers: dict[str, frozenset[str]] = {}
        self._array_helpers: dict[tuple[str, str], bool] = {}  # array_helpers.array_helper_at
        self._family_saves: dict[str, tuple[bool, frozenset[str]]] = {}  # family_saves.py, per base module
        # The live index's generation each of those three caches was filled at (_current).
        self._filled_at: dict[str, int] = {}
        self._loading_users: dict[str, dict[str, set[str]]] = {}  # loading_used_elsewhere, per summary field
        # methods_off_elsewhere: name -> the modules calling it off, and on.
        self._method_mode_users: tuple[dict[str, set[str]], dict[str, set[str]]] | None = None
        self._savers: dict[tuple[str, str], list[tuple[str, bool]]] | None = (
            None  # _cpu_saved_files: (folder, file name) -> (module, from CPU)
        )
        self._definers: dict[str, set[str]] | None = None  # cpu_builders_everywhere: name -> the modules defining it
        self._builder_guard: set[str] = set()  # _builder_module: the modules being judged
        self._switchers: dict[str, list[str]] | None = None  # _switched_attrs: attribute -> the modules switching it
        self._callers: dict[tuple[str, str], list[Caller]] = {}
        # file -> "Class.method" -> where other modules call it on an
        # instance, with the grad mode around each call ("on", "off", "unknown").
        self._method_callers: dict[str, dict[str, list[tuple[str, str]]]] = {}
        # The same, for the calls whose result is loaded into a model on a device (gpu_method_calls).
        self._gpu_method_callers: dict[str, dict[str, list[str]]] = {}
        # (file, class) -> where other modules build a closed instance of it
        # (closed_instances.py); the classes some module subclasses.
        self._closed: dict[tuple[str, str], set[tuple[str, int]]] = {}
        self._subclassed: set[tuple[str, str]] = set()
        # (file, class) built by a module that trains / inside a training step: where.
        self._called_per_batch: dict[tuple[str, str], str] = {}
        self._built_per_batch: dict[tuple[str, str], str] = {}
        # What each view read (its dependencies, ``reads_of``): the files whose
        # entries were asked since ``_reading`` was set, and, per module, the
        # files read to resolve the calls found to land in it.
        self._reading: set[str] | None = None
        # grad_never_off's answer: (the live index's generation, the answer, the files read).
        self._never_off: tuple[int | None, bool, tuple[str, ...]] | None = None
        # grad_forward_anywhere's answer, kept the same way.
        self._grad_forward: tuple[int | None, bool, tuple[str, ...]] | None = None
        self._target_reads: dict[str, set[str]] = {}
        self.view_reads: dict[str, frozenset[str]] = {}
        self._typed: TypedObjects | None = None
        # moves_nothing: (the generation it was found at, the verdict, the files it read).
        self._cpu_project: tuple[int, bool, tuple[str, ...]] | None = None
        # Viewed files without a training word, summarised for their calls only.
        self.wordless: frozenset[str] = frozenset()
        # Needle holders summarised only when asked (narrow.py): path -> the
        # lazily asked words it holds; those not summarised yet; how to.
        self.lazy_words = {os.path.abspath(p): w for p, w in (lazy or {}).items()}
        self._lazy = set(self.lazy_words)
        self._lazy_from = lazy_from  # (store, needles)
        self._lazy_map: dict[str, list[str]] | None = None
        for path, summary in self.summaries.items():
            if isinstance(summary, dict):
                self._index_calls(path, self._wanted_calls(summary), bool(summary.get("trains", False)))
                methods = [(str(m), int(n)) for m, n in summary.get("method_calls", ())]
                grads = [str(g) for g in summary.get("method_grads", ())]
                gpu_methods = {(str(m), int(n)) for m, n in summary.get("gpu_method_calls", ())}
            elif summary is not None:
                self._index_calls(path, summary.calls, summary.trains)
                methods, grads = summary.method_calls, summary.method_grads
                gpu_methods = set(summary.gpu_method_calls)
            else:
                methods, grads, gpu_methods = [], [], set()
            if methods:
                self._index_methods(path, methods, grads, gpu_methods)
            self._index_closed(path, summary)

    def _wanted_calls(self, data: dict) -> list[CallSite]:
        """The call sites of a summary's JSON that ``_index_calls`` keeps."""
        wanted = self.wanted
        return [
            CallSite.from_json(c)
            for c in data["calls"]
            if wanted is None or c["callee"].rpartition(".")[2].lstrip("*") in wanted
        ]

    def typed_objects(self) -> TypedObjects:
        """Types from call sites (typed_objects.py), shared by the views."""
        if self._typed is None:
            self._typed = TypedObjects(self)
        return self._typed

    def _note_read(self, path: str) -> None:
        if self._reading is not None:
            self._reading.add(path)

    def _full(self, path: str) -> ModuleSummary | None:
        """``summaries[path]``, made from its JSON on first use."""
        self._note_read(path)
        found = self._held(path)
        if isinstance(found, dict):
            found = self.summaries[path] = ModuleSummary.from_json(found)
        return found

    def _held(self, path: str) -> ModuleSummary | dict | None:
        """``summaries.get(path)``; a needle holder left for later
        (narrow.py) summarised now, as build_index would have."""
        if path in self._lazy:
            store, needles = self._lazy_from
            self._lazy.discard(path)
            self.summaries[path] = summary_from_disk(path, store, needles)
        return self.summaries.get(path)

    def _candidate(self, path: str) -> ModuleSummary | dict | None:
        """A lazily asked holder's summary (narrow.py): ``_held``'s, or, for
        one holding no needle (``.G`` spelled ``solver.G.lr``), the
        summary of its calls every module of a tree run has."""
        found = self._held(path)
        if found is None and path in self.lazy_words:
            found = summary_from_disk(path, self._lazy_from[0], _ANY)
        return found

    def lazy_holding(self, word: str) -> list[str]:
        """The needle holders left for later that hold ``word``, sorted (the
        word -> holders map built once: every view asks it)."""
        if self._lazy_map is None:
            self._lazy_map = {}
            for path, words in self.lazy_words.items():
                for held in words:
                    self._lazy_map.setdefault(held, []).append(path)
        return sorted(self._lazy_map.get(word, ()))

    def summary(self, path: str) -> ModuleSummary | None:
        """The file's summary; for a file with no training word, what it binds
        at module level, read once on first use."""
        self._note_read(path)
        found = self._full(path)
        if found is not None or path not in self.summaries:
            return found
        if path not in self._exports_only:
            from memlint.project.summary import summarise_exports

            try:
                text = (read_bytes(path) or b"").decode("utf-8-sig")
            except UnicodeDecodeError:
                text = ""
            self._exports_only[path] = summarise_exports(text)
        return self._exports_only[path]

    # -- resolution ----------------------------------------------------------
    def resolve(self, name: str, importer: str, hops: int = 0) -> tuple[str, str] | None:
        """The project file and the name in it that ``name`` (as ``importer``
        spells it after its imports) refers to, following re-exports."""
        found = self.modules.resolve(name, importer, self._sys_paths(importer))
        if found is None or hops >= _MAX_HOPS:
            return found
        bound = package_binding(
            name,
            importer,
            found,
            self.modules.files,
            self.summary,
            lambda spelled, where: self.resolve(spelled, where, hops + 1),
        )
        if bound is not None:
            return bound
        path, rest = found
        head, _, tail = rest.partition(".")
        summary = self.summary(path)
        if head and summary is not None and head in summary.imports and head not in summary.defines:
            again = self.resolve(summary.imports[head] + (f".{tail}" if tail else ""), path, hops + 1)
            if again is not None:
                return again
        return found

    def _current(self, name: str) -> dict:
        """The cache held in attribute ``name``, emptied first when the live
        index's texts changed since it was filled (live.py's generation):
        what it holds was read from the old texts."""
        generation = getattr(self, "generation", 0)
        if self._filled_at.get(name, 0) != generation:
            getattr(self, name).clear()
            self._filled_at[name] = generation
        return getattr(self, name)

    def _sys_paths(self, importer: str) -> tuple[str, ...]:
        """The project folders ``importer`` adds to ``sys.path`` (a relative
        one from its own folder, where the script is run from), and those a
        module beside it that it imports adds from its own file
        (``import _init_paths``: summary.file_sys_paths)."""
        self._note_read(importer)
        cached = self._current("_sys_path_cache").get(importer)
        if cached is None:
            outer, self._reading = self._reading, set()
            try:
                paths = self._read_sys_paths(importer)
            finally:
                inner, self._reading = self._reading, outer
            cached = self._sys_path_cache[importer] = (paths, frozenset(inner or ()))
        if self._reading is not None:  # a view asking again reads them too (incremental re-lint, states.py)
            self._reading.update(cached[1])
        return cached[0]

    def _read_sys_paths(self, importer: str) -> tuple[str, ...]:
        found = self._held(importer)
        if found is None and importer not in self.summaries:
            found = self.summary(importer)  # an index that computes summaries when asked (live.py)
        here = os.path.dirname(importer)
        paths = [os.path.join(here, p) for p in _field(found, "sys_paths") + _field(found, "file_sys_paths")]
        # A script's neighbours it imports by name (its folder is no package):
        # one that puts folders on the path from its own file adds them here too.
        if os.path.join(here, "__init__.py") not in self.modules.files:
            imports = found.get("imports", {}) if isinstance(found, dict) else found.imports if found else {}
            for value in imports.values():
                beside = os.path.join(here, value.split(".")[0] + ".py")
                if beside != importer and beside in self.modules.files:
                    paths += [os.path.join(here, p) for p in _field(self._neighbour(beside), "file_sys_paths")]
        return tuple(dict.fromkeys(os.path.normpath(p) for p in paths))

    def _neighbour(self, path: str) -> ModuleSummary | dict | None:
        """``path``'s summary as the index holds it (a cache entry's JSON
        stays JSON), or what it binds, read from disk (it has no training word)."""
        found = self._held(path)
        return found if found is not None else self.summary(path)

    def _star_sources(self, path: str) -> list[str]:
        summary = self.summary(path)
        if summary is None:
            return []
        out = []
        for star in summary.stars:
            found = self.modules.resolve(star, path, self._sys_paths(path)) if star else None
            if found is not None and not found[1]:
                out.append(found[0])
        return out

    def _exports(self, path: str, seen: frozenset[str] = frozenset()) -> dict[str, tuple[str, str]]:
        """What ``from <path> import *`` binds: name -> (kind, value), kind
        "import" (value: the qualified name an import gave it) or "define"
        (value: the file defining it)."""
        summary = self.summary(path)
        if summary is None or path in seen or len(seen) >= _MAX_HOPS:
            return {}
        out: dict[str, tuple[str, str]] = {}
        for source in self._star_sources(path):
            out.update(self._exports(source, seen | {path}))
        for name, target in summary.imports.items():
            out[name] = ("import", target)
        for name in summary.defines:
            out[name] = ("define", path)
        allowed = summary.all_names
        return {n: v for n, v in out.items() if (n in allowed if allowed is not None else not n.startswith("_"))}

    # -- callers ---------------------------------------------------------------
    def _index_calls(self, path: str, calls: list[CallSite], trains: bool) -> None:
        """Index ``path``'s calls into other modules; every file read to
        resolve them counts as a dependency of each module they land in
        (``stars`` is shared by the file's sites, so per file, not per site)."""
        self._reading = {path}
        targets: set[str] = set()
        try:
            self._index_sites(path, calls, trains, targets)
        finally:
            reads, self._reading = self._reading, None
        for target in targets:
            self._target_reads.setdefault(target, set()).update(reads)

    def _index_sites(self, path: str, calls: list[CallSite], trains: bool, targets: set[str]) -> None:
        display = self.modules.display(path)
        stars: dict[str, dict[str, tuple[str, str]]] = {}
        wanted = self.wanted
        for site in calls:
            if wanted is not None and called_name(site) not in wanted:
                continue
            target = self.call_target(path, site, stars)
            if target is None:
                continue
            targets.add(target[0])
            caller = self.caller(display, site, path, stars)
            self._callers.setdefault(target, []).append(caller)
            if trains:
                self._called_per_batch.setdefault(target, caller.where())
            if site.step:
                self._built_per_batch.setdefault(target, caller.where())

    def caller(self, display: str, site: CallSite, path: str, stars: dict[str, dict[str, tuple[str, str]]]) -> Caller:
        """``site`` of ``path`` as its callee sees it; the batch and the live
        index both build their callers here, so the CLI and the server agree."""
        modes = self._argument_modes(site, path, self._path_stars(path, stars)) if site.args else ()
        cpu_args = tuple(key for key, ctor in site.built if ctor == WRAPPED or self._cpu_class(ctor, path))
        gpu_args = self.gpu_args(site, path, stars) if site.gpu_args else ()
        return Caller(
            display,
            site.line,
            site.grad,
            site.in_loop,
            site.backward,
            modes,
            cpu_args,
            site.gpu_state,
            gpu_args,
            tuple(key for key, ctor in site.built if ctor == PASSED),
            site.gpu_items,
            site.eval_scope,
            site.plain,
            site.final,
        )

    def _index_methods(
        self,
        path: str,
        methods: list[tuple[str, int]],
        grads: list[str],
        gpu_methods: set[tuple[str, int]] | None = None,
    ) -> None:
        """Index ``path``'s calls of methods on instances of project classes
        (summary.method_calls, with summary.method_grads; ``gpu_methods``, those
        whose result is loaded into a model on a device); the files read to
        resolve them are dependencies of the class's module, as for ``_index_calls``."""
        self._reading = {path}
        display = self.modules.display(path)
        modes = grads if len(grads) == len(methods) else [UNKNOWN] * len(methods)
        try:
            for (spelled, line), grad in zip(methods, modes):
                cls, _, method = spelled.rpartition(".")
                if self.wanted is not None and cls.rpartition(".")[2] not in self.wanted:
                    continue
                target = self.resolve(cls, path)
                if target is None or not target[1] or "." in target[1] or target[0] == path:
                    continue
                sites = self._method_callers.setdefault(target[0], {}).setdefault(f"{target[1]}.{method}", [])
                sites.append((f"{display}:{line}", grad))
                if gpu_methods and (spelled, line) in gpu_methods:
                    fed = self._gpu_method_callers.setdefault(target[0], {})
                    fed.setdefault(f"{target[1]}.{method}", []).append(f"{display}:{line}")
                self._target_reads.setdefault(target[0], set()).update(self._reading)
        finally:
            self._reading = None

    def _index_closed(self, path: str, summary) -> None:
        """Index ``path``'s closed instances and subclassed imported classes
        (summary.closed_instances, summary.subclassed) under the class's file."""
        if isinstance(summary, dict):
            closed = [(str(c), int(n)) for c, n in summary.get("closed_instances", ())]
            bases = [str(b) for b in summary.get("subclassed", ())]
        elif summary is not None:
            closed, bases = summary.closed_instances, summary.subclassed
        else:
            return
        if not (closed or bases):
            return
        self._reading = {path}
        display = self.modules.display(path)
        try:
            for spelled, line in closed:
                target = self.resolve(spelled, path)
                if target is not None and target[1] and "." not in target[1] and target[0] != path:
                    self._closed.setdefault(target, set()).add((display, line))
                    self._target_reads.setdefault(target[0], set()).update(self._reading)
            for spelled in bases:
                target = self.resolve(spelled, path)
                if target is not None and target[1]:
                    self._subclassed.add(target)
                    self._target_reads.setdefault(target[0], set()).update(self._reading)
        finally:
            self._reading = None

    def closed_classes(self, path: str, classes: list[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The classes of ``path`` that other modules build (at least once),
        each time as a closed instance, and none subclasses: (class, where)."""
        out = []
        for name in classes:
            key = (path, name)
            sites = {(c.path, c.line) for c in self._callers.get(key, ())}
            if sites and key not in self._subclassed and sites <= self._closed.get(key, set()):
                out.append((name, tuple(f"{p}:{n}" for p, n in sorted(sites))))
        return tuple(out)

    def _argument_modes(self, site, path: str, star_exports) -> tuple[tuple[str, str], ...]:
        """The modes of the models the call hands over (CallSite.args) as
        Caller.modes: "eval", "train-trained" (switched to train, then
        trained) or "train-fresh"; an argument handed since its switch to a
        project function that may switch modes is left out (unknown)."""
        out = []
        for key, mode, trained, via in site.args:
            known = True
            for callee in via:
                facts = self._function_facts(callee, path, star_exports)
                if facts is None:
                    if may_set_mode(callee.rpartition(".")[2].lstrip("*")):
                        known = False  # ``set_eval(model)`` we cannot read
                    continue
                if facts.mode not in ("", "train"):
                    known = False
                trained = trained or facts.backprops
            if known:
                out.append((key, "eval" if mode == "eval" else "train-trained" if trained else "train-fresh"))
        return tuple(out)

    def _function_facts(self, callee: str, path: str, star_exports) -> FunctionFacts | None:
        """The summary facts of the project function ``callee`` (as ``path``
        spells it), read in full whatever the needles kept; None when it is
        not a function of the project."""
        found = self._function_facts_at(callee, path, star_exports)
        return found[1] if found is not None else None

    def _function_facts_at(self, callee: str, path: str, star_exports) -> tuple[str, FunctionFacts] | None:
        """``_function_facts`` with the file that defines the function."""
        target = self._defined_at(callee, path, star_exports)
        if target is None:
            return None
        summary = self.full_summary(target[0])
        for fn in summary.functions if summary is not None else ():
            if fn.name == target[1]:
                return target[0], fn
        return None

    def _defined_at(self, callee: str, path: str, star_exports) -> tuple[str, str] | None:
        """(the file, the name) that defines what ``callee`` of ``path`` (as
        the summary spells it, ``*name`` through a star import) names."""
        if callee.startswith("*"):
            kind, where = (star_exports or {}).get(callee[1:], ("", ""))
            target = (where, callee[1:]) if kind == "define" else None
        else:
            target = self.resolve(callee, path)
        if target is None or not target[1]:
            return None
        return self._star_defined(target)

    def _star_defined(self, target: tuple[str, str]) -> tuple[str, str]:
        """``utils.load_state_dict`` resolved to ``utils/__init__.py``, which
        only star-imports it (``from .util import *``): the module defining
        it, when a star import brings it from one; ``target`` otherwise."""
        path, name = target
        summary = self.summary(path)
        if summary is None or "." in name or name in summary.defines or name in summary.imports or not summary.stars:
            return target
        exports: dict[str, tuple[str, str]] = {}
        for source in self._star_sources(path):
            exports.update(self._exports(source))
        kind, where = exports.get(name, ("", ""))
        return (where, name) if kind == "define" else target

    def gpu_args(self, site: CallSite, path: str, stars: dict[str, dict[str, tuple[str, str]]]) -> tuple[str, ...]:
        """Caller.gpu_args: the keys of ``site.gpu_args`` whose model ``path``
        moved itself, or bound only from project functions each returning a
        model it moved to a device (FunctionFacts.gpu_return)."""
        out = []
        for key, builders in site.gpu_args:
            if all(self._gpu_builder(b, path, stars) for b in builders):
                out.append(key)
        return tuple(out)

    def _gpu_builder(self, spelling: str, path: str, stars: dict[str, dict[str, tuple[str, str]]]) -> bool:
        if spelling.startswith(":"):
            own = self.full_summary(path)
            return own is not None and any(f.name == spelling[1:] and f.gpu_return for f in own.functions)
        located = self._function_facts_at(spelling, path, self._path_stars(path, stars))
        return located is not None and located[1].gpu_return

    def _cpu_class(self, spelling: str, importer: str, built: bool = False) -> bool:
        """``spelling`` (CallSite.built's) names a project class that moves
        nothing; with ``built``, or a plain class whose construction moves
        nothing (summary.cpu_built: what a call right after it finds)."""
        if spelling.startswith(":"):
            found: tuple[str, str] | None = (importer, spelling[1:])
        elif spelling.startswith("*"):
            exports: dict[str, tuple[str, str]] = {}
            for source in self._star_sources(importer):
                exports.update(self._exports(source))
            kind, where = exports.get(spelling[1:], ("", ""))
            found = (where, spelling[1:]) if kind == "define" else None
        else:
            found = self.resolve(spelling, importer)
        if found is None:
            return False
        defining = self.summary(found[0])
        return defining is not None and (
            self._cpu_class_of(found[0], defining, found[1], built=built)
            or found[1] in defining.cpu_builders
            or self._foreign_cpu_builder(found[0], defining, found[1])
        )

    def _stray_cpu_class(self, target: str) -> bool:
        """``target`` (an import no module of the project resolves) names a
        class that moves nothing in the one project module its dotted path
        may mean (stray_modules.py)."""
        if self._strays is None or self._strays[0] is not self.modules:
            self._strays = (self.modules, StrayModules(self.modules.root, self.modules.files))
        found = self._strays[1].find(target)
        if found is None or not found[1] or "." in found[1]:
            return False
        defining = self.summary(found[0])
        return defining is not None and (
            self._cpu_class_of(found[0], defining, found[1]) or found[1] in defining.cpu_builders
        )

    def _cpu_class_of(self, path: str, defining: ModuleSummary, name: str, depth: int = 0, built: bool = False) -> bool:
        """``name`` is a class of ``path`` that moves nothing (with ``built``,
        or whose construction moves nothing: summary.cpu_built), and so is
        every class of the project it derives from or constructs (class_needs)."""
        if name not in defining.cpu_classes and not (built and name in defining.cpu_built):
            return False
        prefix = name + "="
        needs = next((e[len(prefix) :] for e in defining.class_needs if e.startswith(prefix)), "")
        if not needs:
            return True
        key = (path, name)
        cached = self._current("_cpu_deep").get(key)
        if cached is None:
            self._cpu_deep[key] = (True, frozenset())  # a cycle of classes building each other: judged by the rest
            outer, self._reading = self._reading, set()
            try:
                verdict = depth < _MAX_NESTING and all(
                    self._needed_on_cpu(path, defining, n, depth) for n in needs.split(",")
                )
            finally:
                inner, self._reading = self._reading, outer
            cached = self._cpu_deep[key] = (verdict, frozenset(inner or ()))
        for read in cached[1]:  # a view asking again reads them too (incremental re-lint)
            self._note_read(read)
        return cached[0]

    def _mode_class(self, path: str, defining: ModuleSummary, name: str, depth: int = 0) -> bool:
        """``name``, a model class of ``path``, holds a layer that reads the
        mode: it builds one, or a project class or function it builds from
        does (mode_layers.py; a function only one deep)."""
        entry = entry_of(defining.mode_entries, name)
        if not entry:
            return False
        if entry == MODE_ALL:
            return True
        key = (path, name)
        cached = self._current("_mode_deep").get(key)
        if cached is None:
            self._mode_deep[key] = (False, frozenset())  # a cycle: judged by the rest
            outer, self._reading = self._reading, set()
            try:
                verdict = depth < _MAX_NESTING and any(
                    self._mode_callee(path, defining, c, depth, True) for c in entry.split(",")
                )
            finally:
                inner, self._reading = self._reading, outer
            cached = self._mode_deep[key] = (verdict, frozenset(inner or ()))
        for read in cached[1]:
            self._note_read(read)
        return cached[0]

    def _mode_callee(self, path: str, defining: ModuleSummary, spelled: str, depth: int, functions: bool) -> bool:
        """A callee of a class (``functions``) or of a function: a project
        model class that reads the mode, or a project function that builds one."""
        target = self._class_named(path, defining, spelled)
        if target is None:
            return False
        where, name = target
        summary = self.summary(where)
        if summary is None:
            return False
        if name in summary.model_classes or name in summary.classes or name[:1].isupper():
            return self._mode_class(where, summary, name, depth + 1)
        if not functions:
            return False
        entry = entry_of(summary.mode_entries, name)
        if not entry:
            return False
        return entry == MODE_ALL or any(
            self._mode_callee(where, summary, c, depth + 1, False) for c in entry.split(",")
        )

    def _needed_on_cpu(self, path: str, defining: ModuleSummary, spelled: str, depth: int) -> bool:
        target = self._class_named(path, defining, spelled)
        if target is None:
            return True  # not of the project: torch.nn's, a library's
        where, name = target
        summary = self.summary(where)
        if summary is None:
            return True
        if name in summary.cpu_classes:
            return self._cpu_class_of(where, summary, name, depth + 1)
        if name in summary.cpu_builders or self._foreign_cpu_builder(where, summary, name):
            return True
        # A model class of the project that moves; anything else (an alias
        # ``Upsample = layers.Upsample``, a function) is not known: no answer.
        return name not in summary.classes

    def _class_named(self, path: str, summary: ModuleSummary, spelled: str) -> tuple[str, str] | None:
        """What ``spelled`` names in ``path``, if a project module defines it
        (there, imported, or through a star import); None for anything else."""
        head = spelled.split(".")[0]
        if "." not in spelled and spelled in summary.defines:
            found: tuple[str, str] | None = (path, spelled)
        elif head in summary.imports:
            found = self.resolve(summary.imports[head] + spelled[len(head) :], path)
        elif "." not in spelled:
            exports: dict[str, tuple[str, str]] = {}
            for source in self._star_sources(path):
                exports.update(self._exports(source))
            kind, where = exports.get(spelled, ("", ""))
            found = (where, spelled) if kind == "define" else None
        else:
            found = None
        if found is None or not found[1] or "." in found[1]:
            return None
        defining = self.summary(found[0])
        return found if defining is not None and found[1] in defining.defines else None

    def _foreign_cpu_builder(self, path: str, defining: ModuleSummary, name: str) -> bool:
        """``name``, a function of ``path``, returns classes other modules
        define (``return MSC(base=DeepLabV2(...))`` after ``from .msc import
        *``), each a CPU class of the module that defines it."""
        for entry in defining.foreign_builders:
            function, _, needed = entry.partition("=")
            if function == name:
                return all(self._needed_on_cpu_here(path, n) for n in needed.split(","))
        return False

    def _needed_on_cpu_here(self, path: str, needed: str) -> bool:
        """A foreign builder's need (cpu_builders.py): a class name ``path``
        binds, or ``getattr:builder``, a module whose every pick builds on the CPU."""
        if needed.startswith("getattr:"):
            summary = self.summary(path)
            return summary is not None and self._cpu_module(path, summary, needed[len("getattr:") :])
        return self._names_cpu_class(path, needed)

    def _names_cpu_class(self, path: str, name: str) -> bool:
        """``name``, as ``path`` binds it (an import, or a star import), is a
        class that moves nothing, of the module that defines it."""
        summary = self.summary(path)
        if summary is None:
            return False
        found: tuple[str, str] | None = None
        if name in summary.imports:
            found = self.resolve(summary.imports[name], path)
        else:
            exports: dict[str, tuple[str, str]] = {}
            for source in self._star_sources(path):
                exports.update(self._exports(source))
            kind, where = exports.get(name, ("", ""))
            found = (where, name) if kind == "define" else None
        if found is None or not found[1] or "." in found[1]:
            return False
        defining = self.summary(found[0])
        return defining is not None and self._cpu_class_of(found[0], defining, found[1])

    def call_target(
        self, path: str, site: CallSite, stars: dict[str, dict[str, tuple[str, str]]]
    ) -> tuple[str, str] | None:
        """The (file, function) of another project module that a call site
        of ``path`` names, or None. ``stars``: what ``path``'s star imports
        export, filled on first need (shared by the sites of one file)."""
        if site.callee.startswith("*"):
            if path not in stars:
                stars[path] = {}
                for source in self._star_sources(path):
                    stars[path].update(self._exports(source))
            kind, where = stars[path].get(site.callee[1:], ("", ""))
            target = (where, site.callee[1:]) if kind == "define" else None
        else:
            target = self.resolve(site.callee, path)
        if target is None or not target[1] or target[0] == path:
            return None
        return target

    def own_summary(self, path: str) -> ModuleSummary:
        """The viewed module's summary: its functions and imports (none for
        one without a training word, summarised only for its calls)."""
        if path in self.wordless:
            self._note_read(path)
            return ModuleSummary()
        return self._full(path) or ModuleSummary()

    def calls_summary(self, path: str) -> ModuleSummary:
        """The viewed module's calls, for ``callees``: one with no training
        word of its own (``train.py`` calling ``engine.train_one_epoch``) is
        read from disk too, since its calls still say which functions of
        other modules switch its models' modes."""
        self._note_read(path)
        summary = self._full(path)
        if summary is None and path in self.summaries:
            summary = summary_from_disk(path, needles=_ANY)
        return summary or ModuleSummary()

    def full_summary(self, path: str) -> ModuleSummary | None:
        """A project file's whole summary whatever the needles kept; None for
        one with no training word (as every front end reads it)."""
        self._note_read(path)
        if path in self.wordless:
            return None
        summary = self._full(path)
        if summary is None and path in self.summaries:
            summary = summary_from_disk(path)
        return summary

    def _path_stars(self, path: str, stars: dict[str, dict[str, tuple[str, str]]]) -> dict[str, tuple[str, str]]:
        if path not in stars:
            stars[path] = {}
            for source in self._star_sources(path):
                stars[path].update(self._exports(source))
        return stars[path]

    # -- views -------------------------------------------------------------------
    def grad_never_off(self) -> bool:
        """No file of the project spells a way of turning grad off
        (grad_off_anywhere.py), asked once per generation of the index."""
        # The files this view already reads first: a project that turns grad
        # off in one of them adds no file to the view's dependencies.
        seen = self._reading or set()
        files = sorted(self.modules.files, key=lambda f: (f not in seen, f))
        return self._once_per_generation("_never_off", lambda note: grad_never_off(files, note))

    def grad_forward_anywhere(self) -> bool:
        """Some module of the project defines a model whose ``forward`` needs
        autograd (grad_forwards.py), asked once per generation of the index
        and only for a model whose class is looked up at run time."""
        return self._once_per_generation(
            "_grad_forward",
            lambda note: grad_forward_classes(self.typed_objects(), sorted(self.modules.files), note),
        )

    def _once_per_generation(self, slot: str, decide: Callable[[Callable[[str], None]], bool]) -> bool:
        """A yes/no the whole project decides, kept in ``slot`` for the live
        index's generation; the files it read are noted again for every view
        that asks, so each view depends on them."""
        key = getattr(self, "generation", None)
        cached = getattr(self, slot)
        if cached is not None and cached[0] == key:
            for read in cached[2]:
                self._note_read(read)
            return cached[1]
        reads: list[str] = []

        def note(path: str) -> None:
            reads.append(path)
            self._note_read(path)

        answer = decide(note)
        setattr(self, slot, (key, answer, tuple(reads)))
        return answer

    def view_for(self, path: str) -> ProjectView:
        """``path``'s view; ``view_reads[path]`` then holds the project files
        it depends on (all but the file list and ``path`` itself)."""
        path = os.path.abspath(path)
        self._reading = {path}
        try:
            view = self._view(path)
        finally:
            reads, self._reading = self._reading, None
        self.view_reads[path] = frozenset(reads | self._target_reads.get(path, set()))
        return view

    def _view(self, path: str) -> ProjectView:
        summary = self.own_summary(path)
        star: dict[str, str] = {}
        trackers: set[str] = set()
        cpu_classes: set[str] = set()
        plain_classes: set[str] = set()
        cpu_functions: set[str] = set()
        settings: set[str] = set()

        model_classes: set[str] = set()
        parameterless: set[str] = set()
        mode_classes: set[str] = set()
        scheduler_classes: set[str] = set()
        trainer_classes: set[str] = set()
        tensor_trackers: set[tuple[str, str, int, str, str, str]] = set()
        tuple_items: set[tuple[str, int, tuple[int, ...]]] = set()
        version_functions: set[tuple[str, str]] = set()
        off_decorators: set[tuple[str, str]] = set()
        engine_factories: set[str] = set()
        engine_hooks: set[tuple[str, str, str, str, str]] = set()

        def defined(local: str, defining: ModuleSummary, name: str, where: str = "") -> None:
            if name in defining.model_classes:
                model_classes.add(local)
            if name in defining.parameterless:
                parameterless.add(local)
            if where and name in defining.model_classes and self._mode_class(where, defining, name):
                mode_classes.add(local)
            if name in defining.forward_items:
                size, *fresh = defining.forward_items[name]
                tuple_items.add((local, size, tuple(fresh)))
            if name in defining.version_tests:
                version_functions.add((local, defining.version_tests[name]))
            if name in defining.off_decorators:
                off_decorators.add((local, defining.off_decorators[name]))
            if name in defining.engine_factories:
                engine_factories.add(local)
            for h in defining.engine_hooks:
                if h.cls == name and where:
                    engine_hooks.add((local, h.attr, h.key, h.place, f"{self.modules.display(where)}:{h.line}"))
            for t in defining.tensor_trackers:
                if t.cls == name and where:
                    tensor_trackers.add(
                        (local, t.method, t.position, t.param, t.attr, f"{self.modules.display(where)}:{t.line}")
                    )
            on_cpu = self._cpu_class_of(where, defining, name) if where else name in defining.cpu_classes
            if on_cpu or name in defining.cpu_builders:
                cpu_classes.add(local)  # a call builds on the CPU
            elif where and defining.foreign_builders and self._foreign_cpu_builder(where, defining, name):
                cpu_classes.add(local)
            if name in defining.plain_classes:
                plain_classes.add(local)
            if name in defining.cpu_functions:
                cpu_functions.add(local)
            if name in defining.settings_functions:
                settings.add(local)
            if where and name.lstrip("_")[:1].isupper() and self.typed_objects().torch_scheduler(where, name):
                scheduler_classes.add(local)
            if where and name.lstrip("_")[:1].isupper() and name in self._trainers_of(where):
                trainer_classes.add(local)

        for source in self._star_sources(path):
            for name, (kind, value) in self._exports(source).items():
                if kind == "import" and not value.startswith("."):
                    star[name] = value
                elif kind == "define":
                    defining = self.summary(value) or ModuleSummary()
                    if name in defining.trackers:
                        trackers.add(name)
                    defined(name, defining, name, value)
        cpu_tables: list[str] = []
        cpu_objects: list[str] = []  # ProjectView.cpu_objects
        for local, target in summary.imports.items():
            found = self.resolve(target, path)
            if found is None:
                if self._stray_cpu_class(target):
                    cpu_classes.add(local)  # ``from models import Net`` of the one ``utils/models.py``
                continue
            defining = self.summary(found[0]) or ModuleSummary()
            if found[1] in defining.cpu_objects:
                cpu_objects.append(local)
            elif not found[1]:
                cpu_objects.extend(f"{local}.{name}" for name in defining.cpu_objects)
            if found[1] in defining.tables and self._cpu_table(found[0], defining, defining.tables[found[1]]):
                cpu_tables.append(local)
            if found[1] in defining.trackers:
                trackers.add(local)
            defined(local, defining, found[1], found[0])
        local_cpu_classes = [
            local
            for local, targets in summary.local_imports.items()
            if all(self._cpu_class(target, path) for target in targets)
        ]
        model_classes.update(
            local_model_classes(
                summary.local_imports,
                lambda target: self.resolve(target, path),
                lambda where: (self.summary(where) or ModuleSummary()).model_classes,
            )
        )
        # ``models.Net(...)`` after ``import models``: the calls name them.
        locals_of = {target: local for local, target in summary.imports.items()}
        for local, target in summary.rebuilt.items():  # ``crnn = crnn.CRNN(...)``: named before it was rebound
            locals_of.setdefault(target, local)
        # ``opts.base(...)`` over ``choices=dict(resnet50=backbone.ResNet50)``: the options name them.
        for callee in sorted({site.callee for site in summary.calls}.union(summary.option_values)):
            head, _, last = callee.rpartition(".")
            if head not in locals_of:
                continue
            found = self.resolve(callee, path)
            if found is not None and found[1] and "." not in found[1]:
                defined(f"{locals_of[head]}.{last}", self.summary(found[0]) or ModuleSummary(), found[1], found[0])
        callees: dict[str, FunctionFacts] = {}
        step_helpers: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {}
        step_sequences: dict[str, tuple] = {}
        state_loaders: dict[str, tuple] = {}
        gpu_builders: set[str] = set()
        mixed_loaders: dict[str, str] = {}
        clearing: dict[str, FunctionFacts] = {}  # ProjectView.grad_clearers
        array_helpers: set[str] = set()
        star_exports = None
        for site in self.calls_summary(path).calls:
            if not site.written or site.written in callees:
                continue
            if site.callee.startswith("*") and star_exports is None:
                star_exports = {}
                for source in self._star_sources(path):
                    star_exports.update(self._exports(source))
            located = self._function_facts_at(site.callee, path, star_exports)
            facts = located[1] if located is not None else None
            if facts is not None and (facts.switches or facts.opaque or facts.steps):
                callees[site.written] = facts
            if located is not None and located[1].stepped and located[0] != path:
                where = f"{self.modules.display(located[0])}:{located[1].step_line}"
                step_helpers[site.written] = (located[1].stepped, located[1].params, where)
            if located is not None and located[0] != path and located[1].state_params:
                fn = located[1]
                state_loaders[site.written] = (fn.params, fn.kwonly, fn.state_params, self.modules.display(located[0]))
            if located is not None and located[0] != path and located[1].gpu_return:
                gpu_builders.add(site.written)
            if located is not None and located[0] != path and located[1].unmapped_load:
                own = [other.gpu_state for other in self.calls_summary(path).calls if other.written == site.written]
                shown = mixed_loader(self, located[0], located[1], own)
                if shown:
                    mixed_loaders[site.written] = shown
            if located is not None and located[0] != path and located[1].clears:
                clearing[site.written] = located[1]
            if names_gradients(site.written):
                # Read from the file itself: a helper module of numpy alone has
                # no training word, so no summary of its functions.
                home = self._defined_at(site.callee, path, star_exports)
                if home is not None and home[0] != path and "." not in home[1] and array_helper_at(self, *home):
                    array_helpers.add(site.written)
            if located is not None and located[1].sequence and located[0] != path:
                step_sequences[site.written] = (
                    located[1].sequence,
                    located[1].params,
                    self.modules.display(located[0]),
                )
        callers = []
        for fn in summary.functions:
            sites = self._callers.get((path, fn.name))
            if sites:
                callers.append((fn.name, tuple(sorted(sites, key=lambda c: (c.path, c.line)))))
        called = self._called_per_batch
        built = self._built_per_batch
        called_per_batch = [(c, called[(path, c)]) for c in summary.classes if (path, c) in called]
        built_per_batch = [(c, built[(path, c)]) for c in summary.classes if (path, c) in built]
        switched = self._switched_attrs(path, summary) if summary.plain_attrs else ()
        loading = _loading_methods(summary)
        object_forwards, object_types, object_steps, object_passes, object_held = object_facts(self, path)
        return ProjectView(
            root=self.root,
            path=self.modules.display(path),
            star_bindings=tuple(sorted(star.items())),
            star_names=star_names(path, self.summary, self._star_sources, self._exports, _MAX_HOPS)
            if summary.stars
            else None,
            callers=tuple(callers),
            trackers=tuple(sorted(trackers)),
            cpu_classes=tuple(sorted(cpu_classes)),
            local_cpu_classes=tuple(local_cpu_classes),
            callees=tuple(sorted(callees.items())),
            array_helpers=tuple(sorted(array_helpers)),
            step_helpers=tuple((name, *facts) for name, facts in sorted(step_helpers.items())),
            step_sequences=tuple((name, *facts) for name, facts in sorted(step_sequences.items())),
            closed_classes=self.closed_classes(path, summary.classes),
            method_callers=tuple(
                (name, tuple(sorted({where for where, _ in sites})))
                for name, sites in sorted(self._method_callers.get(path, {}).items())
            ),
            method_callers_on=tuple(
                (name, on)
                for name, sites in sorted(self._method_callers.get(path, {}).items())
                if (on := tuple(sorted({where for where, grad in sites if grad == ON})))
            ),
            gpu_method_callers=tuple(
                (name, tuple(sorted(set(sites))))
                for name, sites in sorted(self._gpu_method_callers.get(path, {}).items())
            ),
            plain_classes=tuple(sorted(plain_classes)),
            cpu_functions=tuple(sorted(cpu_functions)),
            settings_functions=tuple(sorted(settings)),
            cpu_methods=tuple(n for n in summary.called_methods if self.method_still(n)),
            called_per_batch=tuple(called_per_batch),
            built_per_batch=tuple(built_per_batch),
            # A function running a whole pass over data of its own is an evaluation, not a batch's work.
            functions_per_batch=tuple(
                (f.name, built[(path, f.name)]) for f in summary.functions if (path, f.name) in built and not f.passes
            ),
            model_classes=tuple(sorted(model_classes)),
            parameterless_classes=tuple(sorted(parameterless)),
            mode_classes=tuple(sorted(mode_classes)),
            switched_attrs=switched,
            tensor_trackers=tuple(sorted(tensor_trackers)),
            loading_elsewhere=tuple(elsewhere := self.loading_used_elsewhere(path, loading)),
            loading_cpu_elsewhere=tuple(
                cpu_only_users(
                    elsewhere,
                    lambda n: self.loading_users(path, n),
                    # a proven call right after the construction: the class need only be built on the CPU
                    lambda spelled, other: self._cpu_class(spelled, other, built=True),
                    lambda spelled, other, method: self._own_method(spelled, other, method, path),
                    self.method_still,
                )
            ),
            loading_grad_elsewhere=tuple(self.loading_used_elsewhere(path, loading, "loading_grad_uses")),
            eval_builders=tuple(self.cpu_builders_everywhere(path, summary.eval_names)),
            cpu_tables=tuple(sorted(cpu_tables)),
            cpu_modules=tuple(m for m in summary.getattr_modules if self._cpu_module(path, summary, m)),
            cpu_factories=tuple(f for f in summary.factory_calls if self._cpu_factory(path, summary, f)),
            cpu_objects=tuple(sorted(cpu_objects)),
            cpu_saved_files=self._cpu_saved_files(path, summary),
            cpu_saving_bases=cpu_saving_bases(self, path, summary, self._current("_family_saves")),
            object_forwards=object_forwards,
            object_held=object_held,
            grad_never_off=any(f.mode == "eval" for f in summary.functions) and self.grad_never_off(),
            object_trains=trained_receivers(self.typed_objects(), path) if object_forwards else (),
            off_forwards=off_receivers(self.typed_objects(), path),
            partly_off=partly_off_receivers(self.typed_objects(), path),
            # Asked only of a module that switches a model to eval: MEM201's evidence of an evaluation.
            grad_forwards=(
                grad_receivers(self.typed_objects(), path, self.grad_forward_anywhere)
                if b".eval()" in self.source_bytes(path)
                else ()
            ),
            eval_off=eval_off_receivers(self.typed_objects(), path),
            object_returns=returned_receivers(self.typed_objects(), path, object_forwards),
            object_backwards=backward_receivers(self.typed_objects(), path),
            object_types=object_types,
            object_steps=object_steps,
            object_passes=object_passes,
            scheduler_classes=tuple(sorted(scheduler_classes)),
            trainer_classes=tuple(sorted(trainer_classes)),
            forward_methods=named_forwards(self, path),
            forward_names=forwards_by_name(self, path),
            object_evals=object_evals(self, path),
            method_evals=method_evals(self, path),
            unknown_classes=(
                unknown_classes(summary.calls, lambda callee: self.resolve(callee, path))
                if self._sys_paths(path)
                else ()
            ),
            forward_items=tuple(sorted(tuple_items)),
            version_functions=tuple(sorted(version_functions)),
            off_decorators=tuple(sorted(off_decorators)),
            engine_factories=tuple(sorted(engine_factories)),
            engine_hooks=tuple(sorted(engine_hooks)),
            state_loaders=tuple((name, *facts) for name, facts in sorted(state_loaders.items())),
            gpu_builders=tuple(sorted(gpu_builders)),
            mixed_loaders=tuple(sorted(mixed_loaders.items())),
            methods_off_elsewhere=self.methods_off_elsewhere(path, summary),
            methods_uncalled_elsewhere=self.methods_uncalled_elsewhere(path, summary),
            quiet_applied=quiet_applied(self, path, summary),
            grad_clearers=clearing_functions(clearing.items()),
            inherited_clears=inherited_clears(self, path, summary),
            moves_nothing=self._moves_nothing(path),
        )

    def _moves_nothing(self, path: str) -> bool:
        """ProjectView.moves_nothing, asked only of a module that may load a
        checkpoint (its text calls something named ``load…``): the verdict is the project's,
        found once per index (per generation of a live one), and its reads
        are noted for every view that asks (cpu_projects.py)."""
        if not _LOAD_CALL.search(self.source_bytes(path)):
            return False  # no call spelling a load (``loader`` alone is not one): the verdict is not read
        generation = getattr(self, "generation", 0)
        if self._cpu_project is None or self._cpu_project[0] != generation:
            self._cpu_project = (generation, *moves_nothing(self))
        _, verdict, reads = self._cpu_project
        for read in reads:
            self._note_read(read)
        return verdict

    def source_bytes(self, path: str) -> bytes:
        """A project file's text as its module is read (the live index: an open document's)."""
        return read_bytes(path) or b""

    def _trainers_of(self, path: str) -> frozenset[str]:
        """The classes of ``path`` whose ``__call__`` backpropagates or steps
        an optimizer (``compute_loss(x, y)`` on one of them trains); read in
        full whatever the needles kept (view_from_disk's index keeps only
        the exports of a module the viewed one does not call into by name)."""
        found = self._current("_call_trainers").get(path)
        if found is None:
            defining = self.full_summary(path)
            found = self._call_trainers[path] = frozenset(
                fn.name[: -len(".__call__")]
                for fn in (defining.functions if defining is not None else ())
                if fn.name.endswith(".__call__") and (fn.backprops or fn.steps)
            )
        return found

    def _cpu_saved_files(self, path: str, summary: ModuleSummary) -> tuple[str, ...]:
        """The file names ``path``'s module loads that some module of its own
        folder saves (scripts side by side share their relative paths:
        ``train.py`` writes ``res/model_final.pth``, ``evaluate.py`` reads
        it) and none of them saves from a state not known to be on the CPU.
        A module elsewhere writing the same name writes another file."""
        if not summary.loaded_files:
            return ()
        savers = self._savers
        if savers is None:
            savers = self._savers = {}
            for other in self.summaries:
                for key in ("cpu_saved", "other_saved"):
                    for name in _field(self.summaries.get(other), key):
                        savers.setdefault((os.path.dirname(other), name), []).append((other, key == "cpu_saved"))
        found = []
        folder = os.path.dirname(path)
        imported = None
        for name in summary.loaded_files:
            writers = savers.get((folder, name), []) + self._pattern_writers(folder, name)
            if not writers:  # none beside it: a module of another folder linked by an import (checkpoint_links.py)
                imported = imported or import_reader(self)
                writers = linked_writers(path, name, savers, imported)
            for other, _cpu in writers:
                self._note_read(other)
            if writers and all(cpu for _other, cpu in writers):
                found.append(name)
        return tuple(found)

    def _pattern_writers(self, folder: str, name: str) -> list[tuple[str, bool]]:
        """The savers of ``folder`` whose file name, or ``name``, is a pattern
        (``*_*.pkl``, from a formatted string) and that may write the file
        ``name`` reads (``*_*_*_*.pkl``): each fills the patterns' fields with
        a word and tries the other's (checkpoint_names.may_name_same)."""
        assert self._savers is not None
        out: list[tuple[str, bool]] = []
        for (where, saved), writers in self._savers.items():
            if where == folder and saved != name and ("*" in saved or "*" in name):
                if checkpoint_names.may_name_same(saved, name):
                    out.extend(writers)
        return out

    def _switched_attrs(self, path: str, summary: ModuleSummary) -> tuple[str, ...]:
        """The attributes of ``path``'s plain classes that another module of
        the project may switch (``solver.G.eval()``): summary.attr_switches.
        Read only for a module whose plain classes assign attributes."""
        if self._switchers is None:  # attribute -> the modules switching one so, built once
            self._switchers = {}
            for other, data in self.summaries.items():
                names = _field(data, "attr_switches")
                for name in names:
                    self._switchers.setdefault(name, []).append(other)
        found: set[str] = set()
        for name in set(summary.plain_attrs):
            for other in self._switchers.get(name, ()):
                if other != path:
                    self._note_read(other)  # the view depends on it (incremental re-lint)
                    found.add(name)
            if name in found:
                continue
            for other in self.lazy_holding("." + name):  # left for later (narrow.py): the first that switches it
                if other != path and name in _field(self._candidate(other), "attr_switches"):
                    self._note_read(other)
                    found.add(name)
                    break
        return tuple(sorted(found))

    def method_still(self, name: str) -> bool:
        """Every class of the project's summarised modules that defines a
        method ``name`` defines it so that it moves nothing (method_moves.py);
        the view depends on each of those modules."""
        defs = self._current("_method_defs")
        if not defs:
            for other, found in self.summaries.items():
                for method in _field(found, "still_methods"):
                    still, where = defs.setdefault(method, (True, set()))
                    where.add(other)
                for method in _field(found, "moving_methods"):
                    defs[method] = (False, defs.get(method, (False, set()))[1] | {other})
            defs.setdefault("", (False, set()))  # filled, even for a project with no method
        still, where = defs.get(name, (True, set()))
        for other in where:
            self._note_read(other)
        if not still:
            return False
        still = bool(where)  # defined so by a module read, or by a holder read now
        for other in self.lazy_holding(name):  # holders left for later (narrow.py): read them now
            self._note_read(other)
            found = self._held(other)
            if name in _field(found, "moving_methods"):
                return False
            still = still or name in _field(found, "still_methods")
        return still

    def loading_used_elsewhere(self, path: str, names: set[str], kind: str = "loading_uses") -> list[str]:
        """The ``names`` (methods of ``path`` that load weights) another
        project module uses as an attribute (summary.loading_uses), or, for
        ``loading_grad_uses``, uses otherwise than called under ``no_grad``."""
        if not names:
            return []
        users = self._loading_users.get(kind)
        if users is None:
            users = self._loading_users[kind] = {}
            for other, found in self.summaries.items():
                for entry in _field(found, kind):
                    users.setdefault(entry.partition("@")[0], set()).add(other)
        used = []
        for name in names:
            others = users.get(name, set()) - {path}
            for other in others:  # the view depends on those modules (a new user spells the name: states.py)
                self._note_read(other)
            users_of = self._users_in_order(path, name, kind, others)
            if kind == "loading_uses":
                if others or next(users_of, None) is not None:
                    used.append(name)
            elif any(
                self.grad_use_reaches(path, name, other, _field(self.summaries.get(other), kind)) for other in users_of
            ):
                used.append(name)
        return sorted(used)

    def _own_method(self, spelling: str, importer: str, method: str, path: str) -> bool:
        """``spelling`` (as ``importer`` writes a constructor) names a class of a
        module other than ``path`` that defines ``method`` itself."""
        found = (importer, spelling[1:]) if spelling.startswith(":") else self.resolve(spelling, importer)
        if found is None or found[0] == path or not found[1] or "." in found[1]:
            return False
        defining = self.summary(found[0])
        own = f"{found[1]}.{method}"
        return defining is not None and found[1] in defining.classes and any(f.name == own for f in defining.functions)

    def loading_users(self, path: str, name: str) -> Iterator[tuple[str, list[str]]]:
        """The other modules using the loading name ``name``, each with its
        summary's loading_cpu_uses (ProjectView.loading_cpu_elsewhere)."""
        users = self._loading_users.get("loading_uses", {})
        for other in self._users_in_order(path, name, "loading_uses", users.get(name, set()) - {path}):
            yield other, _field(self._held(other), "loading_cpu_uses")

    def methods_off_elsewhere(self, path: str, summary: ModuleSummary) -> tuple[str, ...]:
        """ProjectView.methods_off_elsewhere: the method names of ``path``
        that another module calls with grad off (summary.methods_off) and
        none with grad on (summary.methods_on)."""
        names = asked_methods(f.name for f in summary.functions)
        if not names:
            return ()
        users = self._method_mode_users
        if users is None:
            users = self._method_mode_users = ({}, {})
            for other, found in self.summaries.items():
                for mode, table in zip(("methods_off", "methods_on"), users):
                    for entry in _field(found, mode):
                        table.setdefault(entry.partition("@")[0], set()).add(other)
        off, on = users
        found_off = []
        for name in sorted(names):
            # The needle holders left for later (narrow.py) are read only
            # when the known ones leave the answer open, in order.
            callers = off.get(name, set()) - {path}
            for other in callers:
                self._note_read(other)  # the view depends on each
            if next(self._users_in_order(path, name, "methods_off", callers), None) is None:
                continue
            callers = on.get(name, set()) - {path}
            for other in callers:
                self._note_read(other)
            if not any(
                self.on_call_reaches(path, name, other, _field(self._held(other), "methods_on"))
                for other in self._users_in_order(path, name, "methods_on", callers)
            ):
                found_off.append(name)
        return tuple(found_off)

    def on_call_reaches(self, path: str, name: str, other: str, entries: list[str]) -> bool:
        """``other``'s ``entries`` (summary.methods_on) call a method ``name``
        with grad on in a way that may run ``path``'s: not only on receivers
        the project types as instances of classes of other modules that
        define ``name`` themselves (``name@scope:receiver``, method_modes.py)."""
        for entry in entries:
            called, typed, where = entry.partition("@")
            if called != name:
                continue
            if not typed:
                return True
            scope, _, receiver = where.partition(":")
            if not self._runs_another_method(path, name, other, scope, receiver):
                return True
        return False

    def _runs_another_method(self, path: str, name: str, other: str, scope: str, receiver: str) -> bool:
        """``receiver.name(...)`` in ``scope`` of ``other`` runs, whatever the
        receiver holds, a method ``name`` a class of a module other than
        ``path`` defines itself, and that method runs no call this module
        judged off from its own calls of ``name`` (summary.methods_relayed):
        entered with grad on, what it calls runs as its summary says."""
        types = self.typed_objects().receiver_types(other, scope, receiver)
        if not types:
            return False
        for typ in types:
            defined_in, project_class, cls = typ.partition("\0")
            if not project_class or defined_in == path or "." in cls:
                return False  # an installed class, or one of ``path``: it may be (or inherit) ``path``'s method
            defining = self.summary(defined_in)
            if defining is None or name in _field(defining, "methods_relayed"):
                return False
            functions = {f.name for f in defining.functions}
            if f"{cls}.{name}" not in functions or cls in functions:
                return False  # inherited (perhaps from ``path``), or not a class
        return True

    def methods_uncalled_elsewhere(self, path: str, summary: ModuleSummary) -> tuple[str, ...]:
        """ProjectView.methods_uncalled_elsewhere: the method names of ``path``
        named for evaluation that no other module calls, in any mode."""
        names = asked_methods(f.name for f in summary.functions)
        if not names:
            return ()
        self.methods_off_elsewhere(path, summary)  # builds the callers' table once
        assert self._method_mode_users is not None
        off, on = self._method_mode_users
        found = []
        for name in sorted(names):
            callers = (off.get(name, set()) | on.get(name, set())) - {path}
            for other in callers:
                self._note_read(other)  # the view depends on each
            if next(self._users_in_order(path, name, "methods_off", callers), None) is not None:
                continue
            if next(self._users_in_order(path, name, "methods_on", callers), None) is None:
                found.append(name)
        return tuple(found)

    def _users_in_order(self, path: str, name: str, kind: str, others: set[str]) -> Iterator[str]:
        """``others`` and the needle holders left for later (narrow.py) whose
        ``kind`` entries use ``name``, sorted; a holder is summarised only
        when the question before it did not settle the answer."""
        for other in sorted(others.union(self.lazy_holding(name)) - {path}):
            if other in others:
                yield other
            elif any(e.partition("@")[0] == name for e in _field(self._held(other), kind)):
                self._note_read(other)
                yield other

    def _cpu_module(self, path: str, summary: ModuleSummary, spelled: str) -> bool:
        """``spelled`` (``p2ch14.model`` after ``import p2ch14.model``) is a
        project module whose every class is built on the CPU."""
        head, dot, rest = spelled.partition(".")
        if head not in summary.imports:
            return False
        found = self.resolve(summary.imports[head] + dot + rest, path)
        if found is None or found[1]:
            return False  # not a module of the project, or a name in one
        defining = self.summary(found[0])
        return defining is not None and (
            defining.cpu_module or self._cpu_package(found[0], defining) or self._builder_module(found[0])
        )

    def _builder_module(self, path: str) -> bool:
        """``path`` binds nothing at module level but functions (no class, no
        assignment) and star-imports nothing, and every one of them builds a model on the CPU (deepvoice3's
        builder.py: ``deepvoice3(...)``, ``nyanko(...)``, each returning
        ``MultiSpeakerTTSModel(...)``), every class it imports one that moves
        nothing: whatever ``getattr(builder, name)`` gives builds on the CPU."""
        if path in self._builder_guard:
            return False  # modules picking from each other: no answer
        defining = self.full_summary(path)
        if defining is None or defining.stars:
            return False
        names = [f.name for f in defining.functions if "." not in f.name]
        if not names or not set(defining.defines) <= set(names):
            return False  # a class, or a name bound by an assignment, may be picked too
        self._builder_guard.add(path)
        try:
            if not all(n in defining.cpu_builders or self._foreign_cpu_builder(path, defining, n) for n in names):
                return False
            return all(self._names_cpu_class(path, local) for local in defining.imports if local[:1].isupper())
        finally:
            self._builder_guard.discard(path)

    def _cpu_factory(self, path: str, summary: ModuleSummary, name: str) -> bool:
        """``name`` (imported here) is a project function returning one class of a
        registry (summary.factories) whose every source is a class or builder that
        moves nothing, or a module whose every class does (``@simpleunets``)."""
        if name not in summary.imports:
            return False
        found = self.resolve(summary.imports[name], path)
        if found is None or not found[1] or "." in found[1]:
            return False
        defining = self.summary(found[0])
        sources = defining.factories.get(found[1]) if defining is not None else None
        if not sources or defining is None:
            return False
        modules = [s[1:] for s in sources if s.startswith("@")]
        names = [s for s in sources if not s.startswith("@")]
        return all(self._cpu_module(found[0], defining, m) for m in modules) and self._cpu_table(
            found[0], defining, names
        )

    def _cpu_package(self, path: str, defining: ModuleSummary) -> bool:
        """``path`` only gathers other modules with star imports (a package's
        ``from .vgg import *``, defining nothing of its own), and every name
        they bring is a class or builder of the project that moves nothing,
        or an import from torch, numpy or the standard library: whatever
        ``getattr(models, name)`` (``models.__dict__[name]``) gives builds on the CPU."""
        if defining.defines or not defining.stars:
            return False
        if any(target.partition(".")[0] != "__future__" for target in defining.imports.values()):
            return False
        exports = self._exports(path)
        if not exports:
            return False
        for name, (kind, where) in exports.items():
            if kind == "import":
                if where.partition(".")[0] not in _SAFE_IMPORTS:
                    return False
                continue
            holder = self.summary(where)
            if holder is None or not (
                self._cpu_class_of(where, holder, name)
                or name in holder.cpu_builders
                or self._foreign_cpu_builder(where, holder, name)
            ):
                return False
        return True

    def _cpu_table(self, where: str, defining: ModuleSummary, names: list[str]) -> bool:
        """Every name a table of ``where`` holds is a class or builder of the
        project that moves nothing (its own, or one it imports)."""
        for name in names:
            if name in defining.imports:
                found = self.resolve(defining.imports[name], where)
                holder = self.summary(found[0]) if found is not None else None
                name = found[1] if found is not None else ""
            else:
                holder = defining
            if holder is None or not name or (name not in holder.cpu_classes and name not in holder.cpu_builders):
                return False
        return True

    def cpu_builders_everywhere(self, path: str, names: list[str]) -> list[str]:
        """The ``names`` (called through ``eval`` of a string) that every
        module of the project defining one defines as a CPU builder
        (summary.cpu_builders), and at least one does."""
        if not names:
            return []
        if self._definers is None:
            self._definers = {}
            for other, found in self.summaries.items():
                for name in _field(found, "defines"):
                    self._definers.setdefault(name, set()).add(other)
        return [n for n in names if self._all_build_on_cpu(n, self._definers.get(n, set()))]

    def _all_build_on_cpu(self, name: str, definers: set[str]) -> bool:
        for other in definers:
            self._note_read(other)  # the view depends on each (one may stop being a builder)
        return bool(definers) and all(self._builds_on_cpu_at(o, name) for o in definers)

    def _builds_on_cpu_at(self, path: str, name: str) -> bool:
        """``name`` is a CPU builder of ``path``, or a class of it that moves
        nothing, nor do the project classes it derives from or builds."""
        found = self.full_summary(path)
        if found is None:
            return False
        return name in found.cpu_builders or self._cpu_class_of(path, found, name)

    def grad_use_reaches(self, path: str, name: str, other: str, entries: list[str]) -> bool:
        """``other``'s ``entries`` (summary.loading_grad_uses) use the loading
        method ``name`` with grad on in a way that may run ``path``'s: not
        only on an instance of a class of the project that defines ``name``
        itself elsewhere (``name@target``)."""
        for entry in entries:
            used, _, target = entry.partition("@")
            if used != name:
                continue
            found = self.resolve(target, other) if target else None
            if found is None or found[0] == path or not found[1]:
                return True
            defining = self.summary(found[0])
            if defining is None or f"{found[1]}.{name}" not in {f.name for f in defining.functions}:
                return True  # it may inherit ``path``'s method
        return False


def called_name(site: CallSite) -> str:
    """The function name a call site spells last (``evaluate`` for
    ``engine.evaluate`` and ``*evaluate``): its text holds this word."""
    return site.callee.rpartition(".")[2].lstrip("*")


def _written_word(name: str) -> str:
    """What a module writing the file ``name`` names must spell: the name,
    or for a pattern (``*_*.pkl``) its extension."""
    return name if "*" not in name else "." + name.rsplit(".", 1)[-1]


def needles_for(summaries) -> tuple[bytes, ...]:
    """Words a module's text must hold to call into the modules of
    ``summaries``: the name of one of their module-level functions (a call
    spells it, whether through ``from m import f``, ``m.f``, a re-export or a
    star import). Only modules holding one are summarised for their calls."""
    names = {f.name for s in summaries if s is not None for f in s.functions if "." not in f.name}
    names.update(c for s in summaries if s is not None for c in s.classes)
    # A method that loads weights is called on instances: every module spelling it is read.
    names.update(n for s in summaries if s is not None for n in _loading_methods(s))
    # A checkpoint file it loads: a module writing it spells its name (_cpu_saved_files).
    # A pattern (``*_*.pkl``) may be written under any name with its extension.
    names.update(_written_word(n) for s in summaries if s is not None for n in s.loaded_files)
    # A method run on a model (``self.model.extract_feature(x)``): the
    # modules defining one say whether it is a forward (named_forwards).
    names.update(m for s in summaries if s is not None for m in model_methods(s.objects))
    # A method named for evaluation: a module calling it says in which grad
    # mode (methods_off_elsewhere); its holders are read lazily (triage_for).
    names.update(m for s in summaries if s is not None for m in asked_methods(f.name for f in s.functions))
    # A method called where a state dict is loaded: every module defining it
    # says whether it may move the model (method_still); read lazily.
    names.update(m for s in summaries if s is not None for m in s.called_methods)
    needles = {n.encode() for n in names}
    # An attribute of a plain class that another module may switch
    # (``solver.G.eval()``, ``evaluate(solver.G)``: _switched_attrs): a
    # module doing so spells it so, whether or not it spells a name of the
    # class's module (it may get the Solver from a factory).
    needles.update(n for s in summaries if s is not None for a in s.plain_attrs for n in attribute_needles(a))
    return tuple(sorted(needles))


# What follows ``.G`` where a module switches it (``.G.eval(``), runs it
# (``.G.forward(``) or hands it to a function that may (``f(solver.G)``,
# ``f(solver.G, x)``): the live index's attribute words are those so followed.
# Not every attribute spelled: on transformers almost every word-less module
# spells one of the plain classes' attributes (``.config``), 1 in 10 so.
# ``.cuda(``/``.to(``: ``trainer.model.cuda()`` moves a plain class's attribute (MEM701).
ATTRIBUTE_TAILS = (b".eval(", b".train(", b".forward(", b".__call__(", b".cuda(", b".to(", b")", b",")


def triage_for(needles: tuple[bytes, ...], summaries, paths: Iterable[str]) -> Triage:
    """narrow.Triage for views of the modules at ``paths`` whose summaries
    are ``summaries`` and needles ``needles`` (needles_for): which needle
    names their functions and classes, which a loading or model method."""
    found = [s for s in summaries if s is not None]
    calls = {f.name for s in found for f in s.functions if "." not in f.name}
    calls.update(c for s in found for c in s.classes)
    lazy = {n for s in found for n in _loading_methods(s)}
    lazy.update(m for s in found for m in model_methods(s.objects))
    lazy.update(m for s in found for m in asked_methods(f.name for f in s.functions))
    lazy.update(m for s in found for m in s.called_methods)
    attributes = {a for s in found for a in s.plain_attrs}
    return Triage(needles, calls, lazy, {n for s in found for n in s.eval_names}, paths, attributes)


def attribute_needles(attr: str) -> list[bytes]:
    return [b"." + attr.encode() + tail for tail in ATTRIBUTE_TAILS]


# Needles every text holds: summary_from_disk summarises the file whatever its words.
_ANY = (b"",)
# Summaries read from disk in this process, by (path, size, mtime): the
# summary, and whether the file holds a training word (None: not known).
# A word-less file summarised for needles (it may call into a viewed module)
# is still word-less to a call without needles: its own view asks nothing of
# others whatever was read before (flake8 and the server lint many files in
# one process; the order they come in must not change a view).
_MEMO: dict[tuple[str, int, int], tuple[ModuleSummary | None, bool | None]] = {}


def summary_from_disk(
    path: str,
    store=None,
    needles: tuple[bytes, ...] | None = None,
    digest: str | None = None,
    needleless: Needleless | None = None,
    prepared: tuple[str, ModuleSummary] | None = None,
) -> ModuleSummary | None:
    """A file's summary, from ``store`` by its digest or read and parsed;
    None for a file with no training word (summary.summarise_text) or, with
    ``needles``, one holding none of them. ``needleless``: the digests known
    to hold none of ``needles`` (a file of that ``digest``, its bytes as
    the caller read them, is not read again), and where the ones found so
    are added. ``prepared``: the digest of the file's bytes and their summary
    with ``always`` (a lint worker made it from the tree it parsed)."""
    try:
        st = os.stat(path)
        stamp = (path, st.st_size, st.st_mtime_ns)
    except OSError:
        return None
    memo = _MEMO.get(stamp)
    if memo is not None:
        summary, worth = memo
        if worth:
            return summary
        if needles is None and worth is False:
            return None
        if needles is not None and summary is not None:
            return summary
    if needleless is not None and digest is not None and digest in needleless.known:
        return None
    data = read_bytes(path)
    if data is None:
        return None
    if needles is not None and not holds_needle(data, needles):
        if needleless is not None:
            needleless.found.add(digest_of(data))
        return None  # not memoised: other needles may want it
    # A module that may call into the viewed ones is summarised even without
    # a training word (``main.py`` calling ``core.eval_tgt``).
    always = needles is not None
    digest = digest_of(data)
    summary = store.load(digest) if store is not None else None
    worth = None
    if summary is None or not always:
        text = _text(path, data)
        worth = worth_summarising(text)
        if summary is None:
            if always and prepared is not None and prepared[0] == digest:
                summary = prepared[1]  # the same bytes: summarise_text(text, always=True)
            else:
                summary = summarise_text(text, always=always)
            if store is not None and summary is not None:
                store.store(digest, summary)
        if not always and not worth:
            summary = None  # the store's, made for needles: word-less all the same
    if len(_MEMO) > 100_000:
        _MEMO.clear()
    known = _MEMO.get(stamp)
    _MEMO[stamp] = (summary if summary is not None or known is None else known[0], worth)
    return summary


def _text(path: str, data: bytes) -> str:
    """The text summarised: a notebook's code cells."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = ""
    if path.endswith(".ipynb"):
        from memlint.project.notebook_code import notebook_code

        text = notebook_code(text)
    return text


class Needleless:
    """Digests of files holding none of one set of needles: the ``known``
    ones (the summary store's, from an earlier run) and those ``found`` now.
    A warm run after an edit reads again only the files that changed, not
    every file without a training word (transformers: 1,354 files, half of
    the index's cost)."""

    def __init__(self, known: frozenset[str] = frozenset()) -> None:
        self.known = known
        self.found: set[str] = set()


def build_index(
    root: str,
    known: dict[str, ModuleSummary | dict | None] | None = None,
    store=None,
    files: list[str] | None = None,
    needles: tuple[bytes, ...] | None = None,
    viewed: Iterable[str] = (),
    digests: dict[str, str] | None = None,
    prepared: dict[str, tuple[str, ModuleSummary]] | None = None,
    triage: Triage | None = None,
) -> ProjectIndex | None:
    """The index of the project at ``root``: summaries from ``known`` (already
    computed, e.g. by the lint workers), else from ``store`` or the disk
    (only for files holding one of ``needles``, whose calls may matter, and
    the ``viewed`` files themselves). ``digests``: the digests of files
    this run has read, by absolute path (with ``store`` and ``needles``:
    a file the store knows to hold no needle is not read again).
    ``prepared``: word-less files' needle summaries the lint workers made,
    by absolute path (summary_from_disk). ``triage``: which needle holders
    are summarised now and which only when the views ask (narrow.py; a
    file with a prepared summary is summarised now: it costs nothing).
    None when the folder is too large to be one project."""
    from memlint.project.roots import root_limit

    files = files if files is not None else project_files(root, root_limit(root))
    if files is None:
        return None
    known = {os.path.abspath(p): s for p, s in (known or {}).items()}
    viewed = frozenset(os.path.abspath(p) for p in viewed)
    wanted = frozenset(n.decode() for n in needles) if needles is not None else None
    digests = digests or {}
    prepared = prepared or {}
    needleless = None
    if store is not None and needles is not None and digests:
        needleless = Needleless(store.needleless(needles))
    summaries = {}
    wordless = set()
    lazy: dict[str, frozenset[str]] = {}
    for f in files:
        f = os.path.abspath(f)
        if f in known:
            summaries[f] = known[f]
        elif f in viewed:
            summaries[f] = summary_from_disk(f, store)
            if summaries[f] is None and needles is not None:
                # Word-less, so its own view asks nothing of others; but its
                # calls count in the others' views, as when it is not viewed.
                summaries[f] = summary_from_disk(f, store, _ANY, prepared=prepared.get(f))
                wordless.add(f)
        elif triage is not None and f not in prepared and not _known_needleless(needleless, digests.get(f)):
            summaries[f] = None
            verdict, words = _triaged(f, triage, needleless)
            if verdict == EAGER:
                summaries[f] = summary_from_disk(f, store, _ANY)
            elif verdict == LAZY:
                lazy[f] = words
        else:
            summaries[f] = summary_from_disk(f, store, needles, digests.get(f), needleless, prepared.get(f))
    if needleless is not None and needleless.found - needleless.known:
        store.store_needleless(needles, needleless.known | needleless.found)
    index = ProjectIndex(root, summaries, wanted, lazy, (store, needles))
    index.wordless = frozenset(wordless)
    return index


def _known_needleless(needleless: Needleless | None, digest: str | None) -> bool:
    return needleless is not None and digest is not None and digest in needleless.known


def _triaged(path: str, triage: Triage, needleless: Needleless | None) -> tuple[int, frozenset[str]]:
    """narrow.py's verdict on the file at ``path`` and the lazily asked
    words it holds; one known to hold no needle is remembered so
    (``needleless``: the next run does not read it)."""
    data = read_bytes(path)
    if data is None:
        return LAZY, frozenset()
    verdict, words = triage.verdict(data, path)
    if verdict == NONE and needleless is not None:
        needleless.found.add(digest_of(data))
    return verdict, words


def _store(cache_dir: str | None):
    if cache_dir is None:
        return None
    from memlint.project.store import SummaryStore

    return SummaryStore(cache_dir)


def view_from_disk(path: str, cache_dir: str | None = None) -> ProjectView | None:
    """The view of ``path``'s project as it is on disk (the flake8 plugin, the
    language server, fix and diff). Summaries are kept per process by file
    size and mtime (a changed file is read again) and in ``cache_dir``'s
    store by digest; only modules that may call into ``path`` are parsed."""
    root = project_root(path)
    store = _store(cache_dir)
    own = summary_from_disk(os.path.abspath(path), store)
    needles = needles_for([own])
    index = build_index(root, store=store, needles=needles, viewed=[path], triage=triage_for(needles, [own], [path]))
    return index.view_for(path) if index is not None else None


def _field(summary: ModuleSummary | dict | None, name: str) -> list[str]:
    """A list field of a summary or of its JSON (a cache entry's, read as it is)."""
    if summary is None:
        return []
    return list(summary.get(name, ())) if isinstance(summary, dict) else list(getattr(summary, name))


def _loading_methods(summary: ModuleSummary) -> set[str]:
    """The module's method names that say they load weights (``DLA.load_pretrained_model``)."""
    return {m for f in summary.functions if "." in f.name for m in [f.name.rpartition(".")[2]] if loading_name(m)}
