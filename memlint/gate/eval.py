"""The gate's facts for MEM201 and MEM202 (evaluation and grad mode): a loop
or comprehension with evidence of evaluation that may run a model with grad
on (``evaluates_with_grad``), the loops that may run without grad and the
modules built where the rule would read them fresh (``builds_module``).
GateFacts' properties of those names compute them here on first use; see
gate/facts.py for what a gate condition must be (necessary, never a heuristic).
"""

from __future__ import annotations

import ast
import builtins
from typing import Any

from memlint.gate import ast_fields
from memlint.gate.ast_names import ast_callee, ast_dotted, ast_tokens
from memlint.gate.inplace import mode_set_by_statements
from memlint.gate.loops import eval_argument, eval_mode_call
from memlint.gate.off_blocks import shadowed, unshadow
from memlint.gate.syntax import (
    BACKWARD,
    GRAD_OFF_CONTEXTS,
    decorator_grad_context,
    grad_context,
    import_table,
    last_name,
    qualify,
)
from memlint.vocabulary.frameworks import LIGHTNING_NO_GRAD_HOOKS
from memlint.vocabulary.kinds import Kind, constructor_kind, guess_kind_from_name
from memlint.vocabulary.roots import NEVER_PROJECT_ROOTS

# The very words loops.py uses to call a loop a batch loop or a function an
# evaluation, so the gate widens whenever they do.
from memlint.vocabulary.tokens import DATA_TOKENS, EVAL_DATA_TOKENS, EVAL_FUNCTION_TOKENS, name_tokens

GateFacts = Any  # analysis/gate.GateFacts (no import circle)

# Functions grad_mode.entry_mode may find off whatever calls them: Lightning's
# evaluation hooks, a transformers Pipeline's ``_forward``, an
# autograd.Function's ``forward``/``setup_context``.
_OFF_ON_ENTRY = LIGHTNING_NO_GRAD_HOOKS | {"_forward"}
_AUTOGRAD_FUNCTION_OFF = frozenset({"forward", "setup_context"})
_MAY_TURN_OFF = GRAD_OFF_CONTEXTS | {"set_grad_enabled"}


class _Function:
    """What compute_loop_may_run_without_grad keeps of a function."""

    __slots__ = ("name", "key", "loops", "statements", "calls", "off_on_entry")

    def __init__(self, name: str, key: int = 0) -> None:
        self.name = name
        self.key = key  # the id of its def, 0 for the module's own statements
        self.loops: list[ast.AST] = []  # its loops (not its nested functions')
        self.statements: list[ast.AST] = []  # its statements (not its nested functions'), itself first
        self.calls: set[str] | None = None  # last names of what it calls, read on first need
        self.off_on_entry = False  # decorated so, or a framework's hook: this function, not its namesakes


def compute_loop_may_run_without_grad(facts: GateFacts, collect: bool) -> set[int] | None:
    """See GateFacts.loop_may_run_without_grad: the scopes (a def's id, 0 for
    the module) where loops.mode_before may end for a loop that may run
    without grad, holding a model call; None where any may (modes set by
    statements). With ``collect`` every such loop's scope and the callers of
    its function by name (mode_before goes to the call sites callgraph
    resolves, ``f()``, ``self.f()``, ``cls.f()``, every def of the name),
    transitively; else only whether one exists (a set of one scope, or none).

    Over-approximates grad_mode: a ``with`` item may turn grad off when its
    last name is a grad context, when it is a bare name (bound elsewhere) or
    a call of a function of this file (a context manager of the project's
    own); a function may start with grad off when it is decorated so, is a
    framework hook, or a call of its name runs where grad may be off.

    Walks statements only (most nodes of a file are expressions): loops,
    ``with`` blocks and functions are statements. Calls are read from the
    expressions of a statement only where grad may be off there, and a
    function's calls only when the search for functions entered with grad
    off reaches it.

    MEM202's ``_check`` needs ``info.model_calls`` (objects.is_model_call
    in the loop's span) and ``_grad_off``: the loop DISABLED, or every model
    call of it; so a loop counts only when it holds a call ModelReach says
    may be a model call, and a ``with`` that may turn grad off inside a loop
    only when it holds one (a model call DISABLED in a loop that is not
    lies under such a ``with``)."""
    if mode_set_by_statements(facts):
        return None  # modes set by statements, not followed here
    aliases, defs = facts._aliases, facts.def_names
    found: set[int] = set()
    seeds: set[str] = set()  # names called where grad may be off
    for call in facts._calls:
        func = call.func
        if type(func) is ast.Call and last_name(func, aliases) in _MAY_TURN_OFF:
            # ``predict = torch.inference_mode()(_predict)``
            seeds.update(a.id for a in call.args if type(a) is ast.Name)
    functions: list[_Function] = []
    autograd_methods: set[int] = set()  # an autograd.Function's forward/setup_context
    top = _Function("")
    stack: list[tuple[ast.AST, bool, bool, _Function]] = [
        (stmt, False, False, top)
        for stmt in getattr(facts._tree, "body", ())  # type: ignore[attr-defined]
    ]
    push, pop = stack.append, stack.pop
    while stack:
        node, off, in_loop, fn = pop()
        kind = type(node)
        if kind is ast.For or kind is ast.AsyncFor or kind is ast.While:
            if off and fn.key not in found and _calls_model(facts, node):
                found.add(fn.key)
                if not collect:
                    return found
            in_loop = True
            fn.loops.append(node)
        elif kind is ast.With or kind is ast.AsyncWith:
            if any(_may_turn_off(i.context_expr, aliases, defs) for i in node.items):  # type: ignore[attr-defined]
                # ``for x in loader: with torch.no_grad(): model(x)``
                if in_loop and fn.key not in found and _calls_model(facts, node):
                    found.add(fn.key)
                    if not collect:
                        return found
                fn.statements.append(node)
                if off:
                    seeds |= _names_called(node, aliases)  # its items
                for stmt in node.body:  # type: ignore[attr-defined]
                    push((stmt, True, in_loop, fn))
                continue
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            # grad_mode stops at a function: its body starts in its entry mode
            # (its decorators and defaults are read as its own).
            name = node.name  # type: ignore[attr-defined]
            fn = _Function(name, id(node))
            functions.append(fn)
            fn.off_on_entry = (
                name in _OFF_ON_ENTRY
                or id(node) in autograd_methods
                or any(_may_turn_off(d, aliases, None) for d in node.decorator_list)  # type: ignore[attr-defined]
                or any(_own_decorator(d, defs, facts._rebound) for d in node.decorator_list)  # type: ignore[attr-defined]
            )
            off = False
        elif kind is ast.ClassDef:
            if any((ast_dotted(b) or "").endswith("Function") for b in node.bases):  # type: ignore[attr-defined]
                autograd_methods.update(
                    id(n)
                    for n in ast_fields.nodes(node)
                    if type(n) in (ast.FunctionDef, ast.AsyncFunctionDef) and n.name in _AUTOGRAD_FUNCTION_OFF  # type: ignore[attr-defined]
                )
        fn.statements.append(node)
        if off:
            seeds |= _names_called(node, aliases)
        for field in _STATEMENT_BLOCKS:
            block = getattr(node, field, None)
            if block:
                for stmt in block:
                    push((stmt, off, in_loop, fn))
    if any(f.loops for f in functions):
        # grad_mode.entry_mode: off when every call site is; calls followed by
        # the name written (callgraph resolves ``f()`` and ``self.f()`` by name).
        maybe_off = set(seeds)
        grew = True
        while grew:
            grew = False
            for f in functions:
                if f.off_on_entry or f.name in maybe_off:
                    new = (_calls_of(f, aliases) & defs) - maybe_off
                    if new:
                        maybe_off |= new
                        grew = True
        for f in functions:
            if (
                f.key not in found
                and (f.off_on_entry or f.name in maybe_off)
                and any(_calls_model(facts, loop) for loop in f.loops)
            ):
                found.add(f.key)
                if not collect:
                    return found
    if not collect or not found:
        return found
    # mode_before's callers, by the name written, transitively
    names = {f.name for f in functions if f.key in found}
    grew = True
    while grew:
        grew = False
        for f in (top, *functions):
            if f.key not in found and _calls_of(f, aliases) & names:
                found.add(f.key)
                if f is not top:
                    names.add(f.name)
                grew = True
    return found


