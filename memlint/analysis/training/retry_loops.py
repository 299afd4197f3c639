"""Loops whose iterations are attempts, not batches: the out-of-memory retry.

``while True: try: out = run(bs); break / except OutOfMemoryError: bs //= 2``
and ``for attempt in range(3): try: return run(batch) / except ...`` run the
same work again after an out-of-memory error, usually with a smaller batch,
and leave on the first success. Freeing the cache between attempts is the
point of such a loop, not a per-step cost.

- ``retries_on_oom(loop, names)``: ``loop`` holds (outside any inner loop or
  function) a ``try`` whose body or ``else`` leaves the loop on success
  (``break`` or ``return``), and one of whose handlers catches an
  out-of-memory error: ``torch.cuda.OutOfMemoryError`` /
  ``torch.OutOfMemoryError`` (a tuple naming one counts), or a
  ``RuntimeError`` / ``Exception`` / bare handler that tests the message for
  "out of memory".
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import ImportTable, dotted_name
from memlint.parse.traversal import visit_fast

_OOM_ERRORS = frozenset({"torch.cuda.OutOfMemoryError", "torch.OutOfMemoryError"})
_BROAD_ERRORS = frozenset({"RuntimeError", "Exception", "BaseException"})
_NESTED_SCOPES = (cst.For, cst.While, cst.FunctionDef, cst.ClassDef)


def retries_on_oom(loop: cst.For | cst.While, names: ImportTable) -> bool:
    return any(_leaves_on_success(t) and any(_catches_oom(h, names) for h in t.handlers) for t in _tries(loop.body))


def _statements(block: cst.BaseSuite) -> list[cst.BaseStatement]:
    return list(block.body) if isinstance(block, cst.IndentedBlock) else []


def _tries(block: cst.BaseSuite) -> list[cst.Try]:
    """The ``try`` statements of ``block``, through ``if``/``with``/``try``
    but not into an inner loop or function (their iterations are their own)."""
    found: list[cst.Try] = []
    todo = _statements(block)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, _NESTED_SCOPES):
            continue
        if isinstance(stmt, cst.Try):
            found.append(stmt)
        todo.extend(_sub_statements(stmt))
    return found


def _sub_statements(stmt: cst.BaseStatement) -> list[cst.BaseStatement]:
    subs: list[cst.BaseStatement] = []
    if isinstance(stmt, cst.If):
        subs += _statements(stmt.body)
        orelse = stmt.orelse
        if isinstance(orelse, cst.If):
            subs.append(orelse)
        elif isinstance(orelse, cst.Else):
            subs += _statements(orelse.body)
    elif isinstance(stmt, cst.With):
        subs += _statements(stmt.body)
    elif isinstance(stmt, cst.Try):
        subs += _statements(stmt.body)
        for h in stmt.handlers:
            subs += _statements(h.body)
        if stmt.orelse is not None:
            subs += _statements(stmt.orelse.body)
        if stmt.finalbody is not None:
            subs += _statements(stmt.finalbody.body)
    return subs


def _leaves_on_success(node: cst.Try) -> bool:
    todo = _statements(node.body) + (_statements(node.orelse.body) if node.orelse is not None else [])
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, cst.SimpleStatementLine):
            if any(isinstance(s, (cst.Break, cst.Return)) for s in stmt.body):
                return True
        elif not isinstance(stmt, (*_NESTED_SCOPES, cst.Try)):
            todo.extend(_sub_statements(stmt))
    return False


def _catches_oom(handler: cst.ExceptHandler, names: ImportTable) -> bool:
    caught = handler.type
    types: list[cst.BaseExpression] = []
    if isinstance(caught, cst.Tuple):
        types = [el.value for el in caught.elements]
    elif caught is not None:
        types = [caught]
    spelled = {names.qualified_name(t) or dotted_name(t) or "" for t in types}
    if spelled & _OOM_ERRORS or any(s.rsplit(".", 1)[-1] == "OutOfMemoryError" for s in spelled):
        return True
    if caught is not None and not spelled & _BROAD_ERRORS:
        return False
    finder = _OomMessage()
    visit_fast(handler.body, finder)
    return finder.found


class _OomMessage(cst.CSTVisitor):
    """A string that names the out-of-memory error (``"out of memory" in str(e)``)."""

    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if "out of memory" in node.value.lower():
            self.found = True
