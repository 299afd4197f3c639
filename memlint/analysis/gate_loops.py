"""The loop rules' gate, loop by loop (GateFacts.loop_sites).

MEM101, MEM102, MEM703 and MEM201 report a statement or a loop only where
loops.LoopAnalysis calls a loop a batch loop (or an evaluation loop), and the
file-level facts ("a loop exists", "some iterable names data") say nothing
about WHICH loop holds the statement: ``for i in range(batch_size):`` in one
function opened the gate for ``all_hidden_states += (h,)`` in another. This
walk ties each rule's statement to the loops around it, in the same
function, exactly as the rules' analyses do, and over-approximates only the
facts ``ast`` cannot see:

- a loop *may be a batch loop* (LoopInfo.is_batch_loop) when its iterable
  names data, the file trains (a backward or a step anywhere: LoopInfo.trains
  follows calls) or switches a model to eval (the eval role's last mode
  call), its function is named for evaluation, or its iterable names a
  parameter of its function while some call of that function's name passes
  an argument named for validation data (``_iterates_eval_argument``);
- MEM101/MEM102's statement is carried across a batch loop
  (LoopAnalysis.carried_across) when a loop around it in its own function
  may be one, or, for ``self.x`` or a name not local to its function (the
  same locals as loops._local_names, never more), when the function's name is
  called in the file and some loop may be a batch loop (batch_loop_calling
  follows callers), or in a ``training_step`` (carried_by_framework);
- MEM703's move sits in the body of its innermost loop (its _enclosing_loop
  stops at a function, lambda or class), and that loop may run per batch
  (_per_batch: a loader, the file's training verbs, the eval role) or per
  sample (``SAMPLE_TOKENS``);
- MEM201 needs evidence of evaluation: an eval call or training in the file
  (mode_before, training_guards), ``volatile=``, a loop or comprehension in a
  function named for evaluation or over data named for it, or a loop that
  may iterate an evaluation argument.

Every fact here is necessary, never a guess: tests/test_analysis_gate.py and
tests/test_gate.py hold the rules' examples to it, bench/gate_soundness.py
real corpora.
"""

from __future__ import annotations

import ast
from typing import Any

from memlint.analysis.ast_names import ast_callee, ast_dotted, ast_tokens
from memlint.analysis.loops import DATA_TOKENS, EVAL_DATA_TOKENS, EVAL_FUNCTION_TOKENS, SAMPLE_TOKENS, name_tokens

# analysis/gate.GateFacts, which imports this module (tests/test_layout.py
# allows no import circle, not even under TYPE_CHECKING).
GateFacts = Any

# MEM102's ``_ADDERS``: ``x.append(v)`` and friends as a statement.
ADDERS = frozenset({"append", "extend", "insert", "appendleft", "add"})
# MEM102's ``_concatenates``: ``x = torch.cat((x, v))``, by the callee's last name.
_CONCATENATORS = frozenset({"cat", "concat", "concatenate", "stack", "vstack", "hstack"})
_ACCUMULATING_OPS = (ast.Add, ast.Sub, ast.Div)  # mem101._accumulates: ``a + x``, ``(a * n + x) / (n + 1)``
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPREHENSIONS = (ast.ListComp, ast.GeneratorExp)  # the comprehensions MEM201 visits

ACCUMULATES, STORES = 0, 1  # MEM101's and MEM102's statements


class LoopSites:
    """What the walk found; see the module docstring."""

    __slots__ = ("accumulates", "stores", "moves", "evaluates")

    def __init__(self) -> None:
        self.accumulates = False  # MEM101: an accumulation a batch loop may carry
        self.stores = False  # MEM102: a store a batch loop may carry
        self.moves = False  # MEM703: ``.to(``/``.cuda(`` in the body of a loop that may run per batch or sample
        self.evaluates = False  # MEM201: some evidence of evaluation


