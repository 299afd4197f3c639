"""Names that hold a container of tensors (a dict or list of losses), not a tensor.

A value with history may be a dict of losses (``output = model.training_step(batch)``
then ``output["loss"].backward()``): storing it keeps every entry's graph, but
``output.detach()`` would raise, so a fix that detaches the stored value must
not be offered for it.

- ``holds_entries(expr, scope, bindings)``: ``expr`` (a name or attribute) is
  read in ``scope`` with a string key (``d["loss"]``) or a mapping method
  (``d.items()``), or backpropagated through one entry (``out[0].backward()``),
  or is bound there to a dict/list/tuple display, a
  comprehension or ``dict(...)``. Anything else (``out``, ``loss``) is False.
- ``overwrites_one_slot(target, value, scope, bindings, owners)``: the store
  ``target = value`` (``loss_dict["d"] = d_loss``) writes a slot whose key is
  the same on every iteration, and ``value`` does not read the container: each
  iteration replaces what the last one stored, so at most one value per such
  line is kept, nothing accumulates. ``d[step] = out``, ``d[f"{i}"] = out``
  and ``d["h"] = d["h"] + [out]`` are not slots. A key is constant when it is
  a literal (string, number, ``-1``, a tuple of them, an f-string without
  fields) or a name every binding of which, in the function that reads it
  and the functions around it, is such a literal (not a parameter, a loop
  target, an import: those may change).
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.autograd.backward_proof import entry_container
from memlint.analysis.scope.names import dotted_name, mentions
from memlint.parse.traversal import visit_fast

_MAPPING_METHODS = frozenset({"items", "keys", "values", "update", "get", "setdefault", "pop"})
_CONTAINER_DISPLAYS = (cst.Dict, cst.List, cst.Tuple, cst.Set, cst.DictComp, cst.ListComp, cst.SetComp)
_CONTAINER_CALLS = frozenset({"dict", "list", "tuple", "defaultdict", "OrderedDict"})


def holds_entries(expr: cst.BaseExpression, scope: cst.CSTNode, bindings) -> bool:
    key = dotted_name(expr)
    if key is None:
        return isinstance(expr, _CONTAINER_DISPLAYS)
    for value in bindings.values(key, scope):
        if isinstance(value, _CONTAINER_DISPLAYS):
            return True
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in _CONTAINER_CALLS:
            return True
    return _read_as_mapping(scope, key)


class _ReadAsMapping(cst.CSTVisitor):
    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, scope: cst.CSTNode, key: str) -> None:
        super().__init__()
        self.scope = scope
        self.key = key
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.found:
            return False
        key = self.key
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and node is not self.scope:
            return False
        if isinstance(node, cst.Subscript) and dotted_name(node.value) == key:
            if any(
                isinstance(el.slice, cst.Index) and isinstance(el.slice.value, (cst.SimpleString, cst.FormattedString))
                for el in node.slice
            ):
                self.found = True
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if node.func.attr.value in _MAPPING_METHODS and dotted_name(node.func.value) == key:
                self.found = True
            elif node.func.attr.value == "backward" and entry_container(node.func.value) == key:
                self.found = True  # ``out[0].backward()``: ``out`` may be a tuple of outputs
        return True


def _read_as_mapping(scope: cst.CSTNode, key: str) -> bool:
    visitor = _ReadAsMapping(scope, key)
    visit_fast(scope, visitor)
    return visitor.found


def overwrites_one_slot(
    target: cst.Subscript,
    value: cst.BaseExpression,
    scope: cst.CSTNode,
    bindings,
    owners: dict,
) -> bool:
    container: cst.BaseExpression = target
    while isinstance(container, cst.Subscript):
        if len(container.slice) != 1:
            return False
        index = container.slice[0].slice
        if not isinstance(index, cst.Index) or not _constant_key(index.value, scope, bindings, owners):
            return False
        container = container.value
    key = dotted_name(container)
    # ``d["h"] = d["h"] + [out]`` or ``torch.cat((d["h"], out))``: the slot grows.
    return key is not None and not mentions(value, key)


def _constant_key(expr: cst.BaseExpression, scope: cst.CSTNode, bindings, owners: dict) -> bool:
    if _literal(expr):
        return True
    if not isinstance(expr, cst.Name):
        return False
    name = expr.value
    cur: cst.CSTNode | None = scope
    while isinstance(cur, cst.FunctionDef):
        if name in _param_names(cur):
            return False  # each call may pass another key
        if bindings.binds_in(name, cur):
            break
        cur = owners.get(cur)
    if cur is None:
        return False
    values = bindings.values_in(name, cur)  # ``None`` stands for a loop target, ``with ... as``, unpacking
    return bool(values) and all(v is not None and _literal(v) for v in values)


def _literal(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.SimpleString, cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.ConcatenatedString):
        return _literal(expr.left) and _literal(expr.right)
    if isinstance(expr, cst.FormattedString):
        return not any(isinstance(p, cst.FormattedStringExpression) for p in expr.parts)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return isinstance(expr.expression, (cst.Integer, cst.Float))
    if isinstance(expr, cst.Tuple):
        return all(not isinstance(el, cst.StarredElement) and _literal(el.value) for el in expr.elements)
    return False


def _param_names(fn: cst.FunctionDef) -> set[str]:
    p = fn.params
    names = {x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)}
    for star in (p.star_arg, p.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    return names
