"""Every front end sees the same project (issue 29, point 5), where the
deciding module holds no training word: the CLI's pre-filter never
summarises it, view_from_disk reads it for the viewed module's names, and
the server's live index summarises modules only when asked. The fixture
project (fixtures/projects/wordless_callers):

- ``run.py`` (word-less) is the only caller of ``evaluation.eval_policy``:
  it types ``policy`` as ``agents.TD3``, whose ``select_action`` runs the
  actor with autograd on, so ``eval_policy``'s loop gets MEM201;
- ``main.py`` (word-less) switches ``solver.G`` to eval mode before
  ``solver.test()``: ``solver.py``'s MEM202 stays silent.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "wordless_callers"
MODULES = ("agents.py", "evaluation.py", "main.py", "model.py", "run.py", "solver.py")
EXPECTED = [
    (
        "evaluation.py",
        7,
        "MEM201",
        "evaluation loop runs with autograd on: every forward pass builds a graph nobody backpropagates"
        " (`policy.select_action`: TD3.select_action runs the actor with autograd on, agents.py:20) (called with autograd on from run.py:7)",
    )
]

Finding = tuple[str, int, str, str]


def _cli(*args: str) -> list[Finding]:
    out = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--exit-zero", "--output-format", "json", *args],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted((Path(f["filename"]).name, f["location"]["row"], f["code"], f["message"]) for f in json.loads(out))


def _flake8(*args: str) -> list[Finding]:
    out = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "MEM", "--format", "%(path)s\t%(row)d\t%(code)s\t%(text)s", *args],
        cwd=PROJECT,
        capture_output=True,
        text=True,
    ).stdout
    rows = [line.split("\t") for line in out.splitlines()]
    return sorted((Path(path).name, int(row), code, message) for path, row, code, message in rows)


def test_the_fixture_callers_hold_no_training_word():
    from memlint.project.summary import worth_summarising

    # run.py is read only through the needles of word-less modules; main.py's
    # `solver.G.eval()` is a training word since MEM201 reads torch-less
    # evaluation modules (`.eval()`), so every front end summarises it.
    assert not worth_summarising((PROJECT / "run.py").read_text())
    assert worth_summarising((PROJECT / "main.py").read_text())


def test_the_cli_on_the_tree_and_on_each_file():
    assert _cli(".") == EXPECTED
    assert sorted(f for name in MODULES for f in _cli(name)) == EXPECTED


def test_flake8():
    assert _flake8(".") == EXPECTED


def test_a_lint_outside_the_server_reads_the_project_from_disk():
    from memlint.rule.registry import all_rules
    from memlint.server.linting import lint_document

    found = []
    for name in MODULES:
        path = PROJECT / name
        result = lint_document(path.read_text(), str(path), all_rules())
        found += [(name, f.line, f.code, f.message) for f in result.findings]
    assert sorted(found) == EXPECTED


@pytest.mark.parametrize("opened", ["every module", "one at a time"])
def test_the_servers_live_index(opened):
    """The server's session (projects.py), as its lint thread drives it: each
    open document's text in the live index, its view from there. Before, the
    live index held no module's call sites for the types (typed_objects) nor
    any module's switches (``summaries`` stays empty there): MEM201 was
    missed and MEM202 reported."""
    from memlint.server.projects import ProjectSession
    from memlint.server.settings import SettingsStore

    store = SettingsStore()
    found = []
    groups = [MODULES] if opened == "every module" else [(name,) for name in MODULES]
    for group in groups:
        session = ProjectSession()
        for name in group:
            path = PROJECT / name
            result, _stale = session.lint(path.as_uri(), path.read_text(), str(path), store.for_document(str(path)))
            found += [(name, f.line, f.code, f.message) for f in result.findings]
    assert sorted(found) == EXPECTED


def test_the_live_views_are_those_of_the_project_on_disk():
    import memlint.project.index as index
    from memlint.project.live import Workspace

    workspace = Workspace()
    for name in MODULES:
        index._MEMO.clear()  # view_from_disk's memo keeps summaries across calls
        path = str(PROJECT / name)
        assert workspace.view(path) == index.view_from_disk(path), name


# A module that gets the Solver from a factory and switches its ``G``
# (``solver.G.eval()``) or hands it to a function that may (``prepare``),
# spelling no name of solver.py: with a training word (the CLI on the tree
# summarised it, the views from disk did not read it) and without one (no
# front end read it). Such a module spells ``.G.eval(`` or ``.G)``: needles.
FACTORY = (
    "from solver import Solver\n\n\ndef make_solver():\n    return Solver(loader=[])\n\n\n"
    "def prepare(model):\n    model.eval()\n"
)
SWITCHING = "from factory import make_solver, prepare\n\nsolver = make_solver()\nsolver.G.eval()\nsolver.test()\n"
HANDING = SWITCHING.replace("solver.G.eval()", "prepare(solver.G)")


@pytest.mark.parametrize(
    "head, switching",
    [("import torch\n", SWITCHING), ("", SWITCHING), ("", HANDING)],
    ids=["training word", "word-less", "word-less, handed over"],
)
def test_a_switch_from_a_module_that_spells_no_name_of_the_viewed_one(tmp_path, head, switching):
    import shutil

    import memlint.project.index as index
    from memlint.project.live import Workspace
    from memlint.rule.registry import all_rules
    from memlint.server.linting import lint_document
    from memlint.server.projects import ProjectSession
    from memlint.server.settings import SettingsStore

    project = tmp_path / "proj"
    shutil.copytree(PROJECT, project)
    (project / "factory.py").write_text(FACTORY)
    (project / "main.py").write_text(head + switching)
    solver = project / "solver.py"
    assert [f for f in _cli(str(project)) if f[0] == "solver.py"] == []
    assert _cli(str(solver)) == []
    assert _flake8(str(solver)) == []
    assert lint_document(solver.read_text(), str(solver), all_rules()).findings == []
    session = ProjectSession()
    result, _stale = session.lint(
        solver.as_uri(), solver.read_text(), str(solver), SettingsStore().for_document(str(solver))
    )
    assert result.findings == []
    assert Workspace().view(str(solver)).switched_attrs == ("G",)
    index._MEMO.clear()
    (project / "main.py").write_text(
        head + switching.replace("solver.G.eval()\n", "").replace("prepare(solver.G)\n", "")
    )
    assert [f.code for f in lint_document(solver.read_text(), str(solver), all_rules()).findings] == ["MEM202"]


def test_a_word_less_modules_own_view_is_the_same_whatever_was_read_before(tmp_path):
    """flake8 and the server view many modules in one process, and share the
    summary store: ``b.py`` (no training word) calls into ``a.py``, so a view
    of ``a.py`` summarises it for its calls. Before, a later view of ``b.py``
    took that summary for its own (as if it held a training word): its view
    depended on what was linted before it, in the process or the cache."""
    import memlint.project.index as index

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "a.py").write_text(
        "import torch\n\n\ndef evaluate(model, loader):\n    for x in loader:\n        model(x)\n"
    )
    b = tmp_path / "b.py"
    b.write_text("from a import evaluate\n\n\ndef helper(h):\n    return h\n\n\nevaluate(helper, [])\n")
    cache = str(tmp_path / "cache")
    index._MEMO.clear()
    alone = index.view_from_disk(str(b), cache)
    for keep_memo in (True, False):
        index._MEMO.clear()
        index.view_from_disk(str(tmp_path / "a.py"), cache)
        if not keep_memo:
            index._MEMO.clear()  # the next process: only the store remembers
        assert index.view_from_disk(str(b), cache) == alone


def test_a_viewed_word_less_modules_calls_count_in_the_others_views(tmp_path):
    """The CLI builds one index for every module waiting for its view: a
    word-less one among them (``w.py``) was read as word-less (summary None),
    so its call of ``a.evaluate`` under ``no_grad`` was missing from
    ``a.py``'s view, which a view of ``a.py`` alone (the CLI on one file,
    flake8, the server) holds."""
    import memlint.project.index as index

    (tmp_path / "pyproject.toml").write_text("")
    a = tmp_path / "a.py"
    a.write_text("import torch\n\n\ndef evaluate(model, loader):\n    for x in loader:\n        model(x)\n")
    w = tmp_path / "w.py"
    w.write_text("from a import evaluate\nfrom utils import no_grad\n\nwith no_grad():\n    evaluate(None, [])\n")
    index._MEMO.clear()
    own = index.summary_from_disk(str(a))
    both = index.build_index(str(tmp_path), needles=index.needles_for([own]), viewed=[a, w])
    alone = index.build_index(str(tmp_path), needles=index.needles_for([own]), viewed=[a])
    assert alone is not None and both is not None
    assert [c for _, c in alone.view_for(str(a)).callers] == [c for _, c in both.view_for(str(a)).callers]
    assert len(alone.view_for(str(a)).callers) == 1
    assert both.view_for(str(w)) == index.view_from_disk(str(w))


def test_a_callers_fresh_cpu_model_is_in_the_live_view_too(tmp_path):
    # train.py hands modelio's load helper a model it has just built: the
    # views from disk record the argument as a CPU model (Caller.cpu_args),
    # and the server's live view must say the same, or the server reports a
    # MEM701 the CLI leaves alone.
    import memlint.project.index as index
    from memlint.project.live import Workspace

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "nets.py").write_text(
        "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(4, 4)\n"
    )
    (tmp_path / "modelio.py").write_text(
        "import torch\n\n\ndef load_checkpoint(model, path):\n    checkpoint = torch.load(path)\n"
        '    model.load_state_dict(checkpoint["state_dict"])\n'
    )
    (tmp_path / "train.py").write_text(
        "import torch\nimport modelio\nfrom nets import Net\n\n\ndef main(path):\n"
        "    modelio.load_checkpoint(Net(), path)\n    model = Net()\n"
        "    modelio.load_checkpoint(model, path)\n    return model.cuda()\n"
    )
    index._MEMO.clear()
    path = str(tmp_path / "modelio.py")
    on_disk = index.view_from_disk(path)
    assert any(c.cpu_args for _name, cs in on_disk.callers for c in cs)
    assert Workspace().view(path) == on_disk
