"""What a command-line option lists as the objects it may hold, on the ``ast`` tree.

``parser.add_argument('--base', choices=dict(resnet50=backbone.ResNet50),
default=backbone.ResNet50)``: the expressions of its choices, default and
const. The summary keeps their dotted names (``backbone.ResNet50``) so the
project view judges the classes they name as it judges called ones; the rule
side (analysis/scope/option_choices.py) decides whether ``opts.base(...)``
may only call one of them.
"""

from __future__ import annotations

import ast

_HELD = ("choices", "default", "const")


def option_listed(call: ast.Call) -> list[ast.expr]:
    """The values ``call`` (an ``add_argument``) names in its choices
    (a dict's values, a list's, tuple's or set's elements), default and const."""
    found: list[ast.expr] = []
    for keyword in call.keywords:
        if keyword.arg not in _HELD:
            continue
        value = keyword.value
        if keyword.arg != "choices":
            found.append(value)
        elif isinstance(value, ast.Dict):
            found.extend(value.values)
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
            found.extend(k.value for k in value.keywords if k.arg is not None)
        elif isinstance(value, (ast.List, ast.Tuple, ast.Set)):
            found.extend(value.elts)
    return found
