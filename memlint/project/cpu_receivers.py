"""Calls of a weight-loading method on a model still on the CPU (MEM701 across modules).

``model = GNN_graphpred(...); model.from_pretrained(path); model.to(device)``
in chem/finetune.py runs chem/model.py's ``from_pretrained``, which loads
into ``self.gnn`` with ``torch.load`` and no ``map_location``: harmless,
since that model was built on the CPU and has not moved yet. The summary
keeps, per module, the loading names every use of which is such a call
(summary.loading_cpu_uses: ``from_pretrained=model.GNN_graphpred``, the
constructor as spelled after the imports); the project stage trusts them
when each constructor is a class or builder of the project that moves
nothing (index.ProjectIndex._cpu_class) and state_loads.py then treats the
method's ``self`` as a model on the CPU.

A call is proven on ``Python's ast``, per scope, only when:

- the receiver is a plain name bound once in the scope (no other binding of
  any form, no ``global``), by ``name = Ctor(...)`` (``.eval()``-like calls
  chained are fine; no ``device=``, ``**kwargs`` or device move in it);
- the binding's statement sits in a block around the call, with no loop
  between them (each run of the call follows its own binding);
- nothing between the binding and the call names the receiver, no nested
  function, class, lambda or comprehension of the scope names it, the call
  is in none of them, and no ``with ...device(...)`` is around the binding.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from memlint.gate.ast_fields import nodes

Pos = tuple[int, int]

# Calls on a model that return it where it is (``Net().eval()``).
_STAYS = frozenset({"eval", "train", "float", "double", "requires_grad_"})
_NESTED = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
_NESTED_KINDS = frozenset(_NESTED)
# The nodes _bound_otherwise reads (an import for its aliases).
_BINDERS = frozenset(
    {ast.arg, ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef}
    | {ast.ClassDef, ast.ExceptHandler, ast.MatchAs, ast.MatchStar}
)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
# Calls that may place what they are handed on a device (the summary's ``_PLACES``).
_PLACES = frozenset(
    {
        "to",
        "cuda",
        "xpu",
        "mps",
        "to_empty",
        "ipu",
        "npu",
        "prepare",
        "prepare_model",
        "setup",
        "setup_module",
        "initialize",
    }
)


def _start(node: ast.AST) -> Pos:
    return (node.lineno, node.col_offset)  # type: ignore[attr-defined]


def _end(node: ast.AST) -> Pos:
    return (node.end_lineno or node.lineno, node.end_col_offset or 0)  # type: ignore[attr-defined]


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    return _start(outer) <= _start(node) and _end(node) <= _end(outer)


def _blocks(stmt: ast.stmt) -> Iterable[list[ast.stmt]]:
    """The statement lists directly under a compound statement (not a nested scope's)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return
    for field in ("body", "orelse", "finalbody"):
        block = getattr(stmt, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
    for handler in getattr(stmt, "handlers", ()):
        yield handler.body
    for case in getattr(stmt, "cases", ()):
        yield case.body


def _path(body: list[ast.stmt], node: ast.AST) -> list[tuple[list[ast.stmt], int]]:
    """From ``body`` down, each block and the index of its statement holding ``node``."""
    found: list[tuple[list[ast.stmt], int]] = []
    block: list[ast.stmt] | None = body
    while block is not None:
        index = next((i for i, stmt in enumerate(block) if _inside(node, stmt)), None)
        if index is None:
            return []
        found.append((block, index))
        stmt, block = block[index], None
        for inner in _blocks(stmt):
            if any(_inside(node, s) for s in inner):
                block = inner
                break
    return found


def _constructor(value: ast.expr) -> ast.Call | None:
    """``Net(...)`` for ``Net(...).eval()``; None for anything else or a call
    that may place what it builds (``device=``, ``**kwargs``, a move)."""
    call = value
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in _STAYS:
        call = call.func.value  # type: ignore[assignment]
    if not isinstance(call, ast.Call) or isinstance(call.func, ast.Call):
        return None
    if any(k.arg is None or k.arg in ("device", "device_map") for k in call.keywords):
        return None
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    for sub in ast.walk(value):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _PLACES:
            return None
    return call


def _binding(body: list[ast.stmt], receiver: str, call: ast.Call) -> ast.Assign | None:
    """The ``receiver = ...`` statement of the scope's own code before ``call``."""
    todo = list(body)
    while todo:
        stmt = todo.pop()
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == receiver
            and _end(stmt) <= _start(call)
        ):
            return stmt
        for block in _blocks(stmt):
            todo.extend(block)
    return None


def _device_context(stmt: ast.stmt) -> bool:
    """``with torch.device("cuda"):`` (or any context named for a device)."""
    if not isinstance(stmt, (ast.With, ast.AsyncWith)):
        return False
    for item in stmt.items:
        func = item.context_expr.func if isinstance(item.context_expr, ast.Call) else item.context_expr
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if "device" in name.lower():
            return True
    return False


def fresh_receiver(
    body: list[ast.stmt],
    receiver: str,
    call: ast.Call,
    mentions: Sequence[ast.Name],
    nested: Sequence[ast.AST],
) -> ast.Call | None:
    """The constructor call ``receiver`` was bound to when ``call`` (a method
    call on it) runs, proven as the module's docstring says; None if not.
    ``mentions``: every ``Name`` of the receiver in the scope, nested code
    included; ``nested``: the scope's nested functions, classes, lambdas and
    comprehensions. The receiver is bound exactly once in the scope (the
    caller's count)."""
    if any(_inside(call, n) for n in nested):
        return None
    binding = _binding(body, receiver, call)
    if binding is None:
        return None
    built = _constructor(binding.value)
    if built is None:
        return None
    bound_at, called_at = _path(body, binding), _path(body, call)
    if not bound_at or not called_at or len(called_at) < len(bound_at):
        return None
    for (outer, i), (inner, j) in zip(bound_at[:-1], called_at):
        if outer is not inner or i != j or _device_context(outer[i]):
            return None  # the call is not under the binding's block (or the binding runs under a device)
    block, index = bound_at[-1]
    there, later = called_at[len(bound_at) - 1]
    if there is not block or later <= index:
        return None
    if any(isinstance(b[i], _LOOPS) for b, i in called_at[len(bound_at) - 1 :]):
        return None  # a loop between them: a later run follows another run's moves
    # The call's own arguments run before the method does: they count as between.
    after, until = _end(binding), _end(call)
    for name in mentions:
        if after <= _start(name) < until or any(_inside(name, n) for n in nested):
            return None
    return built


def cpu_uses(
    node: ast.AST,
    body: list[ast.stmt],
    candidates: list[tuple[str, str, ast.Call | None]],
    stores: dict[str, int],
    spelling: Callable[[ast.expr], str | None],
) -> tuple[dict[str, set[str]], list[str]]:
    """Of the scope's loading-name uses ``(name, receiver, the call)``
    (``None``: not called): the ones proven on a fresh model (name -> the
    constructors as spelled), and the names of the others."""
    wanted = {receiver for _, receiver, call in candidates if call is not None and stores.get(receiver) == 1}
    mentions: dict[str, list[ast.Name]] = {}
    nested: list[ast.AST] = []
    # ``nnet.load_pretrained_params(p)`` as a statement: the receiver (by id)
    # of a method call whose value is dropped, and the method.
    statement_calls: dict[int, str] = {}
    if wanted:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                if sub.id in wanted:
                    mentions.setdefault(sub.id, []).append(sub)
            elif isinstance(sub, _NESTED) and sub is not node:
                nested.append(sub)
            elif isinstance(sub, ast.Expr) and isinstance(sub.value, ast.Call):
                func = sub.value.func
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in wanted:
                    statement_calls[id(func.value)] = func.attr
    proven: dict[str, set[str]] = {}
    loud: list[str] = []
    for name, receiver, call in candidates:
        built = None
        between: set[str] = set()
        if call is not None and receiver in wanted:
            own = call.func.value  # type: ignore[attr-defined]
            others = []
            for m in mentions.get(receiver, ()):
                if m is own:
                    continue
                method = statement_calls.get(id(m))
                if method is not None and _start(m) < _start(call) and not any(_inside(m, n) for n in nested):
                    between.add(method)  # the index proves it moves nothing (still_between)
                else:
                    others.append(m)
            built = fresh_receiver(body, receiver, call, others, nested)
        spelled = spelling(built.func) if built is not None else None
        if spelled is None:
            loud.append(name)
        else:
            proven.setdefault(name, set()).add(spelled + ("|" + ",".join(sorted(between)) if between else ""))
    return proven, loud


def sets_default_device(tree: ast.Module) -> bool:
    """The module calls ``torch.set_default_device`` (any spelling): a model
    it builds may be on a device from the start."""
    for sub in ast.walk(tree):
        if isinstance(sub, ast.Call):
            func = sub.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) == "set_default_device":
                return True
    return False


