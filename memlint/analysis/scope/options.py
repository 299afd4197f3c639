"""A module's own command-line options, read in one walk.

``parser.add_argument("--num_split", type=int, default=1)`` with ``args =
parser.parse_args()``: ``args.num_split`` is what that call declares. Two
facts read these declarations: an option's integer default
(option_defaults.py, MEM304) and the objects an option may hold
(option_choices.py, MEM701's state loads). Both read the same calls and the
same namespaces, so one visitor collects them for both (``ModuleFacts.options``).

Nothing is answered for an option declared twice (two parsers, two ``dest``s
of one name), nor for a namespace not bound from ``parse_args()`` in the module.
"""

from __future__ import annotations

import libcst as cst

from memlint.parse.traversal import visit_fast


class _Walk(cst.CSTVisitor):
    def __init__(self) -> None:
        self.declared: dict[str, list[cst.Call]] = {}  # dest: its ``add_argument`` calls
        self.namespaces: set[str] = set()  # names bound from ``....parse_args()``
        self.assigned: set[tuple[str, str]] = set()  # (namespace, attribute) written by the module

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "add_argument":
            return
        dest = option_dest(node)
        if dest is not None:
            self.declared.setdefault(dest, []).append(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        self.namespaces.update(parsed_namespaces(node))
        for target in node.targets:
            self._written(target.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._written(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._written(node.target)

    def _written(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            self.assigned.add((target.value.value, target.attr.value))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._written(element.value)


class ModuleOptions:
    """The module's ``add_argument`` declarations, read on first question."""

    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._walk: _Walk | None = None

    def _read(self) -> _Walk:
        if self._walk is None:
            self._walk = _Walk()
            visit_fast(self._module, self._walk)
        return self._walk

    def declaration(self, expr: cst.BaseExpression, *, unassigned: bool = False) -> cst.Call | None:
        """``args.name`` of a namespace parsed in this module: the one
        ``add_argument`` call declaring ``name`` (None: declared twice or
        not at all). With ``unassigned``, None also where the module writes
        ``args.name`` itself."""
        if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)):
            return None
        found = self._read()
        namespace, attr = expr.value.value, expr.attr.value
        if namespace not in found.namespaces or (unassigned and (namespace, attr) in found.assigned):
            return None
        calls = found.declared.get(attr)
        return calls[0] if calls is not None and len(calls) == 1 else None


def parsed_namespaces(node: cst.Assign) -> list[str]:
    """The names ``node`` binds to ``....parse_args()`` (``args = parser.parse_args()``)."""
    value = node.value
    if not (
        isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "parse_args"
    ):
        return []
    return [t.target.value for t in node.targets if isinstance(t.target, cst.Name)]


def option_dest(call: cst.Call) -> str | None:
    """The attribute an ``add_argument`` call stores: ``dest=``, else its
    first long option (``--num-split`` -> ``num_split``)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "dest":
            return _literal(arg.value)
    for arg in call.args:
        if arg.keyword is not None:
            break
        text = _literal(arg.value)
        if text is not None and text.startswith("--"):
            return text[2:].replace("-", "_")
    return None


def _literal(value: cst.BaseExpression) -> str | None:
    if isinstance(value, cst.SimpleString) and value.prefix == "":
        evaluated = value.evaluated_value
        return evaluated if isinstance(evaluated, str) else None
    return None
