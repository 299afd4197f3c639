"""Tracker objects that keep the tensor handed to them (``meter.update(loss)``
where ``AverageMeter.update`` does ``self.sum += val * n``), whichever module
of the project defines the class: ``kept(receiver, method, scope)``.

The classes come from project/trackers.py, read on Python's ``ast`` tree:
those of other modules from the project view (``ProjectView.tensor_trackers``),
those of this module from its own text, parsed only when a receiver is
built by one of its module-level classes.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

import libcst as cst

from memlint.analysis.scope.bindings import Bindings, unwrap_pass_through
from memlint.analysis.scope.names import dotted_name
from memlint.parse.guard import python_tree

if TYPE_CHECKING:
    from memlint.project.view import ProjectView


class KeptBy(NamedTuple):
    """``cls.method`` keeps its parameter ``param`` (positional ``position``)
    in ``self.<attr>``; ``where``: ``utils.py:14``, or ``line 14`` here."""

    cls: str
    method: str
    position: int
    param: str
    attr: str
    where: str


class TensorTrackers:
    def __init__(
        self, module: cst.Module, bindings: Bindings, project: ProjectView | None, tree: ast.Module | None = None
    ) -> None:
        self.module = module
        self._tree = tree  # the module's ``ast`` tree, when the linter has it: not parsed again
        self.bindings = bindings
        self._remote: dict[tuple[str, str], KeptBy] = {}
        for local, method, index, param, attr, where in project.tensor_trackers if project is not None else ():
            self._remote[(local, method)] = KeptBy(local, method, index, param, attr, where)
        self._classes: set[str] | None = None  # the module's class names, at any depth, when first asked
        self._own: dict[tuple[str, str], KeptBy] | None = None

    def kept(self, receiver: cst.BaseExpression, method: str, scope: cst.CSTNode) -> KeptBy | None:
        """What ``receiver.method(...)`` keeps, when every value bound to
        ``receiver`` is built by one tensor-tracker class; None otherwise."""
        key = dotted_name(receiver)
        if key is None:
            return None
        values = self.bindings.values(key, scope)
        if not values:
            return None
        found = set()
        for value in values:
            call = unwrap_pass_through(value)
            name = dotted_name(call.func) if call is not None else None
            if name is None:
                return None
            found.add(name)
        if len(found) != 1:
            return None
        name = found.pop()
        if (name, method) in self._remote:
            return self._remote[(name, method)]
        if self._classes is None:
            self._classes = set(_class_names(self.module.body))
        if name in self._classes:
            return self._own_trackers().get((name, method))
        return None

    def _own_trackers(self) -> dict[tuple[str, str], KeptBy]:
        if self._own is None:
            from memlint.project.trackers import tensor_trackers

            # Linted without the gate's tree (fix, the server's single rules): the code's own.
            tree = self._tree if self._tree is not None else python_tree(self.module.code)
            self._own = {
                (t.cls, t.method): KeptBy(t.cls, t.method, t.position, t.param, t.attr, f"line {t.line}")
                for t in (tensor_trackers(tree) if tree is not None else ())
            }
        return self._own


def _class_names(body) -> Iterator[str]:
    """The names of the classes among ``body``'s statements and those nested
    in them (a tracker class defined in the function that uses it); only
    statements are walked, never expressions."""
    for stmt in body:
        if isinstance(stmt, cst.ClassDef):
            yield stmt.name.value
        if isinstance(stmt, cst.SimpleStatementLine):
            continue
        for part in (
            stmt,
            getattr(stmt, "orelse", None),
            getattr(stmt, "finalbody", None),
            *getattr(stmt, "handlers", ()),
        ):
            if part is not stmt and isinstance(part, cst.If):  # elif: its own else follows
                yield from _class_names([part])
                continue
            inner = getattr(part, "body", None)
            if isinstance(inner, cst.BaseSuite):
                inner = getattr(inner, "body", ())
            if isinstance(inner, (list, tuple)):
                yield from _class_names(inner)
