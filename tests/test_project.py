"""The project stage (memlint/project/): roots, import resolution, summaries,
views, and what rules find with them on a multi-module project."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memlint.project.index import build_index, view_from_disk
from memlint.project.modules import ModuleMap
from memlint.project.roots import project_root
from memlint.project.summary import CallSite, ModuleSummary, summarise, summarise_text

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ROOT / "fixtures" / "projects" / "split_training"


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


# -- roots and imports ---------------------------------------------------------


def test_project_root_is_the_nearest_marked_folder(tmp_path):
    _write(tmp_path, {"repo/setup.cfg": "", "repo/src/pkg/mod.py": "", "loose/a/b.py": "", "loose/c.py": ""})
    assert project_root(str(tmp_path / "repo/src/pkg/mod.py")) == str(tmp_path / "repo")
    # No marker up the tree (tmp_path has none): the common root of the checked paths.
    checked = [str(tmp_path / "loose/a/b.py"), str(tmp_path / "loose/c.py")]
    assert project_root(checked[0], checked) == str(tmp_path / "loose")


def test_a_tree_kept_in_a_hidden_folder_of_a_repository_is_its_own_project(tmp_path):
    """``repo/.corpora/proj/eval.py``: the walk of ``repo`` would never see
    the file, so ``repo`` is not its project; the checked tree is."""
    _write(tmp_path, {"repo/.git/HEAD": "", "repo/.corpora/proj/eval.py": "", "repo/.corpora/proj/utils.py": ""})
    proj = tmp_path / "repo/.corpora/proj"
    assert project_root(str(proj / "eval.py"), [str(proj)]) == str(proj)
    assert project_root(str(proj / "eval.py")) == str(proj)


def test_imports_resolve_inside_the_root(tmp_path):
    files = ["train.py", "utils.py", "pkg/__init__.py", "pkg/engine.py", "pkg/sub/__init__.py", "pkg/sub/deep.py"]
    modules = ModuleMap(str(tmp_path), [str(tmp_path / f) for f in files])
    train, deep = str(tmp_path / "train.py"), str(tmp_path / "pkg/sub/deep.py")
    assert modules.resolve("utils.evaluate", train) == (str(tmp_path / "utils.py"), "evaluate")
    assert modules.resolve("pkg.engine.Trainer.fit", train) == (str(tmp_path / "pkg/engine.py"), "Trainer.fit")
    assert modules.resolve("pkg", train) == (str(tmp_path / "pkg/__init__.py"), "")
    assert modules.resolve("..engine.step", deep) == (str(tmp_path / "pkg/engine.py"), "step")
    assert modules.resolve(".deep.f", deep) == (str(tmp_path / "pkg/sub/deep.py"), "f")
    assert modules.resolve("torch.nn.functional", train) is None  # installed: unknown
    # A package's folder is not on the path (no implicit relative imports) ...
    assert modules.resolve("engine.step", str(tmp_path / "pkg/engine.py")) is None


def test_a_package_folder_whose_modules_import_each_other_bare_is_on_the_path(tmp_path):
    """MSRN's ``Train/__init__.py`` beside ``main.py``, ``trainer.py`` and
    ``utility.py``: ``import utility`` in ``trainer.py`` runs only with the
    folder on the path (``python main.py``): found nowhere else, it is the sibling."""
    files = ["MSRN/Train/__init__.py", "MSRN/Train/trainer.py", "MSRN/Train/utility.py", "MSRN/Train/logging.py"]
    modules = ModuleMap(str(tmp_path), [str(tmp_path / f) for f in files])
    trainer = str(tmp_path / "MSRN/Train/trainer.py")
    assert modules.resolve("utility.make_scheduler", trainer) == (
        str(tmp_path / "MSRN/Train/utility.py"),
        "make_scheduler",
    )
    assert modules.resolve("logging", trainer) is None  # the standard library's, even beside a namesake
    assert modules.resolve("trainer.Trainer", trainer) is None  # a module naming itself
    assert modules.resolve("absent", trainer) is None


def test_a_package_naming_itself_by_its_absolute_name_still_resolves(tmp_path):
    # ``importlib.import_module("models." + name)`` in ``models/__init__.py``: the package itself.
    files = ["models/__init__.py", "models/fusion_model.py"]
    modules = ModuleMap(str(tmp_path), [str(tmp_path / f) for f in files])
    init = str(tmp_path / "models/__init__.py")
    assert modules.resolve("models", init) == (init, "")


def test_a_package_folder_prefers_the_name_from_its_top(tmp_path):
    files = ["pkg/__init__.py", "pkg/utils.py", "utils.py", "pkg/train.py"]
    modules = ModuleMap(str(tmp_path), [str(tmp_path / f) for f in files])
    assert modules.resolve("utils.f", str(tmp_path / "pkg/train.py")) == (str(tmp_path / "utils.py"), "f")


def test_a_script_folder_is_on_the_path(tmp_path):
    files = ["scripts/train.py", "scripts/helpers.py"]
    modules = ModuleMap(str(tmp_path), [str(tmp_path / f) for f in files])
    found = modules.resolve("helpers.evaluate", str(tmp_path / "scripts/train.py"))
    assert found == (str(tmp_path / "scripts/helpers.py"), "evaluate")


# -- summaries -------------------------------------------------------------------


def _calls(text: str) -> dict[str, CallSite]:
    return {c.callee: c for c in summarise_text(textwrap.dedent(text)).calls}


def test_call_sites_keep_their_grad_mode_loop_and_backward():
    calls = _calls(
        """
        import torch
        import engine as eng
        from utils import evaluate, validate
        from .helpers import probe
        from helpers2 import *

        def main(loader):
            for epoch in range(3):
                eng.train_one_epoch(loader)
                evaluate(loader)
            with torch.no_grad():
                validate(loader)
            probe(loader)
            star_helper(loader)

        @torch.inference_mode()
        def report(loader):
            eng.summarise(loader)

        def finetune(loss, loader):
            eng.targets(loader)
            loss.backward()
        """
    )
    assert calls["engine.train_one_epoch"].in_loop and calls["engine.train_one_epoch"].grad == "on"
    assert calls["utils.evaluate"].grad == "on" and calls["utils.evaluate"].in_loop
    assert calls["utils.validate"].grad == "off" and not calls["utils.validate"].in_loop
    assert calls[".helpers.probe"].grad == "on"
    assert calls["*star_helper"].grad == "on"
    assert calls["engine.summarise"].grad == "off"  # the decorator of the function around it
    assert calls["engine.targets"].backward and not calls["utils.evaluate"].backward
    assert "torch.no_grad" not in calls  # torch is never a project module


def test_a_call_inherits_the_mode_its_function_is_called_in_here():
    calls = _calls(
        """
        import torch
        from utils import evaluate

        def run_validation(model):
            return evaluate(model)

        def main(model):
            with torch.no_grad():
                run_validation(model)
        """
    )
    assert calls["utils.evaluate"].grad == "off"


def test_star_exports_and_trackers():
    summary = summarise_text(
        textwrap.dedent(
            """
            import torch
            import torch.nn.functional as F
            from torch import nn as _nn

            class AverageMeter:
                def update(self, val, n=1):
                    val = float(val)
                    self.sum += val * n
                    self.count += n

            class Keeper:
                def update(self, loss):
                    self.total += loss
            """
        )
    )
    assert summary.imports == {"torch": "torch", "F": "torch.nn.functional", "_nn": "torch.nn"}
    assert summary.trackers == ["AverageMeter"]


def test_summaries_round_trip_through_json():
    summary = summarise_text((PROJECT / "train.py").read_text())
    assert summary.calls
    assert ModuleSummary.from_json(json.loads(json.dumps(summary.to_json()))) == summary


def test_a_module_without_training_words_has_an_empty_summary():
    assert summarise_text("from utils import evaluate\nevaluate(1)\n") is None
    assert summarise(ast.parse("import torch\nx = 1")).defines == ["x"]


# -- views ---------------------------------------------------------------------


def _index(folder: Path):
    return build_index(str(folder))


def test_the_view_lists_callers_from_other_modules():
    view = _index(PROJECT).view_for(str(PROJECT / "utils.py"))
    evaluate = view.callers_of("evaluate")
    assert [(c.path, c.grad, c.in_loop, c.backward) for c in evaluate] == [("train.py", "on", True, True)]
    assert [c.grad for c in view.callers_of("validate")] == ["off"]
    assert view.callers_of("device") == ()


def test_the_view_lists_names_a_star_import_brings():
    view = _index(PROJECT).view_for(str(PROJECT / "amp_setup.py"))
    assert ("torch", "torch") in view.star_bindings
    assert ("F", "torch.nn.functional") in view.star_bindings


def test_star_exports_follow_all_and_nested_stars(tmp_path):
    _write(
        tmp_path,
        {
            "setup.cfg": "",
            "base.py": "import torch\nimport numpy as np\n",
            "mid.py": "from base import *\n__all__ = ['torch']\n",
            "script.py": "from mid import *\nscaler = torch.cuda.amp.GradScaler()\n",
        },
    )
    view = _index(tmp_path).view_for(str(tmp_path / "script.py"))
    assert view.star_bindings == (("torch", "torch"),)


def test_re_exports_are_followed_to_the_defining_module(tmp_path):
    _write(
        tmp_path,
        {
            "setup.cfg": "",
            "pkg/__init__.py": "from .engine import evaluate\n",
            "pkg/engine.py": "import torch\ndef evaluate(model):\n    pass\n",
            "train.py": "import torch\nfrom pkg import evaluate\nwith torch.no_grad():\n    evaluate(1)\n",
        },
    )
    view = _index(tmp_path).view_for(str(tmp_path / "pkg/engine.py"))
    assert [(c.path, c.grad) for c in view.callers_of("evaluate")] == [("train.py", "off")]


def test_unresolved_imports_stay_unknown(tmp_path):
    _write(tmp_path, {"setup.cfg": "", "a.py": "import torch\nfrom installed_pkg import *\nimport numpy\n"})
    view = _index(tmp_path).view_for(str(tmp_path / "a.py"))
    assert view.empty()


def test_a_caller_without_training_words_is_read(tmp_path):
    """``main.py`` wires the pieces and never names torch: its calls still count."""
    _write(
        tmp_path,
        {
            "setup.cfg": "",
            "core/__init__.py": "from .test import eval_tgt\n",
            "core/test.py": "import torch\n\ndef eval_tgt(model, loader):\n    pass\n",
            "main.py": "import params\nfrom core import eval_tgt\n\neval_tgt(1, 2)\n",
        },
    )
    view = view_from_disk(str(tmp_path / "core/test.py"))
    assert [c.where() for c in view.callers_of("eval_tgt")] == ["main.py:4"]


def test_view_from_disk_sees_a_changed_file(tmp_path):
    _write(
        tmp_path,
        {
            "setup.cfg": "",
            "utils.py": "import torch\ndef evaluate(m):\n    pass\n",
            "train.py": "import torch\nfrom utils import evaluate\nevaluate(1)\n",
        },
    )
    assert [c.grad for c in view_from_disk(str(tmp_path / "utils.py")).callers_of("evaluate")] == ["on"]
    train = tmp_path / "train.py"
    train.write_text("import torch\nfrom utils import evaluate\nwith torch.no_grad():\n    evaluate(1)\n")
    os.utime(train, ns=(1, 1))  # a new mtime even within the clock's resolution
    assert [c.grad for c in view_from_disk(str(tmp_path / "utils.py")).callers_of("evaluate")] == ["off"]


# -- rules with the project: the fixture project, every front end ---------------

EXPECTED = [
    (
        "amp_setup.py",
        7,
        "MEM501",
        '`torch.cuda.amp.GradScaler` is deprecated since torch 2.4: use `torch.amp.GradScaler("cuda", ...)`',
    ),
    (
        "utils.py",
        11,
        "MEM201",
        "evaluation loop runs with autograd on: every forward pass builds a graph nobody backpropagates"
        " (called with autograd on from train.py:18)",
    ),
]


def _cli(*args: str, cwd: Path = PROJECT) -> list[tuple[str, int, str, str]]:
    out = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--exit-zero", "--output-format", "json", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = [(Path(f["filename"]).name, f["location"]["row"], f["code"], f["message"]) for f in json.loads(out or "[]")]
    return sorted(found)


def _flake8(*args: str) -> list[tuple[str, int, str, str]]:
    out = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "MEM", "--format", "%(path)s\t%(row)d\t%(code)s\t%(text)s", *args],
        cwd=PROJECT,
        capture_output=True,
        text=True,
    ).stdout
    found = []
    for line in out.splitlines():
        path, row, code, message = line.split("\t")
        found.append((Path(path).name, int(row), code, message))
    return sorted(found)


def test_the_cli_on_the_tree_reads_the_project():
    assert _cli(".") == EXPECTED


def test_the_cli_on_one_file_reads_its_project_from_disk():
    one_by_one = sorted(f for name in ("amp_setup.py", "utils.py", "train.py") for f in _cli(name))
    assert one_by_one == EXPECTED


def test_flake8_reads_the_project_from_disk():
    assert _flake8(".") == EXPECTED
    assert _flake8("utils.py") == [EXPECTED[1]]


def test_the_language_server_lints_with_the_workspace_project():
    from memlint.rule.registry import all_rules
    from memlint.server.linting import lint_document

    found = []
    for name in ("amp_setup.py", "utils.py", "train.py"):
        path = PROJECT / name
        result = lint_document(path.read_text(), str(path), all_rules())
        found += [(name, f.line, f.code, f.message) for f in result.findings]
    assert sorted(found) == EXPECTED


def test_diff_fixes_with_the_project(tmp_path):
    project = tmp_path / "proj"
    shutil.copytree(PROJECT, project)
    out = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--diff", "."], cwd=project, capture_output=True, text=True
    ).stdout
    assert '+    return torch.amp.GradScaler("cuda")  # noqa: F405' in out
    assert out.count("+@torch.no_grad()") == 1  # evaluate, not validate (train.py runs it under no_grad)
    assert out.index("+@torch.no_grad()") < out.index("def evaluate(")


def test_the_cli_from_another_folder_finds_the_same_project():
    assert _cli(str(PROJECT / "utils.py"), cwd=ROOT) == [EXPECTED[1]]


def _lint(path: Path, project=True):
    from memlint.lint.engine import lint_text
    from memlint.rule.registry import all_rules

    view = (lambda: view_from_disk(str(path))) if project else None
    return lint_text(path.read_text(), str(path), all_rules(), project=view)


def test_without_the_project_the_evidence_elsewhere_is_not_seen():
    """The same files linted alone: MEM501 cannot see torch, MEM201 cannot
    see that train.py runs validate() under no_grad (today's false alarm)."""
    alone = [(f.code, f.line) for f in _lint(PROJECT / "utils.py", project=False)]
    assert alone == [("MEM201", 11), ("MEM201", 20)]
    assert _lint(PROJECT / "amp_setup.py", project=False) == []
    with_project = [(f.code, f.line) for f in _lint(PROJECT / "utils.py")]
    assert with_project == [("MEM201", 11)]


def test_a_caller_that_backpropagates_keeps_a_helper_silent(tmp_path):
    _write(
        tmp_path,
        {
            "setup.cfg": "",
            "helpers.py": """\
                import torch

                def predict(model, loader):
                    model.eval()
                    outs = []
                    for x in loader:
                        outs.append(model(x))
                    return outs
                """,
            "train.py": """\
                import torch
                from helpers import predict

                def main(model, loader):
                    loss = sum(o.sum() for o in predict(model, loader))
                    loss.backward()
                """,
        },
    )
    alone = _lint(tmp_path / "helpers.py", project=False)
    assert [f.code for f in alone if f.code == "MEM201"] == ["MEM201"]
    assert [f.code for f in _lint(tmp_path / "helpers.py") if f.code == "MEM201"] == []


@pytest.mark.parametrize("gate", ["1", "0"])
def test_the_gate_changes_nothing_on_the_project(gate, monkeypatch):
    import memlint.lint.screen as screen

    monkeypatch.setattr(screen, "GATE", gate == "1")
    found = sorted((p.name, f.line, f.code) for p in PROJECT.glob("*.py") for f in _lint(p))
    assert found == [(name, line, code) for name, line, code, _ in EXPECTED]


# -- caching: a module is linted again when, and only when, a fact it read changed


def test_editing_a_caller_relints_its_dependant_and_nothing_else(tmp_path, monkeypatch):
    import memlint.run.runner as runner
    from memlint.run.cache import FindingsCache
    from memlint.run.results import Settings

    project = tmp_path / "proj"
    shutil.copytree(PROJECT, project)
    files = sorted(str(p) for p in project.glob("*.py"))
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="test")
    settings = Settings(root=str(project))
    linted: list[str] = []
    real = runner._store

    def counting(report, *args):  # every lint's report, whether a worker or the second pass made it
        if not report.deferred:
            linted.append(os.path.basename(report.path))
        return real(report, *args)

    monkeypatch.setattr(runner, "_store", counting)
    indexed: list[int] = []
    real_views = runner._views

    def views(*args):
        indexed.append(1)
        return real_views(*args)

    monkeypatch.setattr(runner, "_views", views)

    def check():
        linted.clear()
        reports = runner.run(files, settings, jobs=1, cache=cache)
        return sorted((os.path.basename(r.path), f.line, f.code) for r in reports for f in r.findings)

    assert check() == [("amp_setup.py", 7, "MEM501"), ("utils.py", 11, "MEM201")]
    assert sorted(linted) == ["amp_setup.py", "engine.py", "models.py", "train.py", "utils.py"]
    indexed.clear()
    assert check() == [("amp_setup.py", 7, "MEM501"), ("utils.py", 11, "MEM201")]
    assert linted == []  # warm: every view unchanged
    assert indexed == []  # ... and no file of the project changed: no index built
    train = project / "train.py"
    train.write_text(
        train.read_text().replace(
            "        val_loss = evaluate(model, val_loader)\n",
            "        with torch.no_grad():\n            val_loss = evaluate(model, val_loader)\n",
        )
    )
    assert check() == [("amp_setup.py", 7, "MEM501")]
    assert sorted(linted) == ["train.py", "utils.py"]  # not models.py, engine.py, amp_setup.py


