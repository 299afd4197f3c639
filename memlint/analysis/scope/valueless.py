"""Functions that return no value: no ``return <expr>`` and no ``yield`` in
their own body (nested functions and lambdas aside).

``self.save_model("best-%s" % metric)`` names a model, but the method of the
class it calls returns nothing (UnsupervisedMT's ``Trainer.save_model``: a
``torch.save``), so the call is no forward: a forward hands back its output.
Whatever the method runs is its body's to say (a loop's callees,
analysis/training/loops.py). A stub (``pass``, ``raise
NotImplementedError``) says nothing: a subclass's override may return.
"""

from __future__ import annotations

import libcst as cst

from memlint.parse.traversal import OwnCodeVisitor, visit_fast


class _Returns(OwnCodeVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None and not (isinstance(node.value, cst.Name) and node.value.value == "None"):
            self.found = True

    def visit_Yield(self, node: cst.Yield) -> None:
        self.found = True


def _stub(fn: cst.FunctionDef) -> bool:
    """A body of ``pass``, ``...``, a docstring or a ``raise`` (an abstract
    hook a subclass overrides): what the call returns is the override's."""
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else (fn.body,)
    for stmt in body:
        smalls = stmt.body if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else None
        if smalls is None:
            return False
        for small in smalls:
            if isinstance(small, (cst.Pass, cst.Raise)):
                continue
            if isinstance(small, cst.Expr) and isinstance(small.value, (cst.Ellipsis, cst.SimpleString)):
                continue
            return False
    return True


def returns_no_value(fn: cst.FunctionDef) -> bool:
    if _stub(fn):
        return False
    returns = _Returns()
    visit_fast(fn.body, returns)
    return not returns.found
