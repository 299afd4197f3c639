"""`memlint server` against the real server process, driven by pytest-lsp."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pytest_lsp")
pytest.importorskip("pygls.lsp.server")

import pytest_lsp  # noqa: E402
from lsprotocol import types  # noqa: E402
from pytest_lsp import LanguageClient  # noqa: E402
from server_client import (  # noqa: E402
    apply_edits,
    config,
    open_doc,
    published,
    replace_text,
    start,
    summary,
)

from memlint import rule_doc_url  # noqa: E402
from memlint.fix.fixer import fix_text  # noqa: E402
from memlint.rule.registry import rule_by_code, select_rules  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

VALIDATE = """\
import torch


def validate(model, loader):
    model.eval()
    for x, y in loader:
        out = model(x)
"""

CLEAN = """\
import torch


@torch.no_grad()
def validate(model, loader):
    model.eval()
    for x, y in loader:
        out = model(x)
"""


# One server for the tests that change no settings (each uses its own files),
# a fresh one for those that do: starting the server is most of a test's time.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=config(), scope="module")
async def client(lsp_client: LanguageClient, tmp_path_factory):
    await start(lsp_client, tmp_path_factory.mktemp("workspace"))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=config(), loop_scope="module")
async def fresh_client(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, tmp_path)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=config(), loop_scope="module")
async def unsafe_client(lsp_client: LanguageClient, tmp_path):
    await start(lsp_client, tmp_path, {"memlint": {"unsafeFixes": True}})
    yield
    await lsp_client.shutdown_session()


def check_json(*paths: Path) -> list[dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--output-format", "json", *map(str, paths)],
        capture_output=True,
        text=True,
        cwd=paths[0].parent,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def expected_from_check(*paths: Path) -> dict[str, list[tuple]]:
    """What `memlint check` reports per file, in the server's terms (0-based
    lines; these files are ASCII, so UTF-16 columns are code points)."""
    from memlint.reporters import severity

    error, warning = types.DiagnosticSeverity.Error, types.DiagnosticSeverity.Warning
    found: dict[str, list[tuple]] = {str(p.resolve()): [] for p in paths}
    for f in check_json(*paths):
        found[str(Path(f["filename"]).resolve())].append(
            (
                f["code"],
                f["message"],
                f["location"]["row"] - 1,
                f["location"]["column"] - 1,
                f["end_location"]["row"] - 1,
                f["end_location"]["column"] - 1,
                error if severity(f["code"]) == "error" else warning,
            )
        )
    return found


def actions_at(client, uri: str, line: int, only=None):
    return client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line, character=0)),
            context=types.CodeActionContext(diagnostics=[], only=only),
        )
    )


async def test_diagnostics_on_open_match_check(client, tmp_path):
    path = tmp_path / "validate.py"
    path.write_text(VALIDATE)
    uri = open_doc(client, path, VALIDATE)
    params = await published(client, uri, version=1)
    assert summary(params.diagnostics) == expected_from_check(path)[str(path.resolve())]
    (diagnostic,) = params.diagnostics
    assert diagnostic.code == "MEM201" and diagnostic.source == "memlint"
    # The rule's page on the docs site (tests/test_docs.py: the site builds it).
    assert diagnostic.code_description.href == rule_doc_url("MEM201")


async def test_diagnostics_follow_changes(client, tmp_path):
    uri = open_doc(client, tmp_path / "validate.py", VALIDATE)
    assert [d.code for d in (await published(client, uri, version=1)).diagnostics] == ["MEM201"]
    replace_text(client, uri, CLEAN, version=2)
    assert list((await published(client, uri, version=2)).diagnostics) == []
    replace_text(client, uri, VALIDATE, version=3)
    assert [d.code for d in (await published(client, uri, version=3)).diagnostics] == ["MEM201"]


async def test_real_training_script_gets_mem201_and_mem701_and_a_quick_fix(client):
    path = ROOT / "fixtures" / "server" / "train_classifier.py"
    before = len(client.published)
    uri = open_doc(client, path, path.read_text())
    diagnostics = (await published(client, uri, version=1, after=before)).diagnostics
    assert [d.code for d in diagnostics] == ["MEM201", "MEM701"]
    mem201 = diagnostics[0]
    actions = await actions_at(client, uri, mem201.range.start.line, only=[types.CodeActionKind.QuickFix])
    assert [a.title for a in actions] == [
        "MEM201: Decorate `validate` with `@torch.no_grad()`",
        "MEM201: ignore with # noqa: MEM201",
    ]


# Enough code that one lint takes far longer than the burst takes to arrive,
# however fast the machine: coalescing is then what decides the count.
PADDING = "".join(f"\ndef helper_{i}(x):\n    y = x * {i}\n    return torch.relu(y) + y\n" for i in range(600))


async def test_a_burst_of_edits_is_linted_once_for_the_newest_text(client, tmp_path):
    clean, validate = CLEAN + PADDING, VALIDATE + PADDING
    uri = open_doc(client, tmp_path / "validate.py", clean)
    await published(client, uri, version=1)
    before = len(client.published)
    for version in range(2, 30):
        replace_text(client, uri, validate if version % 2 else clean, version)
    replace_text(client, uri, validate, 30)
    final = await published(client, uri, version=30, after=before)
    assert [d.code for d in final.diagnostics] == ["MEM201"]
    burst = [p for p in client.published[before:] if p.uri == uri]
    assert len(burst) < 10  # coalesced, not one lint per keystroke
    assert burst[-1].version == 30  # nothing stale published after the newest


async def test_quick_fix_gives_exactly_the_fix_result(client, tmp_path):
    path = tmp_path / "validate.py"
    path.write_text(VALIDATE)
    uri = open_doc(client, path, VALIDATE)
    await published(client, uri, version=1)
    actions = await actions_at(client, uri, 5, only=[types.CodeActionKind.QuickFix])
    (fix,) = [a for a in actions if "noqa" not in a.title]
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
    assert fix.diagnostics[0].code == "MEM201"
    fixed = apply_edits(VALIDATE, fix.edit.changes[uri])
    subprocess.run([sys.executable, "-m", "memlint", "check", "--fix", "--no-cache", str(path)], capture_output=True)
    assert fixed == path.read_text() == CLEAN


async def test_quick_fix_adds_the_import_it_needs(client, tmp_path):
    text = VALIDATE.replace("import torch\n", "from torch import nn\n")
    uri = open_doc(client, tmp_path / "validate.py", text)
    assert [d.code for d in (await published(client, uri, version=1)).diagnostics] == ["MEM201"]
    actions = await actions_at(client, uri, 5, only=[types.CodeActionKind.QuickFix])
    (fix,) = [a for a in actions if "noqa" not in a.title]
    rules = select_rules()
    assert apply_edits(text, fix.edit.changes[uri]) == fix_text(text, "validate.py", rules).text


def _unsafe_example():
    rule = rule_by_code("MEM103")
    example = rule.invalid[0]
    assert rule.fix_safety.value == "unsafe" and example.fixed is not None
    return rule, example


async def test_unsafe_fixes_are_offered_only_when_allowed(client, tmp_path):
    rule, example = _unsafe_example()
    uri = open_doc(client, tmp_path / "retain.py", example.source)
    (diagnostic,) = (await published(client, uri, version=1)).diagnostics
    actions = await actions_at(client, uri, diagnostic.range.start.line)
    assert [a.title for a in actions or []] == [f"{rule.code}: ignore with # noqa: {rule.code}"]


async def test_unsafe_fix_is_labelled_when_allowed(unsafe_client, tmp_path):
    rule, example = _unsafe_example()
    uri = open_doc(unsafe_client, tmp_path / "retain.py", example.source)
    (diagnostic,) = (await published(unsafe_client, uri, version=1)).diagnostics
    actions = await actions_at(unsafe_client, uri, diagnostic.range.start.line)
    (fix,) = [a for a in actions if "noqa" not in a.title]
    assert "unsafe" in fix.title and not fix.is_preferred
    assert apply_edits(example.source, fix.edit.changes[uri]) == example.fixed


async def test_fix_all_applies_every_safe_fix_as_check_fix_does(client, tmp_path):
    source = ROOT / "fixtures" / "examples" / "train_leaky.py"
    text = source.read_text()
    path = tmp_path / "train_leaky.py"
    path.write_text(text)
    uri = open_doc(client, path, text)
    await published(client, uri, version=1)
    actions = await actions_at(client, uri, 0, only=[types.CodeActionKind.SourceFixAll])
    (fix_all,) = actions
    assert fix_all.kind == "source.fixAll.memlint"
    fixed = apply_edits(text, fix_all.edit.changes[uri])
    subprocess.run([sys.executable, "-m", "memlint", "check", "--fix", "--no-cache", str(path)], capture_output=True)
    assert fixed == path.read_text() != text


async def test_noqa_action_silences_the_finding_and_merges(client, tmp_path):
    uri = open_doc(client, tmp_path / "validate.py", VALIDATE)
    await published(client, uri, version=1)
    actions = await actions_at(client, uri, 5)
    (noqa,) = [a for a in actions if "noqa" in a.title]
    silenced = apply_edits(VALIDATE, noqa.edit.changes[uri])
    assert "    for x, y in loader:  # noqa: MEM201\n" in silenced
    replace_text(client, uri, silenced, version=2)
    assert list((await published(client, uri, version=2)).diagnostics) == []

    existing = VALIDATE.replace("in loader:", "in loader:  # noqa: MEM101")
    replace_text(client, uri, existing, version=3)
    assert [d.code for d in (await published(client, uri, version=3)).diagnostics] == ["MEM201"]
    (noqa,) = [a for a in await actions_at(client, uri, 5) if "noqa" in a.title]
    assert "in loader:  # noqa: MEM101, MEM201\n" in apply_edits(existing, noqa.edit.changes[uri])


async def test_hover_on_a_finding_shows_the_rule_docs(client, tmp_path):
    uri = open_doc(client, tmp_path / "validate.py", VALIDATE)
    await published(client, uri, version=1)
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=5, character=8)
        )
    )
    sections = rule_by_code("MEM201").doc_sections()
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert "MEM201" in hover.contents.value
    assert sections["What it does"] in hover.contents.value and sections["Example"] in hover.contents.value
    outside = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=0)
        )
    )
    assert outside is None


async def test_config_is_reloaded_when_pyproject_changes(fresh_client, tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.memlint]\n")
    uri = open_doc(fresh_client, tmp_path / "validate.py", VALIDATE)
    assert [d.code for d in (await published(fresh_client, uri, version=1)).diagnostics] == ["MEM201"]
    pyproject.write_text('[tool.memlint]\nignore = ["MEM201"]\n')
    before = len(fresh_client.published)
    fresh_client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    assert list((await published(fresh_client, uri, after=before)).diagnostics) == []
    pyproject.write_text("[tool.memlint]\n")
    before = len(fresh_client.published)
    fresh_client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=pyproject.as_uri()))
    )
    assert [d.code for d in (await published(fresh_client, uri, after=before)).diagnostics] == ["MEM201"]


async def test_a_broken_config_is_reported_and_linting_resumes_once_fixed(fresh_client, tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.memlint]\nignroe = ["MEM201"]\n')
    uri = open_doc(fresh_client, tmp_path / "validate.py", VALIDATE)
    assert list((await published(fresh_client, uri, version=1)).diagnostics) == []
    assert any("unknown key 'ignroe'" in m.message for m in fresh_client.messages)
    pyproject.write_text("[tool.memlint]\n")
    before = len(fresh_client.published)
    fresh_client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    assert [d.code for d in (await published(fresh_client, uri, after=before)).diagnostics] == ["MEM201"]


async def test_client_settings_select_and_ignore(fresh_client, tmp_path):
    uri = open_doc(fresh_client, tmp_path / "validate.py", VALIDATE)
    await published(fresh_client, uri, version=1)
    before = len(fresh_client.published)
    fresh_client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"memlint": {"ignore": ["MEM2"]}})
    )
    assert list((await published(fresh_client, uri, after=before)).diagnostics) == []
    before = len(fresh_client.published)
    fresh_client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"memlint": {"select": ["MEM201"]}})
    )
    assert [d.code for d in (await published(fresh_client, uri, after=before)).diagnostics] == ["MEM201"]


async def test_syntax_error_mid_edit_clears_findings_and_logs_why(client, tmp_path):
    uri = open_doc(client, tmp_path / "validate.py", VALIDATE)
    assert (await published(client, uri, version=1)).diagnostics
    broken = VALIDATE.replace("out = model(x)", "out = model(x")
    replace_text(client, uri, broken, version=2)
    assert list((await published(client, uri, version=2)).diagnostics) == []
    assert any("not linted until it parses" in m.message and "syntax error" in m.message for m in client.log_messages)
    replace_text(client, uri, VALIDATE, version=3)
    assert [d.code for d in (await published(client, uri, version=3)).diagnostics] == ["MEM201"]


def write_notebook(path: Path, cells: list[str]) -> None:
    """A notebook of a markdown cell followed by ``cells`` as code cells."""
    path.write_text(
        json.dumps(
            {
                "cells": [{"cell_type": "markdown", "metadata": {}, "source": "# notes"}]
                + [
                    {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": c}
                    for c in cells
                ],
                "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
                "nbformat": 4,
                "nbformat_minor": 5,
            }
        )
    )


def open_notebook(client, path: Path, cells: list[str]) -> list[str]:
    """Opens the notebook as a client that syncs notebooks does; returns the
    cells' uris (the markdown cell first)."""
    nb_uri = path.as_uri()
    cell_uris = [f"{nb_uri}#cell{i}" for i in range(len(cells) + 1)]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=nb_uri,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[types.NotebookCell(kind=types.NotebookCellKind.Markup, document=cell_uris[0])]
                + [types.NotebookCell(kind=types.NotebookCellKind.Code, document=u) for u in cell_uris[1:]],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=cell_uris[0], language_id="markdown", version=1, text="# notes")
            ]
            + [
                types.TextDocumentItem(uri=u, language_id="python", version=1, text=c)
                for u, c in zip(cell_uris[1:], cells)
            ],
        )
    )
    return cell_uris


