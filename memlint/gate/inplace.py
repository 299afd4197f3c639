"""The gate's facts for MEM401 and MEM402 (in-place writes): a saved output
written in place where the file trains, a leaf requiring grad written in
place, and the writes where grad may be on (``grad_on_writes``). GateFacts'
properties of those names compute them here on first use; see gate/facts.py for
what a gate condition must be (necessary, never a heuristic).
"""

from __future__ import annotations

import ast
from typing import Any

from memlint.gate import ast_fields
from memlint.gate.ast_names import ast_callee
from memlint.gate.syntax import (
    BACKWARD,
    GRAD_OFF_CONTEXTS,
    GRAD_ON,
    LEAF_MARKS,
    SAVES_OUTPUT,
    bare_names,
    grad_context,
    import_table,
    may_iterate_parameters,
    qualify,
)
from memlint.vocabulary.ops import is_inplace_method

GateFacts = Any  # analysis/gate.GateFacts (no import circle)

# The nodes that own a statement list (a body, an ``else``, a handler's).
_BLOCK_OWNERS = (
    ast.Module,
    ast.ClassDef,
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.ExceptHandler,
    ast.match_case,
    *((ast.TryStar,) if hasattr(ast, "TryStar") else ()),
)
_BLOCK_OWNER_KINDS = frozenset(_BLOCK_OWNERS)


