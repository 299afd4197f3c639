"""What a module's own command-line option may hold when it names objects.

``parser.add_argument('--base', choices=dict(resnet18=backbone.ResNet18,
resnet50=backbone.ResNet50), default=backbone.ResNet50, action=LookupChoices)``
with ``opts = parser.parse_args()``: ``opts.base(...)`` calls one of the
objects the option lists, its default or one of its choices (a lookup action
turns the key typed into the value the dict gives; without one, a key typed
would be a string and the call could not run). A rule asks whether every
one of them builds something it knows (RKD's ``opts.base(pretrained=True)``).

Nothing is answered for an option declared twice, one with ``type=`` (what
a converter returns is not listed), one whose ``choices`` is not a literal
list, tuple, set or dict, an attribute the module also assigns
(``opts.base = ...``), or a namespace not bound from ``parse_args()`` here.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.option_defaults import option_dest, parsed_namespaces
from memlint.parse.traversal import visit_fast

# None: declared twice, or its values cannot be listed.
_Values = tuple[cst.BaseExpression, ...] | None


class _Choices(cst.CSTVisitor):
    def __init__(self) -> None:
        self.values: dict[str, _Values] = {}
        self.namespaces: set[str] = set()
        self.assigned: set[tuple[str, str]] = set()  # (namespace, attribute) written by the module

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "add_argument":
            return
        dest = option_dest(node)
        if dest is not None:
            self.values[dest] = None if dest in self.values else _listed(node)

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


def _listed(call: cst.Call) -> _Values:
    """The default, ``const`` and every choice of ``call`` (an
    ``add_argument``), or None when the choices are not all written out."""
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    if "type" in keywords or "choices" not in keywords or any(arg.star for arg in call.args):
        return None
    choices = _elements(keywords["choices"])
    if choices is None:
        return None
    return (*choices, *(keywords[k] for k in ("default", "const") if k in keywords))


def _elements(choices: cst.BaseExpression) -> _Values:
    if isinstance(choices, cst.Dict):
        values = []
        for element in choices.elements:
            if not isinstance(element, cst.DictElement):
                return None  # ``{**other}``: not written out
            values.append(element.value)
        return tuple(values)
    if isinstance(choices, cst.Call) and isinstance(choices.func, cst.Name) and choices.func.value == "dict":
        if any(arg.keyword is None for arg in choices.args):
            return None  # ``dict(table)``, ``dict(**table)``
        return tuple(arg.value for arg in choices.args)
    if isinstance(choices, (cst.List, cst.Tuple, cst.Set)):
        if any(not isinstance(element, cst.Element) for element in choices.elements):
            return None  # ``[*names]``
        return tuple(element.value for element in choices.elements)
    return None


class OptionChoices:
    """The module's options and what each may hold, read on first question."""

    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._choices: _Choices | None = None

    def _read(self) -> _Choices:
        if self._choices is None:
            self._choices = _Choices()
            visit_fast(self._module, self._choices)
        return self._choices

    def values(self, expr: cst.BaseExpression) -> _Values:
        """``opts.base`` of a namespace parsed in this module: every object
        the option may hold (its choices, default and const), or None."""
        if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)):
            return None
        found = self._read()
        namespace, attr = expr.value.value, expr.attr.value
        if namespace not in found.namespaces or (namespace, attr) in found.assigned:
            return None
        return found.values.get(attr)
