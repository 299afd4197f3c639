"""Project factories returning a tuple of typed objects, read element by
element: SFSegNets' optimizer.py ends ``get_optimizer`` with ``return
optimizer, scheduler`` (``optim.SGD(...)``, ``lr_scheduler.LambdaLR(...)``)
and train.py unpacks ``optim, scheduler = optimizer.get_optimizer(args,
net)``.

object_types.py records a factory's element ``i`` as a factory of its own,
named ``get_optimizer#i``, when every ``return`` is a tuple display of one
length whose element ``i`` is typed; a name unpacked from a call holds that
element (``Element``), spelled ``<callee>#i``, which typed_objects.py
qualifies as it does any factory's return. An element not typed in every
return, a starred element, returns of different lengths: not recorded, so
the unpacked name stays unknown.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

# Between a factory's name and the element's position.
ELEMENT_MARK = "#"


class Element(ast.AST):
    """The ``index``-th element of what ``call`` returns, as a binding of an unpacked name."""

    _fields = ()

    def __init__(self, call: ast.Call, index: int) -> None:
        super().__init__()
        self.call = call
        self.index = index


def mark_elements(node: ast.Assign, stores: dict[str, list[ast.AST | None]]) -> None:
    """``a, b = f(...)``: each plain name of the tuple target holds one
    element of the call's value instead of an unknown one (one unknown mark
    replaced; the walk made one per stored name)."""
    call = node.value
    assert isinstance(call, ast.Call)
    for i, target in enumerate(node.targets[0].elts):  # type: ignore[attr-defined]
        if isinstance(target, ast.Starred):
            return  # later positions are not the elements' own
        if not isinstance(target, ast.Name):
            continue
        values = stores.get(target.id, [])
        if None in values:
            values[values.index(None)] = Element(call, i)


def element_types(
    returns: list[ast.AST], type_of: Callable[[ast.AST], tuple[str, ...] | None]
) -> dict[int, tuple[str, ...]]:
    """Position -> the types of that element in every returned tuple display
    (all of one length, none starred); positions some return leaves untyped
    are left out."""
    if not returns or not all(isinstance(r, ast.Tuple) for r in returns):
        return {}
    lengths = {len(r.elts) for r in returns}  # type: ignore[attr-defined]
    if len(lengths) != 1 or any(isinstance(e, ast.Starred) for r in returns for e in r.elts):  # type: ignore[attr-defined]
        return {}
    found: dict[int, tuple[str, ...]] = {}
    for i in range(lengths.pop()):
        types: set[str] = set()
        for r in returns:
            t = type_of(r.elts[i])  # type: ignore[attr-defined]
            if t is None:
                break
            types.update(t)
        else:
            if types:
                found[i] = tuple(sorted(types))
    return found


def split_element(spelling: str) -> tuple[str, str]:
    """``("optimizer.get_optimizer", "#1")`` for ``optimizer.get_optimizer#1``; ``(spelling, "")`` otherwise."""
    base, mark, index = spelling.partition(ELEMENT_MARK)
    return (base, mark + index) if mark and index.isdigit() else (spelling, "")
