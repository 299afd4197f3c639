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
- a dict literal holding at least one of these beside constants and plain
  names (``{"model_state_dict": {k: v.cpu() ...}, "field": field}``),
- a conditional expression whose both branches are one of those,
- a name bound, earlier in the same function, to one of those, or to
  ``model.state_dict()`` inside ``with FSDP.state_dict_type(model, ...,
  cfg)`` where ``cfg`` is ``FullStateDictConfig(offload_to_cpu=True)``
  (FSDP gathers the full state dict into CPU memory).

The receiver of a move may be a chain of module methods: ``model.eval().cpu()``
moves ``model``.

- a name bound to a state dict whose every entry a loop then replaces by
  its value moved to the CPU (``for k, v in sd.items(): sd[k] = v.cpu()``).

A name rebound loses what was known of it (``net = build().cuda()`` after
``net.cpu()``), and a state dict given an entry not known to be on the CPU
(``sd["opt"] = optimizer.state_dict()``, ``sd.update(...)``) is no longer one.

Anything else (a dict holding an optimizer's state, a tensor, an unknown
name) is not known to be on the CPU, and the answer is False.

``cpu_saves(module, names)`` also says it per kind of state:
``module_states_cpu`` is True when every save that is not proven to write an
optimizer's, scheduler's or scaler's state (``optimizer.state_dict()``, or a
dict of those and plain values: what only ``optimizer.load_state_dict`` reads)
writes CPU tensors, and there is one: a load into a model is judged by
those writers only (save_network's per-key ``.cpu()`` beside
save_optimizer's GPU ``optimizer.state_dict()``, cszn/KAIR).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from memlint.analysis.scope.names import ImportTable, dotted_name
from memlint.analysis.training.cpu_devices import cpu_device_names
from memlint.parse.traversal import visit_fast
from memlint.vocabulary.cpu_states import KEEPS_DEVICE, RETURNS_SELF, CpuStateFrames, holds_no_weights, plain_name


def _to_cpu(call: cst.Call, cpu_names: frozenset[str] = frozenset()) -> bool | None:
    """True for a move to the CPU, False for a move elsewhere, None for no move.
    ``cpu_names``: the module's names bound only to the CPU device (cpu_devices.py)."""
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
        if isinstance(first, cst.Name) and first.value in cpu_names:
            return True
        return False
    return None


def _module_receiver(expr: cst.BaseExpression) -> str | None:
    """``model`` for ``model``, ``model.eval()``, ``model.train(False).float()``."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in RETURNS_SELF:
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


def _ends_on_cpu(expr: cst.BaseExpression, cpu_names: frozenset[str] = frozenset()) -> bool:
    """``v.cpu()``, ``v.detach().cpu()``, ``v.cpu().clone()``."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        if _to_cpu(expr, cpu_names) is True:
            return True
        if expr.func.attr.value not in KEEPS_DEVICE:
            return False
        expr = expr.func.value
    return False


class _Saves(cst.CSTVisitor):
    def __init__(self, names: ImportTable, cpu_names: frozenset[str] = frozenset()) -> None:
        self.names = names
        self.cpu_names = cpu_names  # names bound only to the CPU device (cpu_device_names)
        # Functions whose every return is a state on the CPU (partial-conv's
        # ``get_state_dict_on_cpu(model)``), once walked; a name defined once in the module.
        self.cpu_returners: set[str] = set()
        self._returns: list[list[bool]] = []  # per function open: each return's value is a CPU state
        self._once: set[str] = set()  # function names defined once in the module
        # Per function: dicts whose model states are all on the CPU beside
        # optimizer states and plain values (``ckpt[prefix] = optimizer.state_dict()``).
        # name -> whether one of its entries is a CPU state yet (a save proves something only then).
        self._mixed: list[dict[str, bool]] = [{}]
        self.frames = CpuStateFrames()
        self.offload_configs: set[str] = set()  # names of FullStateDictConfig(offload_to_cpu=True)
        self._offloading = 0  # depth of ``with FSDP.state_dict_type(m, ..., cfg)`` blocks
        self.saves = 0
        self.unproven = 0
        self.module_saves = 0  # saves not proven to write an optimizer's (scheduler's, scaler's) state
        self.module_unproven = 0
        self._cpu_loops: list[str | None] = []  # per ``for``: the state its body moves to the CPU entry by entry
        self.keys = _SavedKeys()

    def visit_Module(self, node: cst.Module) -> None:
        defs = _FunctionNames()
        visit_fast(node, defs)
        self._once = {name for name, count in defs.counts.items() if count == 1}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.frames.enter()
        self._mixed.append({})
        self._returns.append([])

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.frames.leave()
        self._mixed.pop()
        returns = self._returns.pop()
        if original_node.name.value in self._once and returns and all(returns):
            self.cpu_returners.add(original_node.name.value)

    def visit_Yield(self, node: cst.Yield) -> None:
        if self._returns:
            self._returns[-1].append(False)

    def leave_Return(self, original_node: cst.Return) -> None:
        if self._returns:
            value = original_node.value
            self._returns[-1].append(value is not None and self._cpu_state(value))

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
            self.frames.set_cpu_state(key, False)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        # Left after the value's calls: ``m.cpu()`` inside it is already known.
        value = original_node.value
        cpu = self._cpu_state(value) or (self._offloading and _state_dict_call(value))
        for t in original_node.targets:
            key = dotted_name(t.target)
            if key is None:
                self._entry_set(t.target, value)
                continue
            self._rebound(key, value)
            self._mixed[-1].pop(key, None)
            if cpu:
                self.frames.set_cpu_state(key, True)
            elif isinstance(value, cst.Dict) and self._mixed_entries(value):
                self._mixed[-1][key] = any(
                    isinstance(e, cst.DictElement) and self._cpu_state(e.value) for e in value.elements
                )

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        key = dotted_name(node.target)
        if key is not None and node.value is not None:
            self.frames.set_cpu_state(key, False)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        key = dotted_name(original_node.target)
        if key is not None and original_node.value is not None:
            self._rebound(key, original_node.value)
            if self._cpu_state(original_node.value):
                self.frames.set_cpu_state(key, True)

    def _rebound(self, key: str, value: cst.BaseExpression | None) -> None:
        moved = _to_cpu(value, self.cpu_names) if isinstance(value, cst.Call) else None
        same = moved is None and value is not None and _module_receiver(value) == key
        self.frames.rebound(key, moved, same)

    def _entry_set(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """``sd[k] = v``: ``sd`` stays a CPU state only if ``v`` is on the CPU."""
        if not isinstance(target, cst.Subscript):
            return
        key = dotted_name(target.value)
        if key is not None and key in self._mixed[-1]:
            if not self._mixed_value(value):
                del self._mixed[-1][key]
            elif self._cpu_state(value):
                self._mixed[-1][key] = True
        if (
            key is not None
            and self.frames.is_cpu_state(key)
            and not (_ends_on_cpu(value, self.cpu_names) or self._cpu_state(value) or _plain(value))
        ):
            self.frames.set_cpu_state(key, False)

    def visit_For(self, node: cst.For) -> None:
        self._cpu_loops.append(_cpu_loop(node, self.cpu_names))
        key = dotted_name(node.target)
        if key is not None:
            self._rebound(key, None)
            self.frames.set_cpu_state(key, False)

    def leave_For(self, original_node: cst.For) -> None:
        state = self._cpu_loops.pop()
        if state is not None:
            self.frames.set_cpu_state(state, True)

    def leave_Call(self, original_node: cst.Call) -> None:
        # Inner calls are left first: ``network.cpu()`` in
        # ``torch.save(network.cpu().state_dict(), p)`` is seen before the save.
        if self.names.call_name(original_node) == "torch.save":
            self.saves += 1
            proven = bool(original_node.args) and self._cpu_state(original_node.args[0].value)
            if not proven:
                self.unproven += 1
            if not (original_node.args and _no_module_state(original_node.args[0].value)):
                self.module_saves += 1
                self.module_unproven += not (proven or self._mixed_save(original_node.args))
            self.keys.save(original_node.args[0].value if original_node.args else None, proven)
            return
        func = original_node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("update", "setdefault", "__setitem__"):
            # ``sd.update(other)``: entries not known to be on the CPU.
            key = dotted_name(func.value)
            if key is not None:
                self.frames.set_cpu_state(key, False)
        moved = _to_cpu(original_node, self.cpu_names)
        if moved is not None and isinstance(original_node.func, cst.Attribute):
            key = _module_receiver(original_node.func.value)
            if key is not None:
                self.frames.moved(key, moved)

    def _cpu_state(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, cst.IfExp):  # ``net.module.state_dict() if hasattr(net, "module") else net.state_dict()``
            return self._cpu_state(value.body) and self._cpu_state(value.orelse)
        if isinstance(value, cst.DictComp):
            return _ends_on_cpu(value.value, self.cpu_names)
        if isinstance(value, cst.Dict):
            return self._cpu_entries(value)
        name = dotted_name(value)
        if name is not None:
            return self.frames.is_cpu_state(name)
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
            return value.func.value in self.cpu_returners
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)):
            return False
        if value.func.attr.value != "state_dict" or value.args:
            return False
        receiver = value.func.value
        cur = receiver
        while isinstance(cur, (cst.Call, cst.Attribute)):
            if isinstance(cur, cst.Call):
                if _to_cpu(cur, self.cpu_names) is True:
                    return True
                cur = cur.func
            else:
                cur = cur.value
        key = _module_receiver(receiver)
        return key is not None and self.frames.last_move_to_cpu(key)

    def _mixed_value(self, value: cst.BaseExpression) -> bool:
        """A CPU state, an optimizer's (scheduler's, scaler's) state, or a plain value."""
        return self._cpu_state(value) or _no_module_state(value) or _plain(value)

    def _mixed_entries(self, value: cst.Dict) -> bool:
        """``{"n_iter": n_iter}``, ``{"model": cpu_sd, "optim": opt.state_dict()}``:
        every entry one of _mixed_value's (a save needs a CPU state among them)."""
        return all(isinstance(e, cst.DictElement) and self._mixed_value(e.value) for e in value.elements)

    def _mixed_save(self, args: Sequence[cst.Arg]) -> bool:
        """A save of a dict whose model states are all on the CPU: the
        optimizer states beside them are read by optimizers only (module_states_cpu)."""
        if not args:
            return False
        value = args[0].value
        if isinstance(value, cst.Dict):
            return self._mixed_entries(value) and any(
                isinstance(e, cst.DictElement) and self._cpu_state(e.value) for e in value.elements
            )
        name = dotted_name(value)
        return name is not None and self._mixed[-1].get(name, False)

    def _cpu_entries(self, value: cst.Dict) -> bool:
        """``{"model_state_dict": {k: v.cpu() for k, v in ...}, "field": field}``
        (decaNLP): at least one state on the CPU, and every other value a
        constant or a plain name (project/checkpoint_files.py's rule, which
        the summary already applies)."""
        states = 0
        for element in value.elements:
            if not isinstance(element, cst.DictElement):
                return False  # ``{**other}``: unknown entries
            if self._cpu_state(element.value):
                states += 1
            elif not _plain(element.value):
                return False
        return states > 0


