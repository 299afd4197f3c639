"""project/binding_counts.py: how often a function's own nodes bind each name."""

from __future__ import annotations

import ast
import textwrap

from memlint.project.binding_counts import binding_counts


def _own(source: str) -> list[ast.AST]:
    fn = ast.parse(textwrap.dedent(source)).body[0]
    return list(ast.walk(fn))[1:]


_BODY = """
    def step(self, d, k):
        loss = self.f(d)
        loss += 1
        for i, (a, b) in enumerate(d):
            pass
        with open(k) as fh:
            pass
        self.out = loss
        d[k] = loss
        def inner():
            pass
"""


def test_new_bindings_are_counted():
    counts = binding_counts(_own(_BODY))
    assert counts == {"loss": 2, "i": 1, "a": 1, "b": 1, "fh": 1, "inner": 1}


def test_parts_count_the_names_of_stored_attributes_and_items():
    counts = binding_counts(_own(_BODY), parts=True)
    assert (counts["self"], counts["d"], counts["k"], counts["loss"]) == (1, 1, 1, 2)
