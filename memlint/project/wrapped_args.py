"""Models handed to another module's loader wrapped in ``DataParallel`` and
never moved (MEM701 across modules): obman_train's traineval.py builds
``model = HandNet(...)``, wraps it (``model = torch.nn.DataParallel(model)``)
and hands it to ``modelio.load_checkpoint(model, path)`` before
``model.cuda()``.

``DataParallel`` moves the module to ``cuda:0`` when one GPU is visible and
leaves it on the CPU with several: where the model is at the load depends on
the machine. The checkpoint the helper loads is its own local and is freed
when it returns, before the caller moves anything: on no machine is it a GPU
copy beside the moved model (bts' ``checkpoint = torch.load(p)``, kept in
the same scope until ``model.cuda()``, is one on every machine, and stays
reported). Precision first: such an argument counts as a model not known on
a device (CallSite.built with ``WRAPPED`` as its constructor).

Proven on Python's ``ast``, per call, for a plain name argument ``a``:

- ``a``'s last binding before the call, in a block around it with no loop
  between, is ``a = DataParallel(x)`` (any spelling ending in
  ``DataParallel``: not ``DistributedDataParallel``), one positional
  argument ``x``, a plain name, no keyword (``device_ids`` picks devices);
- ``x`` is bound in the scope from a call that places nothing (no
  ``device=``, no ``.cuda()``/``.to()`` in it), not a parameter;
- no call in the scope before this one moves ``a``, ``x`` or a part of them
  (``.cuda()``, ``.to()``, ``accelerator.prepare``...), nor is any other
  binding of ``a`` between the wrapper and the call.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from memlint.project.arg_modes import dotted
from memlint.project.cpu_receivers import LOOPS as _LOOPS
from memlint.project.cpu_receivers import NESTED as _NESTED
from memlint.project.cpu_receivers import PLACES as _PLACES
from memlint.project.cpu_receivers import block_path as _path
from memlint.project.cpu_receivers import constructor_call as _constructor
from memlint.project.cpu_receivers import end_of as _end
from memlint.project.cpu_receivers import keyed_args as _keyed
from memlint.project.cpu_receivers import start_of as _start

WRAPPED = "<DataParallel>"
# Beside a proven argument, every key the call passes (``*``: some are
# unknown): a parameter it leaves out takes its default (Caller.omits).
PASSED = "<passed>"


def wrapped_args(
    node: ast.AST, body: list[ast.stmt], calls: Sequence[ast.Call]
) -> dict[int, tuple[tuple[str, str], ...]]:
    """Per call of ``calls`` (by id): the arguments proven as the module's
    docstring says, each as (its key, ``WRAPPED``)."""
    wanted = {a.value.id for call in calls for a in _keyed(call) if isinstance(a.value, ast.Name)}
    if not wanted:
        return {}
    assigns: dict[str, list[ast.Assign]] = {}
    other_stores: dict[str, list[ast.AST]] = {}
    params: set[str] = set()
    moves: list[tuple[str, ast.Call]] = []  # (the moved name's root, the call)
    nested: list[ast.AST] = []
    for sub in ast.walk(node):
        if isinstance(sub, _NESTED) and sub is not node:
            nested.append(sub)
        elif isinstance(sub, ast.arg):
            params.add(sub.arg)
        elif isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name):
            assigns.setdefault(sub.targets[0].id, []).append(sub)
        elif isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
            other_stores.setdefault(sub.id, []).append(sub)
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _PLACES:
            # ``model.cuda()``, ``model.base.to(d)``, ``accelerator.prepare(model)``.
            for placed in (sub.func.value, *sub.args, *(k.value for k in sub.keywords)):
                root = placed
                while isinstance(root, (ast.Attribute, ast.Subscript)):
                    root = root.value
                if isinstance(root, ast.Name):
                    moves.append((root.id, sub))
    found: dict[int, tuple[tuple[str, str], ...]] = {}
    for call in calls:
        if any(_inside(call, n) for n in nested):
            continue
        keyed = _keyed(call)
        wrapped: dict[str, str] = {}
        for arg in keyed:
            if isinstance(arg.value, ast.Name):
                inner = _wrapped_here(arg.value.id, call, body, assigns, other_stores, params, moves)
                if inner is not None:
                    wrapped[arg.key] = inner
        if not wrapped:
            continue
        models = set(wrapped.values())
        proven = [(key, WRAPPED) for key in wrapped]
        proven += [
            (arg.key, WRAPPED)
            for arg in keyed
            if arg.key not in wrapped
            and isinstance(arg.value, ast.Name)
            and _optimizer_of(arg.value.id, models, assigns, other_stores, params)
        ]
        unknown = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
        proven += [("*", PASSED)] if unknown else [(arg.key, PASSED) for arg in keyed]
        found[id(call)] = tuple(proven)
    return found


def _optimizer_of(
    name: str,
    models: set[str],
    assigns: dict[str, list[ast.Assign]],
    other_stores: dict[str, list[ast.AST]],
    params: set[str],
) -> bool:
    """``name`` is bound in the scope only to ``torch.optim`` optimizers
    built over the parameters of one of ``models`` (the names the wrappers
    handed with it wrap), directly or through a local name bound once
    (``model_params = filter(..., model.parameters())``): its state goes
    where those parameters are."""
    bound = assigns.get(name, [])
    if name in params or not bound or len(bound) != len(other_stores.get(name, [])):
        return False  # bound otherwise too (a loop target, a parameter)
    # ``if args.optimizer == "adam": optimizer = torch.optim.Adam(...) else: ... SGD(...)``
    return all(_optimizer_over(a.value, models, assigns, other_stores, params) for a in bound)


def _optimizer_over(
    value: ast.expr,
    models: set[str],
    assigns: dict[str, list[ast.Assign]],
    other_stores: dict[str, list[ast.AST]],
    params: set[str],
) -> bool:
    if not (isinstance(value, ast.Call) and "optim" in dotted(value.func).split(".")):
        return False
    seen: set[str] = set()
    todo = [*value.args, *(k.value for k in value.keywords)]
    while todo:
        part = todo.pop()
        for sub in ast.walk(part):
            if isinstance(sub, ast.Name) and sub.id not in seen:
                seen.add(sub.id)
                if sub.id in models:
                    return True
                local = assigns.get(sub.id, [])
                if len(local) == 1 and len(other_stores.get(sub.id, [])) == 1 and sub.id not in params:
                    todo.append(local[0].value)
    return False


def _wrapped_here(
    name: str,
    call: ast.Call,
    body: list[ast.stmt],
    assigns: dict[str, list[ast.Assign]],
    other_stores: dict[str, list[ast.AST]],
    params: set[str],
    moves: list[tuple[str, ast.Call]],
) -> str | None:
    """The name ``name``'s wrapper wraps, when proven (see the module's doc)."""
    if name in params:
        return None
    before = [a for a in assigns.get(name, ()) if _end(a) <= _start(call)]
    if not before:
        return None
    binding = max(before, key=_start)
    inner = _wrapped_model(binding.value)
    if inner is None or inner in params:
        return None
    # Every other store of the name (a loop target, an augmented assignment)
    # falls outside the stretch from the wrapper to the call.
    for store in other_stores.get(name, ()):
        if not any(store is t for a in assigns.get(name, ()) for t in a.targets):
            if _start(binding) <= _start(store) <= _start(call):
                return None
    built = [a for a in assigns.get(inner, ()) if _end(a) <= _start(binding)]
    if not built or any(_constructor(a.value) is None for a in built):
        return None
    if any(n in (name, inner) and _start(m) < _start(call) for n, m in moves):
        return None
    bound_at, called_at = _path(body, binding), _path(body, call)
    if not bound_at or not called_at or len(called_at) < len(bound_at):
        return None
    for (outer, i), (there, j) in zip(bound_at[:-1], called_at):
        if outer is not there or i != j:
            return None
    block, index = bound_at[-1]
    there, later = called_at[len(bound_at) - 1]
    if there is not block or later <= index:
        return None
    if any(isinstance(b[i], _LOOPS) for b, i in called_at[len(bound_at) - 1 :]):
        return None
    return inner


def _wrapped_model(value: ast.expr) -> str | None:
    """``x`` for ``torch.nn.DataParallel(x)`` with no other argument."""
    if not isinstance(value, ast.Call) or value.keywords or len(value.args) != 1:
        return None
    func = value.func
    spelled = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    arg = value.args[0]
    return arg.id if spelled == "DataParallel" and isinstance(arg, ast.Name) else None


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    return _start(outer) <= _start(node) and _end(node) <= _end(outer)