def _calls_of(f: _Function, aliases: dict[str, str]) -> set[str]:
    """The names ``f``'s own statements call with (_names_called), read once."""
    if f.calls is None:
        f.calls = set()
        for stmt in f.statements:
            f.calls |= _names_called(stmt, aliases)
    return f.calls


def compute_read_for_a_loop_without_grad(facts: GateFacts) -> set[int] | None:
    """GateFacts.module_built_for_a_loop_without_grad's scopes: where
    loops.mode_before may end for a loop that may run without grad (None:
    anywhere)."""
    return facts.off_loop_scopes()  # type: ignore[no-any-return]


_STATEMENT_BLOCKS = ast_fields.STATEMENT_BLOCKS


def _names_called(stmt: ast.AST, aliases: dict[str, str]) -> set[str]:
    """The names the calls in ``stmt``'s own expressions (not its blocks)
    are written with: the callee's last name and a bare name (callgraph
    resolves ``f()`` and ``self.f()`` by them)."""
    names: set[str] = set()
    for node in ast_fields.expression_calls(stmt):
        func = node.func
        last = ast_callee(func, aliases)
        if last is not None:
            names.add(last)
        if type(func) is ast.Name:
            names.add(func.id)
    return names


def _may_turn_off(expr: ast.AST, aliases: dict[str, str], defs: set[str] | None) -> bool:
    """A ``with`` item (``defs``: the file's function names) or a decorator
    (``defs`` None: grad_mode reads decorators by context_mode alone) that
    grad_mode may find DISABLED (see compute_loop_may_run_without_grad)."""
    call = expr if type(expr) is ast.Call else None
    func = call.func if call is not None else expr  # type: ignore[attr-defined]
    if type(func) is ast.Name:
        if call is None and defs is not None:
            return True  # ``with ctx:`` after ``ctx = torch.no_grad()``
        last = aliases.get(func.id, func.id)
    elif type(func) is ast.Attribute:
        last = func.attr
    else:
        return False
    return last in _MAY_TURN_OFF or (call is not None and defs is not None and last in defs)


def _own_decorator(decorator: ast.AST, defs: set[str], rebound: set[str]) -> bool:
    """A decorator named by a def or an assignment of this file
    (``@smart()``, ``@nograd``): grad_mode may find it one of the module's
    own grad-off decorators (analysis/autograd/off_decorators.py)."""
    func = decorator.func if type(decorator) is ast.Call else decorator  # type: ignore[attr-defined]
    return type(func) is ast.Name and (func.id in defs or func.id in rebound)  # type: ignore[attr-defined]


# -- MEM201: an evaluation that may run with grad on --------------------------

# objects._BUILTINS: names kind_of never guesses a kind for.
_NO_GUESS = frozenset({"self", "cls", "super", "print", "len", "range", "None", "True", "False"})
_EVAL_SITES = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.GeneratorExp)  # what MEM201 visits


class _EvalSite:
    """A loop, comprehension or scope MEM201 may report (see compute_evaluates_with_grad)."""

    __slots__ = ("off", "via", "loop", "mode_scope", "callees", "self_attrs", "cls_attrs", "calls_self", "shadow_of")

    def __init__(self, off: bool, via: str | None, loop: bool, mode_scope: int | None = None) -> None:
        self.off = off  # grad surely off or set around it (mode_at not ENABLED, or local_mode set)
        # Its only evidence: its iterable names a parameter of the function ``via``,
        # which a call of that name must fill with evaluation data (gate_loops.eval_argument).
        self.via = via
        # A loop (loops.LoopInfo.calls_model follows the functions it calls),
        # not a comprehension (comprehension_is_eval reads its own model calls only).
        self.loop = loop
        # Its only evidence: an eval-mode call in the scope keyed so (the id of
        # its innermost def, 0 for the module): loops' ``mode_calls`` of that scope.
        self.mode_scope = mode_scope
        self.callees: set[str] = set()  # bare names it calls
        self.self_attrs: set[str] = set()  # ``x`` of a ``self.x(...)`` it calls
        self.cls_attrs: set[str] = set()  # ``x`` of a ``cls.x(...)``
        self.calls_self = False  # ``x.module(...)``, ``x.forward(...)``
        # A scope's site seen from a ``with`` that surely turns grad off (off_blocks.py):
        # the site whose calls these are, should the file rebind what the ``with`` reads.
        self.shadow_of: _EvalSite | None = None

    def sure(self) -> bool:
        """Its evidence holds whatever the rest of the file says, and grad may be on."""
        return not self.off and self.via is None and self.mode_scope is None


