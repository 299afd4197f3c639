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
The declarations are read once for this and option_defaults.py (options.py).
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.options import ModuleOptions

# None: declared twice, or its values cannot be listed.
_Values = tuple[cst.BaseExpression, ...] | None


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
    """What the options of ``options`` (the module's declarations) may hold."""

    def __init__(self, options: ModuleOptions) -> None:
        self._options = options

    def values(self, expr: cst.BaseExpression) -> _Values:
        """``opts.base`` of a namespace parsed in this module: every object
        the option may hold (its choices, default and const), or None."""
        call = self._options.declaration(expr, unassigned=True)
        return None if call is None else _listed(call)