def cpu_only_users(
    names: Iterable[str],
    users: Callable[[str], Iterable[tuple[str, list[str]]]],
    cpu_class: Callable[[str, str], bool],
    own_method: Callable[[str, str, str], bool],
    still: Callable[[str], bool] = lambda method: False,
) -> list[str]:
    """ProjectView.loading_cpu_elsewhere: the ``names`` whose every use in
    another module (``users(name)``: each module and its summary's
    loading_cpu_uses) is a proven call on a model built by a class or
    builder that moves nothing (``cpu_class(spelling, module)``), or by a
    class of another module that defines the method itself (``own_method(
    spelling, module, name)``: bio/finetune.py's ``GNN_graphpred`` of
    bio/model.py runs its own ``from_pretrained``, never chem/model.py's).
    An entry ``Ctor|m1,m2`` was proven with statements ``x.m1(...)`` between
    the construction and the call: each must be a method the project defines
    only so that it moves nothing (``still``, method_moves.py)."""
    found = []
    for name in names:
        prefix = name + "="
        seen = False
        for other, entries in users(name):
            spelled = [e[len(prefix) :].partition("|") for e in entries if e.startswith(prefix)]
            if not spelled or not all(
                (cpu_class(s, other) or own_method(s, other, name)) and all(still(m) for m in between.split(",") if m)
                for s, _, between in spelled
            ):
                break
            seen = True
        else:
            if seen:
                found.append(name)
    return sorted(found)


