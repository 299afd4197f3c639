"""analysis/autograd/activations.py: which ops save their output, in-place flags, Sequential."""

import libcst as cst

from memlint.analysis.autograd.activations import (
    function_saves_output,
    inplace_arg,
    inplace_function_target,
    module_saves_output,
    sequential_elements,
)
from memlint.analysis.scope.names import ImportTable
from memlint.vocabulary.ops import is_inplace_method

MODULE = cst.parse_module(
    "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nimport numpy as np\n"
    "from collections import OrderedDict\n"
)
NAMES = ImportTable(MODULE)


def expr(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def test_output_saving_functions_and_methods():
    saves = ["torch.sigmoid(x)", "F.softmax(x, -1)", "x.exp()", "torch.tanh(x)", "F.elu(x, inplace=True)", "x.relu()"]
    keeps_input = ["F.gelu(x)", "F.elu(x)", "torch.log(x)", "np.exp(x)", "F.silu(x)", "x.pow(2)"]
    assert all(function_saves_output(expr(c), NAMES) for c in saves)
    assert not any(function_saves_output(expr(c), NAMES) for c in keeps_input)


def test_modules_and_inplace_flags():
    assert module_saves_output(expr("nn.Sigmoid()"), NAMES)
    assert module_saves_output(expr("nn.ReLU()"), NAMES)
    assert module_saves_output(expr("nn.ELU(inplace=True)"), NAMES)
    assert not module_saves_output(expr("nn.ELU()"), NAMES)
    assert not module_saves_output(expr("nn.BatchNorm2d(3)"), NAMES)
    leaky = expr("nn.LeakyReLU(0.2, True)")
    assert cst.Module([]).code_for_node(inplace_arg(leaky, "LeakyReLU").value) == "True"
    assert inplace_arg(expr("nn.ReLU()"), "ReLU") is None


def test_inplace_function_targets_and_methods():
    assert cst.Module([]).code_for_node(inplace_function_target(expr("F.relu(h, inplace=True)"), NAMES)) == "h"
    assert inplace_function_target(expr("torch.relu_(h)"), NAMES) is not None
    assert inplace_function_target(expr("F.relu(h)"), NAMES) is None
    assert is_inplace_method("add_") and is_inplace_method("clamp_")
    assert not is_inplace_method("requires_grad_") and not is_inplace_method("__iadd__")


def test_sequential_elements():
    plain = sequential_elements(expr("nn.Sequential(nn.Linear(2, 2), nn.ReLU())"), NAMES)
    assert [cst.Module([]).code_for_node(e) for e in plain] == ["nn.Linear(2, 2)", "nn.ReLU()"]
    ordered = sequential_elements(expr('nn.Sequential(OrderedDict([("a", nn.Tanh()), ("b", nn.ReLU(True))]))'), NAMES)
    assert [cst.Module([]).code_for_node(e) for e in ordered] == ["nn.Tanh()", "nn.ReLU(True)"]
    assert sequential_elements(expr("nn.Sequential(*layers)"), NAMES) is None
    assert sequential_elements(expr("nn.ModuleList([nn.Tanh()])"), NAMES) is None
