"""Calls whose result a scope loads into a model it has moved to a device.

``checkpoint = load_checkpoint(path)`` then ``model.module.load_state_dict(
checkpoint["state_dict"])`` after ``model = nn.DataParallel(model).cuda()``:
the value ``load_checkpoint`` returns is copied into a model on a GPU. When
``load_checkpoint`` is another module's function returning ``torch.load(f)``
without ``map_location``, that load puts a second copy of the weights on the
GPU, and MEM701 reports it there, in the helper's module (its own analysis
cannot see this caller). summary.py keeps the answer per call site
(``CallSite.gpu_state``); the index hands it to the helper's module
(``Caller.gpu_state``).

The model must be known to be moved (``.cuda()``, ``.to(device)``) earlier
in the same scope, in source order: where that is not known, the caller says
nothing (precision first; the same-module path reads the caller with
libcst's fuller device facts).
"""

from __future__ import annotations

import ast

from memlint.gate.ast_fields import children
from memlint.project.arg_modes import dotted

# Names of a ``.to(x)`` argument that say it is a device (``device``,
# ``args.device``, ``local_rank``, ``gpu``), not a dtype.
_DEVICE_WORDS = ("dev", "gpu", "cuda", "rank")
# Methods that return the module they are called on, where it is.
_KEEPS_DEVICE = frozenset({"half", "float", "train", "eval", "requires_grad_"})
# Wrappers that keep the wrapped model where it is.
_WRAPPERS = frozenset({"DataParallel", "DistributedDataParallel"})


def gpu_state_calls(body: list[ast.stmt]) -> dict[int, set[int]]:
    """The calls of ``body`` (one scope: nested functions and classes are
    their own), by id, whose result reaches ``load_state_dict`` of a model
    the scope moved to a device before, directly or indexed (``f(p)["model"]``),
    or through a name bound to it: each with what reaches it, -1 for the
    value itself, ``i`` for the i-th element of the tuple it returns,
    unpacked at the call (``epoch, weights = load_checkpoint(p)``)."""
    walk = _Walk()
    for stmt in body:
        walk.statement(stmt)
    return walk.found


