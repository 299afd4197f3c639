"""Whether a function hands back a graph of its own making.

``classify_video(video_dir, video_name, class_names, model, opt)`` runs a
loader through ``model``, keeps ``outputs.cpu().data`` and returns a dict of
numbers, the ``video_name`` it was given and ``class_names[i]``. What it
returns may carry history only through those parameters: the caller's own
values, which it could backpropagate without this call. The graphs the
function's forwards record never leave it.

``hands_back_no_own_graph(history, fn)``: the return carries no history when
every *inert* parameter (one only read as a value: never called, never the
receiver of a method, never written into or rebound) is taken to carry none.
A parameter the body calls or writes into keeps "unknown": ``head(feats)``,
``feats_out.append(model(x))`` and ``results[k] = model(x)`` may all put the
function's own graph into what it hands back.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.autograd.history import NO, H, HistoryAnalysis, param_names
from memlint.analysis.scope.names import flat_targets
from memlint.parse.traversal import visit_fast


def hands_back_no_own_graph(history: HistoryAnalysis, fn: cst.FunctionDef) -> bool:
    """See the module docstring."""
    params = param_names(fn)
    busy = _busy_params(fn, frozenset(params))
    args = {p: NO for p in params if p not in busy}
    if not args:
        return False
    return history.summary(fn, args, history.grad.entry_mode(fn)).h is H.NO


class _ParamUses(cst.CSTVisitor):
    """The parameters a body calls, calls a method of, writes into or
    rebinds, and those a lambda closes over."""

    def __init__(self, params: frozenset[str]) -> None:
        self.params = params
        self.busy: set[str] = set()

    def _head(self, expr: cst.BaseExpression) -> None:
        while isinstance(expr, (cst.Attribute, cst.Subscript, cst.Call)):
            expr = expr.func if isinstance(expr, cst.Call) else expr.value
        if isinstance(expr, cst.Name) and expr.value in self.params:
            self.busy.add(expr.value)

    def _store(self, target: cst.BaseExpression) -> None:
        for t in flat_targets(target):
            self._head(t)

    def visit_Call(self, node: cst.Call) -> None:
        self._head(node.func)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._store(t.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._store(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._store(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._store(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._store(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self._store(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        if isinstance(node.name, cst.BaseExpression):
            self._store(node.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._store(node.target)

    def visit_Global(self, node: cst.Global) -> None:
        self.busy.update(n.name.value for n in node.names if n.name.value in self.params)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.busy.update(n.name.value for n in node.names if n.name.value in self.params)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.busy.update(self.params)  # what it closes over is not followed


def _busy_params(fn: cst.FunctionDef, params: frozenset[str]) -> set[str]:
    uses = _ParamUses(params)
    visit_fast(fn.body, uses)
    return uses.busy
