"""The LSP wiring: which messages the server answers and how.

Linting runs on one thread (see :mod:`memlint.server.documents`), so the
event loop keeps reading messages while a document is linted. The
workspace's project index lives on that thread too (:mod:`.projects`): a
lint, a closed document or a file changed on disk updates it there, and the
open documents whose project view changed are linted again. Code actions
and hover use the latest result when it is for the document's current text;
otherwise, and for rendering fixes, they too run on that one thread, since
the engine keeps per-module state while it walks a module.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace.position_codec import PositionCodec

from memlint import __version__
from memlint.find.config import ConfigError
from memlint.fix.fixer import offset_to_position
from memlint.reporters import severity
from memlint.rule import Edit, Finding
from memlint.server.actions import (
    FIX_ALL,
    QUICKFIX,
    Action,
    CellAction,
    cell_fix_all,
    cell_quick_fixes,
    fix_all,
    noqa_actions,
    quick_fixes,
    wanted,
)
from memlint.server.documents import LintQueue
from memlint.server.hover import hover_markdown
from memlint.server.linting import LintResult, Program, lint_cells
from memlint.server.projects import ProjectSession
from memlint.server.rule_links import rule_link
from memlint.server.settings import ClientSettings, DocumentSettings, SettingsStore

SOURCE = "memlint"
# The queue's key for pending project changes (never a document's uri).
PROJECT = "memlint:project"


@dataclass
class Linted:
    """The last lint of a document: the result and what it was made with."""

    result: LintResult
    path: str
    settings: DocumentSettings


@dataclass
class LintedNotebook:
    """The last lint of a notebook: its program and the code cells' uris and
    texts it was made from."""

    program: Program | None
    cells: dict[str, tuple[int, str]]  # cell uri -> (cell index, text)
    path: str
    settings: DocumentSettings


class MemlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "memlint",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[
                    types.NotebookDocumentFilterWithCells(
                        cells=[types.NotebookCellLanguage(language="python")], notebook="*"
                    )
                ],
                save=True,
            ),
        )
        self.settings = SettingsStore()
        self.queue = LintQueue(self._lint_due)
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memlint-lint")
        self.linted: dict[str, Linted] = {}  # text document uri -> last lint
        self.cells: dict[str, tuple[str, list[Finding]]] = {}  # cell uri -> (text, findings)
        self.notebooks: dict[str, LintedNotebook] = {}  # notebook uri -> last lint
        self.notebook_of: dict[str, str] = {}  # cell uri -> notebook uri
        self._last_problem: dict[str, str | None] = {}
        self._config_errors_shown: set[str] = set()
        self.projects = ProjectSession()  # used on the lint thread only
        # For the lint thread: ("close", uri, path), ("disk", paths), ("rescan",).
        self.project_changes: list[tuple] = []
        self.watching_files = False  # the client reports changes of **/*.py

    # -- paths, settings, logging ------------------------------------------
    def path_of(self, uri: str) -> str:
        path = to_fs_path(uri)
        if path:
            return path
        # An unsaved buffer: the workspace's config applies.
        return os.path.join(self.workspace.root_path or os.getcwd(), "untitled.py")

    def settings_for(self, uri: str, path: str) -> DocumentSettings | None:
        try:
            return self.settings.for_document(path)
        except ConfigError as exc:
            message = f"memlint: configuration error, nothing is linted: {exc}"
            self.log(types.MessageType.Error, message)
            if message not in self._config_errors_shown:
                self._config_errors_shown.add(message)
                self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))
            return None

    def log(self, kind: types.MessageType, message: str) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def relint_all(self) -> None:
        self._config_errors_shown.clear()
        cells = {cell.document for nb in self.workspace.notebook_documents.values() for cell in nb.cells}
        for uri, document in list(self.workspace.text_documents.items()):
            if uri not in cells and _is_python(document):
                self.queue.request(uri)
        for uri in list(self.workspace.notebook_documents):
            self.queue.request(uri)

    def project_changed(self, change: tuple) -> None:
        self.project_changes.append(change)
        self.queue.request(PROJECT)

    def _apply_project_changes(self, changes: list[tuple]) -> list[str]:
        stale: set[str] = set()
        for change in changes:
            if change[0] == "close":
                stale.update(self.projects.close(change[1], change[2]))
            elif change[0] == "disk":
                stale.update(self.projects.disk_changed(change[1]))
            else:
                stale.update(self.projects.rescan())
        return sorted(stale)

    # -- linting -------------------------------------------------------------
    async def _lint_due(self, key: str) -> None:
        if key == PROJECT:
            changes, self.project_changes = self.project_changes, []
            for uri in await self.on_lint_thread(self._apply_project_changes, changes):
                self.queue.request(uri)
            return
        notebook = self.workspace.get_notebook_document(notebook_uri=key)
        if notebook is not None:
            await self._lint_notebook(key, notebook)
            return
        document = self.workspace.text_documents.get(key)
        if document is None:
            return
        text, version, path = document.source, document.version, self.path_of(key)
        settings = self.settings_for(key, path)
        if settings is None:
            self.publish(key, version, [])
            return
        result, stale = await self.on_lint_thread(self.projects.lint, key, text, path, settings)
        for uri in stale:  # their view changed with this text: their findings may have
            self.queue.request(uri)
        if self.queue.is_due(key) or key not in self.workspace.text_documents:
            return  # edited or closed meanwhile: the newer text is due
        self.report_problems(key, result.problem, result.rule_errors)
        # The last lint's tree is freed after publishing, not before: freeing
        # a 300-line script's tree takes about a millisecond.
        previous = self.linted.get(key)
        self.linted[key] = Linted(result, path, settings)
        self.publish(
            key, version, [diagnostic(f, self.workspace.position_codec, _lines(text)) for f in result.findings]
        )
        del previous

    async def _lint_notebook(self, key: str, notebook: types.NotebookDocument) -> None:
        path = self.path_of(key)
        settings = self.settings_for(key, path)
        code = [
            (i, cell.document, self.workspace.get_text_document(cell.document).source)
            for i, cell in enumerate(notebook.cells)
            if cell.kind == types.NotebookCellKind.Code
        ]
        if settings is None:
            for _, uri, _ in code:
                self.publish(uri, None, [])
            return
        result = await self.on_lint_thread(
            lint_cells, [(i, text) for i, _, text in code], path, settings.rules, settings.torch
        )
        if self.queue.is_due(key) or self.workspace.get_notebook_document(notebook_uri=key) is None:
            return
        self.report_problems(key, "; ".join(result.problems) or None, result.rule_errors)
        self.notebooks[key] = LintedNotebook(result.program, {uri: (i, text) for i, uri, text in code}, path, settings)
        for index, uri, text in code:
            self.notebook_of[uri] = key
            findings = result.findings.get(index, [])
            self.cells[uri] = (text, findings)
            self.publish(uri, None, [diagnostic(f, self.workspace.position_codec, _lines(text)) for f in findings])

    def report_problems(self, key: str, problem: str | None, rule_errors: Sequence[str]) -> None:
        if problem != self._last_problem.get(key):  # not once per keystroke
            self._last_problem[key] = problem
            if problem is not None:
                self.log(types.MessageType.Info, f"memlint: {key}: not linted until it parses: {problem}")
        for error in rule_errors:
            self.log(types.MessageType.Error, f"memlint: {key}: internal error, other rules still report: {error}")

    def publish(self, uri: str, version: int | None, diagnostics: list[types.Diagnostic]) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=diagnostics)
        )

    async def current(self, uri: str) -> Linted | None:
        """The lint of the document's current text (linting it now if the last
        result is older). Every lint runs on the one lint thread: the engine
        keeps per-module state while it walks a module."""
        document = self.workspace.text_documents.get(uri)
        if document is None:
            return None
        linted = self.linted.get(uri)
        if linted is not None and linted.result.text == document.source:
            return linted
        path = self.path_of(uri)
        settings = self.settings_for(uri, path)
        if settings is None:
            return None
        result, stale = await self.on_lint_thread(self.projects.lint, uri, document.source, path, settings)
        for other in stale:
            self.queue.request(other)
        return Linted(result, path, settings)

    def on_lint_thread(self, fn, *args):
        return asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)


def _lines(text: str) -> tuple[str, ...]:
    return tuple(text.splitlines(True))


def _range(codec: PositionCodec, lines: Sequence[str], start: tuple[int, int], end: tuple[int, int]) -> types.Range:
    """From (1-based line, column in code points) to the client's units."""
    return types.Range(
        start=codec.position_to_client_units(lines, types.Position(line=start[0] - 1, character=start[1])),
        end=codec.position_to_client_units(lines, types.Position(line=end[0] - 1, character=end[1])),
    )


