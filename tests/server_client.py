"""Helpers for the language-server tests: a pytest-lsp client that records
every publishDiagnostics, and waiting for the one a test expects."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities, make_test_lsp_client

SERVER = [sys.executable, "-m", "memlint", "server"]


def recording_client() -> LanguageClient:
    client = make_test_lsp_client()
    client.published = []  # type: ignore[attr-defined]

    def record(params: types.PublishDiagnosticsParams) -> None:
        client.published.append(params)  # type: ignore[attr-defined]
        client.diagnostics[params.uri] = params.diagnostics

    # Replaces pytest-lsp's handler, which keeps only the latest per document.
    client.protocol.fm.features.pop(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, None)
    client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(record)
    return client


def config(env: dict[str, str] | None = None) -> ClientServerConfig:
    return ClientServerConfig(server_command=SERVER, client_factory=recording_client, server_env=env)


async def start(client: LanguageClient, root: Path, options: dict | None = None) -> None:
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("neovim"),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="project")],
            initialization_options=options,
        )
    )


async def published(client: LanguageClient, uri: str, version: int | None = None, after: int = 0, timeout: float = 30):
    """The first publish for ``uri`` (with ``version``, when given) among those
    received after the first ``after``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for params in client.published[after:]:  # type: ignore[attr-defined]
            if params.uri == uri and (version is None or params.version == version):
                return params
        await asyncio.sleep(0.01)
    raise AssertionError(f"no diagnostics for {uri} (version {version}) within {timeout}s")


def open_doc(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
        )
    )
    return uri


def replace_text(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP edits (ASCII text: UTF-16 units are code points), last first."""
    lines = text.splitlines(keepends=True)

    def offset(pos: types.Position) -> int:
        return sum(len(line) for line in lines[: pos.line]) + pos.character

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


def summary(diagnostics) -> list[tuple]:
    return [
        (
            d.code,
            d.message,
            d.range.start.line,
            d.range.start.character,
            d.range.end.line,
            d.range.end.character,
            d.severity,
        )
        for d in diagnostics
    ]