def fresh_args(
    node: ast.AST,
    body: list[ast.stmt],
    calls: Sequence[ast.Call],
    spelling: Callable[[ast.expr], str | None],
) -> dict[int, tuple[tuple[str, str], ...]]:
    """Per call of ``calls`` (by id; calls of the scope into other modules):
    the arguments that are a plain name bound once in the scope to a model
    just built, named nowhere since (``model = HandNet(...)`` then
    ``modelio.load_checkpoint(model, path)``): the mirror of CallSite.built's
    ``f(Net(), path)``, proven as ``fresh_receiver`` proves a receiver, with
    the call's other arguments counted as between. Each as (the parameter,
    ``"0"`` by position or its keyword; the constructor as spelled)."""
    wanted = {a.value.id for call in calls for a in _keyed(call) if isinstance(a.value, ast.Name)}
    if not wanted:
        return {}
    stores: dict[str, int] = {}
    mentions: dict[str, list[ast.Name]] = {}
    nested: list[ast.AST] = []
    # Every node of the scope, as ``ast.walk`` gives them (in another order:
    # what is read here does not depend on it), an import's aliases read
    # from the import (``nodes`` leaves them out).
    for sub in nodes(node):
        kind = sub.__class__
        if kind is ast.Name:
            if sub.id in wanted:  # type: ignore[attr-defined]
                mentions.setdefault(sub.id, []).append(sub)  # type: ignore[attr-defined, arg-type]
                if sub.ctx.__class__ is not ast.Load:  # type: ignore[attr-defined]
                    stores[sub.id] = stores.get(sub.id, 0) + 1  # type: ignore[attr-defined]
            continue
        if kind in _NESTED_KINDS and sub is not node:
            nested.append(sub)
        if kind in _BINDERS:
            parts = sub.names if kind is ast.Import or kind is ast.ImportFrom else (sub,)  # type: ignore[attr-defined]
            for part in parts:
                for name in _bound_otherwise(part):
                    if name in wanted:
                        stores[name] = stores.get(name, 0) + 2  # a parameter, an import, a ``global``: never trusted
    found: dict[int, tuple[tuple[str, str], ...]] = {}
    for call in calls:
        proven: list[tuple[str, str]] = []
        for arg in _keyed(call):
            handed = arg.value
            if not isinstance(handed, ast.Name) or stores.get(handed.id) != 1:
                continue
            others = [m for m in mentions.get(handed.id, ()) if m is not handed]
            built = fresh_receiver(body, handed.id, call, others, nested)
            spelled = spelling(built.func) if built is not None else None
            if spelled is not None:
                proven.append((arg.key, spelled))
        if proven:
            found[id(call)] = tuple(proven)
    return found


class _Keyed(NamedTuple):
    """An argument of a call with its parameter key (``"0"``, or the keyword)."""

    key: str
    value: ast.expr


def _keyed(call: ast.Call) -> list[_Keyed]:
    """``call``'s arguments by key; positions only before any ``*args``."""
    out: list[_Keyed] = []
    for i, a in enumerate(call.args):
        if isinstance(a, ast.Starred):
            break  # the positions after a ``*args`` are unknown
        out.append(_Keyed(str(i), a))
    out.extend(_Keyed(k.arg, k.value) for k in call.keywords if k.arg is not None)
    return out


def _bound_otherwise(sub: ast.AST) -> list[str]:
    """Names ``sub`` binds other than by a ``Name`` target."""
    if isinstance(sub, ast.arg):
        return [sub.arg]
    if isinstance(sub, (ast.Global, ast.Nonlocal)):
        return list(sub.names)
    if isinstance(sub, ast.alias):
        return [(sub.asname or sub.name).split(".")[0]]
    if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler)):
        return [sub.name] if isinstance(sub.name, str) else []
    if isinstance(sub, (ast.MatchAs, ast.MatchStar)):
        return [sub.name] if sub.name else []
    return []


# The same proofs, read by wrapped_args.py for a model wrapped in ``DataParallel``.
NESTED, LOOPS, PLACES = _NESTED, _LOOPS, _PLACES
start_of, end_of, block_path, constructor_call, keyed_args = _start, _end, _path, _constructor, _keyed
