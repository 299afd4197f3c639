"""Values whose graph the same step of a time-step loop backpropagates and frees.

pymarl's COMA critic trains once per time step of one batch:

    for t in reversed(range(rewards.size(1))):
        q_t = self.critic(batch, t)
        q_vals[:, t] = q_t.view(bs, n_agents, n_actions)
        loss = ((gather(q_t, ...) - targets[:, t]) ** 2).sum()
        loss.backward()
        optimiser.step()

A backward without ``retain_graph`` frees the saved tensors of every node it
runs through, so once ``loss.backward()`` has run, what ``q_vals`` keeps of
step ``t`` is the output's own storage (which ``.detach()`` would keep too),
not the step's activations. The fact is kept narrow, to the loops where it is
the only reading: the loop counts positions of a tensor
(``range(x.size(1))``, ``range(x.shape[0])``, reversed or not: the steps of
one batch, not a data source), and a statement of the loop body's top level
after the store calls ``<loss>.backward()`` with no ``retain_graph`` /
``create_graph``, with nothing between them that may leave the iteration
(``continue``, ``break``, ``return``, ``raise``), and the loss's graph runs
through every call the stored value's graph runs through (its model calls
included), apart from views, which save nothing; what is stored is a name
or a model call, or a view or index of one, never a product computed for the
store alone.

API: ``freed_in_step(store, value, loop_node, scope, bindings, calls, is_model_call) -> bool``.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from memlint.analysis.autograd.graph_reach import graph_calls
from memlint.analysis.scope.bindings import Bindings
from memlint.analysis.scope.callgraph import CallGraph
from memlint.parse.traversal import visit_fast

# Tensor methods whose backward saves nothing (a view or a copy of its shape).
_VIEWS = frozenset(
    {"view", "reshape", "squeeze", "unsqueeze", "permute", "transpose", "contiguous", "flatten", "expand", "t"}
)
_BOUND_FUNCTIONS = frozenset({"min", "max", "int"})


class _Bound(cst.CSTVisitor):
    """Whether a ``range`` argument is built from a tensor's sizes alone."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes = 0
        self.other = False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "size":
            self.sizes += 1
        elif not (isinstance(func, cst.Name) and func.value in _BOUND_FUNCTIONS):
            self.other = True

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "shape":
            self.sizes += 1


def counts_positions(iterable: cst.BaseExpression) -> bool:
    """``range(x.size(1))``, ``reversed(range(1, x.shape[0]))``."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "reversed":
        if len(iterable.args) != 1:
            return False
        iterable = iterable.args[0].value
    if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range"):
        return False
    bound = _Bound()
    for arg in iterable.args:
        if arg.star or arg.keyword is not None:
            return False
        visit_fast(arg.value, bound)
    return bound.sizes > 0 and not bound.other


class _Leaves(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def visit_Continue(self, node: cst.Continue) -> None:
        self.found = True

    def visit_Break(self, node: cst.Break) -> None:
        self.found = True

    def visit_Return(self, node: cst.Return) -> None:
        self.found = True

    def visit_Raise(self, node: cst.Raise) -> None:
        self.found = True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False


def _backward_loss(line: cst.CSTNode) -> cst.BaseExpression | None:
    """``loss.backward()`` as a statement, without keeping the graph: ``loss``."""
    if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and isinstance(line.body[0], cst.Expr)):
        return None
    call = line.body[0].value
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward"):
        return None
    if any(a.keyword is not None and a.keyword.value in ("retain_graph", "create_graph") for a in call.args):
        return None
    if len([a for a in call.args if a.keyword is None]) > 1:
        return None  # ``backward(gradient, retain_graph)`` positionally
    return call.func.value


def freed_in_step(
    store: cst.CSTNode,
    value: cst.BaseExpression,
    loop: cst.CSTNode,
    scope: cst.CSTNode,
    bindings: Bindings,
    calls: CallGraph,
    is_model_call: Callable[[cst.Call], bool],
) -> bool:
    """Whether the graph of ``value``, stored by ``store`` at the top level of
    the time-step loop ``loop``, is backpropagated and freed later in the same step."""
    if not (isinstance(loop, cst.For) and counts_positions(loop.iter) and isinstance(loop.body, cst.IndentedBlock)):
        return False
    lines = list(loop.body.body)
    at = next(
        (i for i, s in enumerate(lines) if isinstance(s, cst.SimpleStatementLine) and any(x is store for x in s.body)),
        None,
    )
    if at is None or not _view_of_a_name(value, is_model_call):
        return False
    stored = graph_calls(value, scope, bindings, calls.pos, calls.end, is_model_call)
    if not any(is_model_call(c) for c in stored):
        return False
    for line in lines[at + 1 :]:
        loss = _backward_loss(line)
        if loss is not None:
            reached = {id(c) for c in graph_calls(loss, scope, bindings, calls.pos, calls.end, is_model_call)}
            return all(id(c) in reached or _is_view(c) for c in stored)
        leaves = _Leaves()
        visit_fast(line, leaves)
        if leaves.found:
            return False
    return False


def _view_of_a_name(value: cst.BaseExpression, is_model_call: Callable[[cst.Call], bool]) -> bool:
    """``q_t``, ``q_t.view(bs, n)``, ``out[:, 0]``, ``model(x)``: what is stored
    is a tensor the loss's graph may share, not a product computed for the
    store alone (whose backward would keep its operands)."""
    while True:
        if isinstance(value, cst.Subscript):
            value = value.value
        elif isinstance(value, cst.Call) and _is_view(value):
            value = value.func.value  # type: ignore[attr-defined]
        else:
            break
    return isinstance(value, cst.Name) or (isinstance(value, cst.Call) and is_model_call(value))


def _is_view(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in _VIEWS
