"""project/forward_copies.py: `.cuda()` of a forward's tensors moves no module (MEM701)."""

import ast

from memlint.project.class_moves import class_moves_to_a_device
from memlint.project.forward_copies import module_tensor_functions, tensor_functions

HEAD = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import Parameter
def l2_norm(x, axis=1):
    return torch.div(x, torch.norm(x, 2, axis, True))
def unknown(x):
    return x
class Head(nn.Module):
    def __init__(self, n, device_id=None):
        super().__init__()
        self.device_id = device_id
        self.iter = 0
        self.weight = Parameter(torch.FloatTensor(n, n))
    def forward(self, input, label):
        BODY
        x = input
        sub = torch.chunk(self.weight, len(self.device_id), dim=0)
        temp_x = x.cuda(self.device_id[0])
        weight = l2_norm(sub[0]).cuda(self.device_id[0])
        out = F.linear(temp_x, weight).cuda(self.device_id[0])
        one_hot = torch.zeros(out.size()).cuda(self.device_id[0])
        return out * one_hot
"""


def _bindings(tree: ast.Module) -> dict[str, str]:
    out = {}
    for n in tree.body:
        if isinstance(n, ast.Import):
            out.update({a.asname or a.name: a.name for a in n.names})
        elif isinstance(n, ast.ImportFrom) and n.module:
            out.update({a.asname or a.name: f"{n.module}.{a.name}" for a in n.names})
    return out


def moves(body: str) -> bool:
    tree = ast.parse(HEAD.replace("BODY", body))
    bindings = _bindings(tree)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    return class_moves_to_a_device(cls, bindings, None, module_tensor_functions(tree, bindings))


def test_copies_of_inputs_and_weight_chunks_in_forward_move_nothing():
    assert not moves("self.iter += 1")
    assert not moves("self.lamb = max(0.5, self.iter * 2)")


def test_a_copy_kept_in_the_module_or_a_part_of_it_moved_still_counts():
    assert moves("self.last = input.cuda()")
    assert moves("self.last = label")  # a name of its own: may hold a copy
    assert moves("self.register_buffer('b', torch.zeros(1))")
    assert moves("self.weight.data = self.weight.data.cuda()")


def test_receivers_not_known_as_tensors_still_count():
    assert moves("unknown(input).cuda()")
    assert moves("self.fc = nn.Linear(2, 2)\n        self.fc.cuda()")
    assert moves("layer = self.fc\n        layer.cuda()")  # a name bound to an attribute: maybe a module
    assert moves("layer = self.make()\n        layer.cuda()")  # a method of the class: maybe a module


def test_tensor_functions_of_the_module():
    tree = ast.parse(HEAD)
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    bindings = _bindings(tree)
    from memlint.project.forward_copies import qualified

    assert tensor_functions(functions, lambda f: qualified(f, bindings)) == frozenset({"l2_norm"})
