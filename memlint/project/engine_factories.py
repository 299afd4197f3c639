"""Module-level functions that return an ignite engine whose process function
steps an optimizer.

reid-strong-baseline's ``engine/trainer.py``::

    def create_supervised_trainer(model, optimizer, loss_fn, device=None):
        def _update(engine, batch):
            ...
            loss.backward()
            optimizer.step()
        return Engine(_update)

A module that imports it and steps a scheduler in an ``EPOCH_STARTED``
handler of the engine it returns steps the scheduler before the epoch's
optimizer steps (MEM802, analysis/training/ignite_events.py). The summary
keeps the names of such functions; a caller in another module reads them
through the view (ProjectView.engine_factories). Only a certain shape
counts: every ``return`` is ignite's ``Engine(f)`` (or a name the function
binds once to one) with ``f`` a function defined in its body that calls
``<optimizer>.step()`` (a receiver named for an optimizer).
"""

from __future__ import annotations

import ast

from memlint.project.arg_modes import dotted
from memlint.vocabulary.kinds import Kind, guess_kind_from_name

_ENGINE_MODULES = frozenset({"ignite.engine", "ignite.engine.engine"})


def engine_factories(tree: ast.Module) -> list[str]:
    """The names of the module-level functions that return such an engine."""
    spellings = _engine_spellings(tree)
    if not spellings:
        return []
    return [
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _returns_stepping_engine(node, spellings)
    ]


def _engine_spellings(tree: ast.Module) -> set[str]:
    """How the module spells ignite's ``Engine`` (``Engine``, ``ie.Engine``)."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and not node.level and node.module in _ENGINE_MODULES:
            out.update(a.asname or a.name for a in node.names if a.name == "Engine")
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module == "ignite":
            out.update(f"{a.asname or a.name}.Engine" for a in node.names if a.name == "engine")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in _ENGINE_MODULES:
                    out.add(f"{alias.asname or alias.name}.Engine")
    return out


def _returns_stepping_engine(fn: ast.FunctionDef | ast.AsyncFunctionDef, spellings: set[str]) -> bool:
    nested = {s.name: s for s in fn.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    bound: dict[str, list[ast.expr]] = {}
    returns: list[ast.expr | None] = []
    for node in _own_nodes(fn):
        if isinstance(node, ast.Return):
            returns.append(node.value)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(node.value)
    if not returns:
        return False
    for value in returns:
        if isinstance(value, ast.Name) and len(bound.get(value.id, ())) == 1:
            value = bound[value.id][0]
        if not (isinstance(value, ast.Call) and dotted(value.func) in spellings and value.args):
            return False
        process = value.args[0]
        if not isinstance(process, ast.Name) or process.id not in nested or not _steps(nested[process.id]):
            return False
    return True


def _own_nodes(fn: ast.AST):
    """The nodes of ``fn``'s body, not those of functions, classes or lambdas nested in it."""
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))


def _steps(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``<optimizer>.step()`` somewhere in ``fn``'s own body."""
    for node in _own_nodes(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "step":
            receiver = node.func.value
            name = receiver.attr if isinstance(receiver, ast.Attribute) else getattr(receiver, "id", "")
            if guess_kind_from_name(name) is Kind.OPTIMIZER:
                return True
    return False
