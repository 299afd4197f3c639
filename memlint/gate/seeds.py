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
  ``_parameters_read``) or, anywhere in the file, of a ``.load_state_dict()``
  call (``_restored``, which also needs ``.eval()``), or one
  ``guess_kind_from_name`` may call a module;
  an imported name the file never rebinds is a loss or nothing;
- ``self.a``: an attribute some target of the file writes (``self.a = ...``),
  the owner of a ``.parameters()``/``.named_parameters()`` or
  ``.load_state_dict()`` call (``_used_as_module``, ``_parameters_read``,
  ``_restored``), or a name the guess may call a module;
- another attribute: only ``x.module`` (DataParallel's) may be one.

Everything is wider than the analysis, never narrower: a call written
anywhere in a body counts (a lambda's, a default's, a decorator's), any
function of the file with the callee's name counts.

A function whose decorator turns grad off (``@torch.no_grad()``,
``@torch.inference_mode()`` on transformers' ``generate``:
grad_mode.decorator_mode DISABLED, the entry of its recorded walk
(HistoryAnalysis._walk) and of every summary of it) is walked with grad off:
``fresh()`` and ``computed()`` give NO, so a model call, ``functional_call``
and a loss of YES inputs seed nothing; ``_proven`` and the in-place
``_mutation`` change nothing. Its calls of the file's functions are summarised
in its own mode (``summary``: their decorator's mode, else the caller's).
Only a backward still makes YES there (``_backward_proves`` reads no mode),
so such a body is seeded only by a backward call, or a call of a function
seeded by one (to a fixpoint), and a caller of it gets YES from it only
then. This holds where nothing in the file may turn grad back on
(grad_mode.context_mode's ENABLED: ``enable_grad``, ``set_grad_enabled``,
``inference_mode`` with an argument other than ``True``; an UNKNOWN mode's
``fresh()`` is MAYBE, never YES) and the decorator's import is never rebound
(names.ImportTable drops it: no decorator mode then).
"""

from __future__ import annotations

import ast
from typing import Any

from memlint.gate.ast_fields import CHILDREN, PUSHERS
from memlint.gate.ast_names import ast_callee
from memlint.vocabulary.kinds import Kind, guess_kind_from_name

GateFacts = Any  # analysis/gate.GateFacts (no import circle)

# Callees seeding history whatever their arguments, by the last name
# (ast_names.ast_callee): backward calls (training_verbs: ``x.backward()``,
# ``accelerator.backward(l)``, ``torch.autograd.backward(l)``,
# ``self.manual_backward(l)``) and ``functional_call``.
_SEEDING_CALLEES = frozenset({"backward", "manual_backward", "functional_call"})
# The ones that seed under grad off (``_backward_proves``), and the contexts a
# decorator may turn grad off with (gate.decorated_off reads them exactly).
_BACKWARD_CALLEES = frozenset({"backward", "manual_backward"})
_OFF_DECORATORS = frozenset({"no_grad", "inference_mode"})
_PARAMETER_METHODS = ("parameters", "named_parameters")

# What _collect does with a node, and the fields holding its children
# (gate/ast_fields: contexts, operators and aliases hold nothing here), in
# one lookup; anything else met (None, a scalar) has no children.
_NAME, _ATTRIBUTE, _CALL, _ARG, _HANDLER, _FUNCTION, _CLASS, _LIST = range(1, 9)
_SEED_CODES = {
    ast.Name: _NAME,
    ast.Attribute: _ATTRIBUTE,
    ast.Call: _CALL,
    ast.arg: _ARG,
    ast.ExceptHandler: _HANDLER,
    ast.FunctionDef: _FUNCTION,
    ast.AsyncFunctionDef: _FUNCTION,
    ast.ClassDef: _CLASS,
}


class _Table(dict):  # type: ignore[type-arg]
    def __missing__(self, key: type) -> tuple[int, None]:
        return (0, None)


# Node class -> (code, the function pushing its children: ast_fields.PUSHERS).
_SEED_WALK = _Table({cls: (_SEED_CODES.get(cls, 0), PUSHERS[cls]) for cls in CHILDREN})
_SEED_WALK[list] = (_LIST, None)


class _Body:
    """One body a history walk evaluates (a function's, the module's)."""

    __slots__ = ("name", "calls", "seeded", "parent", "bound", "off")

    def __init__(self, name: str, parent: _Body | None, bound: set[str] | None = None) -> None:
        self.name = name  # "": the module
        self.calls: list[ast.Call] = []
        self.seeded = False
        self.off = False  # walked with grad off (see the module docstring)
        # The body objects._key_for_read looks in next (the enclosing
        # function's, the module's), and the names that may be module keys
        # here: any target's, an annotated parameter's, the owner of a
        # ``.parameters()`` call.
        self.parent = parent
        self.bound: set[str] = set() if bound is None else bound


class Seeds:
    """The seed facts of one file, computed on first need (one walk)."""

    __slots__ = ("_attrs", "_aliases", "_bodies", "_tree", "_seeded_names", "_backward_names", "_facts")

    def __init__(self, facts: GateFacts) -> None:
        self._facts: GateFacts | None = facts  # until the walk
        self._tree: ast.Module = facts._tree
        self._aliases: dict[str, str] = facts._aliases
        self._attrs: set[str] = set()  # ``self.a`` that may be a module: written, or ``a.parameters()``'s owner
        self._bodies: dict[int, _Body] | None = None  # by id of the body's statement list
        self._seeded_names: set[str] = set()  # the seeded functions' names
        self._backward_names: set[str] = set()  # those seeded with grad off: by a backward

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
        if found is None:
            return True
        name = _resolvable_name(call.func)
        if found.off:
            return self._backward(call) or (name is not None and name in self._backward_names)
        if self._direct(call, found):
            return True
        return name is not None and name in self._seeded_names

    # -- the walk ------------------------------------------------------------
    def _collect(self) -> dict[int, _Body]:
        module = _Body("", None)
        bodies: dict[int, _Body] = {id(self._tree.body): module}
        functions: list[_Body] = []
        attrs = self._attrs
        candidates: list[tuple[_Body, list[ast.expr]]] = []  # decorated with a grad-off name
        params: set[str] = set()  # every parameter and handler name: they rebind an import too
        # One body at a time (a function's, the module's, a class's): its
        # nodes need no owner each, and a def or class met hands its body on.
        work: list[tuple[list[Any], _Body]] = [(self._tree.body, module)]
        table = _SEED_WALK
        Store, Attribute, Name = ast.Store, ast.Attribute, ast.Name
        while work:
            nodes, owner = work.pop()
            bound, owner_calls = owner.bound, owner.calls
            stack = list(nodes)
            push, extend, pop = stack.append, stack.extend, stack.pop
            while stack:
                node = pop()
                code, pusher = table[type(node)]
                if code == _NAME:
                    if type(node.ctx) is Store:
                        bound.add(node.id)
                    continue
                if code:
                    if code == _ATTRIBUTE:
                        if type(node.ctx) is Store:
                            attrs.add(node.attr)
                    elif code == _CALL:
                        owner_calls.append(node)
                        func = node.func
                        if type(func) is Attribute and func.attr in _PARAMETER_METHODS:
                            owner_of = func.value
                            if type(owner_of) is Attribute:
                                attrs.add(owner_of.attr)
                            elif type(owner_of) is Name:
                                bound.add(owner_of.id)
                        elif type(func) is Attribute and func.attr == "load_state_dict":
                            # objects._restored: with ``.eval()`` on it too, a module
                            # (keyed where the name is defined: the module's set is
                            # seen from every body, wider).
                            owner_of = func.value
                            if type(owner_of) is Attribute:
                                attrs.add(owner_of.attr)
                            elif type(owner_of) is Name:
                                module.bound.add(owner_of.id)
                    elif code == _ARG:
                        params.add(node.arg)
                        # objects._param_kind: only an annotation (or the name guess) makes a parameter a module.
                        if node.annotation is not None:
                            bound.add(node.arg)
                    elif code == _HANDLER:
                        if node.name:
                            params.add(node.name)
                    elif code == _FUNCTION:
                        fn = _Body(node.name, owner)
                        bodies[id(node.body)] = fn
                        functions.append(fn)
                        decorators = node.decorator_list
                        if decorators and any(self._off_name(d) for d in decorators):
                            candidates.append((fn, decorators))
                        # The parameters (and their defaults: wider) are the
                        # function's keys; decorators and the return annotation
                        # count in the enclosing body (wider still).
                        work.append(([node.args, *node.body], fn))
                        extend(decorators)
                        if node.returns is not None:
                            push(node.returns)
                        continue
                    elif code == _CLASS:
                        # No walk evaluates a class body: its calls seed nothing. Its
                        # names count as the enclosing body's (objects binds them in
                        # a class inside a function; wider at the module).
                        work.append((node.body, _Body("", owner, bound)))
                        extend(node.bases)
                        extend(node.keywords)
                        extend(node.decorator_list)
                        continue
                    elif code == _LIST:  # a field of a class whose signature was not read
                        extend(node)
                        continue
                if pusher is not None:  # a None child it pushes is popped as a node without any
                    pusher(node, push, extend)
        if candidates:
            stores: set[str] = set()
            for body in (module, *functions):
                stores |= body.bound  # every name a target binds (and a few more: wider)
            self._mark_off(candidates, params, stores)
        self._facts = None
        # Direct seeds, then the functions calling a seeded one, to a fixpoint:
        # first with grad off (only a backward seeds: what an off body, and any
        # function it calls, may give), then for the bodies walked with grad on.
        calls: dict[int, set[str]] = {}
        for body in (module, *functions):
            names = {_resolvable_name(c.func) for c in body.calls}
            names.discard(None)
            calls[id(body)] = names  # type: ignore[assignment]
        backward = {id(fn): fn.name == "training_step" or any(map(self._backward, fn.calls)) for fn in functions}
        backward_names = _close(functions, calls, backward, False)
        seeded: dict[int, bool] = {}
        for fn in functions:
            if fn.off:
                seeded[id(fn)] = backward[id(fn)]
            else:
                seeded[id(fn)] = fn.name == "training_step" or any(self._direct(c, fn) for c in fn.calls)
        seeded_names = _close(functions, calls, seeded, True)
        for fn in functions:
            fn.seeded = seeded[id(fn)]
        module.seeded = any(self._direct(c, module) for c in module.calls) or bool(calls[id(module)] & seeded_names)
        self._seeded_names = seeded_names
        self._backward_names = backward_names
        for fn in (module, *functions):
            fn.calls = []
        return bodies

    def _mark_off(self, candidates: list[tuple[_Body, list[ast.expr]]], params: set[str], stores: set[str]) -> None:
        """Set ``off`` on the candidates whose walk surely starts with grad
        off and that nothing in the file may turn back on (see the module
        docstring)."""
        facts = self._facts
        if _may_turn_grad_on(facts):
            return
        rebound = params | stores | facts.def_names | facts._classes  # type: ignore[union-attr]
        for fn, decorators in candidates:
            heads: set[str] = set()
            fn.off = facts.decorated_off(decorators, heads) and not heads & rebound  # type: ignore[union-attr]

    def _off_name(self, decorator: ast.expr) -> bool:
        func = decorator.func if type(decorator) is ast.Call else decorator  # type: ignore[attr-defined]
        return ast_callee(func, self._aliases) in _OFF_DECORATORS

    def _backward(self, call: ast.Call) -> bool:
        """A call that seeds even with grad off: ``_backward_proves``."""
        return ast_callee(call.func, self._aliases) in _BACKWARD_CALLEES

    def _direct(self, call: ast.Call, body: _Body) -> bool:
        func = call.func
        kind = type(func)
        if kind is ast.Attribute:
            if func.attr in _SEEDING_CALLEES:  # type: ignore[attr-defined]
                return True
            if func.attr in ("forward", "__call__"):  # type: ignore[attr-defined]
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


def _close(functions: list[_Body], calls: dict[int, set[str]], seeded: dict[int, bool], skip_off: bool) -> set[str]:
    """Mark in ``seeded`` (by id) the functions calling a seeded one by name,
    to a fixpoint (``off`` ones left as they are when ``skip_off``); the
    seeded functions' names."""
    names = {fn.name for fn in functions if seeded[id(fn)]}
    todo = [fn for fn in functions if not seeded[id(fn)] and not (skip_off and fn.off)]
    changed = True
    while changed:
        changed = False
        for fn in todo:
            if not seeded[id(fn)] and calls[id(fn)] & names:
                seeded[id(fn)] = changed = True
                names.add(fn.name)
    return names


def _may_turn_grad_on(facts: GateFacts) -> bool:
    """Something in the file grad_mode.context_mode may read as ENABLED (a
    ``with`` item, a decorator, ``enter_context``'s argument, a bare
    ``set_grad_enabled`` statement, a name bound to one): ``enable_grad``,
    ``set_grad_enabled`` (``torch._C._set_grad_enabled`` too), or
    ``inference_mode`` called with anything but nothing or ``True``."""
    idents = facts.idents
    if "enable_grad" in idents or any(i.endswith("set_grad_enabled") for i in idents):
        return True
    aliases = facts._aliases
    for call in facts._calls:
        if ast_callee(call.func, aliases) == "inference_mode":
            args = [*call.args, *(k.value for k in call.keywords)]
            if args and not (len(args) == 1 and type(args[0]) is ast.Constant and args[0].value is True):
                return True
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
