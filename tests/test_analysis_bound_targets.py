"""bound_targets: the targets a block binds, unpacked, in walk order (MEM202, MEM801)."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.bound_targets import bound_targets
from memlint.analysis.scope.names import dotted_name

CODE = """
a, (b, *c) = f()
self.net: Net = Net()
for i, batch in loader:
    with open(p) as fh:
        pass
import torch.nn as nn
d[k] = 1
total += loss
if (n := len(xs)):
    pass
"""


def _spelled(augmented: bool) -> list[str | None]:
    return [dotted_name(t) for t in bound_targets(cst.parse_module(CODE), augmented=augmented)]


def test_every_binding_form_unpacked_in_walk_order():
    assert _spelled(True) == ["a", "b", "c", "self.net", "i", "batch", "fh", "nn", None, "total", "n"]


def test_without_augmented_leaves_out_augmented_and_walrus_targets():
    assert _spelled(False) == ["a", "b", "c", "self.net", "i", "batch", "fh", "nn", None]
