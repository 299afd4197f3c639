"""``models.__dict__[args.arch]()`` with ``import torchvision.models as
models`` (the ImageNet example's way of picking an architecture by name):
every public callable of ``torchvision.models`` builds a model on the CPU
(``pretrained=True`` loads its weights there too), so an entry looked up in
that module's namespace is a CPU builder like ``torchvision.models.resnet50``.
A project's own ``models`` package is not read this way: what its namespace
holds is the project's (its classes are judged by their constructors).
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import ImportTable

_VISION_MODELS = "torchvision.models"


def torchvision_table_entry(func: cst.BaseExpression, names: ImportTable) -> bool:
    """``func`` is ``<torchvision.models>.__dict__[key]`` (or ``vars(...)[key]``)."""
    if not isinstance(func, cst.Subscript) or len(func.slice) != 1:
        return False
    table = func.value
    if isinstance(table, cst.Attribute) and table.attr.value == "__dict__":
        module = table.value
    elif (
        isinstance(table, cst.Call)
        and isinstance(table.func, cst.Name)
        and table.func.value == "vars"
        and len(table.args) == 1
        and table.args[0].keyword is None
        and not table.args[0].star
    ):
        module = table.args[0].value
    else:
        return False
    return names.qualified_name(module) == _VISION_MODELS