def compute_evaluates_with_grad(facts: GateFacts) -> bool:
    """See GateFacts.evaluates_with_grad. Without training or ``volatile=``,
    MEM201 reports only a loop (``_check``, role "eval", or
    ``_callers_evaluate``), a comprehension (``comprehension_is_eval``), a
    function (``visit_FunctionDef``) or a statement of a scope
    (``visit_Module``) with evidence of evaluation: its function named for
    evaluation, its iterable naming evaluation data or
    (``_iterates_eval_argument``) a parameter of its function; or an
    eval-mode call (objects.mode_call "eval") in its own scope (loops'
    ``mode_calls`` of the innermost def, the module's outside any:
    ``_eval_evidence``'s and comprehension_is_eval's last mode call,
    visit_FunctionDef's and visit_Module's ``mode_calls``); or, for
    ``_callers_evaluate`` (whose ``mode_before`` follows callers and
    callees), a loop of a function called in this file whose iterable names
    data (LoopInfo.is_batch_loop without a role) in a file with an
    eval-mode call. A function or a scope's statement is read as a site
    that spans its own scope (a nested def is a scope of its own).

    It needs grad_mode.mode_at ENABLED with no local_mode there, so nothing
    in its own function surely sets a mode around it (``with
    torch.no_grad():``) and no decorator turns its function off
    (``@torch.no_grad()`` on transformers' ``generate``; entry_mode, for
    visit_FunctionDef). And it needs a call that may build a graph in its
    span (``_builds_graph``, ``comprehension_is_eval``'s and the scopes'
    model calls): a callee objects.kind_of may find a module, or, in a loop,
    callgraph may resolve to a function of this file. That is
    ``self.x(...)``, ``cls.x(...)``, ``x.module(...)``, ``x.forward(...)``,
    or a bare name that is bound in this file, read as ``name.attr``
    (``_parameters_read``, ``_used_as_module``), or named like a model
    (guess_kind_from_name). ``isinstance``, ``len``, ``ValueError``,
    ``x.items()`` never are; nor is a name bound only by a ``def``, a
    ``class`` or an import, a ``self.x`` never assigned nor read as
    ``self.x.parameters`` (or ``.load_state_dict``) and not named like a
    model, or a ``cls.x`` (see
    ModelReach): a loop's call of one counts when the function of the file
    it may resolve to may run a model in turn (loops.LoopInfo.calls_model),
    a comprehension's or a scope's never."""
    if "volatile" in facts.keywords:
        return True
    if facts.trains and _trains_under_a_flag_passed_false(facts):
        return True
    modes = facts.eval_call  # some eval-mode call: sites whose evidence is one in their scope
    qualified = import_table(facts)
    aliases = facts._aliases
    called = facts.called | facts._aliases.keys() if modes else set()  # callgraph's call_sites, by name, wide
    heads: set[str] = set()  # the names each "off" was read through
    sites: list[_EvalSite] = []
    shadows: list[_EvalSite] = []  # the scopes' sites seen from a ``with`` that turns grad off
    eval_scopes: set[int] = set()  # the scopes holding an eval-mode call (see _EvalSite.mode_scope)
    methods: set[int] = set()  # functions right in a class body: ``self`` is never bound by an argument
    # Per scope, the bare names and ``self.x``/``cls.x`` it calls, and each
    # def's name by its scope: a loop after ``self.net_mode(train=False)``
    # has the eval switch of the function it calls (MEM201's _helper_switched_to_eval).
    scope_calls: dict[int, set[str]] = {}
    scope_names: dict[int, str] = {}
    AST, Name, Attribute, Call = ast.AST, ast.Name, ast.Attribute, ast.Call
    table = ast_fields.CHILDREN
    # (node, its function's name, its parameters, grad surely set here, the sites around it, its scope)
    top: tuple[_EvalSite, ...] = ()
    if modes:  # visit_Module's statements of the module's own body
        sites.append(_EvalSite(False, None, False, 0))
        top = (sites[-1],)
    stack: list[tuple[ast.AST, str, frozenset, bool, tuple[_EvalSite, ...], int]] = [
        (facts._tree, "", frozenset(), False, top, 0)
    ]
    push, pop = stack.append, stack.pop
    while stack:
        node, fn_name, params, off, open_sites, scope = pop()
        kind = type(node)
        if kind is Name:
            continue  # what ModelReach reads of names GateFacts' walk gathered
        if kind is Call:
            func = node.func  # type: ignore[attr-defined]
            if modes and eval_mode_call(node, aliases):  # type: ignore[arg-type]
                eval_scopes.add(scope)
            if modes:  # a function of the file it may call: its switches are the scope's (mode_events)
                if type(func) is Name:
                    scope_calls.setdefault(scope, set()).add(func.id)
                elif type(func) is Attribute and type(func.value) is Name and func.value.id in ("self", "cls"):
                    scope_calls.setdefault(scope, set()).add(func.attr)
            if open_sites:
                if node.args and (func.id if type(func) is Name else getattr(func, "attr", "")) == "data_parallel":  # type: ignore[attr-defined]
                    # ``nn.parallel.data_parallel(netG, inputs, gpus)`` runs ``netG``
                    # (objects._parallel_forward): read as a call of its first argument.
                    func = node.args[0]  # type: ignore[attr-defined]
                    if type(func) is Attribute and type(func.value) is Name and func.value.id in ("self", "cls"):
                        for site in open_sites:
                            (site.self_attrs if func.value.id == "self" else site.cls_attrs).add(func.attr)
                        func = None
                if type(func) is Name:
                    for site in open_sites:
                        site.callees.add(func.id)
                elif type(func) is Attribute:
                    if func.attr in ("forward", "__call__", "module"):
                        if any(site.sure() for site in open_sites):
                            return True  # a site may build a graph whatever the imports say
                        for site in open_sites:
                            site.calls_self = True
                    elif type(func.value) is Name and func.value.id in ("self", "cls"):
                        if (
                            func.value.id == "self"
                            and guess_kind_from_name(func.attr) is Kind.MODULE
                            and any(site.sure() for site in open_sites)
                        ):
                            return True  # ``self.model(x)``: a model call whatever the file binds
                        for site in open_sites:
                            (site.self_attrs if func.value.id == "self" else site.cls_attrs).add(func.attr)
        elif kind in _EVAL_SITES:
            if kind is ast.While:
                tokens, idents = ast_tokens(node.test)  # type: ignore[attr-defined]
            elif kind is ast.For or kind is ast.AsyncFor:
                tokens, idents = ast_tokens(node.iter)  # type: ignore[attr-defined]
            else:
                tokens, idents = set(), set()
                for gen in node.generators:  # type: ignore[attr-defined]
                    more, _ = ast_tokens(gen.iter)
                    tokens |= more
            loop = kind is ast.For or kind is ast.AsyncFor or kind is ast.While
            if name_tokens(fn_name) & EVAL_FUNCTION_TOKENS or tokens & EVAL_DATA_TOKENS:
                site = _EvalSite(off, None, loop)
            elif modes and loop and scope and tokens & DATA_TOKENS and fn_name in called:
                site = _EvalSite(off, None, loop)  # _callers_evaluate
            elif idents & params:
                site = _EvalSite(off, fn_name, loop)
                if modes:  # or the eval role from an eval-mode call in its scope
                    sites.append(_EvalSite(off, None, loop, scope))
                    open_sites = (*open_sites, sites[-1])
            elif modes:
                site = _EvalSite(off, None, loop, scope)
            else:
                site = None
            if site is not None:
                sites.append(site)
                open_sites = (*open_sites, site)
        elif kind is ast.With or kind is ast.AsyncWith:
            modes_set = [grad_context(i.context_expr, qualified, aliases, heads) for i in node.items]  # type: ignore[attr-defined]
            for item in node.items:  # type: ignore[attr-defined]
                push((item, fn_name, params, off, open_sites, scope))
            inner = off or "off" in modes_set  # a mode set around the body: local_mode is not None
            body_sites = shadowed(open_sites, modes_set, shadows)
            for stmt in node.body:  # type: ignore[attr-defined]
                push((stmt, fn_name, params, inner, body_sites, scope))
            continue
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            # grad_mode stops at a function: its decorators, defaults and body
            # run in its entry mode, which a decorator sets first.
            decorators = [decorator_grad_context(d, qualified, aliases, heads) for d in node.decorator_list]  # type: ignore[attr-defined]
            off = "off" in decorators and "on" not in decorators
            fn_name = node.name  # type: ignore[attr-defined]
            scope = id(node)
            scope_names[scope] = fn_name
            args = node.args  # type: ignore[attr-defined]
            positional = [a.arg for a in (*args.posonlyargs, *args.args)]
            names = {*positional, *(a.arg for a in args.kwonlyargs)}
            names.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
            if id(node) in methods and positional and positional[0] in ("self", "cls"):
                names.discard(positional[0])  # callgraph resolves a method only as ``self.m(...)``
            params = frozenset(names)
            if modes:  # visit_FunctionDef, and visit_Module's statements of its body
                # The model calls of a scope are its own (loops' scope facts),
                # a nested def's are not the enclosing scope's.
                open_sites = (*(s for s in open_sites if s.mode_scope is None), _EvalSite(off, None, False, scope))
                sites.append(open_sites[-1])
        elif kind is ast.ClassDef:
            methods.update(id(s) for s in node.body if type(s) in (ast.FunctionDef, ast.AsyncFunctionDef))  # type: ignore[attr-defined]
        children = table.get(kind)
        if children is None or children.generic:  # a class whose signature was not read
            for field in node._fields:
                value = getattr(node, field, None)
                if type(value) is list:
                    for item in value:
                        if isinstance(item, AST):
                            push((item, fn_name, params, off, open_sites, scope))
                elif isinstance(value, AST):
                    push((value, fn_name, params, off, open_sites, scope))
            continue
        for field in children.singles:
            value = getattr(node, field)
            if value is not None:
                push((value, fn_name, params, off, open_sites, scope))
        for field in children.lists:
            for item in getattr(node, field):
                if item is not None:  # a Dict's keys may hold None
                    push((item, fn_name, params, off, open_sites, scope))
    if not sites:
        return False
    reach = ModelReach.of(facts)
    # else context_mode may not resolve ``torch``
    trusted_off = not heads & (reach.rebound | facts.def_names | facts._classes)
    if not trusted_off:
        unshadow(shadows)
    # Only a loop takes the switch of a function it calls as its own
    # (_helper_switched_to_eval reads mode_events); a scope's statements
    # (visit_FunctionDef, visit_Module) and a comprehension
    # (comprehension_is_eval) need an eval-mode call in their own scope.
    loop_eval_scopes = eval_scopes
    if modes:
        loop_eval_scopes = eval_scopes | _switching_through_calls(eval_scopes, scope_calls, scope_names)
    eval_arguments: dict[str, bool] = {}
    calls_by_name: dict[str, list[ast.Call]] = {}
    for site in sites:
        if site.off and trusted_off:
            continue
        if site.mode_scope is not None and site.mode_scope not in (loop_eval_scopes if site.loop else eval_scopes):
            continue
        if not site.calls_self and not reach.site_may_run_model(site):
            continue
        if site.via is None:
            return True
        if site.via not in eval_arguments:
            eval_arguments[site.via] = eval_argument(facts, site.via, calls_by_name)
        if eval_arguments[site.via]:
            return True
    return False