def diagnostic(f: Finding, codec: PositionCodec, lines: Sequence[str]) -> types.Diagnostic:
    return types.Diagnostic(
        range=_range(codec, lines, (f.line, f.column), (f.end_line, f.end_column)),
        message=f.message,
        severity=types.DiagnosticSeverity.Error if severity(f.code) == "error" else types.DiagnosticSeverity.Warning,
        code=f.code,
        code_description=types.CodeDescription(href=rule_link(f.code)),
        source=SOURCE,
    )


def _text_edits(codec: PositionCodec, text: str, edits: Sequence[Edit]) -> list[types.TextEdit]:
    lines = _lines(text)
    return [
        types.TextEdit(
            range=_range(codec, lines, offset_to_position(text, e.start), offset_to_position(text, e.end)),
            new_text=e.content,
        )
        for e in edits
    ]


def _cell_code_action(
    codec: PositionCodec, texts: dict[int, tuple[str, str]], asked: tuple[str, str], action: CellAction
) -> types.CodeAction:
    """``texts``: cell index -> (uri, text); ``asked``: the cell the action
    was asked for, whose lines the action's findings count."""
    lines = _lines(asked[1])
    return types.CodeAction(
        title=action.title,
        kind=action.kind,
        diagnostics=[diagnostic(f, codec, lines) for f in action.findings] or None,
        is_preferred=action.preferred or None,
        edit=types.WorkspaceEdit(
            changes={texts[i][0]: _text_edits(codec, texts[i][1], [e]) for i, e in sorted(action.edits.items())}
        ),
    )