def test_an_unrelated_edit_builds_no_view_of_the_other_modules(tmp_path, monkeypatch):
    """Issue 29 point 6: after an edit of models.py (no other module's view
    reads it, none calls into it), the warm run keeps every other module's
    cached findings without building their views; an edit that adds a caller
    of utils.evaluate, or one that changes what a view read, does build it."""
    import memlint.run.runner as runner
    from memlint.project.index import ProjectIndex
    from memlint.run.cache import FindingsCache
    from memlint.run.results import Settings

    project = tmp_path / "proj"
    shutil.copytree(PROJECT, project)
    files = sorted(str(p) for p in project.glob("*.py"))
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="test")
    settings = Settings(root=str(project))
    viewed: list[str] = []
    real_view = ProjectIndex.view_for

    def counting_view(self, path):
        viewed.append(os.path.basename(path))
        return real_view(self, path)

    monkeypatch.setattr(ProjectIndex, "view_for", counting_view)

    def check():
        viewed.clear()
        reports = runner.run(files, settings, jobs=1, cache=cache)
        return sorted((os.path.basename(r.path), f.line, f.code) for r in reports for f in r.findings)

    expected = [("amp_setup.py", 7, "MEM501"), ("utils.py", 11, "MEM201")]
    assert check() == expected
    assert {"utils.py", "amp_setup.py"} <= set(viewed)
    models = project / "models.py"
    models.write_text(models.read_text() + "# an edit\n")
    assert check() == expected
    assert set(viewed) <= {"models.py"}  # not utils.py, amp_setup.py, train.py...
    # A star import, or a new module: what imports bring may have moved, views again.
    models.write_text(models.read_text() + "from engine import *\n")
    assert check() == expected
    assert "utils.py" in viewed
    (project / "extra.py").write_text("import torch\n")
    files.append(str(project / "extra.py"))
    assert check() == expected
    assert "utils.py" in viewed
    # A comment that names utils.evaluate in its caller: train.py's summary is the same.
    train = project / "train.py"
    train.write_text(train.read_text() + "# evaluate(model) once per epoch\n")
    assert check() == expected
    assert viewed == ["train.py"]  # its own view: utils.py keeps its entry
    # A new caller of utils.evaluate (the name is spelled in models.py): utils.py's view again.
    models.write_text(models.read_text() + "from utils import evaluate\n")
    assert check() == expected
    assert "utils.py" in viewed
    # train.py is what utils.py's view read: the edit that wraps its call in no_grad is seen.
    train.write_text(
        train.read_text().replace(
            "        val_loss = evaluate(model, val_loader)\n",
            "        with torch.no_grad():\n            val_loss = evaluate(model, val_loader)\n",
        )
    )
    assert check() == [("amp_setup.py", 7, "MEM501")]
    assert "utils.py" in viewed
    # The same findings as a cold run of the tree in this state.
    fresh = FindingsCache(str(tmp_path / "cold"), fingerprint="test")
    reports = runner.run(files, settings, jobs=1, cache=fresh)
    assert sorted((os.path.basename(r.path), f.line, f.code) for r in reports for f in r.findings) == [
        ("amp_setup.py", 7, "MEM501")
    ]


