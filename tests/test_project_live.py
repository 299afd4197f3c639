"""The live project index (memlint/project/live.py): the views of
view_from_disk, kept in memory, with the editor's texts in place of files."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import memlint.project.index as index
from memlint.project.index import view_from_disk
from memlint.project.live import Workspace

PROJECT = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "split_training"
CALL = "        val_loss = evaluate(model, val_loader)\n"
UNDER_NO_GRAD = "        with torch.no_grad():\n            val_loss = evaluate(model, val_loader)\n"


@pytest.fixture
def project(tmp_path) -> Path:
    shutil.copytree(PROJECT, tmp_path / "proj")
    return tmp_path / "proj"


def _disk(path: Path):
    index._MEMO.clear()  # view_from_disk's memo keeps summaries across calls
    return view_from_disk(str(path))


def _grads(view) -> list[str]:
    return [c.grad for c in view.callers_of("evaluate")]


def test_views_are_those_of_the_project_on_disk(project):
    workspace = Workspace()
    for path in sorted(project.glob("*.py")):
        assert workspace.view(str(path)) == _disk(path), path.name
    train = project / "train.py"
    train.write_text(train.read_text().replace(CALL, UNDER_NO_GRAD))
    assert workspace.disk_changed([str(train)])
    for path in sorted(project.glob("*.py")):
        assert workspace.view(str(path)) == _disk(path), path.name


def test_an_open_documents_text_stands_for_its_file(project):
    workspace = Workspace()
    utils, train = project / "utils.py", project / "train.py"
    assert _grads(workspace.view(str(utils))) == ["on"]
    assert not workspace.set_text(str(train), train.read_text())  # opened as saved: nothing changed
    assert workspace.set_text(str(train), train.read_text().replace(CALL, UNDER_NO_GRAD))
    assert _grads(workspace.view(str(utils))) == ["off"]
    assert _grads(_disk(utils)) == ["on"]  # not saved
    # Mid-typing, a text that does not parse keeps the module's last facts.
    assert not workspace.set_text(str(train), train.read_text().replace(CALL, "        with torch.no_grad(:\n"))
    assert _grads(workspace.view(str(utils))) == ["off"]
    assert workspace.drop_text(str(train))  # closed unsaved
    assert _grads(workspace.view(str(utils))) == ["on"]


def test_a_rescan_finds_files_changed_created_and_deleted(project):
    workspace = Workspace()
    utils, train = project / "utils.py", project / "train.py"
    assert _grads(workspace.view(str(utils))) == ["on"]
    assert not workspace.rescan()
    train.write_text(train.read_text().replace(CALL, UNDER_NO_GRAD))
    os.utime(train, ns=(1, 1))  # a new mtime even within the clock's resolution
    assert workspace.rescan()
    assert _grads(workspace.view(str(utils))) == ["off"]
    (project / "report.py").write_text("from utils import evaluate\n\nevaluate(None, [])\n")
    train.unlink()
    assert workspace.rescan()
    view = workspace.view(str(utils))
    assert [(c.where(), c.grad) for c in view.callers_of("evaluate")] == [("report.py:3", "on")]
    assert view == _disk(utils)


def test_an_edit_that_changes_no_summary_leaves_every_view_standing(project):
    workspace = Workspace()
    utils, train = project / "utils.py", project / "train.py"
    view = workspace.view(str(utils))
    assert not workspace.set_text(str(train), train.read_text().replace("epochs=10", "epochs=12"))
    assert workspace.view(str(utils)) is view  # not even computed again
    assert workspace.set_text(str(train), train.read_text().replace(CALL, UNDER_NO_GRAD))
    assert workspace.view(str(utils)) != view


def test_the_servers_session_finds_what_check_finds_on_the_fixture_project():
    from test_project import EXPECTED

    from memlint.server.projects import ProjectSession
    from memlint.server.settings import SettingsStore

    session, settings = ProjectSession(), SettingsStore()
    found = []
    for path in sorted(PROJECT.glob("*.py")):
        result, _ = session.lint(path.as_uri(), path.read_text(), str(path), settings.for_document(str(path)))
        found += [(path.name, f.line, f.code, f.message) for f in result.findings]
    assert sorted(found) == EXPECTED


def test_only_files_that_call_a_name_are_summarised_for_its_callers(project):
    """The first view of a module in a large project: files that spell one
    of its function names without calling it (``torch.device``'s word, a
    docstring) are not summarised (transformers: most of 2,865 files spell
    ``device``); a call across a line break and an aliased import are still
    found, and the view is view_from_disk's."""
    (project / "notes.py").write_text(
        '"""How to evaluate, validate and distill_targets: see utils."""\n\nimport torch\n\nDEVICE = torch.device\n'
    )
    (project / "report.py").write_text(
        "import torch\nfrom utils import evaluate as score\n\n\ndef run(model, loader):\n"
        "    for _ in range(3):\n        print(score(model, loader))\n"
    )
    (project / "bench.py").write_text(
        "import torch\nimport utils\n\n\ndef run(model, loader):\n"
        "    with torch.no_grad():\n        return (utils.validate  # the helper\n            (model, loader))\n"
    )
    workspace = Workspace()
    utils = project / "utils.py"
    view = workspace.view(str(utils))
    assert view == _disk(utils)
    assert sorted(c.path for c in view.callers_of("evaluate")) == ["report.py", "train.py"]
    assert [c.path for c in view.callers_of("validate")] == ["bench.py", "train.py"]
    live = workspace.index_for(str(utils))
    assert str(project / "notes.py") not in live._modules