def compute_saved_output_written_in_training(facts: GateFacts) -> bool:
    """See GateFacts.saved_output_written_in_place. Each condition mirrors
    rules/mem402_in_place_on_saved_output.py:

    - ``_Scope.saved``, one per FunctionDef (decorators and defaults
      included; lambdas and class bodies belong to the enclosing one), is
      filled by ``leave_Assign`` when a Name target is given a saving call
      and emptied of a name when a later ``leave_Assign`` gives that Name
      target anything else, when an ``AnnAssign`` with a value binds it, or
      when ``_rebind`` drops every name of a ``for`` target or of an
      assignment's tuple, list or starred target (``w, idx = torch.topk(w,
      k)``). The writes are checked at ``visit_Call``/``visit_AugAssign``/
      ``visit_Assign``, before the statement's own binding. This walk
      replays those events in the order libcst visits them (statements in
      source order); where it cannot tell (a binding the rule then drops for
      ``_needs_grad``) the name stays saved.
    - ``_check``: the write must lie inside the block of the saving
      statement (``self.parent(line)``). Here the block is the compound
      statement that owns the statement's list, which holds libcst's
      IndentedBlock and, for a one-line body, the whole statement.
    - ``_in_training_code``: the scope serves ``forward``
      (loops.serves_forward: a method named ``forward``, or a function some
      call here reaches by its name, with a ``forward`` defined somewhere),
      or a backward verb (training_verbs: a call named ``backward`` or
      ``manual_backward``) lies in the scope; ``_backpropagated_later``
      needs the same verb outside ``forward``. A scope that names
      ``backward`` anywhere counts.
    - ``grad_mode.mode_at(node)`` must be ENABLED at the write: a scope with
      a hit is walked again counting only the writes grad_on_writes keeps."""
    aliases = facts._aliases
    # serves_forward follows resolved call sites (a bare name, ``self.x``,
    # ``cls.x``) up to a ``forward``: the function's own name must be called.
    called = facts.called | set(aliases)
    has_forward = "forward" in facts.def_names
    scratch = type(facts)(ast.Module(body=[], type_ignores=[]))

    def written(node: ast.AST) -> set[str]:
        scratch.inplace_names = set()
        kind = type(node)
        if kind is ast.Call:
            scratch._call(node, aliases)  # type: ignore[arg-type]
        elif kind is ast.AugAssign:
            scratch._written_in_place(node.target)  # type: ignore[attr-defined]
        elif kind is ast.Assign:
            for t in node.targets:  # type: ignore[attr-defined]
                if type(t) is ast.Subscript:
                    scratch._written_in_place(t)
        return scratch.inplace_names

    children, owner_kinds = ast_fields.children, _BLOCK_OWNER_KINDS

    def scope_hit(root: ast.AST, functions: list[ast.AST], on: set[int] | None) -> bool:
        """A write on a name still saved, inside the saving block, in the
        scope ``root`` (among the writes ``on`` holds, when given); nested
        functions are their own scopes, gathered into ``functions`` (all of
        them only when the answer is False: the walk stops at a hit)."""
        saved: dict[str, int] = {}  # name -> id of the block owner of the saving statement
        owners: list[int] = []
        hit = False

        def walk(node: ast.AST) -> None:
            nonlocal hit
            kind = type(node)
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                functions.append(node)
                return  # a scope of its own
            owns = kind in owner_kinds
            if owns:
                owners.append(id(node))
            if kind is ast.For or kind is ast.AsyncFor:
                for name in bare_names(node.target):  # type: ignore[attr-defined]
                    saved.pop(name, None)  # visit_For's _rebind
            if (
                saved
                and (kind is ast.Call or kind is ast.AugAssign or kind is ast.Assign)
                and (on is None or id(node) in on)
            ):
                for name in written(node):
                    owner = saved.get(name)
                    if owner is not None and owner in owners:
                        hit = True
            # In iter_child_nodes' order (libcst's), contexts and operators left out.
            for child in children(node):
                if hit:
                    return
                walk(child)
            if kind is ast.Assign:  # leave_Assign
                value = node.value  # type: ignore[attr-defined]
                saves = type(value) is ast.Call and ast_callee(value.func, aliases) in SAVES_OUTPUT
                for t in node.targets:  # type: ignore[attr-defined]
                    if type(t) is ast.Name:
                        if saves:
                            saved[t.id] = owners[-1]
                        else:
                            saved.pop(t.id, None)
                    else:  # ``w, idx = torch.topk(w, k)``: _rebind drops every name of the target
                        for name in bare_names(t):
                            saved.pop(name, None)
            elif kind is ast.AnnAssign and node.value is not None and type(node.target) is ast.Name:  # type: ignore[attr-defined]
                saved.pop(node.target.id, None)  # type: ignore[attr-defined]
            if owns:
                owners.pop()

        # walk calls itself through its closure cell: a reference cycle that
        # only the cyclic collector would free. Emptying the cell on the way
        # out breaks it.
        try:
            if type(root) is ast.Module:
                walk(root)
            else:
                owners.append(id(root))  # the function's own body
                for child in children(root):
                    if not hit:
                        walk(child)
            return hit
        finally:
            walk = None  # type: ignore[assignment]

    todo: list[ast.AST] = [facts._tree]
    on_writes: GateFacts | None = None
    while todo:
        root = todo.pop()
        functions: list[ast.AST] = []
        if scope_hit(root, functions, None):
            if _training_scope(root, called, has_forward, aliases):
                # _check's ``mode_at(node) is not ENABLED``: ask again among
                # the writes grad may be on at (grad_on_writes; every write
                # when that is the file's own facts).
                if on_writes is None:
                    on_writes = facts.grad_on_writes
                if on_writes is facts or scope_hit(root, [], on_writes._on_nodes):
                    return True
            functions = _direct_functions(root)  # the walk stopped at the hit
        todo.extend(functions)
    return False


