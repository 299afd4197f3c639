"""Project functions that load a state dict they are handed, and those that
return a model they moved to a device.

``load_pretrained_model(snet, checkpoint["net"])`` in train.py runs utils.py's
``model.load_state_dict(model_dict)`` after ``model_dict.update({k: v for k,
v in pretrained_dict.items() if k in model_dict})``: the tensors handed in
reach ``load_state_dict`` unchanged, so a ``torch.load`` without
``map_location`` handed to it doubles the weights on the GPU exactly as an
inline load would, when the receiving model is on a device. The summary of
such a function says which parameter holds the state and which receives it
(``state_params``): another parameter, or ``""`` for a model the function
moved to a device itself (``model = make(...)`` with ``make`` returning a
model it ``.cuda()``-ed). ``returns_on_device`` says a function returns a
model it moved to a device on some path (``if cuda: net =
DataParallel(net).cuda()``, ``return net``): a model a caller binds from it
is on the GPU (where CUDA is asked for).

Read on Python's ``ast`` tree of one module-level function, only for the few
functions that call ``load_state_dict`` or place something on a device.
The state follows key lookups (``sd["model"]``, ``sd.get("model")``),
comprehensions copying every value (``{k[7:]: v for k, v in sd.items()}``),
names bound to those and ``d.update(sd)``; anything else (``v.cpu()``, a
call of unknown effect, the parameter rebound) is not followed. A receiving
parameter rebound, moved (``model.cpu()``) or handed to a call before the
load is not the caller's model any more: not recorded.
"""

from __future__ import annotations

import ast

from memlint.gate.ast_fields import children, nodes
from memlint.project.arg_modes import dotted
from memlint.project.state_copies import copied_params
from memlint.project.state_feeds import is_device_move

