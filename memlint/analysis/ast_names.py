"""Names read off Python's own ``ast`` nodes, for the gate (gate.py,
gate_loops.py): the ``ast`` counterparts of names.dotted_name and the name
tokens loops.py matches. Child walks here read ``_fields`` directly, as the
gate does everywhere: ``ast.walk`` costs about three times as much."""

from __future__ import annotations

import ast

from memlint.analysis.names import name_tokens


def ast_dotted(expr: ast.AST) -> str | None:
    """``a.b.c`` for a chain of names (names.dotted_name on ``ast``)."""
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
    stack = [expr]
    AST = ast.AST
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Name:
            idents.add(node.id)  # type: ignore[attr-defined]
            tokens |= name_tokens(node.id)  # type: ignore[attr-defined]
            continue
        if kind is ast.Attribute:
            idents.add(node.attr)  # type: ignore[attr-defined]
            tokens |= name_tokens(node.attr)  # type: ignore[attr-defined]
        elif kind is ast.Constant and isinstance(node.value, str):  # type: ignore[attr-defined]
            tokens |= name_tokens(node.value.strip("'\""))  # type: ignore[attr-defined]
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                stack.extend(item for item in value if isinstance(item, AST))
            elif isinstance(value, AST):
                stack.append(value)
    return tokens, idents