def fixed_by_check(path: Path) -> list[str]:
    """The code cells' sources after `memlint check --fix` on the notebook."""
    proc = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--fix", "--no-cache", str(path)], capture_output=True, text=True
    )
    assert proc.returncode in (0, 1), proc.stderr
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def apply_cell_edits(cells: list[str], cell_uris: list[str], action) -> list[str]:
    changes = action.edit.changes
    assert set(changes) <= set(cell_uris[1:])
    return [apply_edits(text, changes.get(uri, [])) for text, uri in zip(cells, cell_uris[1:])]


NOTEBOOK_CELLS = [
    "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n",
    "def validate(model, loader):\n    model.eval()\n    for x, y in loader:\n        out = model(x)\n",
    "%matplotlib inline\nmodel.load_state_dict(torch.load('model.pt'))\n",
]


async def test_notebook_cells_are_linted_as_one_program_like_check(client, tmp_path):
    cells = NOTEBOOK_CELLS
    notebook = tmp_path / "train.ipynb"
    write_notebook(notebook, cells)
    expected = {}
    for f in check_json(notebook):
        expected.setdefault(f["cell"], []).append((f["code"], f["location"]["row"] - 1, f["location"]["column"] - 1))
    assert sorted(expected) == [3, 4]  # cells 3 and 4 (the markdown cell counts)
    cell_uris = open_notebook(client, notebook, cells)
    got = {}
    for number, uri in enumerate(cell_uris[1:], start=2):
        params = await published(client, uri)
        if params.diagnostics:
            got[number] = [(d.code, d.range.start.line, d.range.start.character) for d in params.diagnostics]
    assert got == expected

    # A noqa action in a cell edits that cell's text.
    (noqa,) = [a for a in await actions_at(client, cell_uris[2], 2) if "noqa" in a.title]
    assert "for x, y in loader:  # noqa: MEM201" in apply_edits(cells[1], noqa.edit.changes[cell_uris[2]])


