"""The hooks a project's engine class runs by name, and where in its training
loop it runs them.

prototypical-networks' ``protonets/engine.py`` (torchnet's ``Engine`` shape)::

    class Engine(object):
        def train(self, **kwargs):
            ...
            while state['epoch'] < state['max_epoch']:
                self.hooks['on_start_epoch'](state)
                for sample in state['loader']:
                    ...
                    state['optimizer'].step()
                    self.hooks['on_update'](state)
                self.hooks['on_end_epoch'](state)

and a script registers its functions by name (``engine.hooks['on_start_epoch']
= on_start_epoch``): a scheduler stepped in that function runs at the start of
every epoch, before the epoch's optimizer steps (MEM802). The summary keeps,
per hook, its place (``HookPlace``) relative to the optimizer step of the
innermost loop around the hook call that steps one:

- ``epoch_start`` / ``epoch_end``: before / after the inner loop that steps;
- ``iteration_start`` / ``iteration_end``: before / after the step of the
  loop itself.

A hook is called either as ``self.<attr>['<key>'](...)`` or through a
dispatcher method of the class, ``self.hook('<key>', state)`` with ``def
hook(self, name, state): ... self.<attr>[name](state)`` (torchnet's own
``Engine``). The optimizer step is ``<x>.step(...)`` on a receiver named for
an optimizer (``state['optimizer']``, ``self.optimizer``) in the method's own
code. A hook called in no loop that steps, at two places that differ, in a
branch beside the step, or in a nested function (torchnet's closure) has no
place: it is left out, and what runs there is unknown.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable, Iterator
from typing import NamedTuple

from memlint.vocabulary.kinds import Kind, guess_kind_from_name

EPOCH_START, ITERATION_START = "epoch_start", "iteration_start"
EPOCH_END, ITERATION_END = "epoch_end", "iteration_end"
# The places where what a hook does comes before the optimizer step of the
# same iteration of the loop around it.
BEFORE_STEP = frozenset({EPOCH_START, ITERATION_START})

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (*_DEFS, ast.ClassDef, ast.Lambda)


class HookPlace(NamedTuple):
    """``cls``'s method ``method`` calls ``self.<attr>['<key>']`` at ``place``
    (``line``: that call's)."""

    cls: str
    attr: str
    key: str
    place: str
    method: str
    line: int


def hook_call_site(func: ast.expr) -> bool:
    """``func`` is ``self.<attr>[...]`` (the callee of a hook call, or of a
    dispatcher's): the summary walk notes such calls, and engine_hooks
    reads only the classes holding one."""
    return (
        func.__class__ is ast.Subscript
        and func.value.__class__ is ast.Attribute  # type: ignore[attr-defined]
        and func.value.value.__class__ is ast.Name  # type: ignore[attr-defined]
        and func.value.value.id == "self"  # type: ignore[attr-defined]
    )


def engine_hooks(
    tree: ast.Module, lines: Iterable[int] | None = None, stepping: Collection[int] | None = None
) -> list[HookPlace]:
    """The hooks of the module-level classes whose place is known; only the
    classes spanning one of ``lines`` (hook_call_site calls) when given.
    ``stepping``: the ids of the module-level classes holding an optimizer
    step anywhere (optimizer_step), as the summary's walk found them; None:
    each class is walked here."""
    out: list[HookPlace] = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        end = node.end_lineno or node.lineno
        if lines is not None:
            if not any(node.lineno <= line <= end for line in lines):
                continue
        elif not any(n.__class__ is ast.Call and hook_call_site(n.func) for n in ast.walk(node)):  # type: ignore[attr-defined]
            continue
        out.extend(class_hooks(node, None if stepping is None else id(node) in stepping))
    return out


def class_hooks(cls: ast.ClassDef, steps: bool | None = None) -> list[HookPlace]:
    """The hooks of ``cls`` whose place is known. ``steps``: whether it
    holds an optimizer step anywhere, when the caller knows."""
    if not (steps if steps is not None else any(optimizer_step(n) for n in ast.walk(cls))):
        return []  # no step to place a hook around (most classes indexing ``self.layers[i](x)``)
    methods = [s for s in cls.body if isinstance(s, _DEFS)]
    dispatchers = dict(d for m in methods if (d := _dispatcher(m)) is not None)
    places: dict[tuple[str, str], set[str | None]] = {}
    first: dict[tuple[str, str], tuple[str, int]] = {}
    for method in methods:
        if method.name in dispatchers:
            continue
        for call, attr, key in _hook_calls(method, dispatchers):
            place = _place(method, call)
            places.setdefault((attr, key), set()).add(place)
            first.setdefault((attr, key), (method.name, call.lineno))
    out = []
    for (attr, key), found in places.items():
        if len(found) == 1 and None not in found:
            name, line = first[(attr, key)]
            out.append(HookPlace(cls.name, attr, key, found.pop(), name, line))  # type: ignore[arg-type]
    return out


def _dispatcher(method: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, str] | None:
    """(method name, attr) of ``def hook(self, name, ...): ... self.<attr>[name](...)``."""
    params = method.args.posonlyargs + method.args.args
    if len(params) < 2:
        return None
    name = params[1].arg
    for node in _own_nodes(method):
        if isinstance(node, ast.Call) and hook_call_site(node.func):
            index = node.func.slice  # type: ignore[attr-defined]
            if isinstance(index, ast.Name) and index.id == name:
                return method.name, node.func.value.attr  # type: ignore[attr-defined]
    return None


def _hook_calls(method, dispatchers: dict[str, str]) -> Iterator[tuple[ast.Call, str, str]]:
    """(call, attr, key) of each hook call in ``method``'s own code."""
    for node in _own_nodes(method):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if hook_call_site(func):
            key = _text(func.slice)  # type: ignore[attr-defined]
            if key is not None:
                yield node, func.value.attr, key  # type: ignore[attr-defined]
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
            and func.attr in dispatchers
            and node.args
        ):
            key = _text(node.args[0])
            if key is not None:
                yield node, dispatchers[func.attr], key


