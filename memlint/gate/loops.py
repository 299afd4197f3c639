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
  names data, it may train (a backward or a step on its lines, or a call of
  a file function that may train: LoopInfo.trains follows calls;
  gate/trains.py), or it may have the eval role: an eval-mode call before
  its end in its own function (the eval role's last mode call,
  ``_eval_mode_before``), its function named for evaluation, or its iterable
  naming a parameter of its function while some call of that function's
  name passes an argument named for validation data
  (``_iterates_eval_argument``);
- MEM101/MEM102's statement is carried across a batch loop
  (LoopAnalysis.carried_across) when a loop around it in its own function
  may be one, or, for ``self.x`` or a name not local to its function (the
  same locals as loops._local_names, never more), when a call callgraph may
  resolve to the function lies in a loop that may be a batch loop, or in a
  function so called, followed through callers (a bare ``f()`` for a
  function, ``self.m()`` or ``cls.m()`` for a method: batch_loop_calling,
  gate/per_batch_calls.py), or in a
  ``training_step`` (carried_by_framework);
- MEM101/MEM102's statement is one the rule's visitor matches (``d[k] =``,
  ``x.append(v)``, ``x += [v]``, ``x = torch.cat((x, v))``, ``x = x + [v]``;
  ``total += v``, mem101._accumulates' forms), and a part of its value the
  rule hands to history.py (mem102._terms, ``history_terms``) may carry
  autograd history there (``_Values``: nothing in a body without a history
  seed, gate_seeds, nor in a body decorated with ``no_grad`` without a
  backward; literals, displays of them, comparisons, detaching methods,
  names no binding in the function may give history and calls that seed
  nothing without such inputs cannot);
- MEM102's store into a bare name its function returns (_returned_keys: the
  names usage.reaches_return surely finds) counts only when some loop of the
  file may have a role (LoopInfo.role "train" needs LoopInfo.trains, "eval"
  loops._eval_evidence: the file trains or switches a model to eval, or a
  loop has evaluation evidence of its own), and then, for a store a loop of
  its own function may carry, only when one of those loops may have one
  (_may_have_role; else only a batch loop calling the function may carry
  it): mem102._check is silent on a returned container its roleless
  carrying loop holds;