async def test_a_quick_fix_in_a_notebook_cell_gives_the_fix_result(client, tmp_path):
    # The fix needs `import torch`, which no cell has: it lands in the first
    # code cell, as `check --fix` puts it, so the action edits two cells.
    cells = ["from torch import nn\nmodel = nn.Linear(2, 2)\n", NOTEBOOK_CELLS[1], "%time print(1)\n"]
    notebook = tmp_path / "quickfix.ipynb"
    write_notebook(notebook, cells)
    cell_uris = open_notebook(client, notebook, cells)
    assert [d.code for d in (await published(client, cell_uris[2])).diagnostics] == ["MEM201"]
    actions = await actions_at(client, cell_uris[2], 2, only=[types.CodeActionKind.QuickFix])
    (fix,) = [a for a in actions if "noqa" not in a.title]
    assert fix.is_preferred and fix.diagnostics[0].code == "MEM201" and fix.diagnostics[0].range.start.line == 2
    assert set(fix.edit.changes) == {cell_uris[1], cell_uris[2]}
    fixed = apply_cell_edits(cells, cell_uris, fix)
    assert fixed == fixed_by_check(notebook)
    assert "import torch\n" in fixed[0] and "@torch.no_grad()\ndef validate" in fixed[1]
    assert fixed[2] == cells[2]  # the magic is untouched