def test_a_model_class_of_another_module_that_moves_nothing_is_built_on_the_cpu(tmp_path):
    """MEM701's CPU-model trap across modules: the class lives in nets.py."""
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "nets.py": """
                import torch.nn as nn
                class Net(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Linear(2, 2)
                class GpuNet(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Linear(2, 2).cuda()
            """,
            "predict.py": """
                import torch
                from nets import GpuNet, Net
                def restore(path):
                    net = Net()
                    net.load_state_dict(torch.load(path))
                    return net
                def restore_gpu(path):
                    net = GpuNet()
                    net.load_state_dict(torch.load(path))
                    return net
            """,
        },
    )
    found = [(name, line, code) for name, line, code, _ in _cli(".", cwd=tmp_path)]
    assert found == [("predict.py", 10, "MEM701")]  # GpuNet moves itself: its load doubles on the GPU
    assert [(n, line, c) for n, line, c, _ in _cli("predict.py", cwd=tmp_path)] == found


# -- MEM202: a helper judged by the modes its callers elsewhere hand it --------

_MODES_PROJECT = {
    "pyproject.toml": "[project]\nname = 'p'\n",
    "utils.py": """\
        import torch


        @torch.no_grad()
        def validate(model, loader):
            total = 0.0
            for x, y in loader:
                total += model(x).sum().item()
            return total


        def score(net, loader):
            with torch.no_grad():
                return [net(x).argmax(1) for x in loader]


        @torch.no_grad()
        def check(model, loader):
            for x in loader:
                model(x)


        @torch.no_grad()
        def probe(model, loader):
            for x in loader:
                model(x)
        """,
    "train.py": """\
        import torch
        import torch.nn.functional as F
        from utils import check, probe, score, validate
        from engine import train_one_epoch


        def fit(model, opt, train_loader, val_loader, epochs):
            for epoch in range(epochs):
                model.train()
                for x, y in train_loader:
                    opt.zero_grad()
                    F.cross_entropy(model(x), y).backward()
                    opt.step()
                validate(model, val_loader)
                model.eval()
                score(model, val_loader)
                probe(model, val_loader)


        def fit_with_helper(model, opt, loader, val_loader, epochs):
            for epoch in range(epochs):
                model.train()
                train_one_epoch(model, opt, loader)
                check(model, val_loader)


        def warm_up(model, loader):
            model.train()
            probe(model, loader)


        def fit_by_method(model, loader, val_loader):
            model.train()
            model.fit_epoch(loader)
            probe(model, val_loader)
        """,
    "engine.py": """\
        import torch.nn.functional as F


        def train_one_epoch(model, opt, loader):
            model.train()
            for x, y in loader:
                opt.zero_grad()
                F.cross_entropy(model(x), y).backward()
                opt.step()
        """,
}

