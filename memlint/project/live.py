"""The project index a long-lived process keeps in memory (the language
server): the same views as ``index.view_from_disk``, without reading the
whole project again on every lint, and with the editor's unsaved texts
standing in for their files.

Per project root, a ``LiveIndex`` holds the project's file list, each
module's summary (computed on first need, from the open document's text or
the file), and a word index: which files spell which identifier before a
call's parenthesis (and which attribute before a switch, ``.G.eval(``). A view of module ``m`` needs the calls of ``m``'s
functions from other modules; a call spells the function's name, so only
the files calling one of those words are summarised (``view_from_disk``'s
needles, narrowed to calls), and the word index
finds them without reading the project again. When a text changes, only its
own entries are replaced: the index costs one read of the project when it is
built and one module per change after that.
"""

from __future__ import annotations

import ast
import os
import re
import sys
import warnings
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from memlint.project.index import ATTRIBUTE_TAILS, ProjectIndex, called_name
from memlint.project.method_modes import asked_methods
from memlint.project.modules import ModuleMap, project_files
from memlint.project.notebook_code import notebook_code
from memlint.project.roots import project_root, root_limit, walkable
from memlint.project.summary import CallSite, ModuleSummary, summarise, worth_summarising
from memlint.project.typed_objects import TypedObjects
from memlint.project.view import Caller, ProjectView
from memlint.read.source import read_bytes

# A word a call may spell last: the name before a call's parenthesis
# (``evaluate(``, ``engine.evaluate (``, across a line break or a comment
# inside brackets) or before ``as`` (``from utils import evaluate as ev``:
# ``ev(...)`` is a call of ``evaluate``). Every call site of a name spells it
# so; a file that only mentions it (``torch.device`` as a word, a docstring)
# is not summarised for its calls: on transformers, most of the files that
# spell ``device`` or ``main`` call neither. Non-ASCII bytes are word bytes:
# an identifier's UTF-8 bytes are all >= 0x80. ``#[^\n]*\n`` ends at the
# line's end, so a line of ``#`` never backtracks. The identifier is taken
# whole (possessive from Python 3.11; before, it must end there): backtracking
# into it found only prefixes of longer names (``h`` of ``has``, ``bi`` of
# ``bias as``), words no call spells, and cost most of the first open of a
# large project (transformers: 17 of 24 CPU s, now about half of that).
_WHOLE = rb"*+)" if sys.version_info >= (3, 11) else rb"*)(?![A-Za-z0-9_\x80-\xff])"
_CALLED = re.compile(
    rb"(?<![A-Za-z0-9_\x80-\xff])([A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]"
    + _WHOLE
    + rb"(?:[ \t\r\n\f\\]|#[^\n]*\n)*(?:\(|as\b)"
)


# An attribute a module spells as a switch may (``solver.G.eval()``,
# ``evaluate(solver.G)``), indexed as ``.G``: such a module may spell no call
# of the class's module, and view_from_disk reads it by the same bytes
# (index.attribute_needles). About a tenth of the call words' scan.
_ATTRIBUTE = re.compile(
    rb"\.([A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]"
    + _WHOLE
    + rb"(?="
    + b"|".join(re.escape(t) for t in ATTRIBUTE_TAILS)
    + rb")"
)


def _words(data: bytes) -> frozenset[bytes]:
    return frozenset(_CALLED.findall(data)).union(b"." + a for a in _ATTRIBUTE.findall(data))


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return ""  # as index.summary_from_disk reads it


def _parse(text: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():  # invalid escapes: not ours to report
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


@dataclass
class _Module:
    summary: ModuleSummary  # every fact, whether or not it holds a training word
    worth: bool  # summary.worth_summarising: its own view reads its facts

    def __post_init__(self) -> None:
        # Its call sites by the function name they spell (index.called_name).
        self.sites: dict[str, list[CallSite]] = {}
        for site in self.summary.calls:
            self.sites.setdefault(called_name(site), []).append(site)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Module) and (self.summary, self.worth) == (other.summary, other.worth)