def compute_leaf_written_with_grad(facts: GateFacts) -> bool:
    """See GateFacts.leaf_written_with_grad. Each condition mirrors
    rules/mem401_in_place_on_leaf_requiring_grad.py, whose ``_check`` takes a
    bare name (``n += ...``, ``n[i] = ...``, ``n.add_(...)``) for a leaf when:

    - ``_parameter_loop``: a ``for`` around the write binds it over
      parameters or a bare name (here any such ``for`` around it, in any
      function: may_iterate_parameters);
    - ``_leaves[-1]``: the function's own bindings say so at that point, in
      the order the rule visits them (``visit_Assign`` binds before the
      value's calls are checked): a Name target given a value that may
      create a leaf (leaves.creates_leaf: what GateFacts._assign counts), a
      ``n.requires_grad = True`` or a ``n.requires_grad_()`` statement set it;
      any other value, ``requires_grad =`` or ``requires_grad_(...)`` drop it;
    - ``leaves.module_leaf``: in a function whose ``_leaves`` never heard of
      the name, a binding outside it creates a leaf (here: some Assign,
      annotated assignment or ``:=`` anywhere in the file may).

    and ``mode_at`` may find grad ENABLED there: the write is one
    grad_on_writes counts."""
    on_writes = facts.grad_on_writes
    # grad_on_writes answers the file's own facts where it cannot follow the
    # mode: then every write may run with grad on.
    every = on_writes is facts
    on = on_writes._on_nodes
    if not on and not every:
        return False
    aliases = facts._aliases
    # ``for p in params`` binds leaves only over a list leaves.leaf_list
    # proves: every value of ``params`` a display of leaves, each made by
    # leaves.creates_leaf (``x.requires_grad_()``, ``nn.Parameter(...)``, a
    # torch factory with ``requires_grad=True``), directly, through a
    # function's returns or the lists callers pass. No such call: no list
    # (``requires_grad_(False)``, ``Parameter(..., requires_grad=False)``
    # make none: _creates_leaf).
    leaf_lists = (bool(facts.called & {"requires_grad_", "Parameter"}) or "requires_grad" in facts.keywords) and any(
        _creates_leaf(call, aliases) for call in facts._calls
    )
    outer: set[str] = set()  # names some binding may give a leaf (module_leaf's values)
    # Every ``=``, ``: T =`` and ``:=`` with a value, as the main walk kept them.
    bindings = [(t, node.value) for node in facts._assigns for t in node.targets]
    for target, value in bindings + facts._bindings:
        if type(value) is ast.Call and _creates_leaf(value, aliases):  # type: ignore[arg-type]
            outer |= bare_names(target)
    loops: list[set[str]] = []
    scopes: list[dict[str, bool]] = [{}]
    in_function: list[bool] = [False]
    # Names a Name target of the function already bound: local there, so not
    # module_leaf's (loops.local_names also counts later bindings: fewer here).
    local: list[set[str]] = [set()]

    # In iter_child_nodes' order (the rule's), contexts and operators left out.
    children = ast_fields.children

    def leaf(name: str) -> bool:
        if any(name in names for names in loops):
            return True
        own = scopes[-1]
        if own.get(name):
            return True
        return in_function[-1] and name not in own and name not in local[-1] and name in outer

    def target_name(target: ast.AST) -> str | None:
        if type(target) is ast.Subscript:
            target = target.value  # type: ignore[attr-defined]
        return target.id if type(target) is ast.Name else None  # type: ignore[attr-defined]

    def walk(node: ast.AST) -> bool:
        kind = type(node)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            scopes.append({})
            in_function.append(True)
            local.append(set())
            try:
                for child in children(node):
                    if walk(child):
                        return True
                return False
            finally:
                scopes.pop()
                in_function.pop()
                local.pop()
        own = scopes[-1]
        if kind is ast.Assign:
            for t in node.targets:  # type: ignore[attr-defined]
                tk = type(t)
                if tk is ast.Subscript:
                    name = target_name(t)
                    if name is not None and leaf(name) and (every or id(node) in on):
                        return True
                elif tk is ast.Name:
                    local[-1].add(t.id)  # type: ignore[attr-defined]
                    value = node.value  # type: ignore[attr-defined]
                    if type(value) is ast.Call and _creates_leaf(value, aliases):
                        own[t.id] = True  # type: ignore[attr-defined]
                    else:
                        own.pop(t.id, None)  # type: ignore[attr-defined]
                elif tk is ast.Attribute and t.attr == "requires_grad" and type(t.value) is ast.Name:  # type: ignore[attr-defined]
                    value = node.value  # type: ignore[attr-defined]
                    if type(value) is ast.Constant and value.value is True:  # type: ignore[attr-defined]
                        own[t.value.id] = True  # type: ignore[attr-defined]
                    else:
                        own.pop(t.value.id, None)  # type: ignore[attr-defined]
        elif kind is ast.AugAssign:
            name = target_name(node.target)  # type: ignore[attr-defined]
            if name is not None and leaf(name) and (every or id(node) in on):
                return True
        elif kind is ast.Expr and type(node.value) is ast.Call:  # type: ignore[attr-defined]
            call = node.value  # type: ignore[attr-defined]
            func = call.func
            if type(func) is ast.Attribute and func.attr == "requires_grad_" and type(func.value) is ast.Name:
                args = call.args
                if not args or (type(args[0]) is ast.Constant and args[0].value is True):
                    own[func.value.id] = True  # set when the rule visits the call, below: same order
                else:
                    own.pop(func.value.id, None)
        elif kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            if type(func) is ast.Attribute and func.attr != "requires_grad_" and is_inplace_method(func.attr):
                if type(func.value) is ast.Name and leaf(func.value.id) and (every or id(node) in on):
                    return True
        pushed = kind in (ast.For, ast.AsyncFor) and may_iterate_parameters(node.iter, leaf_lists)  # type: ignore[attr-defined]
        if pushed:
            loops.append(bare_names(node.target))  # type: ignore[attr-defined]
        try:
            for child in children(node):
                if walk(child):
                    return True
            return False
        finally:
            if pushed:
                loops.pop()

    # walk calls itself through its closure cell: a reference cycle that only
    # the cyclic collector would free. Emptying the cell on the way out breaks it.
    try:
        return walk(facts._tree)
    finally:
        walk = None  # type: ignore[assignment]


