"""Values that hold settings, never a model (MEM701's constructor arguments):
an argparse namespace, and a configuration object.

``args = add_args(parser)`` (CodeT5's configs.py: ``args =
parser.parse_args(); return args``) and ``config =
config_class.from_pretrained(name)`` are handed to a model's constructor
beside the encoder (``DefectModel(model, config, tokenizer, args)``); neither
can be an ``nn.Module``, so the model built there wraps no model from
elsewhere. A function counts when every ``return`` gives a parse result
(``parser.parse_args()``, ``parser.parse_known_args()[0]``,
``argparse.Namespace(...)``), directly or through a local name every binding
of which is one; a bare ``return`` gives no model either, but one return at
least must give settings. Read on Python's ``ast`` (the project summary's
tree, and a function of the linted module cut out of its text).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection

# transformers' ``RobertaConfig``, ``AutoConfig``, and a class picked from a
# table into ``config_class`` / ``config_cls``.
_CONFIG_CLASS = re.compile(r"(Config|(^|_)config(_?class|_?cls)?)$")
_CONFIG_READERS = frozenset({"from_pretrained", "from_json_file", "from_dict"})
_PARSES = frozenset({"parse_args", "parse_known_args", "Namespace"})
# The callees one of which a function returning settings calls (``_parsed``,
# ``_known_args``): the summary's walk notes the functions calling one.
SETTINGS_CALLS = _PARSES


def config_reader(dotted: str) -> bool:
    """``dotted`` (a callee spelled ``RobertaConfig.from_pretrained`` or
    ``config_class.from_pretrained``) reads a configuration object."""
    head, _, last = dotted.rpartition(".")
    return last in _CONFIG_READERS and bool(_CONFIG_CLASS.search(head.rpartition(".")[2]))


def settings_functions(tree: ast.Module, calling: Collection[str] | None = None) -> list[str]:
    """The module-level functions of ``tree`` (defined once) that return an
    argparse namespace. ``calling``, when given, holds every such function
    that calls one of SETTINGS_CALLS (the summary's walk knows them): no
    other can return settings, so no other is read."""
    counts: dict[str, int] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            counts[stmt.name] = counts.get(stmt.name, 0) + 1
    return [
        stmt.name
        for stmt in tree.body
        if isinstance(stmt, ast.FunctionDef)
        and counts[stmt.name] == 1
        and (calling is None or stmt.name in calling)
        and returns_settings(stmt)
    ]


def returns_settings(fn: ast.FunctionDef) -> bool:
    """Every ``return`` of ``fn`` gives an argparse namespace (or None), one at least."""
    returns: list[ast.expr] = []
    bound: dict[str, list[ast.expr | None]] = {}  # None: a binding of another shape
    for node in ast.walk(fn):
        if node is not fn and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return False  # a nested scope's returns and bindings are its own
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)):
            return False
        if isinstance(node, ast.Return):
            if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
                returns.append(node.value)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                _bind(target, node.value, bound)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.NamedExpr)):
            for name in _stored(node):
                bound.setdefault(name, []).append(None)
    if not returns:
        return False
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    for value in returns:
        if isinstance(value, ast.Name):
            values = bound.get(value.id)
            if value.id in params or not values or not all(v is not None and _parsed(v) for v in values):
                return False
        elif not _parsed(value):
            return False
    return True


def _bind(target: ast.expr, value: ast.expr, bound: dict[str, list[ast.expr | None]]) -> None:
    if isinstance(target, ast.Name):
        bound.setdefault(target.id, []).append(value)
        return
    # ``args, unknown = parser.parse_known_args()``: the first is the namespace.
    if isinstance(target, (ast.Tuple, ast.List)):
        known = _known_args(value)
        for i, elt in enumerate(target.elts):
            for name in _stored(elt) if isinstance(elt, (ast.Name, ast.Starred, ast.Tuple, ast.List)) else ():
                first = known if i == 0 and isinstance(elt, ast.Name) else None
                bound.setdefault(name, []).append(
                    ast.Subscript(value=first, slice=ast.Constant(0), ctx=ast.Load()) if first is not None else None
                )
        return
    # ``args.lang = "java"``: an attribute set on the namespace, which stays one.
    if isinstance(target, ast.Starred):
        for name in _stored(target):
            bound.setdefault(name, []).append(None)


def _known_args(value: ast.expr) -> ast.expr | None:
    """``parser.parse_known_args()`` unpacked: the namespace (as the call)."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "parse_known_args":
        return value
    return None


def _stored(node: ast.AST) -> list[str]:
    targets: list[ast.AST] = []
    if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)):
        targets = [node.target]
    elif isinstance(node, ast.With):
        targets = [i.optional_vars for i in node.items if i.optional_vars is not None]
    elif isinstance(node, ast.NamedExpr):
        targets = [node.target]
    else:
        targets = [node]
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def _parsed(value: ast.expr) -> bool:
    """``parser.parse_args()``, ``parser.parse_known_args()[0]``, ``argparse.Namespace(**d)``."""
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant) and value.slice.value == 0:
        return _known_args(value.value) is not None
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in _PARSES and name != "parse_known_args"