class _Walk:
    def __init__(self) -> None:
        self.placed: set[str] = set()  # dotted names of models moved to a device
        # Names bound to a call's result: the call, and the element of the
        # tuple it returns that the name holds (-1: the whole value).
        self.held: dict[str, tuple[ast.Call, int]] = {}
        self.found: dict[int, set[int]] = {}

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.unbind(stmt.name)
            return
        if isinstance(stmt, ast.Assign):
            self.expression(stmt.value)
            for target in stmt.targets:
                self.bind(target, stmt.value)
            return
        if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
            if stmt.value is not None:
                self.expression(stmt.value)
            self.bind(stmt.target, None)
            return
        for field, value in ast.iter_fields(stmt):
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.stmt):
                        self.statement(item)
                    elif isinstance(item, ast.AST):
                        self.part(item)
            elif isinstance(value, ast.AST):
                if field == "target" and isinstance(value, ast.expr):  # a loop's target, bound each iteration
                    self.bind(value, None)
                else:
                    self.part(value)

    def part(self, node: ast.AST) -> None:
        """A part of a statement that is no statement: an expression, a
        handler, a ``with`` item."""
        if isinstance(node, ast.expr):
            self.expression(node)
            return
        for field, value in ast.iter_fields(node):
            items = value if isinstance(value, list) else [value]
            for item in items:
                if isinstance(item, ast.stmt):
                    self.statement(item)
                elif isinstance(item, ast.expr) and field == "optional_vars":
                    self.bind(item, None)
                elif isinstance(item, ast.AST):
                    self.part(item)
        if isinstance(node, ast.ExceptHandler) and node.name:
            self.unbind(node.name)

    def expression(self, expr: ast.expr) -> None:
        """Read the calls of ``expr``: moves of a name (``model.cuda()``) and
        ``load_state_dict`` of a moved model. Lambdas are their own scope."""
        stack: list[ast.AST] = [expr]
        calls: list[ast.Call] = []
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Lambda):
                continue
            if isinstance(node, ast.Call):
                calls.append(node)
            stack.extend(children(node))
        # Inner calls run first: ``model.cuda().load_state_dict(...)``.
        for call in sorted(calls, key=lambda c: (c.end_lineno or 0, c.end_col_offset or 0)):
            self.call(call)

    def call(self, call: ast.Call) -> None:
        func = call.func
        if not isinstance(func, ast.Attribute):
            return
        if is_device_move(call):
            receiver = dotted(func.value)
            if receiver:
                self.placed.add(receiver)  # ``model.cuda()``: a module moves in place
            return
        if func.attr != "load_state_dict" or not self.on_device(func.value):
            return
        for keyword in call.keywords:
            if keyword.arg == "assign" and not (
                isinstance(keyword.value, ast.Constant) and keyword.value.value is False
            ):
                return  # the loaded tensors become the parameters: another question
        state = next((k.value for k in call.keywords if k.arg == "state_dict"), None)
        if state is None and call.args and not isinstance(call.args[0], ast.Starred):
            state = call.args[0]
        while isinstance(state, ast.Subscript):
            state = state.value
        if isinstance(state, ast.Call):
            self.found.setdefault(id(state), set()).add(-1)
        elif isinstance(state, ast.Name) and state.id in self.held:
            held, item = self.held[state.id]
            self.found.setdefault(id(held), set()).add(item)

    def on_device(self, receiver: ast.expr) -> bool:
        """``model`` or ``model.module`` with ``model`` moved before."""
        spelled = dotted(receiver)
        while spelled:
            if spelled in self.placed:
                return True
            spelled = spelled.rpartition(".")[0]
        return False

    def bind(self, target: ast.expr, value: ast.expr | None) -> None:
        name = dotted(target)
        if not name:
            # Read before the names are unbound: ``d[k] = d[k]`` keeps ``d``'s.
            copied = self.held.get(_drawn_name(value)) if value is not None else None
            for sub in ast.walk(target):  # a tuple, a starred or subscripted target
                if isinstance(sub, ast.Name):
                    self.unbind(sub.id)
            self._bind_parts(target, value, copied)
            return
        # The value is read before the name is rebound: ``model =
        # nn.DataParallel(model)`` wraps the model moved before, still there.
        moved = isinstance(value, ast.Call) and _moved_value(value, self.placed) or self._alias(value)
        copied = self.held.get(_drawn_name(value)) if value is not None else None
        self.unbind(name)
        if moved:
            self.placed.add(name)
        if isinstance(value, ast.Call) and "." not in name:
            self.held[name] = (value, -1)
        elif copied is not None and "." not in name:
            # ``weights = new_weights``, ``sd = ckpt["state_dict"]``: the same tensors.
            self.held[name] = copied

    def _bind_parts(self, target: ast.expr, value: ast.expr | None, copied: tuple[ast.Call, int] | None) -> None:
        """``epoch, weights = load_checkpoint(p)``: each plain name holds its
        element of the tuple the call returns; ``d[k] = weights[k]`` (a copy
        key by key, in a loop or not): ``d`` holds ``weights``' tensors."""
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, ast.Call):
            if all(isinstance(elt, ast.Name) for elt in target.elts):
                for i, elt in enumerate(target.elts):
                    assert isinstance(elt, ast.Name)
                    self.held[elt.id] = (value, i)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and copied is not None:
            self.held[target.value.id] = copied

    def _alias(self, value: ast.expr | None) -> bool:
        """``pure_model = model.module if isinstance(model, DataParallel) else
        model`` after ``model.cuda()``: another name for a model moved
        before (or its wrapped ``.module``), in every arm of a conditional."""
        if isinstance(value, ast.IfExp):
            return self._alias(value.body) and self._alias(value.orelse)
        if not isinstance(value, (ast.Name, ast.Attribute)):
            return False
        spelled = dotted(value)
        if spelled.endswith(".module"):
            spelled = spelled[: -len(".module")]
        return bool(spelled) and spelled in self.placed  # ``model.device`` is no alias of ``model``

    def unbind(self, name: str) -> None:
        self.held.pop(name, None)
        self.placed = {p for p in self.placed if p != name and not p.startswith(name + ".")}


def _drawn_name(value: ast.expr) -> str:
    """The plain name ``value`` is, or is a key of (``weights[k]``,
    ``ckpt["state_dict"]``): its tensors, unchanged; "" otherwise."""
    while isinstance(value, ast.Subscript):
        value = value.value
    return value.id if isinstance(value, ast.Name) else ""


# The walk, for gpu_args.py to read the models each call hands over.
PlacedWalk = _Walk


def _moved_value(value: ast.Call, placed: set[str]) -> bool:
    """``nn.DataParallel(model).cuda()``, ``model.to(device)``; or a wrapper
    of a model already moved (``DataParallel(model)``, ``model.half()``)."""
    if is_device_move(value):
        return True
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr in _KEEPS_DEVICE:
        return dotted(func.value) in placed
    if dotted(func).rpartition(".")[2] in _WRAPPERS and value.args:
        return dotted(value.args[0]) in placed
    return False


def is_device_move(call: ast.Call) -> bool:
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr == "cuda":
        return True
    if func.attr != "to":
        return False
    device = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "device"), None)
    if isinstance(device, ast.Constant):
        return isinstance(device.value, str) and device.value.startswith("cuda")
    if isinstance(device, ast.Call) and dotted(device.func).endswith("device"):
        first = device.args[0] if device.args else None
        return not (isinstance(first, ast.Constant) and first.value == "cpu")
    last = dotted(device).rpartition(".")[2].lower() if device is not None else ""
    return any(word in last for word in _DEVICE_WORDS)
