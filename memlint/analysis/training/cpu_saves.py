"""Whether a module writes its checkpoints from CPU tensors only.

``torch.save(network.cpu().state_dict(), path)``, or ``model.cpu()`` before
``torch.save(model.state_dict(), path)``: a file written that way holds CPU
tensors, so loading it back without ``map_location`` makes no GPU copy.

``saves_only_cpu_tensors(module, names)`` is True when the module calls
``torch.save`` at least once and every call saves, as its first argument, a
state dict known to live on the CPU where it is saved:

- ``X.cpu().state_dict()`` (a ``.cpu()`` anywhere in the receiver chain),
- ``X.state_dict()`` where the last device move of ``X`` (or of an owner,
  ``model`` for ``model.module``) before the save, in the same function, is
  ``X.cpu()`` / ``X.to("cpu")`` (a move under a condition counts: the author
  saves from the CPU on purpose),
- ``{k: v.cpu() for k, v in ...}``.

Anything else (a dict holding an optimizer's state, a tensor, an unknown
name) is not known to be on the CPU, and the answer is False.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import ImportTable, dotted_name
from memlint.parse.traversal import visit_fast


def _to_cpu(call: cst.Call) -> bool | None:
    """True for a move to the CPU, False for a move elsewhere, None for no move."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    method = func.attr.value
    if method == "cpu":
        return True
    if method == "cuda":
        return False
    if method == "to" and call.args:
        first = call.args[0].value
        if isinstance(first, cst.SimpleString) and first.evaluated_value == "cpu":
            return True
        if isinstance(first, cst.Call) and dotted_name(first.func) in ("torch.device", "device") and first.args:
            inner = first.args[0].value
            if isinstance(inner, cst.SimpleString) and inner.evaluated_value == "cpu":
                return True
        return False
    return None


def _owners(key: str) -> list[str]:
    """``model.module`` -> ``model.module``, ``model``."""
    parts = key.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]


def _ends_on_cpu(expr: cst.BaseExpression) -> bool:
    """``v.cpu()``, ``v.detach().cpu()``, ``v.cpu().clone()``."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        if _to_cpu(expr) is True:
            return True
        if expr.func.attr.value not in ("clone", "detach", "contiguous", "float", "half"):
            return False
        expr = expr.func.value
    return False


class _Saves(cst.CSTVisitor):
    def __init__(self, names: ImportTable) -> None:
        self.names = names
        # Per function (and the module): the last device move of each name.
        self.moves: list[dict[str, bool]] = [{}]
        self.saves = 0
        self.unproven = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.moves.append({})

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.moves.pop()

    def leave_Call(self, original_node: cst.Call) -> None:
        # Inner calls are left first: ``network.cpu()`` in
        # ``torch.save(network.cpu().state_dict(), p)`` is seen before the save.
        if self.names.call_name(original_node) == "torch.save":
            self.saves += 1
            if not original_node.args or not self._cpu_state(original_node.args[0].value):
                self.unproven += 1
            return
        moved = _to_cpu(original_node)
        if moved is not None and isinstance(original_node.func, cst.Attribute):
            key = dotted_name(original_node.func.value)
            if key is not None:
                self.moves[-1][key] = moved

    def _cpu_state(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, cst.DictComp):
            return _ends_on_cpu(value.value)
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)):
            return False
        if value.func.attr.value != "state_dict" or value.args:
            return False
        receiver = value.func.value
        cur = receiver
        while isinstance(cur, (cst.Call, cst.Attribute)):
            if isinstance(cur, cst.Call):
                if _to_cpu(cur) is True:
                    return True
                cur = cur.func
            else:
                cur = cur.value
        key = dotted_name(receiver)
        if key is None:
            return False
        for owner in _owners(key):
            if owner in self.moves[-1]:
                return self.moves[-1][owner]
        return False


def saves_only_cpu_tensors(module: cst.Module, names: ImportTable) -> bool:
    visitor = _Saves(names)
    visit_fast(module, visitor)
    return visitor.saves > 0 and visitor.unproven == 0
