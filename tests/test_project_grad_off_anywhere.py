"""A method that switches its model to eval, runs it and hands back only
numbers, stored and called through another name (issue 29,
person-reid-triplet-loss-baseline's ``ExtractFeature.__call__`` handed to
``test_set.set_feat_func``): reported when no file of the project turns grad
off (grad_off_anywhere.py), silent otherwise."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

from memlint.project.grad_off_anywhere import grad_never_off
from memlint.project.index import view_from_disk

_EXTRACT = """\
    import torch


    class ExtractFeature(object):
        def __init__(self, model):
            self.model = model

        def __call__(self, ims):
            old = self.model.training
            self.model.eval()
            feat = self.model(torch.from_numpy(ims).float())
            feat = feat.data.cpu().numpy()
            self.model.train(old)
            return feat


    def main(model, test_set):
        test_set.set_feat_func(ExtractFeature(model))
        test_set.eval()
"""

_TEST_SET = """\
    class TestSet(object):
        def set_feat_func(self, func):
            self.func = func

        def eval(self):
            return [self.func(ims) for ims in self.batches]
"""


def test_a_project_that_never_turns_grad_off_reports_it(tmp_path):
    write_project(tmp_path, {"extract.py": _EXTRACT, "test_set.py": _TEST_SET})
    assert finding_lines(tmp_path / "extract.py", "MEM201") == [11]
    assert view_from_disk(str(tmp_path / "extract.py")).grad_never_off


def test_a_no_grad_anywhere_in_the_project_keeps_it_silent(tmp_path):
    test_set = "    import torch\n\n\n" + _TEST_SET.replace(
        "            return [self.func(ims)",
        "            with torch.no_grad():\n                return [self.func(ims)",
    )
    write_project(tmp_path, {"extract.py": _EXTRACT, "test_set.py": test_set})
    assert finding_lines(tmp_path / "extract.py", "MEM201") == []
    assert not view_from_disk(str(tmp_path / "extract.py")).grad_never_off


def test_a_returned_value_with_history_keeps_it_silent(tmp_path):
    extract = _EXTRACT.replace("            feat = feat.data.cpu().numpy()\n", "")
    write_project(tmp_path, {"extract.py": extract, "test_set.py": _TEST_SET})
    assert finding_lines(tmp_path / "extract.py", "MEM201") == []


def test_grad_never_off_stops_at_the_first_file_that_spells_a_way(tmp_path):
    write_project(
        tmp_path,
        {"a.py": "import torch\n", "b.py": "torch.set_grad_enabled(False)\n", "c.py": "x = 1\n", "d.txt": "no_grad"},
    )
    read: list[str] = []
    files = [str(tmp_path / n) for n in ("a.py", "b.py", "c.py", "d.txt")]
    assert not grad_never_off(files, read.append)
    assert [p.rsplit("/", 1)[1] for p in read] == ["a.py", "b.py"]
    read.clear()
    assert grad_never_off([str(tmp_path / "a.py"), str(tmp_path / "c.py"), str(tmp_path / "d.txt")], read.append)
    assert len(read) == 2
