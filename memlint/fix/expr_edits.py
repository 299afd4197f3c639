"""Small expression rewrites for fixes: ``x`` -> ``x.detach()``, decorators."""

from __future__ import annotations

import libcst as cst

from memlint.fix.parser_config import parser_config

# Expressions an attribute can follow without parentheses.
_ATOMS = (
    cst.Name,
    cst.Attribute,
    cst.Call,
    cst.Subscript,
    cst.List,
    cst.Tuple,
    cst.Dict,
    cst.Set,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.SimpleString,
    cst.FormattedString,
)


def call_method(expr: cst.BaseExpression, method: str) -> cst.Call:
    """``expr.method()``, parenthesising ``expr`` when precedence needs it
    (``(a * b).detach()``); the expression's own text is kept."""
    base = expr
    needs_parens = not isinstance(expr, _ATOMS) or (isinstance(expr, cst.Tuple) and not expr.lpar)
    if needs_parens and not expr.lpar:
        base = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Call(func=cst.Attribute(value=base, attr=cst.Name(method)))


def add_decorator(fn: cst.FunctionDef, decorator: cst.BaseExpression) -> cst.FunctionDef:
    """``fn`` with ``@decorator`` as its innermost decorator (just above ``def``)."""
    return fn.with_changes(decorators=[*fn.decorators, cst.Decorator(decorator=decorator)])


def parse_expr(code: str, module: cst.Module) -> cst.BaseExpression:
    return cst.parse_expression(code, config=parser_config(module))