class _Scope:
    """A function (or the module, or a class body inside a function: its
    names are not the function's locals) as loops.LoopAnalysis scopes it."""

    __slots__ = ("name", "function", "eval_named", "params", "locals", "declared", "pending", "owner", "method_body")

    def __init__(self, name: str | None, owner: _Scope | None = None) -> None:
        self.name = name  # None: the module
        self.function = name is not None
        self.eval_named = name is not None and bool(name_tokens(name) & EVAL_FUNCTION_TOKENS)
        self.params: set[str] = set()  # parameters an argument may bind (bound_params)
        # loops._local_names, before ``global``/``nonlocal``; a class body's
        # own, which are not its function's.
        self.locals: set[str] = set()
        self.declared: set[str] = set()
        # Statements no loop around them may carry: (kind, root name, through an attribute)
        self.pending: list[tuple[int, str, bool]] = []
        # The function whose pending these are; None: this scope itself (not
        # ``self``: a reference cycle, left to the cyclic collector).
        self.owner = owner
        self.method_body = False  # a class body: its functions are methods


class _Loop:
    __slots__ = ("batch", "per_batch_or_sample")

    def __init__(self, batch: bool, per_batch_or_sample: bool) -> None:
        self.batch = batch
        self.per_batch_or_sample = per_batch_or_sample