def _state_dict_call(value: cst.BaseExpression) -> bool:
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value == "state_dict"
        and not value.args
    )


def _cpu_loop(node: cst.For, cpu_names: frozenset[str] = frozenset()) -> str | None:
    """``sd`` for ``for k, v in sd.items(): ... sd[k] = v.cpu() ...`` or
    ``for k in sd.keys(): sd[k] = sd[k].to(cpu_device)`` (``for k in sd``,
    ``list(sd.keys())`` too): the body replaces, on every pass (a statement
    of its own, no ``break`` or ``continue`` anywhere in it), each entry by
    its value on the CPU."""
    if node.orelse is not None or _breaks(node.body):
        return None
    walked = _walked_state(node.target, node.iter)
    if walked is None:
        return None
    state, key, value = walked
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    for stmt in body:
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
                continue
            if _entry_of(small.targets[0].target, state, key) and _ends_on_cpu(small.value, cpu_names):
                inner = _innermost_node(small.value)
                named = value is not None and isinstance(inner, cst.Name) and inner.value == value
                if named or (value is None and _entry_of(inner, state, key)):
                    return state
    return None


def _walked_state(target: cst.BaseAssignTargetExpression, it: cst.BaseExpression) -> tuple[str, str, str | None] | None:
    """(the state, the key name, the value name or None) of a loop over a state's entries."""
    if isinstance(target, cst.Tuple) and len(target.elements) == 2:
        names = [e.value.value if isinstance(e.value, cst.Name) else None for e in target.elements]
        if None in names or not (
            isinstance(it, cst.Call)
            and not it.args
            and isinstance(it.func, cst.Attribute)
            and it.func.attr.value == "items"
        ):
            return None
        state = dotted_name(it.func.value)
        return (state, names[0], names[1]) if state is not None and names[0] and names[1] else None
    if not isinstance(target, cst.Name):
        return None
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "list" and len(it.args) == 1:
        it = it.args[0].value  # ``list(sd.keys())``
    if isinstance(it, cst.Call) and not it.args and isinstance(it.func, cst.Attribute) and it.func.attr.value == "keys":
        it = it.func.value
    state = dotted_name(it)
    return (state, target.value, None) if state is not None else None