class LiveIndex(ProjectIndex):
    """One project's index, kept up to date text by text."""

    def __init__(self, root: str, files: list[str]) -> None:
        super().__init__(root, {})
        self._paths: list[str] = []  # file id -> path; ids are never reused
        self._ids: dict[str, int] = {}
        self._stamps: dict[str, tuple[int, int] | None] = {}  # the disk text the entries were read from
        self._texts: dict[str, str] = {}  # open documents: their text, not the file's
        self._modules: dict[str, _Module] = {}  # summaries computed so far
        # The word index: postings read once from disk when the index is
        # built (never edited), ``_stale`` the ids whose postings no longer
        # hold, ``_fresh`` the words of their text now.
        self._postings: dict[bytes, array] = {}
        self._stale: set[int] = set()
        self._fresh: dict[int, frozenset[bytes]] = {}
        # Bumped by every change of the project's texts or files: a view
        # computed at the same generation is still the view.
        self.generation = 0
        self._views: dict[str, tuple[int, ProjectView]] = {}
        for path in files:
            path = os.path.abspath(path)
            data = self._read(path)
            ident = self._id(path)
            for word in _words(data):
                found = self._postings.get(word)
                if found is None:
                    found = self._postings[word] = array("I")
                found.append(ident)
        self.modules = ModuleMap(self.root, list(self._ids))

    # -- files and texts -----------------------------------------------------
    def _id(self, path: str) -> int:
        ident = self._ids.get(path)
        if ident is None:
            ident = self._ids[path] = len(self._paths)
            self._paths.append(path)
        return ident

    def _read(self, path: str) -> bytes:
        self._stamps[path] = _stamp(path)
        return read_bytes(path) or b""

    def source_bytes(self, path: str) -> bytes:
        text = self._texts.get(path)
        return text.encode("utf-8", "surrogatepass") if text is not None else read_bytes(path) or b""

    def owns(self, path: str) -> bool:
        """Whether ``path`` is a module of this project (or would be, once it exists)."""
        return path.endswith(".py") and path.startswith(self.root + os.sep) and walkable(self.root, path)

    def set_text(self, path: str, text: str, tree: ast.Module | None = None) -> bool:
        """An open document's text replaces its file's; True when the
        module's summary changed (its dependants' views may have). A text
        that does not parse (mid-typing) keeps the module's last facts and
        words, so its dependants do not flicker."""
        path = os.path.abspath(path)
        if self._texts.get(path) == text:
            return False
        self._texts[path] = text
        if tree is None:
            tree = _parse(text)
        changed = self._list({path}, set())
        if tree is not None:
            self._set_words(path, text.encode("utf-8", "surrogatepass"))
            before = self._modules.get(path)
            module = self._modules[path] = _Module(summarise(tree), worth_summarising(text))
            if before is None:
                # Never summarised: no view read its facts, and views found it
                # by the words of its file. Opened as saved, it changes nothing.
                changed |= text != _decode(self._read(path))
            else:
                changed |= before != module
        if changed:
            self.generation += 1
        # Otherwise every view stands: a view reads a module's summary, and its
        # words only to find the modules whose summary to read.
        return changed

    def drop_text(self, path: str) -> bool:
        """The document was closed: its file's text counts again."""
        path = os.path.abspath(path)
        if self._texts.pop(path, None) is None:
            return False
        self._stamps.pop(path, None)  # read the file again
        return self.disk_changed([path])

    def disk_changed(self, paths: Iterable[str]) -> bool:
        """Files created, changed or deleted on disk (by the editor's save,
        by git): read again; True when any of them changed."""
        created: set[str] = set()
        deleted: set[str] = set()
        changed = False
        for path in paths:
            path = os.path.abspath(path)
            if not self.owns(path) or path in self._texts:
                continue  # an open document's text stands for its file
            stamp = _stamp(path)
            if stamp is not None and stamp == self._stamps.get(path) and path in self.modules.files:
                continue  # what was read (a save of the open text, a repeated event)
            self._modules.pop(path, None)
            self.generation += 1
            if stamp is None or not os.path.isfile(path):
                if path in self.modules.files:
                    deleted.add(path)
                    self._stale.add(self._ids[path])
                    self._fresh.pop(self._ids[path], None)
                    self._stamps.pop(path, None)
                continue
            if path not in self.modules.files:
                created.add(path)
            self._set_words(path, self._read(path))
            changed = True
        return self._list(created, deleted) or changed

    def rescan(self) -> bool:
        """Without file events from the editor: find what changed on disk
        (one walk and a ``stat`` per file)."""
        files = project_files(self.root, root_limit(self.root)) or []
        now = {os.path.abspath(f) for f in files}
        moved = [p for p in now | set(self.modules.files) if _stamp(p) != self._stamps.get(p)]
        return self.disk_changed(moved)

    def _list(self, created: set[str], deleted: set[str]) -> bool:
        """Add and remove files of the project: imports resolve anew."""
        created = {p for p in created if p not in self.modules.files and os.path.isfile(p)}
        deleted &= self.modules.files
        if not created and not deleted:
            return False
        for path in created:
            self._id(path)
        self.generation += 1
        self.modules = ModuleMap(self.root, sorted((self.modules.files | created) - deleted))
        return True

    def _set_words(self, path: str, data: bytes) -> None:
        ident = self._id(path)
        self._stale.add(ident)
        self._fresh[ident] = _words(data)

    def _holding(self, word: bytes) -> set[str]:
        """The project's files whose text spells ``word``."""
        paths = self._paths
        found = {paths[i] for i in self._postings.get(word, ()) if i not in self._stale}
        found.update(paths[i] for i, words in self._fresh.items() if word in words)
        return found & self.modules.files

    # -- summaries -------------------------------------------------------------
    def _module(self, path: str) -> _Module:
        module = self._modules.get(path)
        if module is None:
            text = self._texts.get(path)
            if text is None:
                text = _decode(self._read(path))
            if path.endswith(".ipynb"):  # its code cells, as the lint reads them
                text = notebook_code(text)
            tree = _parse(text)
            module = _Module(summarise(tree) if tree is not None else ModuleSummary(), worth_summarising(text))
            self._modules[path] = module
        return module

    def summary(self, path: str) -> ModuleSummary | None:
        return self._module(path).summary if path in self.modules.files else None

    def full_summary(self, path: str) -> ModuleSummary | None:
        if path not in self.modules.files:
            return None
        module = self._module(path)
        return module.summary if module.worth else None

    def own_summary(self, path: str) -> ModuleSummary:
        # As view_from_disk: a module without a training word asks nothing of others.
        module = self._module(path)
        return module.summary if module.worth else ModuleSummary()

    def calls_summary(self, path: str) -> ModuleSummary:
        # As ProjectIndex.calls_summary: read whole, training words or not.
        return self._module(path).summary

    def view_for(self, path: str) -> ProjectView:
        path = os.path.abspath(path)
        cached = self._views.get(path)
        if cached is not None and cached[0] == self.generation:
            return cached[1]  # the server asks for one view twice: its stale check, then the lint
        # ProjectIndex.view_for reads the calls into ``path`` only: those
        # are found for this view alone.
        self._callers, self._called_per_batch, self._built_per_batch = self._calls_into(path)
        methods, gpu_methods = self._methods_into(path)
        self._method_callers, self._gpu_method_callers = {path: methods}, {path: gpu_methods}
        try:
            view = super().view_for(path)
        finally:
            self._callers, self._called_per_batch, self._built_per_batch = {}, {}, {}
            self._method_callers, self._gpu_method_callers = {}, {}
        self._views[path] = (self.generation, view)
        return view

    def _calls_into(self, path: str) -> tuple[dict, dict, dict]:
        """ProjectIndex's call indexes, restricted to the calls of ``path``'s
        module-level functions and classes, from the modules that spell
        their names before a call's parenthesis (view_from_disk's needles), in the order its walk of the
        project meets them (the first call per batch is the one named)."""
        own = self.own_summary(path)
        names = {f.name for f in own.functions if "." not in f.name} | set(own.classes)
        holding: set[str] = set()
        for name in names:
            holding |= self._holding(name.encode())
        holding.discard(path)
        callers: dict[tuple[str, str], list[Caller]] = {}
        called: dict[tuple[str, str], str] = {}
        built: dict[tuple[str, str], str] = {}
        stars: dict[str, dict[str, tuple[str, str]]] = {}
        for other in sorted(holding, key=self._walk_order):
            module = self._module(other)
            display = self.modules.display(other)
            sites = [s for name in names for s in module.sites.get(name, ())]
            for site in sorted(sites, key=lambda s: (s.line, s.callee)):  # the summary's order
                target = self.call_target(other, site, stars)
                if target is None or target[0] != path:
                    continue
                caller = self.caller(display, site, other, stars)
                callers.setdefault(target, []).append(caller)
                if module.summary.trains:
                    called.setdefault(target, caller.where())
                if site.step:
                    built.setdefault(target, caller.where())
        return callers, called, built

    def _methods_into(self, path: str) -> tuple[dict[str, list[tuple[str, str]]], dict[str, list[str]]]:
        """ProjectIndex._index_methods restricted to the instances of
        ``path``'s classes, from the modules that spell a class's name: all
        the calls, and those whose result is loaded into a model on a device."""
        own = self.own_summary(path)
        holding: set[str] = set()
        for name in own.classes:
            holding |= self._holding(name.encode())
        holding.discard(path)
        out: dict[str, list[tuple[str, str]]] = {}
        gpu: dict[str, list[str]] = {}
        for other in sorted(holding, key=self._walk_order):
            display = self.modules.display(other)
            summary = self._module(other).summary
            grads = summary.method_grads if len(summary.method_grads) == len(summary.method_calls) else ()
            fed = set(summary.gpu_method_calls)
            for i, (spelled, line) in enumerate(summary.method_calls):
                cls, _, method = spelled.rpartition(".")
                target = self.resolve(cls, other)
                if target is not None and target[0] == path and target[1] and "." not in target[1]:
                    grad = grads[i] if grads else "unknown"
                    out.setdefault(f"{target[1]}.{method}", []).append((f"{display}:{line}", grad))
                    if (spelled, line) in fed:
                        gpu.setdefault(f"{target[1]}.{method}", []).append(f"{display}:{line}")
        return out, gpu

    def loading_used_elsewhere(self, path: str, names: set[str], kind: str = "loading_uses") -> list[str]:
        # The modules spelling a name are found by the word index, then read.
        return sorted(
            n
            for n in names
            if any(
                self.grad_use_reaches(path, n, other, self._module(other).summary.loading_grad_uses)
                if kind != "loading_uses"
                else n in self._module(other).summary.loading_uses
                for other in self._holding(n.encode()) - {path}
            )
        )

    def loading_users(self, path: str, name: str) -> Iterator[tuple[str, list[str]]]:
        # The modules spelling the name are found by the word index, then read.
        for other in sorted(self._holding(name.encode()) - {path}):
            found = self._module(other).summary
            if name in found.loading_uses:
                yield other, list(found.loading_cpu_uses)

    def methods_off_elsewhere(self, path: str, summary) -> tuple[str, ...]:
        # The modules spelling a method name are found by the word index, then read.
        found = []
        for name in sorted(asked_methods(f.name for f in summary.functions)):
            others = {o: self._module(o).summary for o in self._holding(name.encode()) - {path}}
            if any(name in s.methods_off for s in others.values()) and not any(
                self.on_call_reaches(path, name, o, s.methods_on) for o, s in sorted(others.items())
            ):
                found.append(name)
        return tuple(found)

    def methods_uncalled_elsewhere(self, path: str, summary) -> tuple[str, ...]:
        # The modules spelling a method name are found by the word index, then read.
        found = []
        for name in sorted(asked_methods(f.name for f in summary.functions)):
            others = [self._module(o).summary for o in self._holding(name.encode()) - {path}]
            if not any(name in s.methods_off or _names(s.methods_on, name) for s in others):
                found.append(name)
        return tuple(found)

    def cpu_builders_everywhere(self, path: str, names: list[str]) -> list[str]:
        # The modules defining a name spell it: found by the word index, then read.
        return [
            n
            for n in names
            if self._all_build_on_cpu(n, {o for o in self._holding(n.encode()) if n in self._module(o).summary.defines})
        ]

    def _switched_attrs(self, path: str, summary: ModuleSummary) -> tuple[str, ...]:
        # ProjectIndex's reads every summary it holds, and this index holds
        # none until asked: the modules that may call into ``path`` are read
        # (those spelling one of its functions or classes before a call's
        # parenthesis, word-less ones included: view_from_disk's needles),
        # and those spelling one of the attributes (``make_solver().G.eval()``).
        mine = set(summary.plain_attrs)
        names = {f.name for f in summary.functions if "." not in f.name} | set(summary.classes)
        holding: set[str] = set()
        for name in names:
            holding |= self._holding(name.encode())
        for attr in mine:
            holding |= self._holding(b"." + attr.encode())
        holding.discard(path)
        found: set[str] = set()
        for other in holding:
            found |= mine.intersection(self._module(other).summary.attr_switches)
        return tuple(sorted(found))

    def typed_objects(self) -> TypedObjects:
        if self._typed is None:
            self._typed = _LiveTyped(self)
        return self._typed

    def method_still(self, name: str) -> bool:
        """ProjectIndex.method_still over the word index (``summaries`` stays
        empty here): the files spelling ``name`` decide, each by its own
        summary's still and moving methods, as the disk index's do."""
        still = False
        for other in sorted(self._holding(name.encode()), key=self._walk_order):
            summary = self._module(other).summary
            if name in summary.moving_methods:
                return False
            still = still or name in summary.still_methods
        return still

    def _walk_order(self, path: str) -> tuple:
        """modules.project_files' order: a folder's files (sorted), then its
        subfolders (sorted), depth first."""
        parts = os.path.relpath(path, self.root).split(os.sep)
        return (*((1, d) for d in parts[:-1]), (0, parts[-1]))


