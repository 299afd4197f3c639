"""What a run is asked to do (:class:`Settings`) and what it finds in one file
(:class:`FileReport`): the plain data passed between the runner, its worker
processes, the notebook path, the cache and the reporters."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memlint.find.torch_floor import TorchRange
    from memlint.lint.finding import Finding
    from memlint.project.summary import ModuleSummary
    from memlint.read.source import SourceFile
    from memlint.run.second_pass import Screened


@dataclass(frozen=True)
class Settings:
    """One file's settings: its config's, with the command line's on top.

    ``select``/``extend_select``/``ignore`` are the config file's; ``override``
    is the command line's (or an editor's) own (select, extend-select,
    ignore), applied after them as ruff does: a ``--select`` there replaces
    the config's selection, ignores included."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    override: tuple[tuple[str, ...] | None, tuple[str, ...], tuple[str, ...]] = (None, (), ())
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    root: str = "."
    mode: str = "check"  # check | fix | diff | add-noqa
    unsafe_fixes: bool = False
    with_edits: bool = False  # render fix edits (JSON/SARIF output)
    # ``torch-version`` from the configuration, and where it was set; without
    # it each file's torch range is read from its project (find/torch_floor.py).
    torch_version: str | None = None
    torch_version_where: str = ""

    def torch_for(self, path: str) -> TorchRange | None:
        """The torch releases the file's project accepts: the ``torch-version``
        setting, else what its project files declare."""
        from memlint.find.torch_floor import range_of_setting, torch_range_for

        setting = None
        if self.torch_version is not None:
            setting = range_of_setting(self.torch_version, self.torch_version_where)
        return torch_range_for(path, setting)


@dataclass
class FileReport:
    path: str
    findings: list[Finding] = field(default_factory=list)
    fixed: list[Finding] = field(default_factory=list)  # fixes applied (or that --diff would apply)
    error: str | None = None
    diff: str = ""
    digest: str | None = None  # sha256 of the bytes checked (for the cache)
    noqa_added: int = 0  # findings silenced by --add-noqa
    moot: int = 0  # findings --fix left without their own fix because other fixes ended them
    notes: list[str] = field(default_factory=list)  # said once per file, not findings (how it was read)
    # The project stage (memlint/project/): the module's summary (what other
    # modules may ask of it), whether its lint waits for its project's view
    # (a rule reads the project), and the digest of the view it was linted with.
    summary: ModuleSummary | None = None
    deferred: bool = False
    project: str | None = None
    project_state: str | None = None  # project/index.project_state when it was linted with a view
    # The project files that view read, relative to the project's root
    # (project/states.py: a later state keeps the entry unless one changed).
    deps: tuple[str, ...] | None = None
    summary_json: dict | None = None  # a cached entry's summary, read only when an index is built
    # A word-less .py file's summary as the index makes it for a module that
    # spells a needle (index.summary_from_disk), made by the worker from the
    # tree its gate parsed: the parent neither reads nor parses it again.
    # Never cached; dropped once the views are built.
    needle_summary: ModuleSummary | None = None
    # A deferred file's screening (run/second_pass.py), for the second pass: never cached.
    screened: Screened | None = None
    # Read from the warm index (run/warm_index.py): the summary is in the
    # cache entry, loaded only when an index of the project is built.
    partial: bool = False
    # --diff: the text --fix would write (memlint verify's project twin reads it
    # rather than a diff to apply); None in the other modes.
    fixed_text: str | None = None

    def module_summary(self) -> ModuleSummary | None:
        if self.summary is None and self.summary_json is not None:
            from memlint.project.summary import ModuleSummary

            self.summary = ModuleSummary.from_json(self.summary_json)
        return self.summary


def unified_diff(source: SourceFile, new_text: str) -> str:
    old = source.text.splitlines(keepends=True)
    new = new_text.splitlines(keepends=True)
    import difflib  # only --diff needs it

    lines = difflib.unified_diff(old, new, fromfile=f"a/{source.path}", tofile=f"b/{source.path}")
    out = []
    for line in lines:
        out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)
