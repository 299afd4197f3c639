"""Names of a module that hold the CPU device.

partial-conv's ``cpu_device = torch.device('cpu')``, and wavenet_vocoder's
tests: ``use_cuda = False`` then ``device = torch.device("cuda" if use_cuda
else "cpu")``. A module-level switch written as a literal decides the device
as surely as the string does: ``.to(device)`` there moves to the CPU, so a
model "moved" with it is still on the CPU (MEM701) and a state saved from it
holds CPU tensors (cpu_saves.py).

A name counts only when every binding of it anywhere in the module is a
plain assignment (no parameter, loop variable, ``with``/``import`` alias,
augmented, annotated or unpacking target): the device names to one CPU
device each, the switches to one literal ``True``/``False`` each (the same
one). Anything else leaves the name unknown.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import bound_names, dotted_name
from memlint.parse.traversal import visit_fast


def cpu_device_names(module: cst.Module) -> frozenset[str]:
    """The names every binding of the module sets to the CPU device (no
    parameter, loop variable or other assignment of that name anywhere):
    ``.to(cpu_device)`` moves to the CPU."""
    visitor = _Bindings()
    visit_fast(module, visitor)
    values = {n: v for n, v in visitor.values.items() if n not in visitor.other}
    flags = _literal_flags(values)
    return frozenset(n for n, vs in values.items() if all(is_cpu_device(v, flags) for v in vs))


def moves_to_cpu(call: cst.Call, cpu_names: frozenset[str]) -> bool:
    """``x.cpu()``, ``x.to("cpu")``, ``x.to(torch.device("cpu"))``, or
    ``x.to(cpu_device)`` / ``x.to(device=cpu_device)`` with the name one of
    ``cpu_names`` (cpu_device_names): a move that leaves ``x`` on the CPU."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return False
    if func.attr.value == "cpu":
        return not call.args
    if func.attr.value != "to" or len(call.args) != 1:
        return False
    first = call.args[0]
    if first.keyword is not None and first.keyword.value != "device":
        return False
    value = first.value
    return is_cpu_device(value) or (isinstance(value, cst.Name) and value.value in cpu_names)


def is_cpu_device(value: cst.BaseExpression, flags: dict[str, bool] | None = None) -> bool:
    """``"cpu"`` or ``torch.device("cpu")``; with ``flags`` (switches bound
    to a literal), also the arm of ``"cuda" if use_cuda else "cpu"`` that the
    switch picks."""
    if isinstance(value, cst.IfExp) and flags:
        picked = flag_value(value.test, flags)
        return picked is not None and is_cpu_device(value.body if picked else value.orelse, flags)
    if isinstance(value, cst.SimpleString):
        return value.evaluated_value == "cpu"
    if isinstance(value, cst.Call) and dotted_name(value.func) in ("torch.device", "device") and len(value.args) == 1:
        return is_cpu_device(value.args[0].value, flags)
    return False


def flag_value(test: cst.BaseExpression, flags: dict[str, bool]) -> bool | None:
    """The value of ``test`` built from ``flags``' names, literals, ``not``,
    ``and`` and ``or`` (``torch.cuda.is_available() and use_cuda`` with
    ``use_cuda = False`` is False); None when it depends on anything else."""
    if isinstance(test, cst.Name):
        if test.value in ("True", "False"):
            return test.value == "True"
        return flags.get(test.value)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = flag_value(test.expression, flags)
        return None if inner is None else not inner
    if isinstance(test, cst.BooleanOperation):
        left, right = flag_value(test.left, flags), flag_value(test.right, flags)
        if isinstance(test.operator, cst.And):
            return False if False in (left, right) else (True if left and right else None)
        return True if True in (left, right) else (False if left is False and right is False else None)
    return None


def _literal_flags(values: dict[str, list[cst.BaseExpression]]) -> dict[str, bool]:
    """The names every binding of which is the same literal ``True``/``False``."""
    flags: dict[str, bool] = {}
    for name, bound in values.items():
        if all(isinstance(v, cst.Name) and v.value in ("True", "False") for v in bound):
            literals = {v.value for v in bound if isinstance(v, cst.Name)}
            if len(literals) == 1:
                flags[name] = literals.pop() == "True"
    return flags


class _Bindings(cst.CSTVisitor):
    """Per name, the values its plain assignments bind (``values``), and the
    names bound any other way too (``other``)."""

    def __init__(self) -> None:
        self.values: dict[str, list[cst.BaseExpression]] = {}
        self.other: set[str] = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Name):
                if len(node.targets) == 1:
                    self.values.setdefault(t.target.value, []).append(node.value)
                else:  # ``a = b = ...``: not read as a switch or a device
                    self.other.add(t.target.value)

    def visit_Param(self, node: cst.Param) -> None:
        self.other.add(node.name.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if not isinstance(node.target, cst.Name):  # ``a, b = ...``: names bound to anything
            self._bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._bind(node.name)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    def _bind(self, target: cst.BaseExpression) -> None:
        self.other.update(bound_names(target))