def _entry_of(expr: cst.BaseExpression | None, state: str, key: str) -> bool:
    """``expr`` is ``state[key]``."""
    return (
        isinstance(expr, cst.Subscript)
        and dotted_name(expr.value) == state
        and len(expr.slice) == 1
        and isinstance(expr.slice[0].slice, cst.Index)
        and isinstance(expr.slice[0].slice.value, cst.Name)
        and expr.slice[0].slice.value.value == key
    )


def _innermost_node(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``v`` (or ``sd[k]``) for ``v.detach().cpu()``."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        expr = expr.func.value
    return expr


class _FunctionNames(cst.CSTVisitor):
    """How many times each function name is defined in the module (any depth)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.counts[node.name.value] = self.counts.get(node.name.value, 0) + 1


class _Jumps(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Break(self, node: cst.Break) -> None:
        self.found = True

    def visit_Continue(self, node: cst.Continue) -> None:
        self.found = True


def _breaks(body: cst.BaseSuite) -> bool:
    jumps = _Jumps()
    visit_fast(body, jumps)
    return jumps.found


def _no_module_state(value: cst.BaseExpression) -> bool:
    """``optimizer.state_dict()`` (``self.optimizer_G``, ``scheduler``,
    ``scaler``: named so), or a dict of those beside plain values
    (``{"optimizer": optimizer.state_dict(), "epoch": epoch}``): a
    checkpoint only an optimizer (scheduler, scaler) loads."""
    if isinstance(value, cst.Dict):
        states = 0
        for element in value.elements:
            if not isinstance(element, cst.DictElement):
                return False  # ``{**other}``: unknown entries
            if _no_module_state(element.value):
                states += 1
            elif not _plain(element.value):
                return False
        return states > 0
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)):
        return False
    if value.func.attr.value != "state_dict" or value.args:
        return False
    owner = dotted_name(value.func.value)
    return owner is not None and holds_no_weights(owner)


def _plain(value: cst.BaseExpression) -> bool:
    if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    name = dotted_name(value)
    return name is not None and plain_name(name)


@dataclass(frozen=True)
class CpuSaves:
    """What a module's ``torch.save`` calls are known to write."""

    only_cpu: bool  # every save writes CPU tensors, and there is one
    module_states_cpu: bool  # every save that may write a model's state writes CPU tensors, and there is one
    no_module_states: bool  # no save may write a model's state
    cpu_keys: frozenset[str] = frozenset()  # keys only CPU saves write (_SavedKeys)


def cpu_saves(module: cst.Module, names: ImportTable) -> CpuSaves:
    visitor = _Saves(names, cpu_device_names(module))
    visit_fast(module, visitor)
    return CpuSaves(
        only_cpu=visitor.saves > 0 and visitor.unproven == 0,
        module_states_cpu=visitor.module_saves > 0 and visitor.module_unproven == 0,
        no_module_states=visitor.module_saves == 0,
        cpu_keys=visitor.keys.cpu_only(),
    )


class _SavedKeys:
    """The keys of the dicts a module saves, split by what each save holds.

    decaNLP's train.py saves ``{"model_state_dict": {k: v.cpu() ...},
    "field": field}`` to ``iteration_N.pth`` and ``opt.state_dict()`` (GPU
    tensors) to another file: a load read at ``"model_state_dict"`` can only
    be the first file, whatever the receiver is. A key is CPU-only when some
    save proven CPU (cpu_saves' proof, the whole dict) writes it and every
    other save is a dict literal without it, or a bare optimizer's
    (scheduler's, scaler's) ``state_dict()`` (keys ``state`` and
    ``param_groups``); one save of any other shape (a name, a call) may
    hold any key: none is CPU-only."""

    _OPTIMIZER_KEYS = frozenset({"state", "param_groups"})

    def __init__(self) -> None:
        self.cpu: set[str] = set()
        self.other: set[str] = set()
        self.unknown = False

    def save(self, value: cst.BaseExpression | None, proven: bool) -> None:
        keys = _literal_keys(value) if isinstance(value, cst.Dict) else None
        if proven:
            self.cpu |= keys or set()
        elif keys is not None:
            self.other |= keys
        elif value is not None and _no_module_state(value):
            self.other |= self._OPTIMIZER_KEYS
        else:
            self.unknown = True

    def cpu_only(self) -> frozenset[str]:
        return frozenset() if self.unknown else frozenset(self.cpu - self.other)


def _literal_keys(value: cst.Dict) -> set[str] | None:
    """The string keys of a dict literal; None when one is not a literal string (``**other``, ``f"{k}"``)."""
    keys: set[str] = set()
    for element in value.elements:
        if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
            return None
        key = element.key.evaluated_value
        if not isinstance(key, str):
            return None
        keys.add(key)
    return keys


def read_key(expr: cst.BaseExpression) -> str | None:
    """The literal key ``expr`` reads last: ``ck["model_state_dict"]``, ``ck.get("model")``."""
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1:
        index = expr.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            key = index.value.evaluated_value
            return key if isinstance(key, str) else None
        return None
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value == "get"
        and 1 <= len(expr.args) <= 2
        and isinstance(expr.args[0].value, cst.SimpleString)
        and expr.args[0].keyword is None
    ):
        key = expr.args[0].value.evaluated_value
        return key if isinstance(key, str) else None
    return None


def saves_only_cpu_tensors(module: cst.Module, names: ImportTable) -> bool:
    return cpu_saves(module, names).only_cpu
