"""Loops over the chunks of one input tensor.

``chunks = torch.split(rays, chunk_size)`` then ``for s in range(len(chunks)):``
(or ``for c in torch.chunk(x, n):``, or a dict of splits, nerfplusplus's
``ray_batch_split[key] = torch.split(ray_batch[key], chunk_size)`` then
``for s in range(len(ray_batch_split['ray_d'])):``): each iteration is a
slice of one input, part of one batch's work, whatever words the names hold
(``split``, ``models['cascade_level']``), and so is each iteration of a loop
nested in it. Only splits by torch (``torch.split``/``chunk``/``tensor_split``,
``x.chunk(n)``, ``x.split(chunk_size)`` with a size named for chunks) count:
a string's ``split`` is not one.

Read on demand (a rule asks about one loop), one walk of the loop's function.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import dotted_name
from memlint.parse.traversal import visit_fast
from memlint.vocabulary.tokens import name_tokens

_TORCH_SPLITS = frozenset({"torch.split", "torch.chunk", "torch.tensor_split"})
_ITERATING = frozenset({"enumerate", "range", "len", "zip", "tqdm", "list"})


def _splits(value: cst.BaseExpression | None, names) -> bool:
    """``torch.split(x, n)``, ``x.chunk(n)`` or ``x.split(chunk_size)``."""
    if not isinstance(value, cst.Call) or not value.args:
        return False
    if names.call_name(value) in _TORCH_SPLITS:
        return True
    func = value.func
    if isinstance(func, cst.Attribute) and func.attr.value == "chunk":
        return True
    if isinstance(func, cst.Attribute) and func.attr.value == "split":
        size = dotted_name(value.args[0].value) or ""
        return bool(name_tokens(size.replace(".", "_")) & {"chunk", "chunks"})
    return False


def _iterated(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """What a loop header iterates, through ``range(len(x))``, ``enumerate``, ``zip``."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in _ITERATING:
        found: list[cst.BaseExpression] = []
        for arg in expr.args:
            if arg.keyword is None:
                found.extend(_iterated(arg.value))
        return found
    return [expr]


class _Stores(cst.CSTVisitor):
    """Every value stored under ``name`` or ``name[...]`` in a function
    (None for a binding whose value cannot be paired: a loop target, an
    augmented assignment, an unpacking)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.plain: list[cst.BaseExpression | None] = []
        self.keyed: list[cst.BaseExpression] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            t = target.target
            if isinstance(t, cst.Name) and t.value == self.name:
                self.plain.append(node.value)
            elif isinstance(t, cst.Subscript) and dotted_name(t.value) == self.name:
                self.keyed.append(node.value)
            elif isinstance(t, (cst.Tuple, cst.List)) and any(
                isinstance(el.value, cst.Name) and el.value.value == self.name for el in t.elements
            ):
                self.plain.append(None)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if dotted_name(node.target) == self.name:
            self.plain.append(None)

    def visit_For(self, node: cst.For) -> None:
        if isinstance(node.target, cst.Name) and node.target.value == self.name:
            self.plain.append(None)


def _empty_container(value: cst.BaseExpression | None) -> bool:
    """``{}``, ``dict()``, ``OrderedDict()``: filled by keyed stores."""
    if isinstance(value, cst.Dict):
        return not value.elements
    if isinstance(value, cst.Call) and not value.args:
        return (dotted_name(value.func) or "").rsplit(".", 1)[-1] in ("dict", "OrderedDict")
    return False


def iterates_chunks(loop: cst.CSTNode, scope: cst.CSTNode, names) -> bool:
    """``loop`` iterates the splits of a tensor bound in ``scope`` (see the module)."""
    if not isinstance(loop, cst.For):
        return False
    for expr in _iterated(loop.iter):
        if _splits(expr, names):
            return True
        base = expr.value if isinstance(expr, cst.Subscript) else expr
        if not isinstance(base, cst.Name):
            continue
        stores = _Stores(base.value)
        visit_fast(scope, stores)
        if isinstance(expr, cst.Subscript):
            plain_ok = all(_empty_container(v) for v in stores.plain)
            if plain_ok and stores.keyed and all(_splits(v, names) for v in stores.keyed):
                return True
        elif stores.plain and not stores.keyed and all(_splits(v, names) for v in stores.plain):
            return True
    return False


def chunk_loop_around(loops, info) -> object | None:
    """``info`` or the nearest loop around it in the same function that
    iterates the chunks of one tensor (``LoopInfo``), or None."""
    cur = info
    while cur is not None:
        if iterates_chunks(cur.node, cur.scope, loops.names):
            return cur
        cur = cur.parent
    return None
