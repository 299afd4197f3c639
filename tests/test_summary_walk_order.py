"""The summary's walk hands its helpers what their own walks would find.

forward_items (tuple_returns.py) reads each ``forward``'s returns from the
nodes the summary's walk gathered per scope (``scope_nodes``); object_types
reads the same lists and relies on their order: a pre-order, children left
to right, a scope's own code only (not a nested function's or class's, not
a lambda's body, not decorators).
"""

from __future__ import annotations

import ast
import textwrap

from memlint.gate.ast_fields import children
from memlint.project.object_types import READ_IN_SCOPE
from memlint.project.summary import _Walker, summarise
from memlint.project.tuple_returns import forward_items

_SOURCE = textwrap.dedent(
    """
    import torch

    class Net(torch.nn.Module):
        def forward(self, x, y):
            def inner():
                return 1, 2, 3
            class Local:
                def forward(self):
                    return x, y
            f = lambda z: z.item()
            if y is None:
                return torch.cat([x]), 0
            for i in range(3):
                with torch.no_grad():
                    out = [self.layer(t) for t in x]
                    if i:
                        return out, torch.zeros(1).cuda()
            return x * 2, float(y.sum())

    class Other(torch.nn.Module):
        def forward(self, x):
            return x, x.detach(), 1
    """
)


def _preorder(node: ast.AST) -> list[ast.AST]:
    out = [node]
    for child in children(node):
        out += _preorder(child)
    return out


def test_forward_items_from_the_walk_equal_its_own_walk():
    tree = ast.parse(_SOURCE)
    walker = _Walker(tree)
    assert forward_items(tree, walker.bindings, walker.scope_nodes) == forward_items(tree, walker.bindings)
    assert summarise(tree).forward_items == {"Net": [2, 1], "Other": [3, 1, 2]}


def test_scope_nodes_are_the_scope_own_code_in_pre_order():
    source = textwrap.dedent(
        """
        def train(model, loader, opt):
            for x, y in loader:
                loss = model(x).loss(y, reduction=[a.b for a in y])
                opt.step(); total = loss.item() + f(g(h(x)), k=x[0])
            return total
        """
    )
    tree = ast.parse(source)
    walker = _Walker(tree)
    fn = tree.body[0]
    expected = [n for stmt in fn.body for n in _preorder(stmt) if n.__class__ in READ_IN_SCOPE and _kept(n, walker)]
    assert walker.scope_nodes[id(fn)] == expected


def _kept(node: ast.AST, walker: _Walker) -> bool:
    """A name is kept when it binds or reads a function or class of the
    module: object_types reads no other (test_summary_shortcuts.py)."""
    if node.__class__ is not ast.Name:
        return True
    return node.ctx.__class__ is not ast.Load or node.id in walker.module_defs  # type: ignore[attr-defined]
