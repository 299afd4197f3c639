"""MEM701 and ``models.__dict__[arch]()`` (analysis/training/vision_tables.py):
an entry of torchvision.models' namespace builds on the CPU; a project's own
``models`` package is not read so."""

import textwrap

import libcst as cst

from memlint.analysis.scope.names import ImportTable
from memlint.analysis.training.vision_tables import torchvision_table_entry
from memlint.lint.engine import lint
from memlint.rule.registry import rule_by_code

LOAD = textwrap.dedent(
    """\
    import torch
    {imports}

    def main(args):
        model = {build}
        model.load_state_dict(torch.load(args.resume))
        return torch.nn.DataParallel(model).cuda()
    """
)


def _lines(imports, build):
    source = LOAD.format(imports=imports, build=build)
    return [f.line for f in lint(source, "train.py", [rule_by_code("MEM701")])[0]]


def test_an_entry_of_torchvision_models_namespace_is_on_the_cpu():
    tv = "import torchvision.models as models"
    assert _lines(tv, "models.__dict__[args.arch]()") == []
    assert _lines(tv, "models.__dict__[args.arch](pretrained=True)") == []
    assert _lines(tv, "vars(models)[args.arch]()") == []
    assert _lines(tv, "models.__dict__[args.arch]().cuda()") == [6]


def test_a_project_models_table_is_not_read_as_torchvision():
    assert _lines("import models", "models.__dict__[args.arch]()") == [6]
    assert _lines("from lib import zoo as models", "models.__dict__[args.arch]()") == [6]


def test_the_fact_on_expressions():
    names = ImportTable(cst.parse_module("import torchvision.models as tvm\nimport torchvision\n"))
    for text, expected in (
        ("tvm.__dict__[k]", True),
        ("torchvision.models.__dict__[k]", True),
        ("vars(tvm)[k]", True),
        ("tvm.__dict__", False),
        ("tvm.__dict__[k][j]", False),
        ("torchvision.__dict__[k]", False),
        ("tvm.resnet18", False),
    ):
        assert torchvision_table_entry(cst.parse_expression(text), names) is expected, text
