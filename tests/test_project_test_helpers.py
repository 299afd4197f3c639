"""A ``test_*`` function of a ``test_*.py`` file that another module of the
project imports and calls is an evaluation helper, not a pytest test
(UA-MT's ``test_util.test_all_case(net, images)``, run by ``test_LA.py``
after ``net.eval()``, and the ``test_single_case`` it calls per image):
analysis/training/test_code.py's ``is_unit_test`` with the project view."""

from __future__ import annotations

from pathlib import Path

from project_helpers import finding_lines, write_project

_UTIL = """\
    import torch

    def test_all_case(net, image_list):
        total = 0.0
        for image in image_list:
            total += test_single_case(net, image)
        return total / len(image_list)

    def test_single_case(net, image):
        score = 0.0
        for x in range(0, image.shape[0], 16):
            out = net(torch.from_numpy(image[x:x + 16]).cuda())
            score += out.softmax(1).cpu().data.numpy().sum()
        return score
"""

_SCRIPT = """\
    import torch
    from test_util import test_all_case

    def test_calculate_metric(net):
        net.eval()
        return test_all_case(net, image_list)

    if __name__ == "__main__":
        print(test_calculate_metric(build()))
"""


def _lint(tmp_path: Path, script: str | None = _SCRIPT, util: str = _UTIL) -> list[int]:
    files = {"setup.py": "", "test_util.py": util}
    if script is not None:
        files["test_LA.py"] = script
    write_project(tmp_path, files)
    return finding_lines(tmp_path / "test_util.py", "MEM201")


def test_a_test_named_helper_another_module_calls_is_checked(tmp_path):
    assert _lint(tmp_path) == [11]


def test_without_a_caller_elsewhere_it_is_a_unit_test(tmp_path):
    assert _lint(tmp_path, script=None) == []


def test_a_caller_elsewhere_under_no_grad_keeps_it_silent(tmp_path):
    script = _SCRIPT.replace(
        "        return test_all_case(net, image_list)\n",
        "        with torch.no_grad():\n            return test_all_case(net, image_list)\n",
    )
    assert _lint(tmp_path, script) == []


def test_a_module_importing_only_another_name_changes_nothing(tmp_path):
    util = _UTIL + "\n    def load(path):\n        return torch.load(path)\n"
    script = "from test_util import load\nnet = load('x.pt')\n"
    assert _lint(tmp_path, script, util) == []
