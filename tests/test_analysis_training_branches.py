"""training/training_branches.py: a forward in the training arm of a test
of its own module's ``training`` flag never runs after ``.eval()``."""

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider

from memlint.analysis.training.training_branches import runs_only_in_training

_SRC = """\
def step(model, other, x):
    if model.training:
        a = model(x)
    else:
        b = model(x)
    if not model.training:
        c = model(x)
    elif x is None:
        d = model(x)
    else:
        e = model.forward(x)
    if other.training:
        f = model(x)
    if model.training and x is not None:
        g = model(x)
    h = model(x)
    if self.net.training:
        i = self.net(x)
"""


def _only_training() -> list[bool]:
    wrapper = MetadataWrapper(cst.parse_module(_SRC), unsafe_skip_copy=True)
    parents = wrapper.resolve(ParentNodeProvider)
    calls: list[cst.Call] = []

    class V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            calls.append(node)

    wrapper.module.visit(V())
    return [runs_only_in_training(c, parents.get) for c in calls]


def test_only_the_arms_run_while_training_count():
    # a, b, c, d, e, f, g, h, i
    assert _only_training() == [True, False, False, True, True, False, False, False, True]
