"""`memlint server` keeps the workspace's project: an unsaved edit of one
module, a file changed on disk or a closed document re-publishes exactly the
open documents whose project view changed (the real server, over stdio)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pytest_lsp")
pytest.importorskip("pygls.lsp.server")

import pytest_lsp  # noqa: E402
from lsprotocol import types  # noqa: E402
from pytest_lsp import LanguageClient  # noqa: E402
from server_client import config, open_doc, published, replace_text, start  # noqa: E402

PROJECT = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "split_training"
MODULES = ("amp_setup.py", "engine.py", "models.py", "train.py", "utils.py")
CALL = "        val_loss = evaluate(model, val_loader)\n"
UNDER_NO_GRAD = "        with torch.no_grad():\n            val_loss = evaluate(model, val_loader)\n"

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=config(), loop_scope="module")
async def client(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, tmp_path)
    yield
    await lsp_client.shutdown_session()


def _copy(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    shutil.copytree(PROJECT, project)
    return project


async def _open(client, project: Path, names) -> dict[str, str]:
    uris = {}
    for name in names:
        uris[name] = open_doc(client, project / name, (project / name).read_text())
        await published(client, uris[name], version=1)
    return uris


def _codes(params) -> list[str]:
    return sorted(str(d.code) for d in params.diagnostics)


def _count(client, uri: str, after: int) -> int:
    return sum(p.uri == uri for p in client.published[after:])


async def test_an_unsaved_edit_of_a_caller_republishes_its_dependant_only(client, tmp_path):
    project = _copy(tmp_path)
    uris = await _open(client, project, MODULES)
    utils = await published(client, uris["utils.py"], version=1)
    assert _codes(utils) == ["MEM201"]
    assert "called with autograd on from train.py:18" in utils.diagnostics[0].message
    before = len(client.published)
    train = (project / "train.py").read_text()
    replace_text(client, uris["train.py"], train.replace(CALL, UNDER_NO_GRAD), version=2)  # not saved
    assert _codes(await published(client, uris["utils.py"], after=before)) == []
    await published(client, uris["train.py"], version=2, after=before)
    await asyncio.sleep(1)  # anything else the edit queued has been published by now
    # engine.py and amp_setup.py are called from train.py, but not from the
    # lines that moved; models.py is nobody's dependant.
    assert {name: _count(client, uri, before) for name, uri in uris.items()} == {
        "amp_setup.py": 0,
        "engine.py": 0,
        "models.py": 0,
        "train.py": 1,
        "utils.py": 1,
    }
    # Closed without saving: the file on disk counts again.
    before = len(client.published)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uris["train.py"]))
    )
    assert _codes(await published(client, uris["utils.py"], after=before)) == ["MEM201"]


async def test_a_module_changed_on_disk_republishes_its_dependant(client, tmp_path):
    project = _copy(tmp_path)
    uris = await _open(client, project, ("utils.py", "models.py"))
    train = project / "train.py"
    train.write_text(train.read_text().replace(CALL, UNDER_NO_GRAD))  # a git checkout, another tool
    before = len(client.published)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=train.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    assert _codes(await published(client, uris["utils.py"], after=before)) == []
    # A checkout: train.py deleted, a new caller runs evaluate with autograd on.
    train.unlink()
    report = project / "report.py"
    report.write_text("from utils import evaluate\n\nevaluate(None, [])\n")
    before = len(client.published)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(uri=train.as_uri(), type=types.FileChangeType.Deleted),
                types.FileEvent(uri=report.as_uri(), type=types.FileChangeType.Created),
            ]
        )
    )
    found = await published(client, uris["utils.py"], after=before)
    # evaluate() is called from report.py; validate() lost its only caller
    # (under no_grad) and is judged by its own file again.
    assert [(d.code, d.range.start.line + 1, d.message.endswith("from report.py:3)")) for d in found.diagnostics] == [
        ("MEM201", 11, True),
        ("MEM201", 20, False),
    ]
    await asyncio.sleep(0.5)
    assert _count(client, uris["models.py"], before) == 0


WORDLESS = PROJECT.parent / "wordless_callers"


async def test_the_deciding_modules_may_hold_no_training_word(client, tmp_path):
    """tests/test_front_end_parity.py's project over stdio: MEM201 from a
    parameter typed by a word-less caller, no MEM202 on a generator a
    word-less module switches (the CLI's findings)."""
    project = tmp_path / "wordless"
    shutil.copytree(WORDLESS, project)
    names = ("agents.py", "evaluation.py", "main.py", "model.py", "run.py", "solver.py")
    uris = await _open(client, project, names)
    found = []
    for name in names:
        params = await published(client, uris[name], version=1)
        found += [(name, d.range.start.line + 1, str(d.code)) for d in params.diagnostics]
    assert sorted(found) == [("evaluation.py", 7, "MEM201")]
