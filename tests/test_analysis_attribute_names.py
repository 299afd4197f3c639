"""Whether a tree spells an attribute by one of a few names
(analysis/scope/attribute_names.py)."""

import libcst as cst
import pytest

from memlint.analysis.scope.attribute_names import spells_attribute


@pytest.mark.parametrize(
    "source, names, expected",
    [
        ("self.load_checkpoint(path)", ("load_checkpoint",), True),
        ("f = trainer.load_checkpoint", ("load_checkpoint",), True),  # read, not called: still spelled
        ("load_checkpoint(path)", ("load_checkpoint",), False),  # a plain name is no attribute
        ("x = 'self.load_checkpoint'", ("load_checkpoint",), False),  # nor a string
        ("load_checkpoint.other(path)", ("load_checkpoint",), False),  # the receiver's name is not read
        ("a.b.parameters().c", ("requires_grad", "parameters"), True),  # any of the names, at any depth
        ("for p in m.weights:\n    p.requires_grad = False", ("requires_grad", "parameters"), True),
        ("m.eval()", ("requires_grad", "parameters"), False),
        ("def f():\n    def g():\n        m.register_forward_hook(h)", ("register_forward_hook",), True),
        ("m.requires_grad", (), False),
    ],
)
def test_spells_attribute(source, names, expected):
    assert spells_attribute(cst.parse_module(source), names) is expected


def test_a_statement_alone():
    module = cst.parse_module("a = m.parameters()\nb = m.eval()\n")
    first, second = module.body
    assert spells_attribute(first, ("parameters",)) is True
    assert spells_attribute(second, ("parameters",)) is False
