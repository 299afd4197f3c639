"""A model built by calling a command-line option that lists project classes
(RKD's ``opts.base(pretrained=True)`` over ``choices=dict(resnet50=
backbone.ResNet50, ...)``, default ``backbone.ResNet50``): the summary keeps
the classes the options name (summary.option_values), the view judges them as
called ones, and the model is on the CPU at the load when every one of them
moves nothing (option_choices.py)."""

from __future__ import annotations

import ast
import textwrap

import pytest
from project_helpers import finding_lines, write_project

from memlint.project.summary import summarise

_BACKBONE_INIT = """
    from .small import Small
    from .large import Large
"""

_SMALL = """
    import torch.nn as nn


    class Small(nn.Module):
        def __init__(self, pretrained=False):
            super().__init__()
            self.fc = nn.Linear(2, 2)
"""

_LARGE = """
    import torch.nn as nn


    class Large(nn.Module):
        def __init__(self, pretrained=False):
            super().__init__()
            self.fc = nn.Linear(4, 4)
"""

_MOVING = """
    import torch.nn as nn


    class Large(nn.Module):
        def __init__(self, pretrained=False):
            super().__init__()
            self.fc = nn.Linear(4, 4).cuda()
"""

_EMBEDDING = """
    import torch.nn as nn


    class Embedding(nn.Module):
        def __init__(self, base, size=8):
            super().__init__()
            self.base = base
            self.linear = nn.Linear(size, size)
"""

_RUN = """
    import argparse

    import torch

    import model.backbone as backbone
    from model.embedding import Embedding

    Lookup = type("", (argparse.Action,), dict(__call__=lambda a, p, n, v, o: setattr(n, a.dest, a.choices[v])))

    parser = argparse.ArgumentParser()
    parser.add_argument("--base", choices=dict(small=backbone.Small, large=backbone.Large),
                        default=backbone.Large, action=Lookup)
    parser.add_argument("--load", default=None)
    opts = parser.parse_args()

    base = opts.base(pretrained=True)
    student = Embedding(base, size=4)
    student.load_state_dict(torch.load(opts.load))
    student = student.cuda()
    torch.save(student.state_dict(), "student.pth")
"""


def _project(tmp_path, large: str = _LARGE, run: str = _RUN):
    write_project(
        tmp_path,
        {
            "model/__init__.py": "",
            "model/backbone/__init__.py": _BACKBONE_INIT,
            "model/backbone/small.py": _SMALL,
            "model/backbone/large.py": large,
            "model/embedding.py": _EMBEDDING,
            "run.py": run,
        },
    )
    return tmp_path / "run.py"


def test_summary_keeps_the_classes_an_option_lists() -> None:
    tree = ast.parse(textwrap.dedent(_RUN))
    assert summarise(tree).option_values == ["model.backbone.Large", "model.backbone.Small"]


def test_options_of_strings_or_libraries_are_not_kept() -> None:
    source = """
        import argparse
        import torchvision.models as tv
        parser = argparse.ArgumentParser()
        parser.add_argument("--arch", choices=["a", "b"], default="a")
        parser.add_argument("--net", choices=[tv.resnet18], default=tv.resnet18)
    """
    assert summarise(ast.parse(textwrap.dedent(source))).option_values == []


def test_every_listed_class_on_the_cpu_is_silent(tmp_path) -> None:
    assert finding_lines(_project(tmp_path), "MEM701") == []


def test_a_listed_class_that_moves_keeps_the_finding(tmp_path) -> None:
    assert finding_lines(_project(tmp_path, large=_MOVING), "MEM701") == [19]


@pytest.mark.parametrize(
    "changed",
    [
        ("default=backbone.Large, action=Lookup)", "default=backbone.Large, action=Lookup, type=pick)"),
        ("opts = parser.parse_args()", "opts = parser.parse_args()\n    opts.base = make"),
    ],
)
def test_an_option_not_listing_what_it_holds_keeps_the_finding(tmp_path, changed) -> None:
    run = _RUN.replace(*changed)
    assert finding_lines(_project(tmp_path, run=run), "MEM701") == [19 + run.count("opts.base = make")]