def _creates_leaf(value: ast.Call, aliases: dict[str, str]) -> bool:
    """What GateFacts._assign counts as a leaf (a superset of
    leaves.creates_leaf), less what creates_leaf surely refuses: a literal
    ``requires_grad=False`` (``nn.Parameter``, the factories) or
    ``requires_grad_(False)``."""
    for kw in value.keywords:
        if kw.arg == "requires_grad" and type(kw.value) is ast.Constant and kw.value.value is False:  # type: ignore[attr-defined]
            return False
    last = ast_callee(value.func, aliases)
    if last == "requires_grad_" and value.args:
        first = value.args[0]
        return not (type(first) is ast.Constant and first.value is False)  # type: ignore[attr-defined]
    return last in LEAF_MARKS or any(kw.arg == "requires_grad" for kw in value.keywords)


def _direct_functions(root: ast.AST) -> list[ast.AST]:
    """The functions defined in ``root``'s scope (not inside them)."""
    out = []
    stack = ast_fields.children(root)
    children = ast_fields.children
    while stack:
        node = stack.pop()
        if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef):
            out.append(node)
        else:
            stack += children(node)
    return out


def _training_scope(root: ast.AST, called: set[str], has_forward: bool, aliases: dict[str, str]) -> bool:
    """MEM402's ``_in_training_code`` may hold for the scope ``root``."""
    if type(root) is not ast.Module:
        name = root.name  # type: ignore[attr-defined]
        if name == "forward" or (has_forward and name in called):
            return True
    stack = ast_fields.children(root)
    children = ast_fields.children
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            continue
        if kind is ast.Attribute and node.attr in BACKWARD:  # type: ignore[attr-defined]
            return True
        if kind is ast.Name and aliases.get(node.id, node.id) in BACKWARD:  # type: ignore[attr-defined,operator]
            return True
        stack += children(node)
    return False


