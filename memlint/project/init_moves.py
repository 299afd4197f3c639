"""The ``self`` attributes a class's ``__init__`` moves to a device before its other methods run.

RESA's ``Runner.__init__`` ends ``self.net = DataParallel(self.net).cuda()``
and then calls ``self.resume()``, which hands ``self.net`` to
``load_network`` of another module: the net is on a GPU at that call,
although ``resume`` moves nothing itself. gpu_args.py reads a method's
calls with these attributes already placed (``CallSite.gpu_args``).

An attribute counts for a method when a top-level statement of ``__init__``
moves it (``self.net = <...>.cuda()``, ``.to(device)``, a wrapper of it,
or ``self.net.cuda()``), no statement of ``__init__`` up to that move calls
the method (``self.resume()``) or a method of the class calling it, no
later statement of ``__init__`` binds it to anything but such a move, no
other method of the class binds it, and nothing in the class moves it to
the CPU (``self.net.cpu()``, ``.to("cpu")``). Methods run after the
constructor (a caller holds the instance only then), so the move stands.
"""

from __future__ import annotations

import ast

from memlint.gate.ast_fields import nodes
from memlint.project.arg_modes import dotted
from memlint.project.state_feeds import is_device_move


def init_placed(cls: ast.ClassDef) -> dict[str, frozenset[str]]:
    """Per method of ``cls`` (by name), the attributes (``"self.net"``)
    ``__init__`` has moved to a device whenever it runs; {} when none."""
    methods = {f.name: f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    init = methods.get("__init__")
    if init is None or sum(1 for f in cls.body if getattr(f, "name", "") == "__init__") != 1:
        return {}
    self_name = init.args.args[0].arg if init.args.args else ""
    if not self_name:
        return {}
    moved: dict[str, int] = {}  # attribute -> the index of the statement moving it
    dropped: set[str] = set()
    calls: list[set[str]] = []  # per statement of __init__: the methods of self it calls
    for i, stmt in enumerate(init.body):
        calls.append(_self_calls(stmt, self_name))
        for node in nodes(stmt):  # the statements ast.walk gives (the order tells nothing here)
            if not isinstance(node, ast.stmt):
                continue
            for attr, is_move in _bound_attrs(node, self_name):
                if is_move and node is stmt:
                    moved.setdefault(attr, i)
                elif attr in moved:
                    dropped.add(attr)  # rebound after the move, or under a branch
    for attr in list(moved):
        if attr in dropped:
            del moved[attr]
    if not moved:
        return {}
    callers: dict[str, set[str]] = {name: _self_calls(fn, _first_param(fn)) for name, fn in methods.items()}
    for name, fn in methods.items():
        if name == "__init__":
            continue
        first = _first_param(fn)
        for node in nodes(fn):
            for attr, _is_move in _bound_attrs(node, first) if isinstance(node, ast.stmt) else ():
                moved.pop(attr, None)
    for node in nodes(cls):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _to_cpu(node):
            receiver = dotted(node.func.value).partition(".")
            moved.pop(receiver[2].partition(".")[0], None)
    out: dict[str, frozenset[str]] = {}
    for name, fn in methods.items():
        if name == "__init__":
            continue
        reaching = {name} | {k for k, called in callers.items() if name in called}
        placed = frozenset(
            f"{_first_param(fn)}.{attr}"
            for attr, at in moved.items()
            if not any(reaching & calls[j] for j in range(at + 1))
        )
        if placed and _first_param(fn):
            out[name] = placed
    return out


def _first_param(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    if any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list):
        return ""
    return fn.args.args[0].arg if fn.args.args else ""


def _self_calls(node: ast.AST, self_name: str) -> set[str]:
    """The methods called on ``self`` in ``node`` (``self.resume()``)."""
    return {
        sub.func.attr
        for sub in nodes(node)
        if isinstance(sub, ast.Call)
        and isinstance(sub.func, ast.Attribute)
        and isinstance(sub.func.value, ast.Name)
        and sub.func.value.id == self_name
    }


def _bound_attrs(stmt: ast.stmt, self_name: str) -> list[tuple[str, bool]]:
    """The attributes of ``self`` the statement binds or moves, each with
    whether it is a move to a device (``self.net = DataParallel(net).cuda()``,
    ``self.net.cuda()``)."""
    out: list[tuple[str, bool]] = []
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value = stmt.value
        move = isinstance(stmt, (ast.Assign, ast.AnnAssign)) and isinstance(value, ast.Call) and is_device_move(value)
        for target in targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self_name:
                    out.append((node.attr, move and node is target))
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and is_device_move(stmt.value):
        func = stmt.value.func
        assert isinstance(func, ast.Attribute)
        receiver = func.value
        if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name):
            if receiver.value.id == self_name:
                out.append((receiver.attr, True))  # ``self.net.cuda()``: moved in place
    return out


def _to_cpu(call: ast.Call) -> bool:
    func = call.func
    assert isinstance(func, ast.Attribute)
    if func.attr == "cpu":
        return True
    if func.attr == "to" and call.args:
        first = call.args[0]
        return isinstance(first, ast.Constant) and first.value == "cpu"
    return False
