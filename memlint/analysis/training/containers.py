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
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.autograd.backward_proof import entry_container
from memlint.analysis.scope.names import dotted_name
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
