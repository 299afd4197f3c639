"""One module checked cold (no cache: pre-commit's first run, CI) reads only
the modules that may change its view (project/narrow.py), and its view is
the one the whole project's index gives (issue 29, points 5 and 6)."""

from __future__ import annotations

import os
from pathlib import Path

from project_helpers import write_project

import memlint.project.index as index_module
from memlint.project.index import build_index, needles_for, summary_from_disk, triage_for
from memlint.project.narrow import EAGER, LAZY, _uses

# ``evaluate`` and ``Net`` of lib/helpers.py: who may call them, and who only
# spells their names.
FILES = {
    "pyproject.toml": "[project]\nname = 'narrow'\n",
    "lib/__init__.py": "from .helpers import evaluate, Net\n",
    "lib/helpers.py": """
        import torch


        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(4, 2)

            def forward(self, x):
                return self.fc(x)

            def load_pretrained(self, path):
                self.load_state_dict(torch.load(path))


        def evaluate(model, loader):
            total = 0.0
            for x in loader:
                total += model(x).sum().item()
            return total


        class Solver:
            def __init__(self):
                self.G = Net()
        """,
    # Callers, each through another spelling: all read up front.
    "lib/train.py": """
        import torch
        from lib.helpers import (  # the helper (see below)
            evaluate,
        )


        def main(model, loader, opt):
            for epoch in range(3):
                for x in loader:
                    opt.zero_grad()
                    model(x).sum().backward()
                    opt.step()
                with torch.no_grad():
                    evaluate(model, loader)
        """,
    "lib/attr.py": """
        import torch
        import lib.helpers as h


        def run(model, loader):
            for epoch in range(3):
                h.evaluate(model, loader)
        """,
    "lib/reexport.py": """
        import torch
        from lib import Net


        def build():
            return Net().cuda()
        """,
    "lib/star.py": """
        import torch
        from lib.helpers import *


        def go(model, loader):
            evaluate(model, loader)
        """,
    # Holders of the names that cannot reach helpers.py's: left unread.
    "lib/own.py": """
        import torch


        def evaluate(model, loader):  # its own evaluate
            return [model(x) for x in loader]


        def run(model, loader):
            with torch.no_grad():
                return evaluate(model, loader)
        """,
    "lib/relative_own.py": """
        import torch
        from .own import evaluate


        def again(model, loader):
            with torch.no_grad():
                return evaluate(model, loader)
        """,
    "lib/mentions.py": '''
        """Copied from `evaluate` in lib.helpers.

        >>> from lib.helpers import evaluate
        >>> evaluate(model, loader)
        """
        import torch

        # lib.helpers.evaluate runs without no_grad
        x = torch.zeros(1)


        class Wrapper:
            def evaluate(self):
                return self.evaluate
        ''',
    # Only uses the loading method (asked lazily): read when asked.
    "lib/user.py": """
        import torch


        def restore(model):
            model.load_pretrained("w.pt")
        """,
    # Switches an attribute of solver.G (no attribute needle spells it so):
    # read when the view asks who may switch Solver's attributes.
    "lib/tune.py": """
        import torch


        def tune(solver):
            solver.G.fc.eval()
        """,
}


def _narrow_index(root: Path, path: Path):
    """The index a cold ``memlint check <path>`` builds (runner._views), in
    a fresh process: no summary memoised by an earlier view."""
    index_module._MEMO.clear()
    own = summary_from_disk(str(path))
    needles = needles_for([own])
    return build_index(
        str(root),
        known={str(path): own},
        needles=needles,
        viewed=[str(path)],
        triage=triage_for(needles, [own], [str(path)]),
    )


def _full_index(root: Path):
    return build_index(str(root))


def test_one_module_cold_reads_only_the_modules_that_may_call_into_it(tmp_path):
    write_project(tmp_path, FILES)
    helpers = tmp_path / "lib" / "helpers.py"
    index = _narrow_index(tmp_path, helpers)
    read = {os.path.relpath(p, tmp_path) for p, s in index.summaries.items() if s is not None}
    assert {"lib/train.py", "lib/attr.py", "lib/reexport.py", "lib/star.py"} <= read
    assert not read & {"lib/own.py", "lib/relative_own.py", "lib/mentions.py", "lib/user.py", "lib/tune.py"}
    view = index.view_for(str(helpers))
    assert {c.path for c in view.callers_of("evaluate")} == {"lib/train.py", "lib/attr.py", "lib/star.py"}
    assert view.loading_elsewhere == ("load_pretrained",)  # lib/user.py, read when asked
    assert view.switched_attrs == ("G",)  # lib/tune.py, read when asked
    assert os.path.join(str(tmp_path), "lib", "user.py") in {os.path.abspath(p) for p in index.view_reads[str(helpers)]}


def test_each_module_s_narrowed_view_is_the_whole_index_s(tmp_path):
    write_project(tmp_path, FILES)
    paths = [tmp_path / n for n in FILES if n.endswith(".py") and summary_from_disk(str(tmp_path / n)) is not None]
    narrow = {path: _narrow_index(tmp_path, path).view_for(str(path)) for path in paths}
    index_module._MEMO.clear()
    full = _full_index(tmp_path)
    for path in paths:
        assert narrow[path] == full.view_for(str(path)), path.name


def _kinds(text: str, word: str) -> list[str]:
    return [("import " + s.decode()) if s else "name" for _, s in _uses(text.encode(), word.encode())]


def test_which_spellings_may_name_another_module_s_function():
    assert _kinds("import m\nm.f(1)\n", "f") == ["name"]
    assert _kinds("from .m import (\n    a,  # (see)\n    f,\n)\n", "f") == ["import .m"]
    assert _kinds("from m import a, \\\n    f\n", "f") == ["import m"]
    # Its own definition and bare uses, a comment, a docstring's backticks
    # or doctest, an attribute of self: none.
    text = 'def f():\n    pass\n\n\nf()\ng = f  # m.f\n"""`f`\n    >>> from m import f\n"""\nself.f()\n'
    assert _kinds(text, "f") == []
    assert _kinds("x = '#'; m.f()\n", "f") == ["name"]  # a string's '#' starts no comment
    assert _kinds("import m_f\nm_f.g()\n", "f") == []  # a longer word


def test_a_module_holding_only_lazily_asked_words_is_left_for_later(tmp_path):
    write_project(tmp_path, FILES)
    helpers = tmp_path / "lib" / "helpers.py"
    own = summary_from_disk(str(helpers))
    triage = triage_for(needles_for([own]), [own], [str(helpers)])
    user = tmp_path / "lib" / "user.py"
    assert triage.verdict(user.read_bytes(), str(user)) == (LAZY, frozenset({"load_pretrained"}))
    train = tmp_path / "lib" / "train.py"
    assert triage.verdict(train.read_bytes(), str(train))[0] == EAGER
