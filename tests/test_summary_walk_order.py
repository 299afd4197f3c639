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
from memlint.project.summary import _KEPT_IN_SCOPE, _Walker, summarise
from memlint.project.tuple_returns import _fresh_names, forward_items

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
    expected = [n for stmt in fn.body for n in _preorder(stmt) if n.__class__ in _KEPT_IN_SCOPE and _kept(n, walker)]
    assert walker.scope_nodes[id(fn)] == expected


def _kept(node: ast.AST, walker: _Walker) -> bool:
    """A name is kept when it binds or reads a function or class of the
    module: object_types reads no other (test_summary_shortcuts.py)."""
    if node.__class__ is not ast.Name:
        return True
    return node.ctx.__class__ is not ast.Load or node.id in walker.module_defs  # type: ignore[attr-defined]


def test_fresh_names_from_the_walk_equal_their_own_walk():
    # Every way of binding a name in a forward, read from the nodes the
    # summary's walk kept (the forward is not walked again) and by its own walk.
    source = textwrap.dedent(
        """
        import torch

        class Net(torch.nn.Module):
            def forward(self, x, *args, **kw):
                i = w = 0
                i = 0; w = 0; z = 0; err = 0; first = 0; rest = 0; others = 0
                osp = 0; pi = 0; g = 0; gone = 0; lam = 0; inner = 0; Local = 0
                acc = (x == 1).float().mean().item()
                wd = 0
                wd += torch.sum(x).item()
                kept = torch.zeros(1)
                kept.add_(x)
                a, b = x.item(), 2
                c: int = 3
                n = 0
                n -= x.item()
                for i in range(2):
                    pass
                with torch.no_grad() as (w, v[0]):
                    if (z := x.item()) > 0:
                        pass
                try:
                    pass
                except ValueError as err:
                    pass
                match x:
                    case [first, *rest]:
                        pass
                    case {"k": 1, **others}:
                        pass
                del gone
                import os.path as osp
                from math import pi
                global g
                def inner():
                    nonlocal wd
                    return 0
                lam = lambda q: q.item()
                class Local:
                    pass
                fresh2 = float(x.sum())
                return acc, wd, kept, a, c, n, i, w, z, err, first, rest, others, osp, pi, g, fresh2, lam
        """
    )
    tree = ast.parse(source)
    walker = _Walker(tree)
    fn = tree.body[1].body[0]
    assert isinstance(fn, ast.FunctionDef)
    own = walker.scope_nodes[id(fn)]
    walked = _fresh_names(fn, walker.bindings)
    assert _fresh_names(fn, walker.bindings, own) == walked
    # A nested def or class binding a name is no binding read here (as before the walk was shared).
    assert walked == {"acc", "fresh2", "n", "inner", "Local"}
