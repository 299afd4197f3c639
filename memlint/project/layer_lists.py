"""A builder's local list of layers, unpacked into one container (MEM701's
builders across modules): ``layers = []; for v in cfg: layers += [nn.Conv2d(
...), nn.ReLU()]; return nn.Sequential(*layers)`` (VGG-style ``make_layers``).

What the container holds is what the list was given: when the function only
fills the list (``layers = [...]``, ``layers += [...]``, ``layers.append(x)``,
``layers.extend([...])``) and reads it only unpacked into a call, the values
given are every module the container gets. cpu_builders.py judges each of
them (a fresh torch.nn layer, or a local name bound only to one); a list
read any other way (handed to a helper that may append a model on a device,
aliased, iterated) has no known contents.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from memlint.gate.ast_fields import nodes

# ``nodes``, or the summary's NodeLists (node_lists.py): one list per function for every reader.
Walk = Callable[[ast.AST], list[ast.AST]]

_FILLS = frozenset({"append", "extend"})


def list_values(fn: ast.FunctionDef, name: str, returned: bool = False, walk: Walk = nodes) -> list[ast.expr] | None:
    """Every value ``fn`` puts in its local list ``name`` (None when it uses
    the list otherwise than to fill it or unpack it into a call, or, with
    ``returned``, to return it: ``return layers``, ``return base, (loc, conf)``)."""
    values: list[ast.expr] = []
    created = False  # bound to a list literal here: not a list handed in
    accounted: set[int] = set()  # the ``Name`` nodes of the uses above
    if returned:
        accounted.update(id(n) for n in returned_names(fn, walk) if n.id == name)
    for node in walk(fn):
        if isinstance(node, ast.Assign) and any(_named(t, name) for t in node.targets):
            if len(node.targets) != 1 or not isinstance(node.value, ast.List):
                return None
            values.extend(node.value.elts)
            accounted.add(id(node.targets[0]))
            created = True
        elif isinstance(node, ast.AugAssign) and _named(node.target, name):
            if not isinstance(node.op, ast.Add) or not isinstance(node.value, ast.List):
                return None
            values.extend(node.value.elts)
            accounted.add(id(node.target))
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and _named(func.value, name) and func.attr in _FILLS:
                filled = _filled(node)
                if filled is None:
                    return None
                values.extend(filled)
                accounted.add(id(func.value))
            for arg in node.args:
                if isinstance(arg, ast.Starred) and _named(arg.value, name):
                    accounted.add(id(arg.value))
    uses = [n for n in walk(fn) if isinstance(n, ast.Name) and n.id == name]
    if not created or any(id(n) not in accounted for n in uses):
        return None
    if any(isinstance(v, ast.Starred) for v in values):
        return None  # ``[*other]``: the values of another list
    return values


def returned_names(fn: ast.FunctionDef, walk: Walk = nodes) -> list[ast.Name]:
    """The names ``fn`` returns as they are, alone or as elements of tuple
    and list literals (``return vgg, extras, (loc, conf)``)."""
    out: list[ast.Name] = []
    for node in walk(fn):
        if isinstance(node, ast.Return) and node.value is not None:
            todo = [node.value]
            while todo:
                value = todo.pop()
                if isinstance(value, ast.Name):
                    out.append(value)
                elif isinstance(value, (ast.Tuple, ast.List)):
                    todo.extend(value.elts)
    return out


def _filled(call: ast.Call) -> list[ast.expr] | None:
    """What ``name.append(x)`` / ``name.extend([...])`` adds, None if not plain."""
    if call.keywords or len(call.args) != 1 or isinstance(call.args[0], ast.Starred):
        return None
    arg = call.args[0]
    if call.func.attr == "append":  # type: ignore[attr-defined]
        return [arg]
    return list(arg.elts) if isinstance(arg, (ast.List, ast.Tuple)) else None


def _named(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name
