"""Values a method indexes as an array (MEM701's CPU-built classes).

``x[:, i]``, ``x[:t, i]``: a subscript by a tuple holding a slice is an
array's or a tensor's; no module (``Sequential``, ``ModuleList``,
``ModuleDict``) and no list takes one. AoANet's beam search keeps a list of
beams and reads ``beam_seq_table[divm][:, vix]``: the beam is a tensor, so
``it = beam_seq_table[divm][t]; it.cuda()`` moves a copy of a row, no part
of the model. The same spelling is read as the same value wherever the
method writes it (code that runs holds one kind of thing in a slot).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable


def array_values(found: Iterable[ast.AST]) -> frozenset[str]:
    """``ast.dump`` of each value ``found`` (a method's nodes) subscripts by
    a tuple holding a slice."""
    out: set[str] = set()
    for node in found:
        if node.__class__ is not ast.Subscript:
            continue
        index = node.slice  # type: ignore[attr-defined]
        if index.__class__ is ast.Tuple and any(e.__class__ is ast.Slice for e in index.elts):  # type: ignore[attr-defined]
            out.add(ast.dump(node.value))  # type: ignore[attr-defined]
    return frozenset(out)


def indexes_an_array(expr: ast.AST, arrays: frozenset[str]) -> bool:
    """``expr`` is ``v[...]`` of a value ``v`` among ``arrays``: a part of an
    array or a tensor, never a module."""
    return bool(arrays) and isinstance(expr, ast.Subscript) and ast.dump(expr.value) in arrays