def compute_grad_on_writes(facts: GateFacts) -> GateFacts:
    """See GateFacts.grad_on_writes. The walk keeps, per node, whether grad is
    surely off there; a write where it is not feeds a fresh GateFacts. Where
    the mode may come from somewhere this walk does not follow (a bare
    ``set_grad_enabled`` statement, ``stack.enter_context``), every write
    counts."""
    if mode_set_by_statements(facts):
        return facts
    qualified = import_table(facts)
    aliases = facts._aliases
    out = type(facts)(ast.Module(body=[], type_ignores=[]))
    heads: set[str] = set()  # the names each "off" was read through
    autograd_methods = _autograd_function_methods(facts, qualified, heads)
    rebound: set[str] = set()  # names.ImportTable drops an import rebound anywhere
    # The writes grad may be on at, each with the function whose entry mode
    # decides it (None: set inside its function, or at module level).
    writes: list[tuple[ast.AST, ast.AST | None]] = []
    off_called: set[str] = set()  # ``f`` of a bare ``f(...)`` call where grad is surely off
    Name, Load, table = ast.Name, ast.Load, ast_fields.CHILDREN
    # (node, surely off, the function whose entry mode holds there)
    stack: list[tuple[ast.AST, bool, ast.AST | None]] = [(facts._tree, False, None)]
    push, pop = stack.append, stack.pop
    while stack:
        node, off, entry = pop()
        kind = type(node)
        if kind is Name:
            if type(node.ctx) is not Load:  # type: ignore[attr-defined]
                rebound.add(node.id)  # type: ignore[attr-defined]
            continue
        if kind is ast.arg:
            rebound.add(node.arg)  # type: ignore[attr-defined]
        elif kind is ast.ExceptHandler and node.name:  # type: ignore[attr-defined]
            rebound.add(node.name)  # type: ignore[attr-defined]
        if kind is ast.With or kind is ast.AsyncWith:
            items = [item.context_expr for item in node.items]  # type: ignore[attr-defined]
            for item in node.items:  # type: ignore[attr-defined]
                push((item, off, entry))
            modes = [grad_context(item, qualified, aliases, heads) for item in items]
            inner = False if "on" in modes else True if "off" in modes else off
            # grad_mode._local: a ``with`` may set the mode (a helper's too),
            # so the function's entry no longer decides below it.
            for stmt in node.body:  # type: ignore[attr-defined]
                push((stmt, inner, None))
            continue
        body_entry = entry
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            # grad_mode.entry_mode: a decorator's mode, else the call sites'
            # (see _entered_without_grad).
            decorators = node.decorator_list  # type: ignore[attr-defined]
            modes = [grad_context(d, qualified, aliases, heads) for d in decorators]
            off = "off" in modes and "on" not in modes
            if id(node) in autograd_methods and not any(_may_set_mode(d, aliases) for d in decorators):
                off = True  # grad_mode's _AUTOGRAD_FUNCTION_METHODS: DISABLED or UNKNOWN, never ENABLED
            body_entry = None if decorators else node
        elif off:
            if kind is ast.Call and type(node.func) is Name:  # type: ignore[attr-defined]
                off_called.add(node.func.id)  # type: ignore[attr-defined]
        elif kind is ast.Call or kind is ast.Assign or kind is ast.AugAssign:
            writes.append((node, entry))
        # Contexts, operators and aliases say nothing here (gate/ast_fields).
        children = table.get(kind)
        if children is None:
            if kind is list:  # a field of a class whose signature was not read
                stack.extend((item, off, entry) for item in node)  # type: ignore[attr-defined]
            continue  # None, or a scalar
        for field in children.singles:
            value = getattr(node, field)
            if value is not None:
                push((value, off, entry))
        for field in children.lists:
            inside = body_entry if field == "body" else entry
            for item in getattr(node, field):
                if item is not None:
                    push((item, off, inside))
    if heads & (rebound | facts.def_names | facts._classes):
        return facts  # ``torch`` rebound somewhere: context_mode may not resolve it
    entered_off = _entered_without_grad(facts, off_called)
    for node, entry in writes:
        if entry is not None and id(entry) in entered_off:
            continue
        out._on_nodes.add(id(node))
        kind = type(node)
        if kind is ast.Call:
            out._call(node, aliases)  # type: ignore[arg-type]
        elif kind is ast.Assign:
            out._assign(node, aliases)  # type: ignore[arg-type]
        else:
            out._written_in_place(node.target)  # type: ignore[attr-defined]
    return out


# grad_mode._AUTOGRAD_FUNCTION_METHODS: run DISABLED (forward, setup_context)
# or UNKNOWN (backward, jvp, vjp), never ENABLED, unless a decorator sets the mode.
_AUTOGRAD_METHODS = frozenset({"forward", "setup_context", "backward", "jvp", "vjp"})