- MEM703's move is one the rule may report (gate/moves.py): in the body of
  its innermost loop as _enclosing_loop finds it (``_Loop.blocked`` for the
  blocks it does not pass), on a dotted receiver the loop neither binds nor
  rebinds (gate/rebinds.py) or a constant tensor, in a
  loop that may run per batch (_per_batch: a loader, the eval role, a
  backward or step in that loop's own iteration) or, for a dotted receiver,
  per sample (``names_samples``, or any ``for`` loop of a file that may
  call an input reader: the rule's _per_file);
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
from collections.abc import Callable, Container
from typing import Any

from memlint.gate import ast_fields
from memlint.gate.ast_names import ast_callee, ast_dotted, ast_tokens
from memlint.gate.moves import MODULE, is_flag, move_sites, moves_own_target, target_keys
from memlint.gate.per_batch_calls import per_batch_called
from memlint.gate.rebinds import LoopKeys
from memlint.gate.seeds import Seeds
from memlint.gate.syntax import bare_names
from memlint.gate.trains import TrainingLines
from memlint.vocabulary.input_readers import may_read_inputs
from memlint.vocabulary.tokens import DATA_TOKENS, EVAL_DATA_TOKENS, EVAL_FUNCTION_TOKENS, name_tokens, names_samples

# analysis/gate.GateFacts, which imports this module (tests/test_layout.py
# allows no import circle, not even under TYPE_CHECKING).
GateFacts = Any

# MEM102's ``_ADDERS``: ``x.append(v)`` and friends as a statement; and its
# ``_TRACKER_METHODS``: ``meter.update(loss)`` of a tracker that keeps the
# tensor (project/trackers.py, in this module or another).
ADDERS = frozenset({"append", "extend", "insert", "appendleft", "add", "update", "record", "accumulate"})
# MEM102's ``_concatenates``: ``x = torch.cat((x, v))``, by the callee's last name.
_CONCATENATORS = frozenset({"cat", "concat", "concatenate", "stack", "vstack", "hstack"})
# Methods history.py's ``_DETACHING_METHODS`` says return no history (a
# subset, the ones stored values end with; tests/test_analysis_gate.py holds
# it to that set). Not imported: the gate stays clear of libcst.
DETACHING_METHODS = frozenset(
    {
        "item",
        "tolist",
        "detach",
        "numpy",
        "size",
        "dim",
        "numel",
        "argmax",
        "argmin",
        "argsort",
        "long",
        "int",
        "bool",
        "nonzero",
        "any",
        "all",
        "eq",
        "ne",
        "isnan",
        "isinf",
        "isfinite",
        "unique",
        "keys",
        "stride",
        "tobytes",
    }
)
# mem101._is_container: ``outs += [out]`` is MEM102's, never MEM101's.
_CONTAINERS = frozenset({ast.List, ast.Tuple, ast.ListComp, ast.Set, ast.Dict})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)

ACCUMULATES, STORES = 0, 1  # MEM101's and MEM102's statements


class LoopSites:
    """What the walk found; see the module docstring."""

    __slots__ = ("accumulates", "stores", "moves", "evaluates", "returned")

    def __init__(self) -> None:
        self.accumulates = False  # MEM101: an accumulation a batch loop may carry
        self.stores = False  # MEM102: a store a batch loop may carry
        self.moves = False  # MEM703: ``.to(``/``.cuda(`` in the body of a loop that may run per batch or sample
        self.evaluates = False  # MEM201: some evidence of evaluation
        # MEM102's stores into a name its function returns, kept for the end
        # of the walk: (root name, function, the loops around it that may carry it).
        self.returned: list[tuple[str, _Scope, Carriers, Callable[[], bool]]] = []


Carriers = tuple["_Loop", ...]


class _Scope:
    """A function (or the module, or a class body inside a function: its
    names are not the function's locals) as loops.LoopAnalysis scopes it."""

    __slots__ = (
        "name",
        "function",
        "eval_named",
        "params",
        "locals",
        "declared",
        "pending",
        "owner",
        "method_body",
        "body",
        "written",
        "returns",
        "lines",
        "method",
    )

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
        self.pending: list[tuple[int, str, bool, Callable[[], bool]]] = []
        # The function whose pending these are; None: this scope itself (not
        # ``self``: a reference cycle, left to the cyclic collector).
        self.owner = owner
        self.method_body = False  # a class body: its functions are methods
        # The statements history.py walks as one body (a function's, the
        # module's; None for a class body, whose values it never records),
        # and the names its walk may give history (_Values._may_hold_history),
        # read on first need.
        self.body: list[ast.stmt] | None = None
        self.written: set[str] | None = None
        self.returns: set[str] | None = None  # _returned_keys(body), read on first need
        self.lines: tuple[int, int] | None = None  # a function's first and last line; None: the whole file
        self.method = False  # right in a class body: callgraph resolves only ``self.m()``/``cls.m()`` to it


def _draws_from_queue(loop: ast.While) -> bool:
    """MEM703's ``while True: inputs = queue.get()`` (the rule's
    _draws_from_queue): the first statement takes a batch from a receiver
    named for a queue, so the loop runs once per batch."""
    first = loop.body[0] if loop.body else None
    value = first.value if isinstance(first, ast.Assign) else None
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get"):
        return False
    receiver = value.func.value
    name = (
        receiver.attr if isinstance(receiver, ast.Attribute) else receiver.id if isinstance(receiver, ast.Name) else ""
    )
    return "queue" in name.lower()


class _Loop:
    """A loop's iteration. MEM703 (analysis/gate_moves.py) reads its moves
    and its training verbs; ``blocked()`` is the same iteration seen from a
    block the rule's _enclosing_loop does not pass (an ``else``, a ``try``,
    an ``if`` on anything but a flag): verbs there are the loop's, moves
    have no loop."""

    __slots__ = ("batch", "per_batch", "sample", "targets", "verb", "pending", "iteration", "eval_role", "lines")

    def __init__(self, batch: bool, per_batch: bool, sample: bool, targets: Container[str]) -> None:
        self.batch = batch
        # What may give the loop a role (LoopInfo.role, _may_have_role): its
        # evaluation evidence (loops._eval_evidence, wider), and its lines for
        # TrainingLines.may_train; set for the loops that may be batch loops.
        self.eval_role = False
        self.lines = (0, 0)
        # _per_batch without its verbs: the iterable may be a loader, or the
        # loop may have the eval role (loops._eval_evidence).
        self.per_batch = per_batch
        self.sample = sample  # _per_sample: the iterable is named for samples
        self.targets = targets  # _rebound_in: the dotted names the ``for`` binds, or its body rebinds (gate/rebinds.py)
        self.verb = False  # a backward or a step is called in this iteration (training_verbs.in_iteration)
        self.pending = False  # a move only a verb of this iteration would make per batch
        self.iteration: _Loop | None = None  # set on a blocked view: the loop it is

    def blocked(self) -> _Loop:
        if self.iteration is not None:
            return self
        view = _Loop(self.batch, False, False, frozenset())
        view.iteration = self
        return view


def loop_sites(facts: GateFacts) -> LoopSites:
    """See the module docstring. One walk over the statements (expressions
    are read only where a statement needs them: most nodes of a file are
    expressions), with each statement's function, its innermost loop (for
    MEM703) and whether a loop around it may be a batch loop."""
    out = LoopSites()
    trains = facts.trains
    trains_or_eval = trains or facts.eval_call
    aliases = facts._aliases
    eval_lines: list[int] | None = None  # lines of the file's eval-mode calls, read on first need
    imported: frozenset[str] | None = None  # _imported_names, read on first need
    training: TrainingLines | None = None  # which loops may train, read on first need
    loader = facts.names_loader or "DataLoader" in facts.idents
    # MEM703's _per_file: a ``for`` loop reading an input from a file per
    # iteration runs per sample; any ``for`` may be one where a reader is called.
    reads_inputs = may_read_inputs(facts.called, facts.idents)
    out.evaluates = trains_or_eval or "volatile" in facts.keywords or facts.eval_comprehension
    # Per function name, computed on first need: a call of it passes an argument named for evaluation.
    eval_arguments: dict[str, bool] = {}
    calls_by_name: dict[str, list[ast.Call]] = {}
    any_batch = False
    batch_spans: list[tuple[int, int]] = []  # the lines of the loops that may be batch loops (per_batch_calls)
    any_eval = False  # some loop has evaluation evidence of its own (loops._eval_evidence)
    scopes: list[_Scope] = []
    methods: set[int] = set()  # functions right in a class body: ``self`` is never bound by an argument
    module = _Scope(None)
    module.body = facts._tree.body  # type: ignore[attr-defined]
    values = _Values(facts)
    # The last item: the loops around a statement, in its function, that may
    # be batch loops (carried_across walks out to the first that is one).
    stack: list[tuple[ast.AST, _Scope, _Loop | None, Carriers]] = [
        (stmt, module, None, ())
        for stmt in facts._tree.body  # type: ignore[attr-defined]
    ]
    push, pop = stack.append, stack.pop
    while stack:
        node, scope, inner, carried = pop()
        kind = type(node)
        # Expressions, read only for MEM703 (a move, or a training verb that
        # makes its loop run per batch) or a comprehension in a function
        # named for evaluation (MEM201's comprehension_is_eval; its iterables
        # are facts.eval_comprehension).
        moves = verbs = False
        if inner is not None and not out.moves:
            it = inner.iteration or inner
            # A move in a header (a loop's iterable, a decorator) is not in the loop's body.
            moves = inner.iteration is None and kind not in _HEADERS and (it.per_batch or it.sample or trains)
            verbs = trains and not it.verb and not it.per_batch
        comprehensions = scope.eval_named and not out.evaluates
        if moves or verbs or comprehensions:
            if moves and imported is None:
                imported = frozenset(_imported_names(facts))
            found, verb, comprehension = move_sites(
                node,
                moves,
                inner.targets if moves else _NONE,  # type: ignore[union-attr]
                verbs,
                aliases,
                imported or _NONE,
            )
            if comprehension and comprehensions:
                out.evaluates = True
            if verb and verbs:
                it.verb = True
                out.moves = it.pending
            if found:
                if it.per_batch or (found == MODULE and it.sample) or it.verb:
                    out.moves = True
                else:
                    it.pending = True
        if kind is ast.For or kind is ast.AsyncFor or kind is ast.While:
            iterable = node.test if kind is ast.While else node.iter  # type: ignore[attr-defined]
            tokens, idents = ast_tokens(iterable)
            evaluates = scope.eval_named or bool(tokens & EVAL_DATA_TOKENS)
            if not evaluates and idents & scope.params:
                name = scope.name or ""
                if name not in eval_arguments:
                    eval_arguments[name] = eval_argument(facts, name, calls_by_name)
                evaluates = eval_arguments[name]
            # LoopInfo.is_batch_loop: it trains, has the eval role, or names data.
            eval_role = evaluates
            if not eval_role and facts.eval_call:
                if eval_lines is None:
                    eval_lines = _eval_mode_lines(facts)
                eval_role = _eval_mode_before(eval_lines, scope.lines, node.end_lineno)  # type: ignore[attr-defined]
            batch = eval_role or bool(tokens & DATA_TOKENS)
            if not batch and trains:
                if training is None:
                    training = TrainingLines(facts)
                batch = training.may_train(node.lineno, node.end_lineno)  # type: ignore[attr-defined]
            any_batch = any_batch or batch
            if batch:
                batch_spans.append((node.lineno, node.end_lineno))  # type: ignore[attr-defined]
            any_eval = any_eval or evaluates
            out.evaluates = out.evaluates or evaluates
            per_batch = loader or eval_role or (kind is ast.While and _draws_from_queue(node))  # type: ignore[arg-type]
            targets = _NONE if kind is ast.While else target_keys(node.target)  # type: ignore[attr-defined]
            sample = names_samples(tokens) or (reads_inputs and kind is not ast.While)
            loop = _Loop(batch, per_batch, sample, LoopKeys(targets, node.body))  # type: ignore[attr-defined]
            if batch:
                loop.eval_role, loop.lines = eval_role, (node.lineno, node.end_lineno)  # type: ignore[attr-defined]
            if inner is not None and not out.moves and kind is not ast.While:
                outer = inner.iteration or inner
                # MEM703's ``for net in nets: net.to(device)`` in a batch loop
                # (_same_models_per_batch): wider than the rule, any block.
                out.moves = (outer.per_batch or outer.batch) and moves_own_target(node)  # type: ignore[arg-type]
            if kind is not ast.While:
                scope.locals.update(bare_names(node.target))  # type: ignore[attr-defined]
            for child in node.body:  # type: ignore[attr-defined]
                push((child, scope, loop, (*carried, loop) if batch else carried))
            # Runs after the iterations: in the outer loop's iteration, no move's loop.
            after = inner.blocked() if inner is not None else None
            for child in node.orelse:  # type: ignore[attr-defined]
                push((child, scope, after, carried))
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            fn = _Scope(node.name)  # type: ignore[attr-defined]
            fn.body = node.body  # type: ignore[attr-defined]
            fn.lines = (min(d.lineno for d in (node, *node.decorator_list)), node.end_lineno)  # type: ignore[attr-defined]
            fn.method = id(node) in methods
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
                out.evaluates = move_sites(node, False, _NONE, False, aliases)[2]
            for child in node.body:  # type: ignore[attr-defined]
                push((child, fn, None, ()))
        elif kind is ast.ClassDef:
            methods.update(id(s) for s in node.body if type(s) in _FUNCTIONS)  # type: ignore[attr-defined]
            body = _Scope(scope.name, scope.owner or scope) if scope.function else _Scope(None)
            body.function = scope.function
            body.eval_named, body.params = scope.eval_named, scope.params
            body.lines = scope.lines
            # carried_across's loop_of walks through a class, MEM703's
            # _enclosing_loop stops there (training_verbs' path does not).
            around = inner.blocked() if inner is not None else None
            for child in node.body:  # type: ignore[attr-defined]
                push((child, body, around, carried))
        elif kind is ast.Assign:
            targets = node.targets  # type: ignore[attr-defined]
            for target in targets:
                scope.locals.update(bare_names(target))
            if len(targets) == 1:
                _assign_sites(out, targets[0], node.value, scope, carried, values)  # type: ignore[attr-defined]
        elif kind is ast.AugAssign:
            target = node.target  # type: ignore[attr-defined]
            if type(target) is ast.Name:
                scope.locals.add(target.id)
            op = type(node.op)  # type: ignore[attr-defined]
            value = node.value  # type: ignore[attr-defined]
            vkind = type(value)
            if op is ast.Add and (vkind is ast.List or vkind is ast.Tuple):
                # MEM102's ``outs += [out]`` (MEM101 leaves containers to it)
                if not out.stores and _stripped_dotted(target):
                    _site(out, STORES, target, scope, carried, _may_carry_of(values, value, scope))
            elif (op is ast.Add or op is ast.Sub) and vkind not in _CONTAINERS:
                # MEM101's ``total += loss``: ``stats["loss"] += loss`` keeps ``stats``.
                container = target.value if type(target) is ast.Subscript else target  # type: ignore[attr-defined]
                if not out.accumulates and ast_dotted(container) is not None:
                    _site(out, ACCUMULATES, target, scope, carried, _any_term_of(values, value, None, scope))
        elif kind is ast.AnnAssign:
            if type(node.target) is ast.Name:  # type: ignore[attr-defined]
                scope.locals.add(node.target.id)  # type: ignore[attr-defined]
        elif kind is ast.Global or kind is ast.Nonlocal:
            scope.declared.update(node.names)  # type: ignore[attr-defined]
        elif kind is ast.Expr:
            call = node.value  # type: ignore[attr-defined]
            if (
                type(call) is ast.Call
                and (call.args or call.keywords)
                and type(call.func) is ast.Attribute
                and call.func.attr in ADDERS
                and not out.stores
                and _stripped_dotted(call.func.value)
            ):
                # mem102.visit_Call stores its last argument: any may be it.
                stored = (*call.args, *(k.value for k in call.keywords))
                _site(out, STORES, call.func.value, scope, carried, _may_carry_of(values, stored, scope))
        elif (kind is ast.If or kind is ast.Try) and inner is not None:
            # Their blocks run in the same loop's iteration; MEM703's
            # _enclosing_loop passes either arm of an ``if`` on a flag only,
            # and no other ``if``, ``try`` block or handler.
            blocked = inner.blocked()
            body_loop = inner if kind is ast.If and is_flag(node.test, aliases) else blocked  # type: ignore[attr-defined]
            for child in node.body:  # type: ignore[attr-defined]
                push((child, scope, body_loop, carried))
            for field in _AFTER_BODY:
                for child in getattr(node, field, ()):
                    push((child, scope, body_loop if field == "orelse" else blocked, carried))
        else:
            # if, with, try, match (and their handlers and cases): their
            # blocks run in the same loops.
            for field in _BLOCKS:
                block = getattr(node, field, None)
                if block:
                    for child in block:
                        push((child, scope, inner, carried))
    # MEM102 skips a store into a name its function returns when the loop
    # carrying it has no role: only training or evaluation evidence gives one.
    if out.returned and not out.stores and (trains_or_eval or any_eval):
        for root, fn_scope, carriers, carries in out.returned:
            if not carries():
                continue
            if carriers and training is None and trains:
                training = TrainingLines(facts)
            if _may_have_role(carriers, training):
                out.stores = True
                break
            # No loop around it may: carried_across may still find a batch
            # loop calling its function (``_outlives_call``), as for a store
            # no loop around it may carry.
            fn_scope.pending.append((STORES, root, False, _checked))
    out.returned = []
    # Statements no loop of their own function may carry: a batch loop may
    # call the function (``self.x`` or a name it does not bind), or Lightning
    # calls its ``training_step``.
    called: tuple[set[str], set[str]] | None = None
    for fn in scopes:
        if not fn.pending:
            continue
        if called is None:
            functions = ((f.name or "", f.method, f.lines) for f in scopes)
            called = per_batch_called(facts, batch_spans, functions) if any_batch else (set(), set())
        runs_per_batch = fn.name in (called[1] if fn.method else called[0])
        outlived = fn.locals - fn.declared
        for what, root, through, carries in fn.pending:
            attribute_of_self = root == "self" and through
            if (
                (
                    (runs_per_batch and (attribute_of_self or root not in outlived))
                    or (fn.name == "training_step" and attribute_of_self)
                )
                and not (out.accumulates if what == ACCUMULATES else out.stores)
                and carries()
            ):
                if what == ACCUMULATES:
                    out.accumulates = True
                else:
                    out.stores = True
        fn.pending = []  # its checks hold the scope: no reference cycle left behind
    return out


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _checked() -> bool:
    """A store's value already found to carry history."""
    return True


def _may_carry_of(values: _Values, value: ast.AST | tuple[ast.AST, ...], scope: _Scope) -> Callable[[], bool]:
    """``values.may_carry`` of ``value`` (or of any of a tuple of values),
    asked later (_site): bound now, as the walk moves on."""
    if type(value) is tuple:
        return lambda: any(values.may_carry(v, scope) for v in value)  # type: ignore[union-attr]
    return lambda: values.may_carry(value, scope)  # type: ignore[arg-type]


def _any_term_of(values: _Values, value: ast.AST, exclude: ast.AST | None, scope: _Scope) -> Callable[[], bool]:
    """``values.any_term``, asked later (_site)."""
    return lambda: values.any_term(value, exclude, scope)


_AFTER_BODY = ("orelse", "finalbody", "handlers")  # an if's or a try's blocks after its body, in _BLOCKS' order
# Statements whose own expressions are no loop's body: MEM703's
# _enclosing_loop stops at a function or class, and a loop's iterable or
# test is not its body.
_HEADERS = frozenset({ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_NONE: frozenset[str] = frozenset()


def _eval_mode_lines(facts: GateFacts) -> list[int]:
    """The lines of the calls GateFacts.eval_call counts (``m.eval()``,
    ``m.train(False)``: objects.mode_call's "eval", wider)."""
    aliases = facts._aliases
    return [call.lineno for call in facts._calls if eval_mode_call(call, aliases)]


def eval_mode_call(call: ast.Call, aliases: dict[str, str]) -> bool:
    """A call GateFacts.eval_call counts: ``m.eval()``, ``m.train(False)``
    (objects.mode_call's "eval", wider: any receiver; libcst's first
    argument, keyword or not)."""
    last = ast_callee(call.func, aliases)
    if last == "eval":
        return not call.args and not call.keywords
    if last == "train" and (call.args or call.keywords):
        first = call.args[0] if call.args else call.keywords[0].value
        return type(first) is ast.Constant and first.value is False
    return False


def _eval_mode_before(lines: list[int], span: tuple[int, int] | None, end: int) -> bool:
    """loops._eval_evidence's last mode call before the loop's end in its
    function (``mode_calls`` of its scope) may be "eval": some eval-mode call
    before the loop ends, in the loop's function (anywhere for a loop
    outside any function)."""
    first, last = span if span is not None else (0, end)
    return any(first <= line <= min(last, end) for line in lines)


def _assign_sites(
    out: LoopSites, target: ast.AST, value: ast.AST, scope: _Scope, carried: Carriers, values: _Values
) -> None:
    """The one-target assignments MEM101 and MEM102 visit, as they match
    them (mem101.visit_Assign, mem102.visit_Assign), each counted only when
    a part of the value the rule reads may carry history."""
    vkind = type(value)
    if type(target) is ast.Subscript:
        # MEM102's ``d[k] = out`` (MEM101 needs a dotted target: never this one).
        if not out.stores and _stripped_dotted(target):
            _site(out, STORES, target, scope, carried, _may_carry_of(values, value, scope))
        return
    key = ast_dotted(target)
    if key is None:
        return  # both rules need dotted_name(target)
    if not out.accumulates:
        if vkind is ast.DictComp:
            # mem101._rebuilds_entries: ``totals = {k: totals[k] + v[k] for k in totals}``
            if len(value.generators) == 1 and ast_dotted(value.key) is not None:  # type: ignore[attr-defined]

                def is_entry(e: ast.AST) -> bool:
                    # Wider than the rule's (which also reads the index): never narrower.
                    return type(e) is ast.Subscript and ast_dotted(e.value) == key  # type: ignore[attr-defined]

                entries = value.value  # type: ignore[attr-defined]
                if _accumulates(entries, is_entry):
                    _site(out, ACCUMULATES, target, scope, carried, _any_term_of(values, entries, target, scope))
        elif _accumulates(value, lambda e: ast_dotted(e) == key):
            # ``total = total + loss``
            _site(out, ACCUMULATES, target, scope, carried, _any_term_of(values, value, target, scope))
    if out.stores:
        return
    if vkind is ast.Call and (ast_callee(value.func, _aliases_of(values)) or "") in _CONCATENATORS:  # type: ignore[attr-defined]
        # mem102._concatenates: ``preds = torch.cat((preds, out))`` stores the other parts.
        call = value
        # The other elements of every display holding the name itself.
        others: list[ast.AST] = []
        held = False
        for parts in (*call.args[:1], *(k.value for k in call.keywords)):  # type: ignore[attr-defined]
            if type(parts) is ast.List or type(parts) is ast.Tuple:
                elements = parts.elts  # type: ignore[attr-defined]
                if any(ast_dotted(el) == key for el in elements):
                    held = True
                    others += (el for el in elements if ast_dotted(el) != key)
        if held:
            _site(out, STORES, target, scope, carried, _may_carry_of(values, tuple(others), scope))
    elif vkind is ast.BinOp and type(value.op) is ast.Add:  # type: ignore[attr-defined]
        # ``lst = lst + [out]``
        right = value.right  # type: ignore[attr-defined]
        if ast_dotted(value.left) == key and type(right) is ast.List:  # type: ignore[attr-defined]
            _site(out, STORES, target, scope, carried, _may_carry_of(values, right, scope))


def _aliases_of(values: _Values) -> dict[str, str]:
    return values.facts._aliases  # type: ignore[no-any-return]


def _stripped_dotted(container: ast.AST) -> bool:
    """mem102._check's container: ``history["loss"]`` is ``history``; it
    reports only a dotted one."""
    while type(container) is ast.Subscript:
        container = container.value  # type: ignore[attr-defined]
    return ast_dotted(container) is not None


def _accumulates(value: ast.AST, is_acc: Callable[[ast.AST], bool]) -> bool:
    """mem101._accumulates on ``ast``: ``key + x``, ``a * key + b * x``,
    ``(key * n + x) / (n + 1)``, one branch of a conditional."""
    kind = type(value)
    if kind is ast.IfExp:
        return _accumulates(value.body, is_acc) or _accumulates(value.orelse, is_acc)  # type: ignore[attr-defined]
    if kind is not ast.BinOp:
        return False
    op = type(value.op)  # type: ignore[attr-defined]
    if op is ast.Div:
        return _accumulates(value.left, is_acc)  # type: ignore[attr-defined]
    if op is not ast.Add and op is not ast.Sub:
        return False
    stack = [value]
    while stack:
        leaf = stack.pop()
        if type(leaf) is ast.BinOp and type(leaf.op) in (ast.Add, ast.Sub):  # type: ignore[attr-defined]
            stack += (leaf.left, leaf.right)  # type: ignore[attr-defined]
        elif is_acc(leaf) or (
            type(leaf) is ast.BinOp
            and type(leaf.op) is ast.Mult  # type: ignore[attr-defined]
            and (is_acc(leaf.left) or is_acc(leaf.right))  # type: ignore[attr-defined]
        ):
            return True
    return False


class _Values:
    """Which stored or accumulated values history.py may call
    history-carrying (``Val.h is H.YES``), by their syntax and the names
    their own function writes: MEM102 reports a store only when
    ``carries_history`` holds for a part of its value (mem102._terms), MEM101
    an accumulation only when it does for a term (``history_terms``).
    ``carries_history`` reads the values recorded by the one walk of the
    function (or module) holding the expression, which starts from unknown
    parameters (``_Walker.__init__``: MAYBE; summaries with the callers'
    arguments record nothing). Each exemption mirrors ``_Walker._ev``,
    ``call`` or ``method`` (analysis/history.py):

    - a literal (``Integer``/``Float``/strings/``Ellipsis``, and the names
      ``True``/``False``/``None``, read before the environment): NUMBER or NO;
      an f-string: NO; a lambda: NO; ``yield``/``await``: MAYBE;
    - a comparison and ``not x``: NUMBER; another unary operator: its operand;
    - ``"%d" % x``: NO; another binary operation: ``combine`` of its operands
      (YES only if one is);
    - ``a and b``/``a or b``: ``join`` (YES only if every operand is);
      ``a if c else b``: ``join`` of the branches;
    - a tuple, list or set display: ``combine`` of its elements (and starred
      values); a dict display: of its values; a comprehension: its element;
      ``x[i]`` and ``x.a``: their base (an item of a display is one of its
      elements; ``x.a`` is read from the environment only where its body
      wrote it, see below); ``(n := v)``: ``v``;
    - a name the walk's environment never holds as YES: a parameter, a
      global, a closure's name start MAYBE (``_ev``'s ``env.get(name,
      MAYBE)``), and a name becomes YES only through a binding in its body
      (``_Scope.body``, less nested functions, classes and lambdas, which
      the walk does not enter) whose value may carry history (``bind``: a
      target, ``x[k] =``, ``x.a =``, a ``for``/comprehension target from
      its iterable, ``:=``; ``_mutation``: ``x.append(v)`` from its
      arguments), or as the operand of a backward (``_backward_proves``,
      ``_proven``) or a ``training_step``'s return (_bindings; the least
      fixpoint is _may_hold_history);
    - ``r.m(...)`` with ``m`` in ``DETACHING_METHODS`` (``.item()``,
      ``.detach()``, ``.tolist()``, ``.numpy()``, ``.size()``...): NO or
      NUMBER in ``method``, and every branch of ``call`` before it says NO or
      MAYBE, provided that no function of the file is named ``m``
      (``calls.resolve``: a summary), the callee's head is not an import
      (``names.call_name``: ``library_call`` may combine the arguments) and
      ``r`` is not ``self`` (``kind_of(self.m)`` reads the class's
      definitions: a model or loss call). ``is_loss_call``'s pattern matches
      no such name, and ``kind_of`` of another ``r.m`` is None.

    - a call that is no seed (gate_seeds.Seeds.seeds: a possible model
      call, a backward, ``functional_call``, a function of the file whose
      body holds a seed): ``combine``/``computed`` of its arguments (a loss
      call, a torch function, a builtin) or, in ``method``, NO or MAYBE
      unless its receiver is YES; so it may carry history only where an
      argument or its receiver may;
    - anything in a body whose walk holds no seed at all (gate_seeds: the
      walk starts from MAYBE and only a seed makes YES).

    Everything else (a seed, a name its body writes) may carry it."""

    __slots__ = ("facts", "_imported", "_seeds")

    def __init__(self, facts: GateFacts) -> None:
        self.facts = facts
        self._imported: set[str] | None = None
        self._seeds: Seeds | None = None

    def any_term(self, value: ast.AST, exclude: ast.AST | None, scope: _Scope) -> bool:
        """Some term ``history_terms(value, exclude)`` may return: its
        operands through arithmetic, unary operators and conditionals (not
        the test), less those that mention ``exclude``."""
        stack = [value]
        while stack:
            e = stack.pop()
            kind = type(e)
            if kind is ast.IfExp:
                stack += (e.body, e.orelse)  # type: ignore[attr-defined]
            elif kind is ast.BinOp:
                stack += (e.left, e.right)  # type: ignore[attr-defined]
            elif kind is ast.UnaryOp:
                stack.append(e.operand)  # type: ignore[attr-defined]
            elif (exclude is None or not _mentions(e, exclude)) and self.may_carry(e, scope):
                return True
        return False

    def may_carry(self, e: ast.AST, scope: _Scope) -> bool:
        """See the class docstring; first of all, the walk of the body
        holding ``e`` must hold a seed (gate_seeds)."""
        if scope.body is not None:
            if self._seeds is None:
                self._seeds = Seeds(self.facts)
            if not self._seeds.seeded(scope.body):
                return False
        return self._may_carry(e, scope)

    def _may_carry(self, e: ast.AST, scope: _Scope) -> bool:
        kind = type(e)
        if kind is ast.Name:
            if scope.body is None:
                return True
            if scope.written is None:
                scope.written = self._may_hold_history(scope)
            return e.id in scope.written  # type: ignore[attr-defined]
        if kind is ast.Attribute or kind is ast.Subscript or kind is ast.NamedExpr or kind is ast.Starred:
            return self._may_carry(e.value, scope)  # type: ignore[attr-defined]
        if kind is ast.Constant or kind is ast.JoinedStr or kind is ast.Compare or kind is ast.Lambda:
            return False
        if kind is ast.Yield or kind is ast.YieldFrom or kind is ast.Await:
            return False
        if kind is ast.Tuple or kind is ast.List or kind is ast.Set:
            return any(self._may_carry(el, scope) for el in e.elts)  # type: ignore[attr-defined]
        if kind is ast.Dict:
            return any(self._may_carry(v, scope) for v in e.values)  # type: ignore[attr-defined]
        if kind is ast.UnaryOp:
            return type(e.op) is not ast.Not and self._may_carry(e.operand, scope)  # type: ignore[attr-defined]
        if kind is ast.BinOp:
            left = e.left  # type: ignore[attr-defined]
            if type(e.op) is ast.Mod and type(left) is ast.Constant and isinstance(left.value, (str, bytes)):  # type: ignore[attr-defined]
                return False
            return self._may_carry(left, scope) or self._may_carry(e.right, scope)  # type: ignore[attr-defined]
        if kind is ast.BoolOp:
            return all(self._may_carry(v, scope) for v in e.values)  # type: ignore[attr-defined]
        if kind is ast.IfExp:
            return self._may_carry(e.body, scope) and self._may_carry(e.orelse, scope)  # type: ignore[attr-defined]
        if kind is ast.ListComp or kind is ast.SetComp or kind is ast.GeneratorExp:
            return self._may_carry(e.elt, scope)  # type: ignore[attr-defined]
        if kind is ast.DictComp:
            return self._may_carry(e.value, scope)  # type: ignore[attr-defined]
        if kind is ast.Call:
            return self._call_may_carry(e, scope)  # type: ignore[arg-type]
        return True

    def _may_hold_history(self, scope: _Scope) -> set[str]:
        """The names the walk of ``scope.body`` may bind to ``H.YES``: the
        root of every binding whose value may carry history (least fixpoint:
        a value reads the names found so far), and every name of a backward
        call or of a ``training_step``'s return (see _bindings)."""
        bindings, found = _bindings(scope.body, self.facts._aliases, scope.name == "training_step")  # type: ignore[arg-type]
        bindings.reverse()  # about source order (the walk's stack met the last first): most values read earlier names
        scope.written = found  # grows below: a value's names are read from it
        changed = True
        while changed and bindings:
            changed = False
            rest = []
            for root, value in bindings:
                if root in found:
                    continue
                if self._may_carry(value, scope):
                    found.add(root)
                    changed = True
                else:
                    rest.append((root, value))
            bindings = rest
        return found

    def _call_may_carry(self, call: ast.Call, scope: _Scope) -> bool:
        """A seed (gate_seeds: a model call, a backward, ``functional_call``,
        a seeded function of the file), or a call that may combine a value
        with history: one of its arguments, or its receiver (``method``
        returns a receiver without history's NO or MAYBE, whatever the
        arguments; a loss call, a torch function or a builtin combines its
        arguments). A detaching method says NO."""
        if self._detaching_method(call):
            return False
        if scope.body is None or self._seeds is None:
            return True
        if self._seeds.seeds(call, scope.body):
            return True
        func = call.func
        if type(func) is ast.Attribute and self._may_carry(func.value, scope):  # type: ignore[attr-defined]
            return True
        return any(self._may_carry(a, scope) for a in (*call.args, *(k.value for k in call.keywords)))

    def _detaching_method(self, call: ast.Call) -> bool:
        func = call.func
        if type(func) is not ast.Attribute or func.attr not in DETACHING_METHODS:
            return False
        if func.attr in self.facts.def_names:
            return False
        receiver = func.value
        if type(receiver) is ast.Name and receiver.id == "self":
            return False
        head = receiver
        while type(head) is ast.Attribute:
            head = head.value  # type: ignore[attr-defined]
        if type(head) is not ast.Name:
            return True  # ``model(x).item()``: names.call_name is None
        if self._imported is None:
            self._imported = _imported_names(self.facts)
        return head.id not in self._imported  # type: ignore[attr-defined]


# training_verbs' backward calls, by the callee's last name.
_BACKWARD_CALLS = frozenset({"backward", "manual_backward"})
_NOT_WALKED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_NOT_WALKED_KINDS = frozenset(_NOT_WALKED)


def _bindings(
    body: list[ast.stmt], aliases: dict[str, str], training_step: bool
) -> tuple[list[tuple[str, Any]], set[str]]:
    """How history.py's walk of ``body`` may give a name ``H.YES``, as
    (root name, the value it takes it from) pairs, and the names it may give
    it whatever their values. Everything else in the walk's environment
    starts unknown (parameters, globals, closures: MAYBE) and stays so:

    - ``bind``: an assignment's targets (``x``, and the root of ``x.a``,
      ``x[k]``, in a tuple or a starred target: the value's items), an
      annotated or augmented one (``combine`` with the old value), ``:=``;
      a ``for`` or comprehension target takes an element of its iterable,
      YES only if the iterable is (``_element_of``); a ``with`` target is
      never YES (MAYBE or NO);
    - ``_mutation``: ``x.append(v)``, ``x.add_(v)``, any method called by an
      expression statement, combines the receiver with the arguments;
    - ``_backward_proves`` and ``_proven``: a backward call (training_verbs'
      ``backward``/``manual_backward``, by the callee's last name) makes its
      operand YES, and the binding of it a later backward reads: every name
      in such a call, wherever it sits (wider);
    - backward_proof._lightning_returns: what a ``training_step`` returns
      is proven as a backward's operand: every name of its returns.

    Nested functions, classes and lambdas are not walked (``statement``
    binds their name to NO, ``_ev`` returns NO for a lambda)."""
    pairs: list[tuple[str, Any]] = []
    always: set[str] = set()
    table = ast_fields.CHILDREN
    stack: list[Any] = list(body)
    push, extend, pop = stack.append, stack.extend, stack.pop
    while stack:
        node = pop()
        kind = type(node)
        children = table.get(kind)
        if children is None:
            if kind is list:  # a field of a class whose signature was not read
                extend(node)
            continue  # None, or a scalar
        if kind in _NOT_WALKED_KINDS:
            continue
        if kind is ast.Assign:
            for target in node.targets:
                pairs += ((root, node.value) for root in _target_roots(target))
        elif kind is ast.AugAssign or kind is ast.AnnAssign or kind is ast.NamedExpr:
            if node.value is not None:
                pairs += ((root, node.value) for root in _target_roots(node.target))
        elif kind is ast.For or kind is ast.AsyncFor or kind is ast.comprehension:
            pairs += ((root, node.iter) for root in _target_roots(node.target))
        elif kind is ast.Expr:
            call = node.value
            if type(call) is ast.Call and type(call.func) is ast.Attribute:
                for root in _target_roots(call.func.value):
                    pairs += ((root, arg) for arg in (*call.args, *(k.value for k in call.keywords)))
        elif kind is ast.Call:
            if ast_callee(node.func, aliases) in _BACKWARD_CALLS:
                always.update(n.id for n in ast_fields.nodes(node) if type(n) is ast.Name)
        elif kind is ast.Return:
            if training_step and node.value is not None:
                always.update(n.id for n in ast_fields.nodes(node.value) if type(n) is ast.Name)
        for field in children.singles:
            push(getattr(node, field))
        for field in children.lists:
            extend(getattr(node, field))
    return pairs, always


def _target_roots(target: ast.AST) -> list[str]:
    """The names ``bind`` may change for a target: ``x``; the root ``x`` of
    ``x.a``, ``x[k]``, ``x.a[k].b``; each element of a tuple or list, a
    starred one's value."""
    kind = type(target)
    if kind is ast.Tuple or kind is ast.List:
        return [r for el in target.elts for r in _target_roots(el)]  # type: ignore[attr-defined]
    while kind is ast.Attribute or kind is ast.Subscript or kind is ast.Starred:
        target = target.value  # type: ignore[attr-defined]
        kind = type(target)
    return [target.id] if kind is ast.Name else []  # type: ignore[attr-defined]


def _imported_names(facts: GateFacts) -> set[str]:
    """Every name an import may bind (names.ImportTable.bindings' keys),
    wide: the first part and the whole of a dotted name, and its alias."""
    names: set[str] = set()
    for imp in facts._imports:
        for alias in imp.names:
            names.add(alias.asname or alias.name)
            names.add(alias.name.split(".", 1)[0])
    return names


def _may_have_role(carriers: Carriers, training: TrainingLines | None) -> bool:
    """Some loop of ``carriers`` may have a role (LoopInfo.role): "eval"
    needs loops._eval_evidence (``eval_role``, wider), "train" that the loop
    trains (``training``: None where the file may train nowhere)."""
    return any(loop.eval_role or (training is not None and training.may_train(*loop.lines)) for loop in carriers)


def _site(
    out: LoopSites, what: int, target: ast.AST, scope: _Scope, carried: Carriers, carries: Callable[[], bool]
) -> None:
    """A statement of MEM101 (``what`` ACCUMULATES) or MEM102 (STORES)
    writing ``target``, counted only where ``carries()`` (a part of its
    value may carry history): found now when a loop around it may carry it,
    else kept for the end of the walk (its function's locals are known
    then). ``carries`` is asked last, only where the answer decides: it may
    read the history seeds of the whole file (gate/seeds.py), the costliest
    fact of the walk, and most stores no loop carries (transformers'
    ``all_hidden_states += (h,)`` over the layers) decide nothing."""
    if out.accumulates if what == ACCUMULATES else out.stores:
        return
    through = False
    while type(target) is ast.Subscript or type(target) is ast.Attribute:
        through = through or type(target) is ast.Attribute
        target = target.value  # type: ignore[attr-defined]
    if type(target) is not ast.Name:
        return  # dotted_name of the container is None
    if what == STORES and not through and scope.body is not None and scope.function and scope.owner is None:
        if scope.returns is None:
            scope.returns = _returned_keys(scope.body)
        if target.id in scope.returns:  # type: ignore[attr-defined]
            out.returned.append((target.id, scope, carried, carries))  # type: ignore[attr-defined]
            return
    if carried:
        if carries():
            if what == ACCUMULATES:
                out.accumulates = True
            else:
                out.stores = True
    elif scope.function:
        (scope.owner or scope).pending.append((what, target.id, through, carries))  # type: ignore[attr-defined]


def _returned_keys(body: list[ast.stmt]) -> set[str]:
    """Keys usage.reaches_return surely finds returned by the function whose
    body this is (never more): the names and dotted names of its ``return``
    and ``yield`` values (_ScopeUsage.return_seeds, _Keys), closed over its
    assignments (``deps``: ``x = v``, ``x[i] = v``, ``x += v``, ``x: T = v``
    make ``x`` depend on the keys of ``v``; _ScopeUsage._depend), its
    ``for`` loops (the target on the iterable: visit_For) and the container
    adds the walk meets (``x.append(v)``: visit_Call's _CONTAINER_ADD; not
    those inside an assigned or returned value, whose nodes are read for
    their keys only). Nested functions, classes and lambdas are left out
    (the analysis leaves out the first and the last), as are its other
    dependencies (``with``, ``:=``, comprehensions): fewer keys, never a key
    it does not find.

    MEM102 (mem102._check) stays silent on a store into such a key when the
    loop carried_across gives has no role (``loop.role is None and
    facts.usage.reaches_return(key, scope)``)."""
    seeds: set[str] = set()
    deps: dict[str, set[str]] = {}
    table = ast_fields.CHILDREN
    stack: list[Any] = list(body)
    push, extend, pop = stack.append, stack.extend, stack.pop
    while stack:
        node = pop()
        kind = type(node)
        children = table.get(kind)
        if children is None:
            if kind is list:  # a field of a class whose signature was not read
                extend(node)
            continue  # None, or a scalar
        if kind in _NOT_WALKED_KINDS:
            continue
        # A value's keys are read off its nodes; the walk goes on below it
        # only where a ``yield`` there may be a seed of its own.
        if kind is ast.Return or kind is ast.Yield or kind is ast.YieldFrom:
            if node.value is not None:
                inner = ast_fields.nodes(node.value)
                seeds |= _expr_keys(inner)
                if _YIELDS.isdisjoint(map(type, inner)):
                    continue  # its value is its only child
        elif kind is ast.Assign or kind is ast.AugAssign or kind is ast.AnnAssign:
            if node.value is not None:
                inner = ast_fields.nodes(node.value)
                sources = _expr_keys(inner)
                targets = node.targets if kind is ast.Assign else [node.target]
                for target in targets:
                    for key in _depend_keys(target):
                        deps.setdefault(key, set()).update(sources)
                if _YIELDS.isdisjoint(map(type, inner)):
                    extend(targets)  # the other children: its targets, an annotation
                    if kind is ast.AnnAssign:
                        push(node.annotation)
                    continue
        elif kind is ast.For or kind is ast.AsyncFor:
            _depend(deps, node.target, [node.iter])
        elif kind is ast.Call:
            func = node.func
            if type(func) is ast.Attribute and func.attr in _CONTAINER_ADDS:
                _depend(deps, func.value, [*node.args, *(k.value for k in node.keywords)])
        for field in children.singles:
            push(getattr(node, field))
        for field in children.lists:
            extend(getattr(node, field))
    seen = set(seeds)
    todo = list(seeds)
    while todo:
        for src in deps.get(todo.pop(), ()):
            if src not in seen:
                seen.add(src)
                todo.append(src)
    return seen


_YIELDS = frozenset({ast.Yield, ast.YieldFrom})
# usage._CONTAINER_ADD: ``x.append(v)`` makes ``x`` depend on ``v``'s keys.
_CONTAINER_ADDS = frozenset({"append", "extend", "insert", "add", "appendleft", "update", "put", "setdefault"})


def _depend(deps: dict[str, set[str]], target: ast.AST, values: list[ast.AST]) -> None:
    """_ScopeUsage._depend: ``target``'s keys depend on every key of ``values``."""
    sources = _expr_keys([n for value in values for n in ast_fields.nodes(value)])
    for key in _depend_keys(target):
        deps.setdefault(key, set()).update(sources)


def _expr_keys(nodes: list[ast.AST]) -> set[str]:
    """usage._keys on ``ast``, less what ``ast`` has no Name for (keyword
    and attribute names, lambda parameters): every name and dotted name of
    an expression, given its nodes (gate/ast_fields.nodes)."""
    keys: set[str] = set()
    for node in nodes:
        kind = type(node)
        if kind is ast.Name:
            keys.add(node.id)  # type: ignore[attr-defined]
        elif kind is ast.Attribute:
            key = ast_dotted(node)
            if key is not None:
                keys.add(key)
    return keys


def _depend_keys(target: ast.AST) -> list[str]:
    """The keys _ScopeUsage._depend gives a target: each element of a
    tuple or list, a starred one's value, ``x[i]``'s ``x`` (one subscript)."""
    kind = type(target)
    if kind is ast.Tuple or kind is ast.List:
        return [k for el in target.elts for k in _depend_keys(el)]  # type: ignore[attr-defined]
    if kind is ast.Starred:
        return _depend_keys(target.value)  # type: ignore[attr-defined]
    if kind is ast.Subscript:
        target = target.value  # type: ignore[attr-defined]
    key = ast_dotted(target)
    return [] if key is None else [key]


def eval_argument(facts: GateFacts, name: str, by_name: dict[str, list[ast.Call]]) -> bool:
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


def _mentions(value: ast.AST, target: ast.AST) -> bool:
    """``target`` (a name or ``a.b``) occurs in ``value``: MEM101's
    ``_accumulates``/``_rebuilds_entries`` and MEM102's concatenations read
    the target back."""
    key = ast_dotted(target)
    if key is None:
        return False
    head = key.split(".", 1)[0]
    table = ast_fields.CHILDREN
    stack: list[Any] = [value]
    push, extend, pop = stack.append, stack.extend, stack.pop
    while stack:
        node = pop()
        kind = type(node)
        if kind is ast.Name:
            if node.id == head and key == head:
                return True
            continue
        if kind is ast.Attribute and ast_dotted(node) == key:
            return True
        children = table.get(kind)
        if children is None:
            if kind is list:  # a field of a class whose signature was not read
                extend(node)
            continue  # None, or a scalar
        for field in children.singles:
            push(getattr(node, field))
        for field in children.lists:
            extend(getattr(node, field))
    return False
