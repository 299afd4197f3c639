"""Where history.py's walk may meet its first value with history, for the
gate (gate_loops._Values): MEM101 and MEM102 report only values that
``carries_history`` calls ``H.YES``.

Every ``H.YES`` comes, through ``combine``/``computed``/``fresh`` on
history-carrying inputs (operands, arguments, a method's receiver, an
iterable, a container's elements), from one of these *seeds* in the body a
walk evaluates (history._Walker: a function's body, or the module's, never
a class body; a nested function or class is not entered):

- a model call (``call``: ``objects.is_model_call``, ``fresh()``);
- ``torch.func.functional_call`` (``library_call``: ``fresh()``);
- a backward call (``_backward_proves``; ``_proven`` reads the binding that
  reaches a backward in the same function: backward_proof._reaching_binding
  stops at a function), or the return of a Lightning ``training_step``
  (backward_proof._lightning_returns);
- a call that callgraph resolves to a function of the file (``summary``),
  whose own body holds a seed, directly or through its callees.

A walk's parameters start unknown (MAYBE), as do globals, closures and
``self.x`` it never wrote; a loss call, a torch function, a builtin and a
method on a value without history combine their inputs: none of them is a
seed. So in a body with no seed, nor a call to a seeded function, nothing
is ``H.YES``; and a call that is no seed carries history only through its
arguments or its receiver.

``is_model_call`` needs ``kind_of(callee) is Kind.MODULE`` (``x.forward``:
of ``x``), which this module over-approximates from the callee's syntax
(objects.ObjectTable._eval, _key_for_read, _compute_key):

- a name: ``self``, a name some target of the file binds (the definitions
  objects reads), an annotated parameter's (``_param_kind``; another
  parameter is a module only by the name guess), the owner of a
  ``.parameters()``/``.named_parameters()`` call (``_used_as_module``,
  ``_parameters_read``), or one ``guess_kind_from_name`` may call a module;
  an imported name the file never rebinds is a loss or nothing;
- ``self.a``: an attribute some target of the file writes (``self.a = ...``),
  the owner of a ``.parameters()``/``.named_parameters()`` call
  (``_used_as_module``, ``_parameters_read``), or a name the guess may call
  a module;
- another attribute: only ``x.module`` (DataParallel's) may be one.

Everything is wider than the analysis, never narrower: a call written
anywhere in a body counts (a lambda's, a default's, a decorator's), any
function of the file with the callee's name counts.
"""

from __future__ import annotations

import ast
from typing import Any

from memlint.analysis.objects import Kind, guess_kind_from_name
from memlint.parse.ast_fields import CHILDREN

GateFacts = Any  # analysis/gate.GateFacts (no import circle)

# Callees seeding history whatever their arguments, by the last name
# (ast_names.ast_callee): backward calls (training_verbs: ``x.backward()``,
# ``accelerator.backward(l)``, ``torch.autograd.backward(l)``,
# ``self.manual_backward(l)``) and ``functional_call``.
_SEEDING_CALLEES = frozenset({"backward", "manual_backward", "functional_call"})
_PARAMETER_METHODS = ("parameters", "named_parameters")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


class _Body:
    """One body a history walk evaluates (a function's, the module's)."""

    __slots__ = ("name", "calls", "seeded", "parent", "bound")

    def __init__(self, name: str, parent: _Body | None, bound: set[str] | None = None) -> None:
        self.name = name  # "": the module
        self.calls: list[ast.Call] = []
        self.seeded = False
        # The body objects._key_for_read looks in next (the enclosing
        # function's, the module's), and the names that may be module keys
        # here: any target's, an annotated parameter's, the owner of a
        # ``.parameters()`` call.
        self.parent = parent
        self.bound: set[str] = set() if bound is None else bound