def _switching_through_calls(eval_scopes: set[int], calls: dict[int, set[str]], names: dict[int, str]) -> set[int]:
    """The scopes that call, by name, a def of the file whose scope holds an
    eval-mode call or calls one that does, and so on (names, not defs: a
    superset of what callgraph resolves)."""
    switching = {names[s] for s in eval_scopes if s in names}
    found: set[int] = set()
    changed = bool(switching)
    while changed:
        changed = False
        for scope, called in calls.items():
            if scope not in found and scope not in eval_scopes and called & switching:
                found.add(scope)
                if scope in names and names[scope] not in switching:
                    switching.add(names[scope])
                changed = True
    return found


def compute_sampler_runs_a_model(facts: GateFacts, words: frozenset[str]) -> bool:
    """See GateFacts.sampler_def: a function whose name holds one of
    ``words`` (evaluation, sampling), with no loop of its own, holds a call
    objects.is_model_call may find a module call (MEM202's
    visit_FunctionDef needs both)."""
    for node in facts._functions:  # every def of the file, as the main walk met them
        if name_tokens(node.name) & words and not _has_own_loop(node) and _calls_model(facts, node):
            return True
    return False


def _has_own_loop(fn: ast.AST) -> bool:
    """A ``for``/``while`` of ``fn`` itself (not of a function or class inside it)."""
    stack = list(fn.body)  # type: ignore[attr-defined]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in (ast.For, ast.AsyncFor, ast.While):
            return True
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def _calls_model(facts: GateFacts, root: ast.AST) -> bool:
    """objects._is_model_call may hold for a call in ``root`` (MEM202's
    ``info.model_calls``: no call followed into a function): ``.forward``
    stripped, a callee ModelReach may find MODULE. The file's bindings are
    walked only for a call the names alone do not decide."""
    pending: list[tuple[bool, str]] = []  # (a ``self.x``, its name)
    for node in ast_fields.nodes(root):
        if type(node) is not ast.Call:
            continue
        func = node.func  # type: ignore[attr-defined]
        if type(func) is ast.Attribute and func.attr in ("forward", "__call__"):
            func = func.value
        if type(func) is ast.Name:
            if func.id not in _NO_GUESS and guess_kind_from_name(func.id) is Kind.MODULE:
                return True
            pending.append((False, func.id))
        elif type(func) is ast.Attribute:
            if func.attr == "module":
                return True  # ``model.module``: its object may be a module
            value = func.value
            if type(value) is ast.Name and value.id == "self":
                if facts._self_rebound or guess_kind_from_name(func.attr) is Kind.MODULE:
                    return True
                pending.append((True, func.attr))
    if not pending:
        return False
    reach = ModelReach.of(facts)
    return any(reach.self_attr_may_be_model(n) if is_self else reach.name_may_be_model(n) for is_self, n in pending)