def _autograd_function_methods(facts: GateFacts, qualified: dict[str, set[str]], heads: set[str]) -> set[int]:
    """The ids of the defs grad_mode takes for a custom autograd Function's
    methods: named as in _AUTOGRAD_METHODS, right in the body of a class with
    a base the imports make ``torch.autograd.<...>Function``
    (``_is_autograd_function``). The head each base was read through goes to
    ``heads``: a rebinding anywhere makes names.ImportTable drop it."""
    found: set[int] = set()
    for cls in facts._class_nodes:
        if not any(_autograd_function_base(b, qualified, heads) for b in cls.bases):
            continue
        for stmt in cls.body:
            if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef) and stmt.name in _AUTOGRAD_METHODS:  # type: ignore[attr-defined]
                found.add(id(stmt))
    return found


def _autograd_function_base(base: ast.AST, qualified: dict[str, set[str]], heads: set[str]) -> bool:
    head, names = qualify(base, qualified)
    if len(names) != 1:
        return False  # not imported, or ambiguous (names.ImportTable drops it)
    (q,) = names
    if q.startswith("torch.autograd.") and q.endswith("Function"):
        heads.add(head)
        return True
    return False


def _may_set_mode(decorator: ast.AST, aliases: dict[str, str]) -> bool:
    """grad_mode.context_mode may find a mode in this decorator: a callee
    named as a grad-mode context (decorators' modes come before the
    autograd Function's)."""
    func = decorator.func if type(decorator) is ast.Call else decorator  # type: ignore[attr-defined]
    return ast_callee(func, aliases) in (GRAD_ON | GRAD_OFF_CONTEXTS)


def mode_set_by_statements(facts: GateFacts) -> bool:
    """A mode may be set by a statement, not a ``with`` (grad_mode's
    ``_bare``: a torch callee whose name ends in ``set_grad_enabled``,
    ``torch._C._set_grad_enabled`` too; ``_entered_table``:
    ``stack.enter_context(...)``): the walks here do not follow those."""
    return "enter_context" in facts.called or any(c.endswith("set_grad_enabled") for c in facts.called)


def _entered_without_grad(facts: GateFacts, off_called: set[str]) -> set[int]:
    """The ids of the defs grad_mode.entry_mode can never find ENABLED:
    entry_mode joins the modes of the calls callgraph resolves to a def (an
    escape adds ENABLED), so one call surely DISABLED makes it DISABLED or
    UNKNOWN. Only calls whose resolution is sure count: a bare ``f(...)``
    where the file holds one def named ``f``, at module level (callgraph's
    ``_visible`` from any scope finds it and nothing else), undecorated (a
    decorator's mode would come first)."""
    if not off_called:
        return set()
    count: dict[str, int] = {}
    for fn in facts._functions:
        name = fn.name  # type: ignore[attr-defined]
        count[name] = count.get(name, 0) + 1
    found: set[int] = set()
    for stmt in _module_level_statements(facts._tree):
        kind = type(stmt)
        if (kind is ast.FunctionDef or kind is ast.AsyncFunctionDef) and not stmt.decorator_list:  # type: ignore[attr-defined]
            name = stmt.name  # type: ignore[attr-defined]
            if name in off_called and count.get(name) == 1:
                found.add(id(stmt))
    return found


def _module_level_statements(tree: ast.AST) -> list[ast.AST]:
    """The statements of the module's own scope: its body, and the blocks of
    its ``if``/``try``/``with``/loops (no def or class body)."""
    out: list[ast.AST] = []
    stack = list(tree.body)  # type: ignore[attr-defined]
    while stack:
        stmt = stack.pop()
        out.append(stmt)
        kind = type(stmt)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.ClassDef:
            continue
        for field in ast_fields.STATEMENT_BLOCKS:
            block = getattr(stmt, field, None)
            if block:
                stack.extend(block)  # a handler or a case: its body is walked next
    return out
