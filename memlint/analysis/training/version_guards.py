"""Statements that run only on a torch older than a given version.

``if not pytorch_1_1_0_or_later: scheduler.step()`` (FCOS's trainer), where
the flag is bound once in the function to ``is_pytorch_1_1_0_or_later()``,
a function of another project module that only compares
``torch.__version__`` with 1.1.0 (project/version_tests.py): no torch from
1.1 on runs that step. The guard counts only when the proof is complete:
the test is the call itself or a name the scope binds once, to that call,
and nothing else (not a parameter, not augmented, not a loop target).
"""

from __future__ import annotations

import libcst as cst

from memlint.project.version_tests import runs_only_before


def runs_only_on_torch_before(node: cst.CSTNode, version: tuple[int, ...], facts) -> bool:
    """``node`` sits in a branch (an ``if`` body, or its ``else``) that runs
    only on a torch older than ``version``."""
    project = facts.project
    tests = dict(project.version_functions) if project is not None else {}
    if not tests:
        return False
    parents = facts.calls.parents
    child: cst.CSTNode = node
    cur = parents.get(node)
    while cur is not None and not isinstance(cur, (cst.FunctionDef, cst.Module)):
        if isinstance(cur, cst.If) and child is not cur.test:
            in_else = child is cur.orelse
            found = _guard(cur.test, tests, cur, facts)
            if found is not None and runs_only_before(found[0], found[1] != in_else, version):
                return True
        child, cur = cur, parents.get(cur)
    return False


def _guard(test: cst.BaseExpression, tests: dict[str, str], at: cst.If, facts) -> tuple[str, bool] | None:
    """(the comparison, negated) when ``test`` is a version function's
    result, under ``not`` or not; None otherwise."""
    negated = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        negated, test = not negated, test.expression
    call = test if isinstance(test, cst.Call) else _bound_call(test, at, facts)
    if call is None or call.args or not isinstance(call.func, cst.Name):
        return None
    found = tests.get(call.func.value)
    return (found, negated) if found is not None else None


def _bound_call(test: cst.BaseExpression, at: cst.If, facts) -> cst.Call | None:
    if not isinstance(test, cst.Name):
        return None
    scope = facts.objects.scope_of(at)
    name = test.value
    if isinstance(scope, cst.FunctionDef) and any(
        p.name.value == name for p in (*scope.params.params, *scope.params.kwonly_params, *scope.params.posonly_params)
    ):
        return None
    values = facts.bindings.values_in(name, scope)
    if len(values) != 1 or not isinstance(values[0], cst.Call):
        return None
    if _rebound_otherwise(scope, name):
        return None
    return values[0]


def _rebound_otherwise(scope: cst.CSTNode, name: str) -> bool:
    """``name += ...``, ``global name``, ``del name`` or a ``for``/``with``
    target in ``scope``: bindings values_in may not list (run only for a
    guard already matched, so rarely)."""
    seen = False

    class _Find(cst.CSTVisitor):
        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            nonlocal seen
            seen = seen or (isinstance(node.target, cst.Name) and node.target.value == name)

        def visit_Global(self, node: cst.Global) -> None:
            nonlocal seen
            seen = seen or any(n.name.value == name for n in node.names)

        def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
            nonlocal seen
            seen = seen or any(n.name.value == name for n in node.names)

        def visit_Del(self, node: cst.Del) -> None:
            nonlocal seen
            seen = True

        def visit_For(self, node: cst.For) -> None:
            nonlocal seen
            seen = seen or _names(node.target, name)

        def visit_WithItem(self, node: cst.WithItem) -> None:
            nonlocal seen
            seen = seen or (node.asname is not None and _names(node.asname.name, name))

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            nonlocal seen
            seen = seen or _names(node.target, name)

    scope.visit(_Find())
    return seen


def _names(target: cst.CSTNode, name: str) -> bool:
    if isinstance(target, cst.Name):
        return target.value == name
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_names(e.value, name) for e in target.elements)
    return False