def loop_sites(facts: GateFacts) -> LoopSites:
    """See the module docstring. One walk over the statements (expressions
    are read only where a statement needs them: most nodes of a file are
    expressions), with each statement's function, its innermost loop (for
    MEM703) and whether a loop around it may be a batch loop."""
    out = LoopSites()
    trains_or_eval = facts.trains or facts.eval_call
    loader = facts.names_loader or "DataLoader" in facts.idents
    out.evaluates = trains_or_eval or "volatile" in facts.keywords or facts.eval_comprehension
    aliases = facts._aliases
    # Per function name, computed on first need: a call of it passes an argument named for evaluation.
    eval_arguments: dict[str, bool] = {}
    calls_by_name: dict[str, list[ast.Call]] = {}
    any_batch = False
    scopes: list[_Scope] = []
    methods: set[int] = set()  # functions right in a class body: ``self`` is never bound by an argument
    module = _Scope(None)
    stack: list[tuple[ast.AST, _Scope, _Loop | None, bool]] = [
        (stmt, module, None, False)
        for stmt in facts._tree.body  # type: ignore[attr-defined]
    ]
    push, pop = stack.append, stack.pop
    while stack:
        node, scope, inner, carried = pop()
        kind = type(node)
        # Expressions, read only for a move in a loop that may run per batch
        # (MEM703) or a comprehension in a function named for evaluation
        # (MEM201's comprehension_is_eval; its iterables are facts.eval_comprehension).
        moves = inner is not None and inner.per_batch_or_sample and not out.moves
        comprehensions = scope.eval_named and not out.evaluates
        if moves or comprehensions:
            _read_expressions(node, out, moves, comprehensions)
        if kind is ast.For or kind is ast.AsyncFor or kind is ast.While:
            iterable = node.test if kind is ast.While else node.iter  # type: ignore[attr-defined]
            tokens, idents = ast_tokens(iterable)
            evaluates = scope.eval_named or bool(tokens & EVAL_DATA_TOKENS)
            if not evaluates and idents & scope.params:
                name = scope.name or ""
                if name not in eval_arguments:
                    eval_arguments[name] = _eval_argument(facts, name, calls_by_name)
                evaluates = eval_arguments[name]
            batch = trains_or_eval or evaluates or bool(tokens & DATA_TOKENS)
            any_batch = any_batch or batch
            out.evaluates = out.evaluates or evaluates
            loop = _Loop(batch, trains_or_eval or loader or evaluates or bool(tokens & SAMPLE_TOKENS))
            if kind is not ast.While:
                scope.locals.update(_flat_names(node.target))  # type: ignore[attr-defined]
            for child in node.body:  # type: ignore[attr-defined]
                push((child, scope, loop, carried or batch))
            for child in node.orelse:  # type: ignore[attr-defined]
                push((child, scope, inner, carried))  # runs after the iterations
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            fn = _Scope(node.name)  # type: ignore[attr-defined]
            scopes.append(fn)
            args = node.args  # type: ignore[attr-defined]
            positional = [a.arg for a in (*args.posonlyargs, *args.args)]
            names = {*positional, *(a.arg for a in args.kwonlyargs)}
            names.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
            fn.locals |= names
            if id(node) in methods and positional and positional[0] in ("self", "cls"):
                names.discard(positional[0])  # callgraph resolves a method only as ``self.m(...)``
            fn.params = names
            if fn.eval_named and not out.evaluates:
                # Decorators and defaults: libcst's scope_of puts them in the function.
                _read_expressions(node, out, False, True)
            for child in node.body:  # type: ignore[attr-defined]
                push((child, fn, None, False))
        elif kind is ast.ClassDef:
            methods.update(id(s) for s in node.body if type(s) in _FUNCTIONS)  # type: ignore[attr-defined]
            body = _Scope(scope.name, scope.owner or scope) if scope.function else _Scope(None)
            body.function = scope.function
            body.eval_named, body.params = scope.eval_named, scope.params
            # carried_across's loop_of walks through a class, MEM703's _enclosing_loop stops there.
            for child in node.body:  # type: ignore[attr-defined]
                push((child, body, None, carried))
        elif kind is ast.Assign:
            targets = node.targets  # type: ignore[attr-defined]
            for target in targets:
                scope.locals.update(_flat_names(target))
            if len(targets) == 1:
                target, value = targets[0], node.value  # type: ignore[attr-defined]
                vkind = type(value)
                if type(target) is ast.Subscript:
                    _site(out, STORES, target, scope, carried)
                elif vkind is ast.IfExp or vkind is ast.DictComp or vkind is ast.BinOp:
                    if (vkind is not ast.BinOp or type(value.op) in _ACCUMULATING_OPS) and _mentions(value, target):
                        _site(out, ACCUMULATES, target, scope, carried)
                        _site(out, STORES, target, scope, carried)  # ``lst = lst + [out]``
                elif vkind is ast.Call and ast_callee(value.func, aliases) in _CONCATENATORS:
                    if _mentions(value, target):
                        _site(out, STORES, target, scope, carried)
        elif kind is ast.AugAssign:
            target = node.target  # type: ignore[attr-defined]
            if type(target) is ast.Name:
                scope.locals.add(target.id)
            op = type(node.op)  # type: ignore[attr-defined]
            if op is ast.Add or op is ast.Sub:
                _site(out, ACCUMULATES, target, scope, carried)
                if op is ast.Add and type(node.value) in (ast.List, ast.Tuple):  # type: ignore[attr-defined]
                    _site(out, STORES, target, scope, carried)
        elif kind is ast.AnnAssign:
            if type(node.target) is ast.Name:  # type: ignore[attr-defined]
                scope.locals.add(node.target.id)  # type: ignore[attr-defined]
        elif kind is ast.Global or kind is ast.Nonlocal:
            scope.declared.update(node.names)  # type: ignore[attr-defined]
        elif kind is ast.Expr:
            call = node.value  # type: ignore[attr-defined]
            if type(call) is ast.Call and call.args and type(call.func) is ast.Attribute and call.func.attr in ADDERS:
                _site(out, STORES, call.func.value, scope, carried)
        else:
            # if, with, try, match (and their handlers and cases): their
            # blocks run in the same loops.
            for field in _BLOCKS:
                block = getattr(node, field, None)
                if block:
                    for child in block:
                        push((child, scope, inner, carried))
    # Statements no loop of their own function may carry: a batch loop may
    # call the function (``self.x`` or a name it does not bind), or Lightning
    # calls its ``training_step``.
    called: set[str] | None = None
    for fn in scopes:
        if not fn.pending:
            continue
        if called is None:
            called = _called_names(facts) if any_batch else set()
        runs_per_batch = fn.name in called
        outlived = fn.locals - fn.declared
        for what, root, through in fn.pending:
            attribute_of_self = root == "self" and through
            if (runs_per_batch and (attribute_of_self or root not in outlived)) or (
                fn.name == "training_step" and attribute_of_self
            ):
                if what == ACCUMULATES:
                    out.accumulates = True
                else:
                    out.stores = True
    return out


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _read_expressions(stmt: ast.AST, out: LoopSites, moves: bool, comprehensions: bool) -> None:
    """The expressions of ``stmt`` (not its blocks): a ``.to(``/``.cuda(``
    call (``moves``: in a loop that may run per batch), a comprehension
    (``comprehensions``: in a function named for evaluation). A lambda's
    calls count too: MEM703 stops at a lambda, counting them is only wider."""
    AST = ast.AST
    stack: list[ast.AST] = []
    for field in stmt._fields:
        if field in _BLOCKS:
            continue
        value = getattr(stmt, field, None)
        if type(value) is list:
            stack.extend(item for item in value if isinstance(item, AST))
        elif isinstance(value, AST):
            stack.append(value)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Call and moves:
            func = node.func  # type: ignore[attr-defined]
            if type(func) is ast.Attribute and (func.attr == "to" or func.attr == "cuda"):
                out.moves = True
        elif kind in _COMPREHENSIONS and comprehensions:
            out.evaluates = True
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                stack.extend(item for item in value if isinstance(item, AST))
            elif isinstance(value, AST):
                stack.append(value)