def _place(method, call: ast.Call) -> str | None:
    """Where ``call`` runs relative to the optimizer step of the innermost
    loop around it that steps one; None when no such loop holds it or the
    order is not certain."""
    chain = _chain(method, call)  # the statements holding the call, outermost first
    if chain is None:
        return None
    for i in range(len(chain) - 2, -1, -1):
        loop = chain[i][0]
        if not isinstance(loop, _LOOPS) or chain[i + 1][1] is not loop.body:
            continue  # not a loop, or the call is in its ``else``: not in an iteration of it
        if not any(_steps(s) for s in loop.body):
            continue
        # Steps only in loops nested in it: an epoch loop around a batch loop.
        nested = not any(
            optimizer_step(n)
            for s in loop.body
            if not isinstance(s, _LOOPS)
            for n in _own_nodes(s, True, through_loops=False)
        )
        return _order(chain[i + 1 :], nested)
    return None


def _order(chain: list[tuple[ast.stmt, list[ast.stmt]]], nested: bool) -> str | None:
    """The call's place in one iteration of the loop whose body holds
    ``chain[0]``: the steps of the statements before it, at each level."""
    for stmt, block in chain:
        index = block.index(stmt)
        if any(_steps(s) for s in block[:index]):
            return EPOCH_END if nested else ITERATION_END
        if not _steps(stmt):
            return EPOCH_START if nested else ITERATION_START
        if isinstance(stmt, _LOOPS):
            return None  # a loop that steps around the call: not this loop's iteration
    return None  # the call is the step's own statement (``opt.step(self.hooks['x'](s))``)


def _chain(method, call: ast.Call) -> list[tuple[ast.stmt, list[ast.stmt]]] | None:
    """The statements from ``method``'s body down to the one holding
    ``call``, each with the block it is in; None when the call is in a
    nested function or a block where order is not plain (an ``else``, a
    handler: beside a step, not before it)."""
    block: list[ast.stmt] = method.body
    chain = []
    while True:
        stmt = next((s for s in block if _holds(s, call)), None)
        if stmt is None:
            return None
        chain.append((stmt, block))
        if isinstance(stmt, _SCOPES):
            return None
        blocks = [
            b
            for b in (
                getattr(stmt, "body", None),
                getattr(stmt, "orelse", None),
                getattr(stmt, "finalbody", None),
                *(h.body for h in getattr(stmt, "handlers", ())),
            )
            if isinstance(b, list)
        ]
        inner = next((b for b in blocks if any(_holds(s, call) for s in b)), None)
        if inner is None:
            return chain  # the call is in this statement's own expressions
        if any(b is not inner and any(_steps(s) for s in b) for b in blocks):
            return None  # ``if a: hook() else: opt.step()``: beside the step, not before it
        block = inner


def _holds(stmt: ast.stmt, call: ast.Call) -> bool:
    return stmt.lineno <= call.lineno <= (stmt.end_lineno or stmt.lineno) and any(n is call for n in ast.walk(stmt))


def _steps(node: ast.AST) -> bool:
    """An optimizer's ``step`` is called in ``node``'s own code."""
    return any(optimizer_step(n) for n in _own_nodes(node, include=True))


def optimizer_step(node: ast.AST) -> bool:
    """``optimizer.step()``, ``self.opt["G"].step()``: a ``step`` called on
    what its name says is an optimizer."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "step"):
        return False
    receiver = node.func.value
    if isinstance(receiver, ast.Subscript):
        name = _text(receiver.slice) or ""
    elif isinstance(receiver, ast.Attribute):
        name = receiver.attr
    else:
        name = getattr(receiver, "id", "")
    return guess_kind_from_name(name) is Kind.OPTIMIZER


def _text(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _own_nodes(node: ast.AST, include: bool = False, through_loops: bool = True) -> Iterator[ast.AST]:
    """The nodes of ``node``'s own code: not those of functions, classes or
    lambdas nested in it (nor of loops, unless ``through_loops``)."""
    todo = [node] if include else list(ast.iter_child_nodes(node))
    while todo:
        current = todo.pop()
        yield current
        if isinstance(current, _SCOPES) and current is not node:
            continue
        if not through_loops and isinstance(current, _LOOPS) and current is not node:
            continue
        todo.extend(ast.iter_child_nodes(current))
