"""Moves that run only when exactly one device id is in use: DataParallel's idiom.

torch's ``nn.DataParallel.__init__`` moves the module it wraps to
``device_ids[0]`` only when one device is visible (or named); projects copy
the class with that line (CornerNet's ``models/py_utils/data_parallel.py``:
``if len(self.device_ids) == 1: self.module.cuda(device_ids[0])``). Whether
the model is then on a GPU depends on how many GPUs the machine shows, not
on the code: the ``dataparallel`` label decision (bench/cross_module/
label_decisions.tsv) reads torch's class built without device ids as leaving
the model on the CPU at a load, and a project's copy of it is read alike
(class_moves.py): such a move does not make the class one that moves.

Only the test ``len(<...>device_ids) == 1`` (either side) guards such a move;
a class built with one literal device id is then read on the CPU too, the
silent side of the rule.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable


def single_device_moves(found: Iterable[ast.AST], walk: Callable[[ast.AST], list[ast.AST]]) -> set[int]:
    """The ids of the nodes in the body of an ``if len(device_ids) == 1:``
    among ``found`` (a method's nodes); ``walk`` lists a statement's nodes."""
    guarded: set[int] = set()
    for node in found:
        if node.__class__ is ast.If and _one_device(node.test):  # type: ignore[attr-defined]
            for stmt in node.body:  # type: ignore[attr-defined]
                guarded.update(map(id, walk(stmt)))
    return guarded


def _one_device(test: ast.expr) -> bool:
    """``len(device_ids) == 1``, ``len(self.device_ids) == 1`` or ``1 == len(...)``."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Constant):
        left, right = right, left
    if not (isinstance(right, ast.Constant) and right.value == 1 and not isinstance(right.value, bool)):
        return False
    if not (isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "len"):
        return False
    if len(left.args) != 1 or left.keywords:
        return False
    arg = left.args[0]
    last = arg.attr if isinstance(arg, ast.Attribute) else arg.id if isinstance(arg, ast.Name) else ""
    return last == "device_ids"
