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
- ``{k: v.cpu() for k, v in ...}``,
- a conditional expression whose both branches are one of those,
- a name bound, earlier in the same function, to one of those, or to
  ``model.state_dict()`` inside ``with FSDP.state_dict_type(model, ...,
  cfg)`` where ``cfg`` is ``FullStateDictConfig(offload_to_cpu=True)``
  (FSDP gathers the full state dict into CPU memory).

The receiver of a move may be a chain of module methods: ``model.eval().cpu()``
moves ``model``.

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


# nn.Module methods that return the module itself: ``model.eval().cpu()`` moves ``model``.
_RETURNS_SELF = frozenset({"eval", "train", "float", "half", "double", "bfloat16", "requires_grad_", "share_memory"})


def _module_receiver(expr: cst.BaseExpression) -> str | None:
    """``model`` for ``model``, ``model.eval()``, ``model.train(False).float()``."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _RETURNS_SELF:
        expr = expr.func.value
    return dotted_name(expr)


def _offloads_to_cpu(call: cst.Call) -> bool:
    """``FullStateDictConfig(offload_to_cpu=True, rank0_only=True)``."""
    name = dotted_name(call.func) or ""
    if name.rsplit(".", 1)[-1] != "FullStateDictConfig":
        return False
    return any(
        a.keyword is not None
        and a.keyword.value == "offload_to_cpu"
        and isinstance(a.value, cst.Name)
        and a.value.value == "True"
        for a in call.args
    )


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
        # Per function (and the module): the last device move of each name,
        # and the names bound to a state dict on the CPU.
        self.moves: list[dict[str, bool]] = [{}]
        self.cpu_states: list[set[str]] = [set()]
        self.offload_configs: set[str] = set()  # names of FullStateDictConfig(offload_to_cpu=True)
        self._offloading = 0  # depth of ``with FSDP.state_dict_type(m, ..., cfg)`` blocks
        self.saves = 0
        self.unproven = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.moves.append({})
        self.cpu_states.append(set())

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.moves.pop()
        self.cpu_states.pop()

    def _offload_block(self, node: cst.With) -> bool:
        for item in node.items:
            call = item.item
            if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
                continue
            if call.func.attr.value != "state_dict_type":
                continue
            for arg in call.args:
                value = arg.value
                if isinstance(value, cst.Call) and _offloads_to_cpu(value):
                    return True
                if dotted_name(value) in self.offload_configs:
                    return True
        return False

    def visit_With(self, node: cst.With) -> None:
        if self._offload_block(node):
            self._offloading += 1

    def leave_With(self, original_node: cst.With) -> None:
        if self._offload_block(original_node):
            self._offloading -= 1

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        for t in node.targets:
            key = dotted_name(t.target)
            if key is None:
                continue
            if isinstance(value, cst.Call) and _offloads_to_cpu(value):
                self.offload_configs.add(key)
            self.cpu_states[-1].discard(key)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        # Left after the value's calls: ``m.cpu()`` inside it is already known.
        value = original_node.value
        if not (self._cpu_state(value) or (self._offloading and _state_dict_call(value))):
            return
        for t in original_node.targets:
            key = dotted_name(t.target)
            if key is not None:
                self.cpu_states[-1].add(key)

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
            key = _module_receiver(original_node.func.value)
            if key is not None:
                self.moves[-1][key] = moved

    def _cpu_state(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, cst.IfExp):  # ``net.module.state_dict() if hasattr(net, "module") else net.state_dict()``
            return self._cpu_state(value.body) and self._cpu_state(value.orelse)
        if isinstance(value, cst.DictComp):
            return _ends_on_cpu(value.value)
        name = dotted_name(value)
        if name is not None:
            return name in self.cpu_states[-1]
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
        key = _module_receiver(receiver)
        if key is None:
            return False
        for owner in _owners(key):
            if owner in self.moves[-1]:
                return self.moves[-1][owner]
        return False


def _state_dict_call(value: cst.BaseExpression) -> bool:
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value == "state_dict"
        and not value.args
    )


def saves_only_cpu_tensors(module: cst.Module, names: ImportTable) -> bool:
    visitor = _Saves(names)
    visit_fast(module, visitor)
    return visitor.saves > 0 and visitor.unproven == 0
