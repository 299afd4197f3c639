"""The gate's small readings of syntax, shared by gate/facts.py (GateFacts' walk),
gate/inplace.py (MEM401/MEM402) and gate/eval.py (MEM201/MEM202): the
backward and output-saving names, the bare names a target binds, whether a
``with`` item or decorator turns grad on or off, the file's import table.
"""

from __future__ import annotations

import ast
from typing import Any

from memlint.gate import ast_fields
from memlint.gate.ast_names import ast_callee, ast_dotted
from memlint.vocabulary.ops import (
    OUTPUT_SAVING_FUNCTIONS,
    OUTPUT_SAVING_FUNCTIONS_WHEN_INPLACE,
    OUTPUT_SAVING_METHODS,
    OUTPUT_SAVING_MODULES,
    OUTPUT_SAVING_WHEN_INPLACE,
)

GateFacts = Any  # analysis/gate.GateFacts (no import circle)

BACKWARD = frozenset({"backward", "manual_backward"})
# Ops whose output autograd saves (MEM402), by their last name.
SAVES_OUTPUT = frozenset(
    {q.rsplit(".", 1)[-1] for q in OUTPUT_SAVING_FUNCTIONS | OUTPUT_SAVING_FUNCTIONS_WHEN_INPLACE}
    | OUTPUT_SAVING_METHODS
    | OUTPUT_SAVING_MODULES
    | OUTPUT_SAVING_WHEN_INPLACE
)
# Calls that make a leaf requiring grad, by their last name (MEM401).
LEAF_MARKS = frozenset(
    {
        "parameters",
        "named_parameters",
        "requires_grad",
        "requires_grad_",
        "Parameter",
        "UninitializedParameter",
        "ParameterList",
        "ParameterDict",
    }
)


# grad_mode.context_mode: what a ``with`` item or decorator may turn grad on
# with (``inference_mode(False)`` too), and what surely turns it off.
GRAD_ON = frozenset({"enable_grad", "set_grad_enabled"})
GRAD_OFF_CONTEXTS = frozenset({"no_grad", "inference_mode"})


def decorator_grad_context(
    expr: ast.AST, qualified: dict[str, set[str]], aliases: dict[str, str], heads: set[str]
) -> str | None:
    """grad_context for a decorator: a bare name sets a mode only when it is one
    of the grad contexts (``@no_grad`` imported from torch), unlike a bare
    ``with ctx:``, bound to anything."""
    if type(expr) is ast.Name and aliases.get(expr.id, expr.id) not in GRAD_ON | GRAD_OFF_CONTEXTS:  # type: ignore[attr-defined]
        return None
    return grad_context(expr, qualified, aliases, heads)


def qualify(expr: ast.AST, qualified: dict[str, set[str]]) -> tuple[str, set[str]]:
    """The head of ``expr``'s dotted name and what the imports may make the
    whole name (``nn.Linear`` -> ``("nn", {"torch.nn.Linear"})``); an empty
    set when ``expr`` is no dotted name or its head was not imported."""
    dotted = ast_dotted(expr)
    if dotted is None:
        return "", set()
    head, _, rest = dotted.partition(".")
    return head, {f"{q}.{rest}" if rest else q for q in qualified.get(head, ())}


def grad_context(expr: ast.AST, qualified: dict[str, set[str]], aliases: dict[str, str], heads: set[str]) -> str | None:
    """``"off"`` when grad_mode.context_mode surely finds a ``with`` item or
    decorator DISABLED (a callee that the imports make ``torch.no_grad`` or
    ``torch.inference_mode``, called with nothing or ``True``), ``"on"`` when
    it may find it ENABLED (``enable_grad``, ``set_grad_enabled``,
    ``inference_mode(flag)``, or a name bound elsewhere), else None."""
    call = expr if type(expr) is ast.Call else None
    func = call.func if call is not None else expr  # type: ignore[attr-defined]
    if type(func) is ast.Name and call is None:
        return "on"  # ``with ctx:``: bound to anything
    last = ast_callee(func, aliases)
    if last in GRAD_ON:
        return "on"
    if last not in GRAD_OFF_CONTEXTS:
        return None
    args = [*call.args, *(k.value for k in call.keywords)] if call is not None else []
    if args and not (len(args) == 1 and type(args[0]) is ast.Constant and args[0].value is True):  # type: ignore[attr-defined]
        return "on"  # ``inference_mode(False)``, ``inference_mode(mode=flag)``
    head, names = qualify(func, qualified)
    if len(names) != 1:
        return None  # not imported, or ambiguous (names.ImportTable drops it)
    (q,) = names
    if q.startswith("torch.") and q.rsplit(".", 1)[-1] in GRAD_OFF_CONTEXTS:
        heads.add(head)
        return "off"
    return None


def import_table(facts: GateFacts) -> dict[str, set[str]]:
    """names.ImportTable's bindings (absolute imports only); a name imported
    twice keeps both (the table's answer depends on where it is read)."""
    imported: dict[str, set[str]] = {}
    for imp in facts._imports:
        if not isinstance(imp, ast.ImportFrom):
            for alias in imp.names:
                head = alias.name.split(".")[0]
                imported.setdefault(alias.asname or head, set()).add(alias.name if alias.asname else head)
        elif not imp.level and imp.module:
            for alias in imp.names:
                imported.setdefault(alias.asname or alias.name, set()).add(f"{imp.module}.{alias.name}")
    return imported


def last_name(expr: ast.AST, aliases: dict[str, str]) -> str | None:
    """The last name of the callee when ``expr`` is a call."""
    if type(expr) is not ast.Call:
        return None
    return ast_callee(expr.func, aliases)  # type: ignore[attr-defined]


def may_iterate_parameters(iterable: ast.AST, bare: bool = True) -> bool:
    """A loop MEM401 may take for one over leaves (frozen.parameter_loop_targets:
    ``model.parameters()``, ``named_parameters()``, inside ``enumerate``/``zip``/
    ``list``; or, when ``bare``, a bare name, a list of leaves)."""
    if type(iterable) is ast.Name:
        return bare
    if type(iterable) is not ast.Call:
        return False
    return any(
        type(n) is ast.Call and type(n.func) is ast.Attribute and n.func.attr in ("parameters", "named_parameters")  # type: ignore[attr-defined]
        for n in ast_fields.nodes(iterable)
    )


def bare_names(target: ast.AST) -> set[str]:
    """The plain names a target binds (``a``, ``a, (b, c)``, ``*a``)."""
    kind = type(target)
    if kind is ast.Name:
        return {target.id}  # type: ignore[attr-defined]
    if kind in (ast.Tuple, ast.List):
        return {n for el in target.elts for n in bare_names(el)}  # type: ignore[attr-defined]
    if kind is ast.Starred:
        return bare_names(target.value)  # type: ignore[attr-defined]
    return set()


def line_spans(statements: list[ast.AST]) -> list[tuple[int, int]]:
    """The first and last lines of each statement (a decorated one from its
    first decorator), sorted: in_spans tells whether a node lies inside one,
    as ``ast.walk`` of the statement would meet it."""
    spans = []
    for stmt in statements:
        first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])  # type: ignore[attr-defined]
        spans.append((first, stmt.end_lineno or stmt.lineno))  # type: ignore[attr-defined]
    spans.sort()
    return spans


def in_spans(node: ast.AST, spans: list[tuple[int, int]]) -> bool:
    line = node.lineno  # type: ignore[attr-defined]
    return any(first <= line <= last for first, last in spans)