_MEM202 = (
    "evaluation under no_grad with `{}` still in training mode: dropout and batch-norm statistics behave as in"
    " training (called in training mode from {})"
)


def test_call_sites_keep_the_mode_of_the_models_they_hand_over():
    summary = summarise_text(textwrap.dedent(_MODES_PROJECT["train.py"]))
    assert summary is not None
    modes = {(c.callee, c.line): c.args for c in summary.calls}
    assert modes[("utils.validate", 14)] == (("0", "train", True, ()),)  # trained by the loop since .train()
    assert modes[("utils.score", 16)] == (("0", "eval", False, ()),)
    assert modes[("utils.check", 24)] == (("0", "train", False, ("engine.train_one_epoch",)),)
    assert modes[("utils.probe", 29)] == (("0", "train", False, ()),)  # .train() with nothing trained since
    assert modes[("utils.probe", 35)] == ()  # model.fit_epoch() since may have trained it: unknown
    assert modes[("engine.train_one_epoch", 23)] == (("0", "train", False, ()),)
    again = ModuleSummary.from_json(json.loads(json.dumps(summary.to_json())))
    assert again == summary


def test_the_view_judges_the_models_handed_to_a_helper(tmp_path):
    _write(tmp_path, _MODES_PROJECT)
    view = view_from_disk(str(tmp_path / "utils.py"))
    assert [c.modes for c in view.callers_of("validate")] == [(("0", "train-trained"),)]
    # train_one_epoch (engine.py) backpropagates: the model was trained since its switch
    assert [c.modes for c in view.callers_of("check")] == [(("0", "train-trained"),)]
    assert sorted(c.modes for c in view.callers_of("probe")) == [(), (("0", "eval"),), (("0", "train-fresh"),)]