def _code_action(codec: PositionCodec, uri: str, text: str, action: Action) -> types.CodeAction:
    lines = _lines(text)
    return types.CodeAction(
        title=action.title,
        kind=action.kind,
        diagnostics=[diagnostic(f, codec, lines) for f in action.findings] or None,
        is_preferred=action.preferred or None,
        edit=types.WorkspaceEdit(changes={uri: _text_edits(codec, text, action.edits)}),
    )


server = MemlintServer()


@server.feature(types.INITIALIZE)
def initialize(ls: MemlintServer, params: types.InitializeParams) -> None:
    _set_client_settings(ls, params.initialization_options)


def _set_client_settings(ls: MemlintServer, data) -> None:
    try:
        ls.settings.client = ClientSettings.from_json(data)
    except ConfigError as exc:
        ls.log(types.MessageType.Error, f"memlint: {exc}; client settings ignored")
        ls.settings.client = ClientSettings()


@server.feature(types.INITIALIZED)
def initialized(ls: MemlintServer, params: types.InitializedParams) -> None:
    watched = ls.client_capabilities.workspace and ls.client_capabilities.workspace.did_change_watched_files
    if watched and watched.dynamic_registration:
        # pyproject.toml: settings; *.py: the project index (a git checkout,
        # another tool's write, a file created or deleted).
        ls.watching_files = True
        ls.client_register_capability(
            types.RegistrationParams(
                registrations=[
                    types.Registration(
                        id="memlint-pyproject",
                        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        register_options=types.DidChangeWatchedFilesRegistrationOptions(
                            watchers=[
                                types.FileSystemWatcher(glob_pattern="**/pyproject.toml"),
                                types.FileSystemWatcher(glob_pattern="**/*.py"),
                            ]
                        ),
                    )
                ]
            )
        )


