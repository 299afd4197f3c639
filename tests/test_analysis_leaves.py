"""facts.leaves: leaf tensors requiring grad created in another scope."""

import libcst as cst
from analysis_helpers import facts_of

SRC = """
import torch
import torch.nn as nn
w = torch.randn(3, requires_grad=True)
p = nn.Parameter(torch.zeros(3))
plain = torch.randn(3)
twice = torch.randn(3, requires_grad=True)
twice = twice.detach()
params = [w, p]
mixed = [w, plain]
def init():
    return (torch.zeros(2, requires_grad=True), torch.ones(2, requires_grad=True))
made = init()
def f(w2, lr, params_in):
    global p
    p -= lr
    for a in params:
        pass
    for b in mixed:
        pass
    for c in made:
        pass
    for d in params_in:
        pass
    local = [w]
    for e in local:
        pass
    use(w, w2, plain, twice)
def g():
    w = torch.zeros(3)
    use(w)
f(None, 0.1, params)
"""


def _fn(facts, name):
    return next(fn for fn in facts.calls.functions if fn.name.value == name)


def test_module_leaf():
    facts = facts_of(SRC)
    f, g = _fn(facts, "f"), _fn(facts, "g")
    leaves = facts.leaves
    assert leaves.module_leaf("w", f)
    assert leaves.module_leaf("p", f)  # declared global
    assert not leaves.module_leaf("plain", f)  # does not require grad
    assert not leaves.module_leaf("twice", f)  # one binding detaches it
    assert not leaves.module_leaf("w2", f)  # a parameter
    assert not leaves.module_leaf("w", g)  # a local shadows it


def test_leaf_list():
    facts = facts_of(SRC)
    f = _fn(facts, "f")
    leaves = facts.leaves

    def iterable(target):
        return next(n.iter for n in _loops(facts.module) if isinstance(n.target, cst.Name) and n.target.value == target)

    assert leaves.leaf_list(iterable("a"), f)  # [w, p] at module level
    assert not leaves.leaf_list(iterable("b"), f)  # one element is not a leaf
    assert leaves.leaf_list(iterable("c"), f)  # returned by a function of this module
    assert leaves.leaf_list(iterable("d"), f)  # every call site passes a leaf list
    assert leaves.leaf_list(iterable("e"), f)  # a local list of module leaves


def _loops(module):
    found = []

    class V(cst.CSTVisitor):
        def visit_For(self, node):
            found.append(node)

    module.visit(V())
    return found


def test_a_recursive_function_passing_its_parameter_on_terminates():
    facts = facts_of(
        """
import torch
def walk(items, depth):
    for p in items:
        pass
    walk(items, depth - 1)
walk(things, 3)
"""
    )
    fn = facts.calls.functions[0]
    loop = _loops(facts.module)[0]
    assert not facts.leaves.leaf_list(loop.iter, fn)