# The nodes other than a stored ``ast.Name`` that bind a name.
BINDERS = frozenset(
    {ast.arg, ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.Global, ast.Nonlocal, ast.MatchMapping}
)


def bind_names(node: ast.AST, kind: type, rebound: set[str]) -> None:
    if kind is ast.arg:
        rebound.add(node.arg)  # type: ignore[attr-defined]
    elif kind is ast.Global or kind is ast.Nonlocal:
        rebound.update(node.names)  # type: ignore[attr-defined]
    else:
        name = node.rest if kind is ast.MatchMapping else node.name  # type: ignore[attr-defined]
        if name:
            rebound.add(name)


class ModelReach:
    """Whether a call objects.is_model_call may find a module call, or
    callgraph may resolve to a function of this file that may run one
    (loops.calls_model: its scope's model calls, or its resolved callees'
    in turn). What objects.kind_of can find MODULE:

    - a bare ``name`` with a definition key (objects' ``_defs``/``_params``:
      assignments, parameters, loop and ``with`` targets; ``_parameters_read``
      and ``_used_as_module`` need one too): ``bound``, every name the file
      binds other than by ``def``, ``class`` or import (neither objects nor
      callgraph binds a class; an import is LOSS or nothing), with the names
      read as ``name.attr``. Else guess_kind_from_name, as for any name;
    - ``self.x``: its key ``(class, "self.x")`` is MODULE only from a
      ``self.x = ...`` of the file, a ``self.x.parameters()`` read
      (``_parameters_read``, ``_used_as_module``), a
      ``self.x.load_state_dict()`` (``_restored`` needs it), or the guess on
      ``x`` (``self_bound``: the stores and those reads, facts._MODULE_EVIDENCE);
      a file that rebinds ``self`` stays wide;
    - ``cls.x`` never (no key; a ``cls.module`` is read with ``.forward``).

    callgraph._lookup_call resolves a bare ``f(...)``, ``self.f(...)`` and
    ``cls.f(...)`` to a def named ``f``: read wide, every def of that name,
    nested defs and lambdas included, with the same test on its calls."""

    def __init__(self, facts: GateFacts, rebound: set[str], bases: set[str], self_bound: set[str]) -> None:
        # What it reads of the facts, not the facts (which hold it: a reference cycle).
        self._self_rebound: bool = facts._self_rebound
        self._def_names: set[str] = facts.def_names
        self._functions: list[ast.AST] = facts._functions
        # Names bound other than by def, class or import (names.ImportTable
        # also drops an import rebound so), names read as ``name.attr``, and
        # the ``x`` of a ``self.x`` assigned or read as ``self.x.parameters``.
        self.rebound = rebound
        self._bound = rebound | bases
        self._self_bound = self_bound
        self._by_name: dict[str, list[ast.AST]] | None = None
        self._memo: dict[str, bool] = {}

    @staticmethod
    def of(facts: GateFacts) -> ModelReach:
        """The file's, built on first use (MEM201, MEM202) from what
        GateFacts' walk gathered (its ``_rebound``, ``_bases`` and
        ``_self_bound``: a Name not loaded, a binder's names, the object
        of ``name.attr``, the ``x`` of a ``self.x`` stored or of a
        ``self.x.parameters``, ``.named_parameters``, ``.load_state_dict``)."""
        if facts._model_reach is None:
            facts._model_reach = ModelReach(facts, facts._rebound, facts._bases, facts._self_bound)
        return facts._model_reach

    def name_may_be_model(self, name: str) -> bool:
        return name in self._bound or (name not in _NO_GUESS and guess_kind_from_name(name) is Kind.MODULE)

    def self_attr_may_be_model(self, attr: str) -> bool:
        return self._self_rebound or attr in self._self_bound or guess_kind_from_name(attr) is Kind.MODULE

    def site_may_run_model(self, site: _EvalSite) -> bool:
        """A call in ``site`` may build a graph: run a model, or, in a loop,
        a function of this file that may (``_builds_graph`` needs one, and
        LoopInfo's "eval" role calls_model)."""
        defined = self._def_names
        if any(self.name_may_be_model(n) for n in site.callees) or any(
            self.self_attr_may_be_model(a) for a in site.self_attrs
        ):
            return True
        if not site.loop:
            return False  # comprehension_is_eval reads the model calls in its own span only
        return any(
            n in defined and self.may_run_model(n)
            for names in (site.callees, site.self_attrs, site.cls_attrs)
            for n in names
        )

    def may_run_model(self, name: str) -> bool:
        """A def of this file named ``name`` may run a model, directly or
        through the defs it may call (loops._fn_fact "model"). The whole
        closure is read: _fn_fact's answer, memoized on a cycle in whatever
        order the rule asks, is never more than that."""
        if name in self._memo:
            return self._memo[name]
        if self._by_name is None:
            self._by_name = {}
            for fn in self._functions:
                self._by_name.setdefault(fn.name, []).append(fn)  # type: ignore[attr-defined]
        seen = {name}
        todo = [name]
        while todo:
            for fn in self._by_name.get(todo.pop(), ()):
                found, callees = self._scan(fn)
                if found or any(self._memo.get(c) for c in callees):
                    self._memo[name] = True
                    return True
                for c in callees:
                    if c not in seen and c not in self._memo:
                        seen.add(c)
                        todo.append(c)
        for n in seen:  # each one reaches no more than ``name`` does
            self._memo[n] = False
        return False

    def _scan(self, fn: ast.AST) -> tuple[bool, set[str]]:
        """Whether ``fn`` (nested defs and lambdas included) holds a call
        that may be a model call, and the defs of this file its other calls
        may resolve to."""
        defined = self._def_names
        callees: set[str] = set()
        for node in ast_fields.nodes(fn):
            if type(node) is not ast.Call:
                continue
            func = node.func  # type: ignore[attr-defined]
            if type(func) is ast.Attribute:
                attr = func.attr
                if attr in ("forward", "__call__", "module"):
                    return True, callees
                value = func.value
                if type(value) is not ast.Name or value.id not in ("self", "cls"):
                    continue
                if value.id == "self" and self.self_attr_may_be_model(attr):
                    return True, callees
                name = attr
            elif type(func) is ast.Name:
                name = func.id
                if self.name_may_be_model(name):
                    return True, callees
            else:
                continue
            if name in defined:
                callees.add(name)
        return False, callees


