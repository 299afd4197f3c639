"""Analyses that read Python's ``ast`` take the tree their caller already
has instead of parsing the module's text again: MEM102's own tracker
classes (analysis/training/tensor_trackers.py) and the modules a verified
script imports (verify/project_twin.py)."""

from __future__ import annotations

import ast
import textwrap
from types import SimpleNamespace

import memlint.analysis.training.tensor_trackers as tensor_trackers
import memlint.project.summary as summary
from memlint.lint.engine import lint
from memlint.rule.registry import rules_by_code

TRACKED = textwrap.dedent(
    """\
    import torch
    class AverageMeter(object):
        def __init__(self):
            self.sum = 0
        def update(self, val, n=1):
            self.sum += val * n
    def train(model, loader, optimizer, criterion):
        losses = AverageMeter()
        for x, y in loader:
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.update(loss, x.size(0))
    """
)


def test_mem102_reads_its_own_tracker_classes_on_the_linters_tree(monkeypatch):
    rules = [rules_by_code()["MEM102"]]
    expected = [(f.line, f.code) for f in lint(TRACKED, "train.py", rules)[0]]
    assert expected == [(14, "MEM102")]
    tree = ast.parse(TRACKED)

    def refused(*args, **kwargs):
        raise AssertionError("the module was parsed again")

    # The module's own ``ast`` (not the global one, which pytest uses too).
    monkeypatch.setattr(tensor_trackers, "ast", SimpleNamespace(parse=refused, Module=ast.Module))
    assert [(f.line, f.code) for f in lint(TRACKED, "train.py", rules, python_tree=tree)[0]] == expected


def test_the_twin_parses_each_imported_module_once(tmp_path, monkeypatch):
    from memlint.verify.project_twin import import_closure

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "engine.py").write_text("import torch\n\ndef evaluate(model):\n    return model\n")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helpers.py").write_text("X = 1\n")
    script = "import sys\nsys.path.insert(0, 'lib')\nimport engine\nimport helpers\n"
    (tmp_path / "train.py").write_text(script)
    expected = import_closure(str(tmp_path / "train.py"), script, str(tmp_path))
    assert [p.rpartition("/")[2] for p in expected] == ["train.py", "engine.py", "helpers.py"]
    parsed: list[str] = []
    real = ast.parse

    def counting(text, *args, **kwargs):
        parsed.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(summary, "summarise_text", lambda *a, **k: (_ for _ in ()).throw(AssertionError("again")))
    monkeypatch.setattr(ast, "parse", counting)
    assert import_closure(str(tmp_path / "train.py"), script, str(tmp_path)) == expected
    assert len(parsed) == len(set(parsed)) == 3