def test_a_helper_every_caller_runs_in_training_mode_gets_mem202(tmp_path):
    """validate and check: every caller, in another module, trained the model
    and never switched it to eval. score and probe: a caller switched it to
    eval (or on purpose to train, MC dropout): silent."""
    _write(tmp_path, _MODES_PROJECT)
    expected = [
        ("utils.py", 7, "MEM202", _MEM202.format("model", "train.py:14")),
        ("utils.py", 19, "MEM202", _MEM202.format("model", "train.py:24")),
    ]
    assert [f for f in _cli(".", cwd=tmp_path) if f[2] == "MEM202"] == expected
    assert [f for f in _cli("utils.py", cwd=tmp_path) if f[2] == "MEM202"] == expected
    flake8 = subprocess.run(
        [
            sys.executable,
            "-m",
            "flake8",
            "--select",
            "MEM202",
            "--format",
            "%(path)s\t%(row)d\t%(code)s\t%(text)s",
            ".",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    ).stdout
    rows = [line.split("\t") for line in flake8.splitlines()]
    assert sorted((Path(p).name, int(r), c, m) for p, r, c, m in rows) == expected
    assert [f.code for f in _lint(tmp_path / "utils.py", project=False) if f.code == "MEM202"] == []


@pytest.mark.parametrize("gate", ["1", "0"])
def test_the_gate_lets_a_helper_judged_by_its_callers_through(gate, monkeypatch, tmp_path):
    import memlint.lint.screen as screen

    monkeypatch.setattr(screen, "GATE", gate == "1")
    _write(tmp_path, _MODES_PROJECT)
    assert [(f.code, f.line) for f in _lint(tmp_path / "utils.py") if f.code == "MEM202"] == [
        ("MEM202", 7),
        ("MEM202", 19),
    ]


# -- MEM203: functions of other modules that switch the mode or train --------

_SWITCH_PROJECT = {
    "pyproject.toml": "[project]\nname = 'p'\n",
    "helpers.py": """\
        def prepare(model):
            return model.float()
        """,
    "engine.py": """\
        import torch
        import torch.nn.functional as F
        from helpers import prepare


        def train_one_epoch(model, opt, loader):
            for x, y in loader:
                opt.zero_grad()
                F.cross_entropy(model(x), y).backward()
                opt.step()


        def train_and_switch(model, opt, loader):
            model.train()
            for x, y in loader:
                opt.zero_grad()
                F.cross_entropy(model(x), y).backward()
                opt.step()


        def run_epoch(model, opt, loader):
            prepare(model)
            train_one_epoch(model, opt, loader)


        @torch.no_grad()
        def evaluate(model, loader):
            model.eval()
            return sum(model(x).sum().item() for x, y in loader)
        """,
    "train.py": """\
        from engine import evaluate, run_epoch, train_and_switch, train_one_epoch


        def fit(model, opt, loader, val_loader, epochs):
            model.train()
            for epoch in range(epochs):
                train_one_epoch(model, opt, loader)
                evaluate(model, val_loader)


        def fit_switching(model, opt, loader, val_loader, epochs):
            for epoch in range(epochs):
                train_and_switch(model, opt, loader)
                evaluate(model, val_loader)


        def fit_opaque(model, opt, loader, val_loader, epochs):
            for epoch in range(epochs):
                run_epoch(model, opt, loader)
                evaluate(model, val_loader)
        """,
}


def test_the_view_lists_the_switches_of_functions_this_module_calls(tmp_path):
    _write(tmp_path, _SWITCH_PROJECT)
    view = view_from_disk(str(tmp_path / "train.py"))
    assert view.callee("evaluate").switches == (("model", "eval"),)
    assert view.callee("train_one_epoch").switches == (("*", "training-phase"),)
    assert view.callee("train_and_switch").switches == (("model", "train"), ("*", "training-phase"))
    # it hands the model to prepare() of helpers.py: its switches are not all listed here
    assert view.callee("run_epoch").opaque


def test_a_switch_to_eval_in_another_module_never_undone_gets_mem203(tmp_path):
    """fit: evaluate() of engine.py switches the model to eval and nothing in
    the loop switches it back. fit_switching: train_and_switch calls
    model.train(). fit_opaque: run_epoch hands the model to code we cannot
    read. Without the project, nothing is seen."""
    _write(tmp_path, _SWITCH_PROJECT)
    message = (
        "`model.eval()` inside the training loop is never undone: the next epochs train in eval mode"
        " (`evaluate` of another module calls `.eval()` on it)"
    )
    expected = [("train.py", 8, "MEM203", message)]
    assert [f for f in _cli(".", cwd=tmp_path) if f[2] == "MEM203"] == expected
    assert [f for f in _cli("train.py", cwd=tmp_path) if f[2] == "MEM203"] == expected
    flake8 = subprocess.run(
        [
            sys.executable,
            "-m",
            "flake8",
            "--select",
            "MEM203",
            "--format",
            "%(path)s\t%(row)d\t%(code)s\t%(text)s",
            ".",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    ).stdout
    rows = [line.split("\t") for line in flake8.splitlines()]
    assert [(Path(p).name, int(r), c, m) for p, r, c, m in rows] == expected
    assert [f.code for f in _lint(tmp_path / "train.py", project=False) if f.code == "MEM203"] == []
    diff = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--diff", "--unsafe-fixes", "--select", "MEM203", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    ).stdout
    assert "+        model.train()\n         train_one_epoch(model, opt, loader)" in diff


@pytest.mark.parametrize("gate", ["1", "0"])
def test_the_gate_lets_a_switch_in_another_module_through(gate, monkeypatch, tmp_path):
    import memlint.lint.screen as screen

    monkeypatch.setattr(screen, "GATE", gate == "1")
    _write(tmp_path, _SWITCH_PROJECT)
    assert [(f.code, f.line) for f in _lint(tmp_path / "train.py") if f.code == "MEM203"] == [("MEM203", 8)]


def test_deprecated_amp_names_from_a_star_import_are_reported_where_used(tmp_path):
    """MEM501 on names that arrive through ``from common import *``: no
    import here to rewrite, so each use is reported and fixed alone; the
    module that imports them reports its import."""
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\ndependencies = ['torch>=2.4']\n",
            "common.py": """
                import torch
                from torch.cuda import amp
                from torch.cuda.amp import GradScaler
            """,
            "train.py": """
                from common import *
                scaler = GradScaler()
                for x, y in loader:
                    with amp.autocast():
                        loss = model(x)
                    scaler.scale(loss).backward()
            """,
        },
    )
    found = [(name, line, code) for name, line, code, _ in _cli("--select", "MEM501", ".", cwd=tmp_path)]
    assert found == [("train.py", 3, "MEM501"), ("train.py", 5, "MEM501")]  # common.py constructs nothing
    assert [(n, line, c) for n, line, c, _ in _cli("--select", "MEM501", "train.py", cwd=tmp_path)] == found
    out = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--select", "MEM501", "--fix", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    fixed = (tmp_path / "train.py").read_text()
    assert 'scaler = torch.amp.GradScaler("cuda")' in fixed
    assert 'with torch.amp.autocast("cuda"):' in fixed
    assert "Fixed 2 findings" in out.stdout
    assert _cli("--select", "MEM501", ".", cwd=tmp_path) == []  # idempotent: nothing left