_TRAINING_CALLS = BACKWARD | {"step", "grad"}  # objects.is_backward_call, is_optimizer_step, autograd.grad


def _trains_under_a_flag_passed_false(facts: GateFacts) -> bool:
    """MEM201's path that needs training without an eval call or
    ``volatile=`` (_check_shared_loop): loops.training_guards needs a
    function whose own backward or step sits in the body of an ``if p:``,
    ``p`` one of its parameters, and a call that binds a literal ``False`` to
    ``p`` (callgraph.bound_params: ``p=False``, or a positional ``False``);
    or in the body of an ``if not p:`` and a call binding a literal ``True``.
    Read wide: any call with such an argument, any def, nested ones too."""
    keywords: dict[bool, set[str]] = {False: set(), True: set()}
    positional = {False: False, True: False}
    for call in facts._calls:
        for a in call.args:
            if type(a) is ast.Constant and type(a.value) is bool:
                positional[a.value] = True
        for k in call.keywords:
            if k.arg is not None and type(k.value) is ast.Constant and type(k.value.value) is bool:
                keywords[k.value.value].add(k.arg)
    if not any(positional.values()) and not keywords[False] and not keywords[True]:
        return False
    aliases = facts._aliases
    for fn in facts._functions:
        params = _parameters(fn)
        flags = params if positional[False] else params & keywords[False]
        negated = params if positional[True] else params & keywords[True]
        if not flags and not negated:
            continue
        for node in ast_fields.nodes(fn):
            if type(node) is not ast.If:
                continue
            test = node.test  # type: ignore[attr-defined]
            if type(test) is ast.UnaryOp and type(test.op) is ast.Not and type(test.operand) is ast.Name:
                if test.operand.id not in negated:
                    continue
            elif type(test) is not ast.Name or test.id not in flags:
                continue
            for inner in node.body:  # type: ignore[attr-defined]
                for n in ast_fields.nodes(inner):
                    if type(n) is ast.Call and ast_callee(n.func, aliases) in _TRAINING_CALLS:  # type: ignore[attr-defined]
                        return True
    return False