class _LiveTyped(TypedObjects):
    """Types from call sites over the live index, whose ``summaries`` stay
    empty (modules are summarised on need): the sites of a name are read
    from the files that spell it before a call's parenthesis (the word
    index, as ``_calls_into``), word-less ones included, as view_from_disk's
    needles read them. Not kept across calls: texts change between views."""

    index: LiveIndex

    def sites_of(self, name: str) -> list[tuple[str, tuple]]:
        index = self.index
        out = []
        for other in sorted(index._holding(name.encode()), key=index._walk_order):
            objects = index._module(other).summary.objects
            if objects is not None:
                out += [(other, s) for s in objects.sites if s[0].rpartition(".")[2].lstrip(":*") == name]
        return out

    def definers_of(self, method: str) -> list[str]:
        # The files spelling the name (the word index), then their own summaries.
        index = self.index
        out = []
        for other in sorted(index._holding(method.encode()), key=index._walk_order):
            names = (f.name.rpartition(".") for f in index._module(other).summary.functions)
            if any(dot and m == method and "." not in cls for cls, dot, m in names):
                out.append(other)
        return out


class Workspace:
    """The live indexes of every project an editor has a document of, by root."""

    def __init__(self) -> None:
        self.indexes: dict[str, LiveIndex | None] = {}  # None: too large to be one project

    def index_for(self, path: str) -> LiveIndex | None:
        root = project_root(path)
        if root not in self.indexes:
            files = project_files(root, root_limit(root))
            self.indexes[root] = LiveIndex(root, files) if files is not None else None
        return self.indexes[root]

    def view(self, path: str) -> ProjectView | None:
        """The document's view, as view_from_disk gives it for its saved text
        (a file not saved yet has none)."""
        if not path.endswith(".py") or not os.path.isfile(path):
            return None
        index = self.index_for(path)
        return index.view_for(path) if index is not None else None

    def set_text(self, path: str, text: str, tree: ast.Module | None = None) -> bool:
        if not path.endswith(".py") or not os.path.isfile(path):
            return False
        index = self.index_for(path)
        return index.set_text(path, text, tree) if index is not None else False

    def drop_text(self, path: str) -> bool:
        return any(index.drop_text(path) for index in self._live())

    def disk_changed(self, paths: Iterable[str]) -> bool:
        paths = list(paths)
        return any([index.disk_changed(paths) for index in self._live()])

    def rescan(self) -> bool:
        return any([index.rescan() for index in self._live()])

    def _live(self) -> list[LiveIndex]:
        return [index for index in self.indexes.values() if index is not None]


def _names(entries: list[str], name: str) -> bool:
    """``entries`` (summary.methods_on) hold a call of ``name``, typed or not."""
    return any(e.partition("@")[0] == name for e in entries)