def _site(out: LoopSites, what: int, target: ast.AST, scope: _Scope, carried: bool) -> None:
    """A statement of MEM101 (``what`` ACCUMULATES) or MEM102 (STORES)
    writing ``target``: found now when a loop around it may carry it, else
    kept for the end of the walk (its function's locals are known then)."""
    if out.accumulates if what == ACCUMULATES else out.stores:
        return
    through = False
    while type(target) is ast.Subscript or type(target) is ast.Attribute:
        through = through or type(target) is ast.Attribute
        target = target.value  # type: ignore[attr-defined]
    if type(target) is not ast.Name:
        return  # dotted_name of the container is None
    if carried:
        if what == ACCUMULATES:
            out.accumulates = True
        else:
            out.stores = True
    elif scope.function:
        (scope.owner or scope).pending.append((what, target.id, through))  # type: ignore[attr-defined]


def _eval_argument(facts: GateFacts, name: str, by_name: dict[str, list[ast.Call]]) -> bool:
    """Some call of the function ``name`` (callgraph resolves ``f()`` and
    ``self.f()`` by the name written) passes an argument whose names or
    strings say validation or test data: loops._iterates_eval_argument needs
    one at every call site. ``by_name``: the file's calls by that name, filled
    on first use."""
    if not by_name:
        for call in facts._calls:
            func = call.func
            written = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else None
            if written is not None:
                by_name.setdefault(written, []).append(call)
        by_name.setdefault("", [])  # filled
    for call in by_name.get(name, ()):
        for arg in (*call.args, *(k.value for k in call.keywords)):
            if ast_tokens(arg)[0] & EVAL_DATA_TOKENS:
                return True
    return False


def _called_names(facts: GateFacts) -> set[str]:
    """The names calls are written with (callgraph resolves ``f()`` and
    ``self.f()`` by them)."""
    names: set[str] = set()
    for call in facts._calls:
        func = call.func
        if type(func) is ast.Name:
            names.add(func.id)
        elif type(func) is ast.Attribute:
            names.add(func.attr)
    return names


def _flat_names(target: ast.AST) -> list[str]:
    """names.flat_targets' plain names: ``a, (b, *c)`` -> a, b, c."""
    kind = type(target)
    if kind is ast.Name:
        return [target.id]  # type: ignore[attr-defined]
    if kind is ast.Tuple or kind is ast.List:
        return [n for el in target.elts for n in _flat_names(el)]  # type: ignore[attr-defined]
    if kind is ast.Starred:
        return _flat_names(target.value)  # type: ignore[attr-defined]
    return []


def _mentions(value: ast.AST, target: ast.AST) -> bool:
    """``target`` (a name or ``a.b``) occurs in ``value``: MEM101's
    ``_accumulates``/``_rebuilds_entries`` and MEM102's concatenations read
    the target back."""
    key = ast_dotted(target)
    if key is None:
        return False
    head = key.split(".", 1)[0]
    stack = [value]
    AST = ast.AST
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Name:
            if node.id == head and key == head:  # type: ignore[attr-defined]
                return True
            continue
        if kind is ast.Attribute and ast_dotted(node) == key:
            return True
        for field in node._fields:
            child = getattr(node, field, None)
            if type(child) is list:
                stack.extend(item for item in child if isinstance(item, AST))
            elif isinstance(child, AST):
                stack.append(child)
    return False
