"""The arguments of a call that are models the calling scope put on a device.

``utils.get_ckpt_model(ckpt_path, model, device)`` in run_models.py, after
``model = ODE_RNN(...).to(device)`` in one branch and ``model =
create_LatentODE_model(...)`` (a project function returning a model it moved)
in another: the helper in lib/utils.py loads a checkpoint into its parameter
``model``, which is on a GPU at this call. The helper's own analysis cannot
see that; summary.py keeps it per call site (``CallSite.gpu_args``) and the
index hands it to the helper's module (``Caller.gpu_args``), where MEM701
reports a load drawn into that parameter when every caller passes a model
on a device.

An argument counts when the scope moved the name before the call, in source
order (``model.cuda()``, ``model = DataParallel(model).cuda()``: state_feeds'
walk), or when every binding of the name before the call is such a move or a
call of a function (``create_LatentODE_model(...)``, handed no literal
``False`` / ``None`` / ``0``); those functions are kept with the key, and the
index counts the argument only when each returns a model it moved to a
device (``FunctionFacts.gpu_return``). A name also bound to anything else (a
parameter, a loop variable, a constructor of no such function) says nothing.
"""

from __future__ import annotations

import ast

from memlint.project.arg_modes import argument_keys
from memlint.project.state_feeds import PlacedWalk


def gpu_arg_calls(
    body: list[ast.stmt], placed: frozenset[str] = frozenset()
) -> dict[int, tuple[tuple[str, tuple[ast.Call, ...]], ...]]:
    """Per call of ``body`` (one scope) with such arguments, by id: (the
    parameter key, "0" or the keyword; the calls that bound the name, empty
    when the scope moved it itself). ``placed``: names on a device when the
    scope starts (``self.net``, moved by ``__init__``: init_moves.py)."""
    walk = _ArgWalk()
    walk.placed.update(placed)
    for stmt in body:
        walk.statement(stmt)
    return walk.args


class _ArgWalk(PlacedWalk):
    def __init__(self) -> None:
        super().__init__()
        # Per plain name: the calls of its bindings so far, each a move or a
        # candidate builder; None once it was bound to anything else.
        self.bindings: dict[str, list[ast.Call] | None] = {}
        self.args: dict[int, tuple[tuple[str, tuple[ast.Call, ...]], ...]] = {}
        self.values: set[str] = set()  # names bound to a value here: a call on one is a method, no function

    def call(self, call: ast.Call) -> None:
        found: list[tuple[str, tuple[ast.Call, ...]]] = []
        for key, name in argument_keys(call):
            if name in self.placed:
                found.append((key, ()))
                continue
            builders = self.bindings.get(name)
            if builders:
                found.append((key, tuple(builders)))
        if found:
            self.args[id(call)] = tuple(found)
        super().call(call)

    def bind(self, target: ast.expr, value: ast.expr | None) -> None:
        name = target.id if isinstance(target, ast.Name) else ""
        before = self.bindings.get(name, []) if name else None
        super().bind(target, value)  # unbinds the name first
        self.values.add(name)
        if not name:
            for sub in ast.walk(target):
                if isinstance(sub, ast.Name):
                    self.bindings[sub.id] = None
        elif before is None:
            self.bindings[name] = None
        elif name in self.placed:
            self.bindings[name] = before  # a move: the candidates so far stand
        elif isinstance(value, ast.Call) and _candidate(value) and _root(value.func) not in self.values:
            self.bindings[name] = [*before, value]
        else:
            self.bindings[name] = None

    def unbind(self, name: str) -> None:
        super().unbind(name)
        self.bindings[name] = None


def _root(func: ast.expr) -> str:
    """The name a callee is spelled from: a method of a local value
    (``moved.cpu()``) is no function of the project."""
    while isinstance(func, ast.Attribute):
        func = func.value
    return func.id if isinstance(func, ast.Name) else ""


def _candidate(call: ast.Call) -> bool:
    """A plain call of a named function, handed no literal ``False`` /
    ``None`` / ``0`` (``make(cuda=False)`` may keep the model on the CPU)."""
    if not isinstance(call.func, (ast.Name, ast.Attribute)):
        return False
    values = [*call.args, *(k.value for k in call.keywords)]
    return not any(isinstance(v, ast.Constant) and v.value in (False, None, 0) for v in values)
