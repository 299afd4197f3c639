"""Integer defaults of a module's own command-line options.

``parser.add_argument("--num_split", type=int, default=1)`` with ``args =
parser.parse_args()``: ``args.num_split`` is 1 unless the command line says
otherwise. A loop ``for j in range(args.num_split)`` then runs once per
iteration of the loop around it by default (``runs_once_by_default``).

An option declared twice (two parsers, two ``dest``s of one name) says
nothing; nor does a namespace not bound from ``parse_args()`` in the module.
The declarations are read once for this and option_choices.py (options.py).
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.options import ModuleOptions


class OptionDefaults:
    """The integer defaults of ``options`` (the module's declarations)."""

    def __init__(self, options: ModuleOptions) -> None:
        self._options = options

    def default(self, expr: cst.BaseExpression) -> int | None:
        """``args.name`` of a namespace parsed in this module: the option's integer default."""
        call = self._options.declaration(expr)
        if call is None:
            return None
        default = None
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "default" and isinstance(arg.value, cst.Integer):
                default = int(arg.value.value, 0)
        return default

    def runs_once_by_default(self, loop: cst.CSTNode) -> bool:
        """``for j in range(args.n)`` with ``--n`` defaulting to 1."""
        if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call):
            return False
        call = loop.iter
        if not (isinstance(call.func, cst.Name) and call.func.value == "range") or len(call.args) != 1:
            return False
        arg = call.args[0]
        return arg.keyword is None and not arg.star and self.default(arg.value) == 1
