"""Functions and methods one call of which runs a whole pass over data.

PyTorch-RL's ``main_loop`` runs ``agent.collect_samples(min_batch_size)``
then one update per iteration, and frees the CUDA cache at its end:
``Agent.collect_samples`` (core/agent.py) calls its module's
``collect_samples``, whose ``while num_steps < min_batch_size:`` rolls the
policy out for a whole batch of environment steps. An iteration of the
caller's loop is a rollout and an update, not one batch of a loader
(MEM702 through ``LoopAnalysis.outer_loop``, as for a module function of
the linted file that runs a batch loop).

A function *passes* when a loop of its own code names data in its header
(``for x, y in loader``, ``while steps < min_batch_size``, ``for epoch in
...``: DATA_TOKENS) or backpropagates in its body, or when it calls (on
every path or not: as the file's own analysis reads callees) a function of
its module by plain name or, in a method, a method of its class through
``self``, that passes. Read in the summary's walk (summary.py), kept in
``FunctionFacts.passes``; ``typed_objects.TypedObjects.method_passes`` asks
it of every class a receiver may hold.
"""

from __future__ import annotations

import ast

from memlint.gate.ast_fields import nodes
from memlint.vocabulary.tokens import DATA_TOKENS, name_tokens


def names_data(loop: ast.For | ast.AsyncFor | ast.While) -> bool:
    """The loop's header (what it iterates, or its test) names data."""
    header = loop.test if isinstance(loop, ast.While) else loop.iter
    for node in nodes(header):
        if isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, ast.Attribute):
            name = node.attr
        else:
            continue
        if name_tokens(name) & DATA_TOKENS:
            return True
    return False


def self_callee(scope: str, receiver: str, method: str) -> str | None:
    """``self.m(...)`` in the method ``Cls.f``: ``Cls.m``; None elsewhere."""
    if receiver != "self" or scope.count(".") != 1:
        return None
    return f"{scope.partition('.')[0]}.{method}"


def passing(own: dict[str, bool], calls: dict[str, set[str]]) -> set[str]:
    """The scopes that pass: ``own`` says whether a scope's own loops do,
    ``calls`` the module's scopes each calls. Walked back from the callees
    to their callers, each edge once."""
    callers: dict[str, list[str]] = {}
    for name, callees in calls.items():
        for callee in callees:
            callers.setdefault(callee, []).append(name)
    found = {name for name, loops in own.items() if loops}
    todo = list(found)
    while todo:
        for caller in callers.get(todo.pop(), ()):
            if caller not in found:
                found.add(caller)
                todo.append(caller)
    return found