def test_a_constant_moved_per_call_in_a_class_another_module_runs_per_batch(tmp_path):
    """MEM703 across modules: the loss's forward builds a constant and moves
    it on every call, and train.py builds the loss where it trains (its
    forward runs once per batch); a kernel moved in ``__init__`` of a class
    that train.py builds inside its batch loop. The look-alikes stay silent:
    a shape read from the input, a lazily cached buffer, an attribute set
    again outside ``__init__``, a class only a script without training
    builds, and one built once per epoch (outside the batch loop)."""
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "losses.py": """
                import torch
                import torch.nn as nn
                class BoxLoss(nn.Module):
                    def __init__(self, priors):
                        super().__init__()
                        self.priors = priors
                        self.scale = None
                    def forward(self, scores, device):
                        n = self.priors.size(0)
                        ranks = torch.LongTensor(range(n)).unsqueeze(0).expand_as(scores).to(device)
                        pos = torch.arange(scores.size(1)).to(device)
                        if self.scale is None:
                            self.scale = torch.tensor([0.1, 0.2]).to(device)
                        return (scores * ranks * pos).sum()
                class Blur:
                    def __init__(self):
                        self.kernel = torch.tensor([[1.0, 2.0, 1.0]]).cuda()
                class Shifted(nn.Module):
                    def __init__(self, width):
                        super().__init__()
                        self.width = width
                    def forward(self, x):
                        return x + torch.arange(self.width).cuda()
                    def grow(self):
                        self.width += 1
                class Probe(nn.Module):
                    def forward(self, x):
                        return x + torch.tensor([1.0, 2.0]).cuda()
                class Smooth:
                    def __init__(self):
                        self.kernel = torch.tensor([0.25, 0.5, 0.25]).cuda()
            """,
            "train.py": """
                import torch
                from losses import BoxLoss, Blur, Shifted, Smooth
                def main(model, loader, opt, priors, epochs):
                    criterion = BoxLoss(priors)
                    shift = Shifted(4)
                    for epoch in range(epochs):
                        smooth = Smooth()
                        for x, y in loader:
                            blur = Blur()
                            loss = criterion(model(shift(smooth(x))), "cuda")
                            opt.zero_grad()
                            loss.backward()
                            opt.step()
            """,
            "export.py": """
                import torch
                from losses import Probe
                probe = Probe()
                torch.onnx.export(probe, torch.zeros(2), "probe.onnx")
            """,
        },
    )
    found = [(name, line, code) for name, line, code, _ in _cli("--select", "MEM703", ".", cwd=tmp_path)]
    assert found == [("losses.py", 11, "MEM703"), ("losses.py", 18, "MEM703")]
    messages = [m for _, _, _, m in _cli("--select", "MEM703", "losses.py", cwd=tmp_path)]
    assert "train.py:5 builds the object where it trains" in messages[0]
    assert "train.py:10 builds a `Blur` on every batch" in messages[1]  # Smooth: once per epoch
    alone = [(f.code, f.line) for f in _lint(tmp_path / "losses.py", project=False)]
    assert ("MEM703", 11) not in alone and ("MEM703", 18) not in alone  # the evidence is in train.py