async def test_fix_all_in_a_notebook_gives_check_fix_result(client, tmp_path):
    notebook = tmp_path / "fixall.ipynb"
    cells = NOTEBOOK_CELLS
    write_notebook(notebook, cells)
    cell_uris = open_notebook(client, notebook, cells)
    await published(client, cell_uris[3])
    (fix_all,) = await actions_at(client, cell_uris[3], 0, only=[types.CodeActionKind.SourceFixAll])
    assert fix_all.kind == "source.fixAll.memlint"
    fixed = apply_cell_edits(cells, cell_uris, fix_all)
    assert fixed == fixed_by_check(notebook) != cells
    assert fixed[2].startswith("%matplotlib inline\n")  # magics put back


CRASHING_RULE = """\
from memlint.rule.registry import rule_by_code

def _boom(self, node):
    raise RuntimeError("planted bug")

rule_by_code("MEM701").visit_Call = _boom
"""


@pytest.fixture
def crash_env(tmp_path):
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "sitecustomize.py").write_text(CRASHING_RULE)
    return plugin


async def test_an_internal_error_in_one_rule_keeps_the_other_findings(tmp_path, crash_env):
    import os

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(crash_env), str(ROOT)]))
    lsp = await config(env).start()
    try:
        await start(lsp, tmp_path)
        text = VALIDATE + "\nmodel.load_state_dict(torch.load('model.pt'))\n"
        uri = open_doc(lsp, tmp_path / "validate.py", text)
        params = await published(lsp, uri, version=1)
        assert [d.code for d in params.diagnostics] == ["MEM201"]  # MEM701 is the broken rule
        assert any("MEM701" in m.message and "planted bug" in m.message for m in lsp.log_messages)
    finally:
        await lsp.shutdown_session()
        await lsp.stop()


FIXTURES = sorted(p for p in (ROOT / "fixtures").rglob("*.py"))


async def test_server_cli_and_flake8_agree_on_the_fixtures(client):
    assert len(FIXTURES) >= 15
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "flake8",
            "--isolated",
            "-j1",
            "--format=%(path)s|%(row)d|%(col)d|%(code)s|%(text)s",
            *map(str, FIXTURES),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    flake8 = {}
    for line in proc.stdout.splitlines():
        path, row, col, code, message = line.split("|", 4)
        if not code.startswith("MEM"):
            continue  # pycodestyle and pyflakes run too; flake8 decides which MEM rules run as usual
        flake8.setdefault(str(Path(path).resolve()), []).append((code, message, int(row) - 1, int(col) - 1))
    cli = expected_from_check(*FIXTURES)
    found_any = 0
    for path in FIXTURES:
        text = path.read_text()
        before = len(client.published)  # the shared server may have had the file open before
        uri = open_doc(client, path, text)
        server = summary((await published(client, uri, version=1, after=before)).diagnostics)
        assert server == cli[str(path)], path
        assert [s[:4] for s in server] == flake8.get(str(path), []), path
        found_any += bool(server)
    assert found_any >= 10
