"""Plain classes whose construction moves nothing, though other methods may.

CornerNet's ``NetworkFactory`` (a class of ``object``) builds its networks in
``__init__`` and moves them in a ``cuda()`` method the scripts call after
loading (``nnet = NetworkFactory(db); nnet.load_params(i); nnet.cuda()``).
Its code moves, so it is no CPU class (class_moves.py), yet right after
``NetworkFactory(db)`` its models are on the CPU: only ``__init__`` has run.

A call of a loading method proven on a fresh instance (cpu_receivers.py:
nothing names the instance between its construction and the call) runs
only the construction and that method, so for it the class need only be
built on the CPU: ``__init__``, the methods it calls on ``self`` (again) and
the statements of the class body move nothing (class_moves.py judges that
part of the class as it judges a whole one), and every class of the project
it constructs builds on the CPU (class_needs, resolved by index.py). The
loading method itself is read by state_loads.py, from a ``self`` on the CPU.

Only plain classes: an ``nn.Module`` subclass may be moved by whoever holds
it, and its own methods are what class_moves.py reads.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping

from memlint.project.class_moves import class_moves_to_a_device

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def built_on_cpu(
    cls: ast.ClassDef,
    bindings: Mapping[str, str],
    walk: Callable[[ast.AST], list[ast.AST]],
    functions: Callable[[], frozenset[str]] | None = None,
) -> bool:
    """Constructing ``cls`` moves nothing (its other methods may)."""
    return not class_moves_to_a_device(construction(cls, walk), bindings, walk, functions)


def construction(cls: ast.ClassDef, walk: Callable[[ast.AST], list[ast.AST]]) -> ast.ClassDef:
    """``cls`` with only what its construction runs: its statements that are
    no method, ``__init__`` and the methods ``__init__`` calls on its
    instance, again (a method defined twice: every definition)."""
    methods: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    body: list[ast.stmt] = []
    for stmt in cls.body:
        if isinstance(stmt, _FUNCTIONS):
            methods.setdefault(stmt.name, []).append(stmt)
        else:
            body.append(stmt)
    todo = ["__init__"]
    kept: set[str] = set()
    while todo:
        name = todo.pop()
        if name in kept or name not in methods:
            continue
        kept.add(name)
        for method in methods[name]:
            body.append(method)
            todo.extend(_self_calls(method, walk))
    shell = ast.ClassDef(
        name=cls.name, bases=cls.bases, keywords=cls.keywords, body=body, decorator_list=cls.decorator_list
    )
    if hasattr(cls, "type_params"):
        shell.type_params = cls.type_params  # type: ignore[attr-defined]
    return shell


def _self_calls(method: ast.FunctionDef | ast.AsyncFunctionDef, walk: Callable[[ast.AST], list[ast.AST]]) -> set[str]:
    params = (*method.args.posonlyargs, *method.args.args)
    if not params:
        return set()
    this = params[0].arg
    return {
        node.func.attr
        for node in walk(method)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == this
    }