# objects._SELF_RETURNING: ``Net().to(dev)`` is still the module ``Net()`` built.
_SELF_RETURNING = frozenset(
    {"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "train", "eval", "requires_grad_", "to_empty"}
)


def _module_classes(facts: GateFacts) -> set[str]:
    """The classes of this file objects._class_kind may find modules: a base
    that is one of them, or imported from ``torch.nn`` (not a loss),
    Lightning, or a transformers ``...Model``/``PreTrainedModel``; never a
    class named for a loss (``...Loss``, ``...Criterion``). A transformers
    ``ModelOutput`` dataclass is none (relative imports are not read)."""
    imported = import_table(facts)
    found: set[str] = set()
    grew = True
    while grew:
        grew = False
        for cls in facts._class_nodes:
            if cls.name in found or cls.name.endswith(("Loss", "Criterion")):
                continue
            for base in cls.bases:
                dotted = ast_dotted(base)
                if dotted is None:
                    continue
                _, qualified = qualify(base, imported)
                if dotted in found or any(
                    (q.startswith("torch.nn.") and not q.startswith("torch.nn.modules.loss") and q != "torch.nn._Loss")
                    or q.startswith(("pytorch_lightning.", "lightning."))
                    or (q.startswith("transformers.") and q.endswith("Model"))
                    for q in qualified
                ):
                    found.add(cls.name)
                    grew = True
                    break
    return found


def compute_builds_module(facts: GateFacts, read_in: set[int] | None) -> bool:
    """Some definition objects.built_in_train_mode may call fresh: a name (or,
    where a function rebinds ``self``, a ``self.x``) bound by ``=``, ``: T =``
    or ``:=`` to a call whose callee may build a module (objects._fresh and
    constructor_kind's MODULE cases: a class of this file; an imported
    capitalised callee of torch, torchvision or timm, ``create_model``,
    anything of torchvision), under a name a model call may name; with
    ``read_in``, a bare name bound by ``=`` only where its innermost def (0:
    the module) is one of those scopes (objects._key_for_read's key for a
    local name, see _local_to).
    Reads what the walk kept (calls, bindings, imports, classes)."""
    classes = _module_classes(facts)
    bound: list[tuple[ast.AST, ast.AST]] = [(t, node.value) for node in facts._assigns for t in node.targets]
    statements = len(bound)  # the first ``statements`` pairs are ``=`` statements
    bound += facts._bindings
    if not bound:
        return False
    self_rebound = facts._self_rebound
    # What a loop's model call may name as its module (loops' receivers: the
    # callee, the object of ``m.forward(...)`` or of a method whose ``self``
    # is mapped back, an argument mapped back from a callee's parameter).
    # Read off every call of the file, so only once a binding may build a module.
    used: set[str | None] = set()
    used_read = False

    def may_be_used(spelled: str | None) -> bool:
        nonlocal used_read
        if not used_read:
            used_read = True
            for node in facts._calls:
                func = node.func
                used.add(ast_dotted(func.value) if type(func) is ast.Attribute else ast_dotted(func))
                used.update(ast_dotted(a.value if type(a) is ast.Starred else a) for a in node.args)
                used.update(ast_dotted(k.value) for k in node.keywords)
        return spelled in used

    imported = import_table(facts)
    relative_names = _relative_names(facts)
    found_factories: set[str] | None = None
    reading_factories = False

    def factories() -> set[str]:
        """The defs objects._factory_fresh may call factories: a def with a
        ``return`` of a value and a call in it that may build a module (every
        return it reads hands back such a call, or a name bound to one, moves
        aside), or a call of another such def (a factory of a factory). Most
        files call many defs of their own (``rotate_half(x)``) and none of
        them builds a module: read once, the first time a def's call is bound."""
        nonlocal found_factories, reading_factories
        if reading_factories:
            return set()  # the defs' own calls are gathered apart, for the fixed point below
        if found_factories is None:
            reading_factories = True
            relative = _relative_names(facts)
            known = facts.project_classes
            found: set[str] = set()
            calling: list[tuple[str, set[str]]] = []  # a def that returns, and the defs it calls
            try:
                for fn in facts._functions:
                    nodes = ast_fields.nodes(fn)  # every Return and Call, less contexts and operators
                    if not any(type(n) is ast.Return and n.value is not None for n in nodes):  # type: ignore[attr-defined]
                        continue
                    calls = [n for n in nodes if type(n) is ast.Call and not _moves_only(n)]
                    if any(may_build(n, None) or _may_be_a_project_class(n, imported, relative, known) for n in calls):
                        found.add(fn.name)  # type: ignore[attr-defined]
                    else:
                        defs = {n.func.id for n in calls if type(n.func) is ast.Name} & facts.def_names  # type: ignore[attr-defined]
                        calling.append((fn.name, defs))  # type: ignore[attr-defined]
            finally:
                reading_factories = False
            grew = True
            while grew:
                grew = False
                for name, defs in calling:
                    if name not in found and defs & found:
                        found.add(name)
                        grew = True
            found_factories = found
        return found_factories

    def may_build(value: ast.AST, target: str | None) -> bool:
        if type(value) in (ast.Tuple, ast.List):  # ``model, opt = Net(), SGD(...)``
            return any(may_build(el, None) for el in value.elts)  # type: ignore[attr-defined]
        if type(value) is not ast.Call:
            return False
        func = value.func  # type: ignore[attr-defined]
        if type(func) is ast.Attribute:
            if func.attr in _SELF_RETURNING:
                # ``model = model.to(dev)`` counts as fresh when the name's other definitions are
                inner = func.value
                if type(inner) is ast.Call:
                    return may_build(inner, target)
                return target is None or ast_dotted(inner) == target
        if type(func) is ast.Name and func.id in classes:
            return True  # a class of this file (objects._module_classes, read for a bare name only)
        if type(func) is ast.Name and func.id in facts.def_names and func.id in factories():
            return True  # a factory of this file whose returns build one (objects._factory_fresh)
        if _may_be_a_project_class(value, imported, relative_names, facts.project_classes):
            return True  # a model class of another module (objects._fresh, ProjectView.model_classes)
        # objects._fresh: an imported callee whose constructor_kind is MODULE
        # (``nn.CrossEntropyLoss()`` is a LOSS, ``nn.Parameter`` none), not
        # loaded (``from_pretrained``, ``torch.hub``, ``.load``).
        for qualified in qualify(func, imported)[1]:
            if qualified.endswith((".from_pretrained", ".load")) or qualified.startswith("torch.hub"):
                continue
            if constructor_kind(qualified) is Kind.MODULE:
                return True
        return False

    # may_build calls itself through its closure cell: a reference cycle
    # that only the cyclic collector would free. Emptying the cell on the
    # way out breaks it.
    try:
        for i, (target, value) in enumerate(bound):
            if type(target) is ast.Attribute and not (
                self_rebound and type(target.value) is ast.Name and target.value.id == "self"  # type: ignore[attr-defined]
            ):
                continue  # objects keys only names and ``self.x``, and reads ``self.x`` only where ``self`` is not a parameter
            if type(target) is ast.Subscript:
                continue
            if type(value) in (ast.Tuple, ast.List) and type(target) in (ast.Tuple, ast.List):
                # ``model, opt = Net(), SGD(...)``: element by element
                pairs = list(zip(target.elts, value.elts))  # type: ignore[attr-defined]
            else:
                pairs = [(target, value)]
            for t, v in pairs:
                if type(t) in (ast.Tuple, ast.List, ast.Starred):
                    if may_build(v, None):
                        return True
                    continue
                spelled = ast_dotted(t)
                if (
                    may_build(v, spelled)
                    and may_be_used(spelled)
                    and (read_in is None or not _local_to(facts, t, i < statements, read_in))
                    and not (i < statements and _never_read_fresh(facts, t, may_build))
                ):
                    return True
        return False
    finally:
        may_build = None  # type: ignore[assignment]


_BUILTINS = frozenset(dir(builtins))


def _may_be_a_project_class(
    call: ast.AST, imported: dict[str, set[str]], relative: set[str] | None, known: frozenset[str] | None = None
) -> bool:
    """``UNet16(num_classes=n)`` with ``UNet16`` imported from the project (by
    an absolute import of no library, or a relative one; ``relative`` None: a
    star import may bind any name): objects' project classes (the view's
    model_classes, spelled as imported) may make it a fresh module.
    ``known``: those classes, once the view is known (GateFacts.project_classes,
    gate/project_gate.py): objects._fresh reads no other."""
    func = call.func  # type: ignore[attr-defined]
    head, qualified = qualify(func, imported)
    if not head or head in ("self", "cls") or head in _BUILTINS:
        return False  # no dotted name, a method's receiver, a builtin
    if qualified:
        found = any(q.split(".")[0] not in NEVER_PROJECT_ROOTS for q in qualified)
    else:
        found = relative is None or head in relative
    return found and (known is None or ast_dotted(func) in known)


def project_class_spellings(facts: GateFacts) -> frozenset[str]:
    """Every callee spelling that _may_be_a_project_class may take for a
    project class where compute_builds_module asks (the calls of the defs):
    the view's model_classes must hold one of them for
    GateFacts.project_classes to change an answer."""
    imported = import_table(facts)
    relative = _relative_names(facts)
    found = set()
    for fn in facts._functions:
        for n in ast.walk(fn):
            if type(n) is ast.Call and not _moves_only(n) and _may_be_a_project_class(n, imported, relative):
                spelled = ast_dotted(n.func)
                if spelled is not None:
                    found.add(spelled)
    return frozenset(found)


def _relative_names(facts: GateFacts) -> set[str] | None:
    """The names relative imports bind; None when a star import may bind any."""
    names: set[str] = set()
    for imp in facts._imports:
        for alias in imp.names:  # type: ignore[attr-defined]
            if alias.name == "*":
                return None
            if isinstance(imp, ast.ImportFrom) and imp.level:
                names.add(alias.asname or alias.name)
    return names


def _moves_only(call: ast.AST) -> bool:
    """``x.cuda()``, ``x.to(dev)``...: builds nothing itself (its receiver's
    call, if any, is another node of the walk)."""
    func = call.func  # type: ignore[attr-defined]
    return type(func) is ast.Attribute and func.attr in _SELF_RETURNING


def innermost_function(functions: list[ast.AST], node: ast.AST) -> ast.AST | None:
    """The innermost def whose span holds ``node`` (objects' ``_stack[-1]``
    for a statement: a class body inside a def binds in the def)."""
    pos = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
    best = None
    for fn in functions:
        start = (fn.lineno, fn.col_offset)  # type: ignore[attr-defined]
        if start <= pos <= (fn.end_lineno, fn.end_col_offset) and (  # type: ignore[attr-defined]
            best is None or start > (best.lineno, best.col_offset)  # type: ignore[attr-defined]
        ):
            best = fn
    return best


def _local_to(facts: GateFacts, target: ast.AST, statement: bool, scopes: set[int]) -> bool:
    """``target`` is a bare name an ``=`` statement binds in a def (or the
    module) outside ``scopes``: objects keys it by that innermost def, and
    reads it only from there. A ``:=`` (it may sit in a decorator, keyed by
    the def it decorates) and ``: T =`` stay wide."""
    if not statement or type(target) is not ast.Name:
        return False
    fn = innermost_function(facts._functions, target)
    return (0 if fn is None else id(fn)) not in scopes


def _parameters(fn: ast.AST) -> set[str]:
    """loops._params: every parameter of ``fn``, starred ones included."""
    a = fn.args  # type: ignore[attr-defined]
    names = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    names.update(p.arg for p in (a.vararg, a.kwarg) if p is not None)
    return names


def _never_read_fresh(facts: GateFacts, target: ast.AST, may_build) -> bool:
    """A name bound by an ``=`` statement inside a def ``f`` whose
    definitions objects.built_in_train_mode can never find all fresh. They
    are keyed ``(f, "x")`` (objects._key: the innermost def; a class body
    inside ``f`` binds in ``f``), and only loops._default_mode reads them,
    for a receiver ``x`` local to the scope it is called in and no
    parameter there (mode_before's ``_local_names(scope) - _params(scope)``):
    in ``f`` itself, or in a def nested in ``f`` -- but a name local there
    is bound there, so the read stops at that def's own key
    (objects._key_for_read). Hence:

    - ``x`` a parameter of ``f``: never read (mode_before goes to the
      callers instead: ``hidden_states = hidden_states.to(torch.float32)``);
    - another ``=`` statement of ``f`` binds the bare name ``x`` (alone or
      as an element of a tuple target) to a value that is not fresh (not
      may_build: ``x = a * b`` or ``x, i = torch.topk(a, 2)`` then
      ``x = x.to(dtype)``): built_in_train_mode needs every definition fresh.

    Only ``=`` statements are read here (a walrus may sit in a decorator or
    a lambda, keyed elsewhere or not at all); module-level names stay."""
    if type(target) is not ast.Name:
        return False
    functions = facts._functions
    fn = innermost_function(functions, target)
    if fn is None:
        return False
    name = target.id  # type: ignore[attr-defined]
    if name in _parameters(fn):
        return True
    for node in facts._assigns:
        for t in node.targets:
            if type(t) is ast.Name:
                if t.id == name and not may_build(node.value, name) and innermost_function(functions, t) is fn:  # type: ignore[attr-defined]
                    return True
            elif type(t) in (ast.Tuple, ast.List):
                # objects._bind: element by element where the value is a
                # tuple of the same length without a star (_tuple_items),
                # else ``("item", value, i)``, never fresh.
                elts = t.elts  # type: ignore[attr-defined]
                value = node.value
                items = value.elts if type(value) in (ast.Tuple, ast.List) else None  # type: ignore[attr-defined]
                if items is not None and (len(items) != len(elts) or any(type(v) is ast.Starred for v in items)):
                    items = None
                for k, el in enumerate(elts):
                    if (
                        type(el) is ast.Name
                        and el.id == name  # type: ignore[attr-defined]
                        and (items is None or not may_build(items[k], name))
                        and innermost_function(functions, el) is fn
                    ):
                        return True
    return False


class FreshCalls:
    """``may_build(value)``: objects._fresh may hold for ``value``, for
    MEM202's plain-class path (GateFacts.plain_class_loop_without_grad).
    loops._attribute_mode reads a method's ``self.G`` as a model in train
    mode only when objects.built_in_train_mode holds: every definition of
    the attribute is a call ``_fresh`` accepts. A plain class binding
    ``self.x`` only to calls that build no module (``re.compile(...)``,
    ``self.patterns.copy()``, ``from_pretrained``: transformers' loaders
    and generation mixins) gives the rule nothing to flag. Wider than
    ``_fresh``: any self-returning method (``.to(dev)``, ``.train()``); a
    class of this file _module_classes keeps; a def of this file by name (a
    factory, ``_factory_fresh``); a project class (the view's model_classes;
    before the view, any callee _may_be_a_project_class accepts:
    gate/project_gate.py asks again through project_class_spellings); an
    imported callee whose constructor_kind is MODULE, not a load."""

    __slots__ = ("_facts", "_classes", "_imported", "_relative")

    def __init__(self, facts: GateFacts) -> None:
        self._facts = facts
        self._classes = _module_classes(facts)
        self._imported = import_table(facts)
        self._relative = _relative_names(facts)

    def may_build(self, value: ast.AST) -> bool:
        if type(value) is not ast.Call:
            return False
        func = value.func  # type: ignore[attr-defined]
        if type(func) is ast.Attribute and func.attr in _SELF_RETURNING:
            return True
        if type(func) is ast.Name and (func.id in self._classes or func.id in self._facts.def_names):
            return True
        if _may_be_a_project_class(value, self._imported, self._relative, self._facts.project_classes):
            return True
        for qualified in qualify(func, self._imported)[1]:
            if qualified.endswith((".from_pretrained", ".load")) or qualified.startswith("torch.hub"):
                continue
            if constructor_kind(qualified) is Kind.MODULE:
                return True
        return False
