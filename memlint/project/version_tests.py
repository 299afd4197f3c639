"""Module-level functions that only compare the running torch's version.

FCOS's ``fcos_core/utils/comm.py``::

    def is_pytorch_1_1_0_or_later():
        return [int(_) for _ in torch.__version__.split(".")[:3]] >= [1, 1, 0]

and its trainer steps the scheduler first only under ``if not
pytorch_1_1_0_or_later:``, a branch no torch from 1.1 on takes. The summary
keeps, per such function, the comparison it returns: ``">=1.1.0"`` (or
``"<1.1.0"``), and a caller in another module reads the branch through the
view (ProjectView.version_functions). Only spellings whose meaning is
certain count: the integer parts of ``torch.__version__`` split on dots,
or ``LooseVersion``/``Version``/``parse``/``parse_version`` of it, compared
with a literal of the same kind. Anything else says nothing.
"""

from __future__ import annotations

import ast

_PARSERS = frozenset({"LooseVersion", "StrictVersion", "Version", "parse", "parse_version"})
_OPS = {ast.GtE: ">=", ast.Lt: "<"}


def version_tests(tree: ast.Module) -> dict[str, str]:
    """Function name -> ">=1.1.0" / "<1.1.0" for each module-level function
    without parameters whose body is one ``return`` of such a comparison."""
    out: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or node.decorator_list or _has_params(node.args):
            continue
        body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
            continue
        found = torch_comparison(body[0].value)
        if found is not None:
            out[node.name] = found
    return out


def torch_comparison(expr: ast.expr) -> str | None:
    """``<torch version> >= <literal>`` (or ``<``) as ">=1.1.0"; None otherwise."""
    if not (isinstance(expr, ast.Compare) and len(expr.ops) == 1 and type(expr.ops[0]) in _OPS):
        return None
    left, right = expr.left, expr.comparators[0]
    if _int_parts_of_torch(left):
        version = _int_literal(right)
    elif _parsed_torch(left):
        version = _parsed_literal(right)
    else:
        return None
    if version is None:
        return None
    return _OPS[type(expr.ops[0])] + ".".join(str(n) for n in version)


def runs_only_before(test: str, negated: bool, version: tuple[int, ...]) -> bool:
    """A branch under ``test`` (negated when under ``not``) runs only on a
    torch older than ``version``."""
    op = ">=" if test.startswith(">=") else "<"
    text = test[len(op) :]
    bound = _padded(tuple(int(p) for p in text.split(".")))
    if (op == ">=") != negated:
        return False  # the branch runs from ``bound`` on
    return bound <= _padded(version)


def _has_params(args: ast.arguments) -> bool:
    return bool(args.posonlyargs or args.args or args.vararg or args.kwonlyargs or args.kwarg)


def _is_torch_version(expr: ast.expr) -> bool:
    return (
        isinstance(expr, ast.Attribute)
        and expr.attr == "__version__"
        and isinstance(expr.value, ast.Name)
        and expr.value.id == "torch"
    )


def _split_torch(expr: ast.expr) -> bool:
    """``torch.__version__.split(".")``, sliced from the start or not."""
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Slice):
        s = expr.slice
        if s.lower is not None and not (isinstance(s.lower, ast.Constant) and s.lower.value == 0) or s.step:
            return False
        expr = expr.value
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr == "split"
        and _is_torch_version(expr.func.value)
        and len(expr.args) == 1
        and isinstance(expr.args[0], ast.Constant)
        and expr.args[0].value == "."
        and not expr.keywords
    )


def _int_parts_of_torch(expr: ast.expr) -> bool:
    """``[int(x) for x in torch.__version__.split(".")[:3]]`` (a list)."""
    if not (isinstance(expr, ast.ListComp) and len(expr.generators) == 1):
        return False
    gen = expr.generators[0]
    return (
        not gen.ifs
        and isinstance(gen.target, ast.Name)
        and _split_torch(gen.iter)
        and isinstance(expr.elt, ast.Call)
        and isinstance(expr.elt.func, ast.Name)
        and expr.elt.func.id == "int"
        and len(expr.elt.args) == 1
        and isinstance(expr.elt.args[0], ast.Name)
        and expr.elt.args[0].id == gen.target.id
    )


def _int_literal(expr: ast.expr) -> tuple[int, ...] | None:
    # A list against a list: Python compares a list with a tuple as unequal types (TypeError).
    if not isinstance(expr, ast.List) or not expr.elts:
        return None
    parts = [e.value for e in expr.elts if isinstance(e, ast.Constant) and type(e.value) is int]
    return tuple(parts) if len(parts) == len(expr.elts) else None


def _parser(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords:
        func = expr.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        return name if name in _PARSERS else None
    return None


def _parsed_torch(expr: ast.expr) -> bool:
    return _parser(expr) is not None and _is_torch_version(expr.args[0])  # type: ignore[attr-defined]


def _parsed_literal(expr: ast.expr) -> tuple[int, ...] | None:
    if _parser(expr) is None:
        return None
    arg = expr.args[0]  # type: ignore[attr-defined]
    if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
        return None
    parts = arg.value.split(".")
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) else None


def _padded(version: tuple[int, ...]) -> tuple[int, ...]:
    return (version + (0, 0, 0))[:3] if len(version) < 3 else version