# Methods that return the module they are called on, where it is.
_KEEPS = frozenset({"half", "float", "train", "eval", "requires_grad_"})
_WRAPPERS = frozenset({"DataParallel", "DistributedDataParallel"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def state_params(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, gpu_functions: frozenset[str], copies: bool = False
) -> tuple[tuple[str, str], ...]:
    """(state parameter, receiving parameter or ``""`` for a model moved to a
    device here) per ``load_state_dict`` the state parameter reaches; with
    ``copies`` (the function calls ``.copy_(``), also per entry-wise copy
    into a parameter's state (state_copies.py)."""
    args = fn.args
    params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    holds: dict[str, set[str]] = {p: {p} for p in params}
    placed: set[str] = set()
    lost: set[str] = set()  # parameters no longer the caller's model
    found: set[tuple[str, str]] = set()
    for node in _in_order(fn.body):
        if isinstance(node, ast.Assign):
            value = node.value
            for target in node.targets:
                name = target.id if isinstance(target, ast.Name) else ""
                entry_of = _entry_of(target)
                if entry_of:
                    # ``own[k] = sd[k]``: sd's tensors now sit in ``own`` too
                    # (load_matched_state_dict's filtered copy).
                    holds.setdefault(entry_of, set()).update(_sources(value, holds))
                    continue
                if not name:
                    for sub in ast.walk(target):
                        if isinstance(sub, ast.Name):
                            holds.pop(sub.id, None)
                            placed.discard(sub.id)
                            lost.add(sub.id)
                    continue
                holds[name] = _sources(value, holds)
                lost.add(name)
                if _on_device(value, placed, gpu_functions):
                    placed.add(name)
                else:
                    placed.discard(name)
            continue
        if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            for sub in ast.walk(node.target):
                if isinstance(sub, ast.Name):
                    holds.pop(sub.id, None)
                    placed.discard(sub.id)
                    lost.add(sub.id)
            continue
        call = node
        assert isinstance(call, ast.Call)
        func = call.func
        for arg in (*call.args, *(k.value for k in call.keywords)):
            if isinstance(arg, ast.Name):
                lost.add(arg.id)  # handed to a call: it may come back moved
        if not isinstance(func, ast.Attribute):
            continue
        receiver = dotted(func.value)
        if is_device_move(call):
            if receiver:
                placed.add(receiver)
            continue
        if func.attr in ("cpu", "to"):
            lost.add(receiver)
            placed.discard(receiver)
            continue
        if func.attr == "update" and isinstance(func.value, ast.Name) and len(call.args) == 1 and not call.keywords:
            holds.setdefault(func.value.id, set()).update(_sources(call.args[0], holds))
            continue
        if func.attr != "load_state_dict" or not receiver:
            continue
        if any(
            k.arg == "assign" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
            for k in call.keywords
        ):
            continue
        state = next((k.value for k in call.keywords if k.arg == "state_dict"), None)
        if state is None and call.args and not isinstance(call.args[0], ast.Starred):
            state = call.args[0]
        if state is None:
            continue
        if receiver.endswith(".module"):
            receiver = receiver[: -len(".module")]
        if _placed(receiver, placed):
            into = ""
        elif receiver in params and receiver not in lost:
            into = receiver
        else:
            continue
        found.update((p, into) for p in _sources(state, holds) if p in params and p != into)
    if copies:
        found |= copied_params(fn)
    return tuple(sorted(found))


def returns_on_device(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``fn`` returns, on some path, a model it moved to a device: a name it
    moved (``net = DataParallel(net).cuda()``, ``model.cuda()``) and never
    moved back (``.cpu()``, ``.to(...)`` of no device), or a move itself."""
    placed: set[str] = set()
    back: set[str] = set()
    returned: list[ast.expr] = []
    cold = _cold_branches(fn)
    for node in _in_order(fn.body, returns=True, skip=cold):
        if isinstance(node, ast.Return):
            if node.value is not None:
                returned.append(node.value)
                if isinstance(node.value, ast.Call) and _on_device(node.value, placed, frozenset()):
                    return True
            continue
        if isinstance(node, ast.Assign):
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                if _on_device(node.value, placed, frozenset()):
                    placed.add(node.targets[0].id)  # on some path: kept through later rebinds
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            receiver = dotted(node.func.value)
            if is_device_move(node):
                placed.add(receiver)
            elif node.func.attr in ("cpu", "to"):
                back.add(receiver)
    return any(isinstance(v, ast.Name) and v.id in placed and v.id not in back for v in returned)


def returns_builder_result(fn: ast.FunctionDef | ast.AsyncFunctionDef, builders: frozenset[str]) -> bool:
    """``fn`` returns, on some path, what a function of ``builders`` (its
    module's ``returns_on_device`` functions) returned, untouched: SRFBN's
    ``create_model`` is ``net = define_net(opt); return net``, and
    ``define_net`` ends with ``net = nn.DataParallel(net).cuda(); return
    net``. A name also moved back (``.cpu()``, ``.to(...)``) does not count."""
    built: set[str] = set()
    back: set[str] = set()
    returned: list[ast.expr] = []
    for node in _in_order(fn.body, returns=True, skip=_cold_branches(fn)):
        if isinstance(node, ast.Return):
            if node.value is not None:
                returned.append(node.value)
        elif isinstance(node, ast.Assign):
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and _builder_call(node.value, builders):
                built.add(node.targets[0].id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("cpu", "to"):
            back.add(dotted(node.func.value))
    return any(
        _builder_call(v, builders) or isinstance(v, ast.Name) and v.id in built and v.id not in back for v in returned
    )


def _builder_call(value: ast.expr, builders: frozenset[str]) -> bool:
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in builders


def _cold_branches(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[int]:
    """The statements of an ``if`` body run only when a parameter that
    defaults to ``False``/``None``/``0`` is set (``def build(cuda=False)``
    ... ``if cuda: net = net.cuda()``): by default the model stays put."""
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    defaults: dict[str, ast.expr] = dict(zip([a.arg for a in positional][-len(args.defaults) :], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    falsy = {name for name, d in defaults.items() if isinstance(d, ast.Constant) and not d.value}
    if not falsy:
        return frozenset()
    cold: set[int] = set()
    for node in nodes(fn):
        if isinstance(node, ast.If) and any(isinstance(n, ast.Name) and n.id in falsy for n in nodes(node.test)):
            cold.update(id(stmt) for stmt in node.body)
    return frozenset(cold)


def _in_order(body: list[ast.stmt], returns: bool = False, skip: frozenset[int] = frozenset()) -> list[ast.AST]:
    """The calls and assignments of ``body`` (nested scopes and the
    statements ``skip`` names left out) in the order they run: a call
    before the assignment that stores its value."""
    found: list[tuple[tuple[int, int, int], ast.AST]] = []
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES) or id(node) in skip:
            continue
        if isinstance(node, (ast.Call, ast.Assign, ast.AugAssign, ast.AnnAssign)) or (
            returns and isinstance(node, ast.Return)
        ):
            end = (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)
            found.append(((*end, 0 if isinstance(node, ast.Call) else 1), node))
        stack.extend(children(node))
    found.sort(key=lambda item: item[0])
    return [node for _key, node in found]


def _sources(expr: ast.expr, holds: dict[str, set[str]]) -> set[str]:
    """The parameters whose tensors ``expr`` passes on unchanged."""
    while True:
        if isinstance(expr, ast.Subscript):
            expr = expr.value
        elif _is_get(expr):
            expr = expr.func.value  # type: ignore[attr-defined]
        elif isinstance(expr, ast.DictComp) and _copied(expr) is not None:
            expr = _copied(expr)  # type: ignore[assignment]
        else:
            break
    return set(holds.get(expr.id, ())) if isinstance(expr, ast.Name) else set()


def _entry_of(target: ast.expr) -> str:
    """``d`` of a store into one entry, ``d[k] = ...``, ``d`` a name."""
    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
        return target.value.id
    return ""


def _is_get(expr: ast.expr) -> bool:
    """``x.get(key)`` / ``x.pop(key)``, a default allowed: the entry's own tensors."""
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr in ("get", "pop")
        and 1 <= len(expr.args) <= 2
        and not expr.keywords
        and not any(isinstance(a, ast.Starred) for a in expr.args)
    )


def _copied(comp: ast.DictComp) -> ast.expr | None:
    """``X`` of ``{f(k): v for k, v in X.items() if ...}`` (or over
    ``list(X.items())``): every value it keeps is one of X's."""
    if len(comp.generators) != 1 or comp.generators[0].is_async:
        return None
    gen = comp.generators[0]
    target = gen.target
    if not (isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[1], ast.Name)):
        return None
    if not (isinstance(comp.value, ast.Name) and comp.value.id == target.elts[1].id):
        return None
    it = gen.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "list" and len(it.args) == 1:
        it = it.args[0]
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "items" and not it.args:
        return it.func.value
    return None


def _on_device(value: ast.expr, placed: set[str], gpu_functions: frozenset[str]) -> bool:
    """``nn.DataParallel(net).cuda()``, ``net.to(device)``, a function of
    this module returning a model on a device (``make(...)``), or a wrapper
    or a method keeping a model already moved (``DataParallel(model)``)."""
    if not isinstance(value, ast.Call):
        return False
    if is_device_move(value):
        return True
    func = value.func
    if isinstance(func, ast.Name) and func.id in gpu_functions:
        return True
    if isinstance(func, ast.Attribute) and func.attr in _KEEPS:
        return _placed(dotted(func.value), placed)
    if dotted(func).rpartition(".")[2] in _WRAPPERS and value.args:
        return _placed(dotted(value.args[0]), placed)
    return False


def _placed(name: str, placed: set[str]) -> bool:
    while name:
        if name in placed:
            return True
        name = name.rpartition(".")[0]
    return False
