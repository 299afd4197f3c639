"""How often a function's own nodes bind each name (forward_returns.py and
backward_returns.py ask it of a method's statements)."""

from __future__ import annotations

import ast

from memlint.gate.ast_fields import nodes


def binding_counts(own: list[ast.AST], parts: bool = False) -> dict[str, int]:
    """How often ``own`` binds each name anew: an assignment's, ``for``'s,
    ``with``'s or ``:=``'s target, a ``def``/``class``; an augmented
    assignment too (``x += 1`` may make a new tensor). With ``parts``, the
    names read in a stored attribute or item (``self.x = y``, ``d[k] = v``)
    count too: a stricter reading, for a caller that wants a name left
    untouched, not only not rebound."""
    out: dict[str, int] = {}
    for node in own:
        if isinstance(node, ast.Assign):
            targets: list[ast.AST] = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
            targets = [node.target]
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            targets = [node.target]
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            targets = [i.optional_vars for i in node.items if i.optional_vars is not None]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = out.get(node.name, 0) + 1
            continue
        else:
            continue
        for target in targets:
            if parts or isinstance(target, (ast.Name, ast.Tuple, ast.List, ast.Starred)):
                for n in nodes(target):
                    if isinstance(n, ast.Name):
                        out[n.id] = out.get(n.id, 0) + 1
    return out