class Seeds:
    """The seed facts of one file, computed on first need (one walk)."""

    __slots__ = ("_attrs", "_aliases", "_bodies", "_tree", "_seeded_names")

    def __init__(self, facts: GateFacts) -> None:
        self._tree: ast.Module = facts._tree
        self._aliases: dict[str, str] = facts._aliases
        self._attrs: set[str] = set()  # ``self.a`` that may be a module: written, or ``a.parameters()``'s owner
        self._bodies: dict[int, _Body] | None = None  # by id of the body's statement list
        self._seeded_names: set[str] = set()  # the seeded functions' names

    def seeded(self, body: list[ast.stmt]) -> bool:
        """Some value of the walk over ``body`` (a function's or the
        module's statements) may be ``H.YES``."""
        if self._bodies is None:
            self._bodies = self._collect()
        found = self._bodies.get(id(body))
        return found is None or found.seeded

    def seeds(self, call: ast.Call, body: list[ast.stmt]) -> bool:
        """``call`` may be ``H.YES`` whatever its arguments and receiver:
        a model call, a backward, ``functional_call``, or a call of a
        seeded function of the file."""
        if self._bodies is None:
            self._bodies = self._collect()
        found = self._bodies.get(id(body))
        if found is None or self._direct(call, found):
            return True
        name = _resolvable_name(call.func)
        return name is not None and name in self._seeded_names

    # -- the walk ------------------------------------------------------------
    def _collect(self) -> dict[int, _Body]:
        module = _Body("", None)
        bodies: dict[int, _Body] = {id(self._tree.body): module}
        functions: list[_Body] = []
        attrs = self._attrs
        stack: list[tuple[object, _Body]] = [(stmt, module) for stmt in self._tree.body]
        push, pop, table = stack.append, stack.pop, CHILDREN
        Name, Attribute, Call, Store, arg = ast.Name, ast.Attribute, ast.Call, ast.Store, ast.arg
        while stack:
            node, owner = pop()
            kind = type(node)
            if kind is list:  # a field of a class whose signature was not read
                stack.extend((item, owner) for item in node)  # type: ignore[attr-defined]
                continue
            if kind is Name:
                if type(node.ctx) is Store:  # type: ignore[attr-defined]
                    owner.bound.add(node.id)  # type: ignore[attr-defined]
                continue
            if kind is arg:
                # objects._param_kind: only an annotation (or the name guess) makes a parameter a module.
                if node.annotation is not None:  # type: ignore[attr-defined]
                    owner.bound.add(node.arg)  # type: ignore[attr-defined]
            elif kind is Attribute:
                if type(node.ctx) is Store:  # type: ignore[attr-defined]
                    attrs.add(node.attr)  # type: ignore[attr-defined]
            elif kind is Call:
                owner.calls.append(node)  # type: ignore[arg-type]
                func = node.func  # type: ignore[attr-defined]
                if type(func) is Attribute and func.attr in _PARAMETER_METHODS:
                    owner_of = func.value
                    if type(owner_of) is Attribute:
                        attrs.add(owner_of.attr)
                    elif type(owner_of) is Name:
                        owner.bound.add(owner_of.id)
            elif kind in _FUNCTIONS:
                fn = _Body(node.name, owner)  # type: ignore[attr-defined]
                bodies[id(node.body)] = fn  # type: ignore[attr-defined]
                functions.append(fn)
                for stmt in node.body:  # type: ignore[attr-defined]
                    push((stmt, fn))
                # The parameters (and their defaults: wider) are the
                # function's keys; decorators and the return annotation
                # count in the enclosing body (wider still).
                push((node.args, fn))  # type: ignore[attr-defined]
                for field in ("decorator_list", "returns"):
                    push((getattr(node, field), owner))
                continue
            elif kind is ast.ClassDef:
                # No walk evaluates a class body: its calls seed nothing. Its
                # names count as the enclosing body's (objects binds them in
                # a class inside a function; wider at the module).
                inside = _Body("", owner, owner.bound)
                for stmt in node.body:  # type: ignore[attr-defined]
                    push((stmt, inside))
                for field in ("bases", "keywords", "decorator_list"):
                    push((getattr(node, field), owner))
                continue
            children = table.get(kind)
            if children is None:
                continue  # None, or a scalar
            for field in children.singles:
                push((getattr(node, field), owner))
            for field in children.lists:
                stack.extend((item, owner) for item in getattr(node, field))
        # Direct seeds, then the functions calling a seeded one, to a fixpoint.
        calls: dict[int, set[str]] = {}
        for body in (module, *functions):
            body.seeded = body.name == "training_step" or any(self._direct(c, body) for c in body.calls)
            names = {_resolvable_name(c.func) for c in body.calls}
            names.discard(None)
            calls[id(body)] = names  # type: ignore[assignment]
        seeded_names = {fn.name for fn in functions if fn.seeded}
        changed = True
        while changed:
            changed = False
            for fn in functions:
                if not fn.seeded and calls[id(fn)] & seeded_names:
                    fn.seeded = changed = True
                    seeded_names.add(fn.name)
        module.seeded = module.seeded or bool(calls[id(module)] & seeded_names)
        self._seeded_names = seeded_names
        for fn in (module, *functions):
            fn.calls = []
        return bodies

    def _direct(self, call: ast.Call, body: _Body) -> bool:
        func = call.func
        kind = type(func)
        if kind is ast.Attribute:
            if func.attr in _SEEDING_CALLEES:  # type: ignore[attr-defined]
                return True
            if func.attr == "forward":  # type: ignore[attr-defined]
                func = func.value  # type: ignore[attr-defined]
                kind = type(func)
        elif kind is ast.Name:
            name: str = func.id  # type: ignore[attr-defined]
            if self._aliases.get(name, name) in _SEEDING_CALLEES:
                return True
        return self._may_be_module(func, kind, body)

    def _may_be_module(self, func: ast.AST, kind: type, body: _Body) -> bool:
        if kind is ast.Name:
            name = func.id  # type: ignore[attr-defined]
            if name == "self" or guess_kind_from_name(name) is Kind.MODULE:
                return True
            scope: _Body | None = body
            while scope is not None:
                if name in scope.bound:
                    return True
                scope = scope.parent
            return False
        if kind is ast.Attribute:
            attr = func.attr  # type: ignore[attr-defined]
            receiver = func.value  # type: ignore[attr-defined]
            if type(receiver) is ast.Name and receiver.id == "self":
                return attr in self._attrs or guess_kind_from_name(attr) is Kind.MODULE
            return attr == "module"
        return False


def _resolvable_name(func: ast.AST) -> str | None:
    """The name callgraph would resolve a callee by: ``f`` of ``f()``,
    ``m`` of ``self.m()``/``cls.m()``."""
    kind = type(func)
    if kind is ast.Name:
        return func.id  # type: ignore[attr-defined]
    if kind is ast.Attribute and type(func.value) is ast.Name and func.value.id in ("self", "cls"):  # type: ignore[attr-defined]
        return func.attr  # type: ignore[attr-defined]
    return None
