"""MEM201 judges a helper by the calls of its own module as RULES.md says (not
called *only* from a no_grad context there: FlowNetPytorch's ``validate``, run
bare for ``--evaluate`` and under ``no_grad`` in the epoch loop), while a call
from another module that wraps it keeps the ``callers`` decision: silent."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

_MAIN = """
    import torch


    def validate(loader, model):
        model.eval()
        total = 0.0
        for x, y in loader:
            total += (model(x) - y).abs().sum().item()
        return total


    def main(model, loader, evaluate):
        if evaluate:
            return validate(loader, model)
        with torch.no_grad():
            return validate(loader, model)
"""

_OTHER = """
    import torch
    from main import validate


    def run(model, loader):
        with torch.no_grad():
            validate(loader, model)
"""


def test_one_bare_call_of_the_module_is_reported(tmp_path) -> None:
    write_project(tmp_path, {"main.py": _MAIN})
    assert finding_lines(tmp_path / "main.py", "MEM201") == [8]


def test_a_caller_in_another_module_that_wraps_it_keeps_it_silent(tmp_path) -> None:
    write_project(tmp_path, {"main.py": _MAIN, "other.py": _OTHER})
    assert finding_lines(tmp_path / "main.py", "MEM201") == []
