"""Integer defaults of a module's own command-line options.

``parser.add_argument("--num_split", type=int, default=1)`` with ``args =
parser.parse_args()``: ``args.num_split`` is 1 unless the command line says
otherwise. A loop ``for j in range(args.num_split)`` then runs once per
iteration of the loop around it by default (``runs_once_by_default``).

An option declared twice (two parsers, two ``dest``s of one name) says
nothing; nor does a namespace not bound from ``parse_args()`` in the module.
"""

from __future__ import annotations

import libcst as cst

from memlint.parse.traversal import visit_fast


class _Options(cst.CSTVisitor):
    def __init__(self) -> None:
        self.defaults: dict[str, int | None] = {}  # dest: literal int default (None: not one, or declared twice)
        self.namespaces: set[str] = set()  # names bound from ``....parse_args()``

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "add_argument":
            return
        dest = option_dest(node)
        if dest is None:
            return
        default = None
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "default" and isinstance(arg.value, cst.Integer):
                default = int(arg.value.value, 0)
        self.defaults[dest] = None if dest in self.defaults else default

    def visit_Assign(self, node: cst.Assign) -> None:
        self.namespaces.update(parsed_namespaces(node))


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


class OptionDefaults:
    """The module's options, read on first question."""

    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._options: _Options | None = None

    def _read(self) -> _Options:
        if self._options is None:
            self._options = _Options()
            visit_fast(self._module, self._options)
        return self._options

    def default(self, expr: cst.BaseExpression) -> int | None:
        """``args.name`` of a namespace parsed in this module: the option's integer default."""
        if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)):
            return None
        options = self._read()
        if expr.value.value not in options.namespaces:
            return None
        return options.defaults.get(expr.attr.value)

    def runs_once_by_default(self, loop: cst.CSTNode) -> bool:
        """``for j in range(args.n)`` with ``--n`` defaulting to 1."""
        if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call):
            return False
        call = loop.iter
        if not (isinstance(call.func, cst.Name) and call.func.value == "range") or len(call.args) != 1:
            return False
        arg = call.args[0]
        return arg.keyword is None and not arg.star and self.default(arg.value) == 1
