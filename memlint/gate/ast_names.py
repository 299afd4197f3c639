"""Names read off Python's own ``ast`` nodes, for the gate (gate/facts.py,
gate/loops.py): the ``ast`` counterparts of names.dotted_name and the name
tokens loops.py matches. Child walks here read only the fields that may hold
code (gate/ast_fields.py), as the gate does everywhere: ``ast.walk`` costs
about three times as much."""

from __future__ import annotations

import ast

from memlint.gate.ast_fields import CHILDREN
from memlint.vocabulary.tokens import name_tokens


def ast_dotted(expr: ast.AST) -> str | None:
    """``a.b.c`` for a chain of names (names.dotted_name on ``ast``)."""
    # Asked of every callee and receiver of every scope (a million times on
    # transformers): a bare name, the most common, skips the join.
    if type(expr) is ast.Name:
        return expr.id  # type: ignore[attr-defined]
    parts = []
    while type(expr) is ast.Attribute:
        parts.append(expr.attr)  # type: ignore[attr-defined]
        expr = expr.value  # type: ignore[attr-defined]
    if type(expr) is not ast.Name:
        return None
    parts.append(expr.id)  # type: ignore[attr-defined]
    return ".".join(reversed(parts))


def ast_callee(func: ast.AST, aliases: dict[str, str]) -> str | None:
    """The last name of a callee (``f`` of ``a.b.f``); an import alias counts
    as what it imports."""
    if type(func) is ast.Attribute:
        return func.attr  # type: ignore[attr-defined]
    if type(func) is ast.Name:
        return aliases.get(func.id, func.id)  # type: ignore[attr-defined]
    return None


def ast_tokens(expr: ast.AST) -> tuple[set[str], set[str]]:
    """loops._NameTokens of ``expr`` (names, attributes and strings), and the
    identifiers themselves (what loops' ``mentions`` may match)."""
    tokens: set[str] = set()
    idents: set[str] = set()
    stack: list[object] = [expr]
    push, extend, pop, table = stack.append, stack.extend, stack.pop, CHILDREN
    Name, Attribute, Constant = ast.Name, ast.Attribute, ast.Constant
    while stack:
        node = pop()
        kind = type(node)
        if kind is Name:
            idents.add(node.id)  # type: ignore[attr-defined]
            tokens |= name_tokens(node.id)  # type: ignore[attr-defined]
            continue
        if kind is Attribute:
            idents.add(node.attr)  # type: ignore[attr-defined]
            tokens |= name_tokens(node.attr)  # type: ignore[attr-defined]
        elif kind is Constant:
            if isinstance(node.value, str):  # type: ignore[attr-defined]
                tokens |= name_tokens(node.value.strip("'\""))  # type: ignore[attr-defined]
            continue
        children = table.get(kind)
        if children is None:
            if kind is list:  # a field of a class whose signature was not read
                extend(node)  # type: ignore[arg-type]
            continue  # None, or a scalar
        for field in children.singles:
            push(getattr(node, field))
        for field in children.lists:
            extend(getattr(node, field))
    return tokens, idents