def _is_python(document) -> bool:
    return document.language_id == "python" or document.uri.endswith((".py", ".pyi"))


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: MemlintServer, params: types.DidOpenTextDocumentParams) -> None:
    if _is_python(params.text_document):
        ls.queue.request(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: MemlintServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    document = ls.workspace.text_documents.get(uri)
    if document is not None and _is_python(document):
        ls.queue.request(uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: MemlintServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    if uri.endswith("pyproject.toml"):
        ls.settings.forget_configs()
        ls.relint_all()
        return
    document = ls.workspace.text_documents.get(uri)
    if document is not None and _is_python(document):
        # The index already holds the saved text (the editor's); without
        # file events, a save is when other changes on disk are looked for.
        ls.project_changed(("disk", [ls.path_of(uri)]) if ls.watching_files else ("rescan",))


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: MemlintServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.queue.discard(uri)
    ls.linted.pop(uri, None)
    ls.publish(uri, None, [])
    ls.project_changed(("close", uri, ls.path_of(uri)))


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
def notebook_open(ls: MemlintServer, params: types.DidOpenNotebookDocumentParams) -> None:
    ls.queue.request(params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def notebook_change(ls: MemlintServer, params: types.DidChangeNotebookDocumentParams) -> None:
    ls.queue.request(params.notebook_document.uri)
    structure = params.change.cells.structure if params.change.cells else None
    for closed in (structure.did_close or []) if structure else []:
        ls.cells.pop(closed.uri, None)
        ls.notebook_of.pop(closed.uri, None)
        ls.publish(closed.uri, None, [])


@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
def notebook_save(ls: MemlintServer, params: types.DidSaveNotebookDocumentParams) -> None:
    ls.queue.request(params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def notebook_close(ls: MemlintServer, params: types.DidCloseNotebookDocumentParams) -> None:
    ls.queue.discard(params.notebook_document.uri)
    ls.notebooks.pop(params.notebook_document.uri, None)
    for cell in params.cell_text_documents:
        ls.cells.pop(cell.uri, None)
        ls.notebook_of.pop(cell.uri, None)
        ls.publish(cell.uri, None, [])


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def watched_files(ls: MemlintServer, params: types.DidChangeWatchedFilesParams) -> None:
    if any(change.uri.endswith("pyproject.toml") for change in params.changes):
        ls.settings.forget_configs()
        ls.relint_all()
    modules = [ls.path_of(change.uri) for change in params.changes if change.uri.endswith(".py")]
    if modules:
        ls.project_changed(("disk", modules))


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def configuration(ls: MemlintServer, params: types.DidChangeConfigurationParams) -> None:
    _set_client_settings(ls, params.settings)
    ls.relint_all()


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]),
)
async def code_action(ls: MemlintServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    uri = params.text_document.uri
    only = params.context.only
    first, last = params.range.start.line + 1, params.range.end.line + 1
    if uri in ls.cells:  # a notebook cell: findings come from the whole notebook
        return await _cell_code_actions(ls, uri, first, last, only)
    linted = await ls.current(uri)
    if linted is None:
        return None
    result = linted.result
    here = [f for f in result.findings if f.line <= last and f.end_line >= first]

    def compute() -> list[Action]:  # fixes render and re-lint: on the lint thread
        actions: list[Action] = []
        if wanted(QUICKFIX, only):
            actions += quick_fixes(result, here, linted.settings.unsafe_fixes)
            actions += noqa_actions(result.text, here)
        if wanted(FIX_ALL, only):
            everything = fix_all(result, linted.path, linted.settings.rules, linted.settings.torch)
            if everything is not None:
                actions.append(everything)
        return actions

    actions = await ls.on_lint_thread(compute)
    return [_code_action(ls.workspace.position_codec, uri, result.text, a) for a in actions] or None


async def _cell_code_actions(
    ls: MemlintServer, uri: str, first: int, last: int, only: Sequence[str] | None
) -> list[types.CodeAction] | None:
    text, findings = ls.cells[uri]
    notebook = ls.notebooks.get(ls.notebook_of.get(uri, ""))
    if notebook is None or not _current(ls, notebook.cells):
        return None  # edited since: the newer text's lint is due
    here = [f for f in findings if f.line <= last and f.end_line >= first]
    index = notebook.cells[uri][0]
    program = notebook.program
    texts = {i: (u, t) for u, (i, t) in notebook.cells.items()}
    codec = ls.workspace.position_codec

    def compute() -> list[CellAction]:
        actions: list[CellAction] = []
        if program is not None and wanted(QUICKFIX, only):
            actions += cell_quick_fixes(program, index, here, notebook.settings.unsafe_fixes)
        if wanted(QUICKFIX, only):
            actions += [CellAction(a.title, a.kind, {index: a.edits[0]}, a.findings) for a in noqa_actions(text, here)]
        if program is not None and wanted(FIX_ALL, only):
            everything = cell_fix_all(program, notebook.path, notebook.settings.rules, notebook.settings.torch)
            if everything is not None:
                actions.append(everything)
        return actions

    actions = await ls.on_lint_thread(compute)
    return [_cell_code_action(codec, texts, (uri, text), a) for a in actions] or None


def _current(ls: MemlintServer, cells: dict[str, tuple[int, str]]) -> bool:
    for uri, (_, text) in cells.items():
        document = ls.workspace.text_documents.get(uri)
        if document is None or document.source != text:
            return False
    return True


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: MemlintServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    document = ls.workspace.text_documents.get(uri)
    if document is None:
        return None
    if uri in ls.cells:
        text, findings = ls.cells[uri]
        if text != document.source:
            return None
    else:
        linted = await ls.current(uri)
        if linted is None:
            return None
        findings = linted.result.findings
    where = document.position_from_client_units(params.position)
    markdown = hover_markdown(findings, where.line + 1, where.character)
    if markdown is None:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown))
