"""MEM703's gate, move by move: which ``.to(``/``.cuda(`` calls the rule's
visit_Call may report, read on Python's ``ast`` (analysis/gate_loops.py's
walk calls it for the statements of a loop's iteration).

rules/mem703_loop_invariant_device_move.py reports a move only when

- its innermost loop holds it as ``_enclosing_loop`` finds it: not in a
  lambda or a comprehension, not in a loop's header (its iterable, a
  ``while`` test) nor a function's or class's (decorators, defaults, bases),
  not in an ``else``/``elif`` block, nor in a ``try``'s blocks or handlers,
  and in an ``if`` body only under a plain flag (``_flag``); the walk in
  gate/loops.py follows these blocks (``_Loop.blocked``), this module the
  expressions (``move_sites``);
- its receiver is a module or a criterion (``Kind.MODULE``/``Kind.LOSS``:
  the rule then needs ``dotted_name(recv)``, and is silent when that name is
  the loop's own target, ``_rebound_in``), or a constant tensor
  (``_constant_tensor``: shaping methods over a ``torch`` factory called
  with literal arguments only): ``receiver``;
- or, for a loop moving its own ``for`` target inside another loop
  (``_same_models_per_batch``), ``moves_own_target`` (gate/loops.py asks
  it when a loop opens inside another, in any block);
- the loop runs per batch (``_per_batch``: its iterable may be a loader, a
  backward or an optimizer step is called in its own iteration,
  ``training_verbs.in_iteration``, or its role is "eval") or, for a module,
  per sample (``_per_sample``).

Every test here keeps what the rule's analysis might report: the object
kinds (objects.kind_of) stay unknown, so any dotted name may be a module.
"""

from __future__ import annotations

import ast
from collections.abc import Container

from memlint.gate.ast_fields import CHILDREN, STATEMENT_BLOCKS, nodes
from memlint.gate.ast_names import ast_callee, ast_dotted
from memlint.gate.syntax import in_spans, line_spans

# The rule's ``_FACTORIES`` and ``_SHAPING`` (tests/test_analysis_gate.py
# holds them equal: the gate does not import the rules).
FACTORIES = frozenset(
    {"tensor", "ones", "zeros", "full", "eye", "arange", "linspace", "as_tensor", "Tensor", "FloatTensor", "LongTensor"}
)
SHAPING = frozenset({"view", "reshape", "float", "long", "unsqueeze", "expand", "double", "half", "t"})
# training_verbs' BACKWARD and STEP verbs, by the callee's last name
# (``loss.backward()``, ``accelerator.backward(loss)``, ``manual_backward``,
# ``torch.autograd.backward``, ``optimizer.step()``, ``scaler.step(opt)``).
VERB_CALLS = frozenset({"backward", "manual_backward", "step"})

MODULE, CONSTANT = 1, 2  # what a move's receiver may be
_MOVES = ("to", "cuda")
_UNMOVABLE = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_COMPREHENSIONS = (ast.ListComp, ast.GeneratorExp)  # the comprehensions MEM201 visits


def target_keys(target: ast.AST) -> frozenset[str]:
    """The rule's ``_names(loop.target)``: the dotted names a ``for`` binds."""
    kind = type(target)
    if kind is ast.Tuple or kind is ast.List:
        return frozenset(k for el in target.elts for k in target_keys(el))  # type: ignore[attr-defined]
    if kind is ast.Starred:
        return target_keys(target.value)  # type: ignore[attr-defined]
    key = ast_dotted(target)
    return frozenset() if key is None else frozenset((key,))


def is_flag(test: ast.AST, aliases: dict[str, str]) -> bool:
    """The rule's ``_fixed_test`` is not None: ``use_cuda``, ``not args.cpu``, ``args.w > 0``,
    ``self.use_gpu``, ``torch.cuda.is_available()`` (by the callee's last
    name: an alias resolves to it). Wider than the rule: it does not check
    that the loop leaves the flag alone (``_binds``)."""
    if type(test) is ast.UnaryOp and type(test.op) is ast.Not:  # type: ignore[attr-defined]
        test = test.operand  # type: ignore[attr-defined]
    kind = type(test)
    if kind is ast.Call:
        return (
            not test.args  # type: ignore[attr-defined]
            and not test.keywords  # type: ignore[attr-defined]
            and ast_callee(test.func, aliases) == "is_available"  # type: ignore[attr-defined]
        )
    if kind is ast.Compare and len(test.ops) == 1:  # type: ignore[attr-defined]
        # ``args.w_chamfer > 0``: the rule's _fixed_test, an option compared with a number.
        bound = test.comparators[0]  # type: ignore[attr-defined]
        if type(bound) is ast.UnaryOp:
            bound = bound.operand  # type: ignore[attr-defined]
        number = type(bound) is ast.Constant and type(bound.value) in (int, float)  # type: ignore[attr-defined]
        return number and type(test.left) is ast.Attribute and ast_dotted(test.left) is not None  # type: ignore[attr-defined]
    return (kind is ast.Name or kind is ast.Attribute) and ast_dotted(test) is not None


def receiver(call: ast.Call, aliases: dict[str, str], imported: frozenset[str]) -> int | None:
    """What the receiver of the move ``call`` may be for the rule to report
    it: MODULE (a dotted name), CONSTANT (``_constant_tensor``), or None.
    ``imported``: the names an import may bind (the head of a qualified name)."""
    recv = call.func.value  # type: ignore[attr-defined]
    if ast_dotted(recv) is not None:
        return MODULE
    while type(recv) is ast.Call and type(recv.func) is ast.Attribute and recv.func.attr in SHAPING:  # type: ignore[attr-defined]
        if not all(_literal(a, imported) for a in _arguments(recv)):  # type: ignore[arg-type]
            return None
        recv = recv.func.value  # type: ignore[attr-defined]
    if type(recv) is not ast.Call:
        return None
    # names.call_name: its head an import, its last part a factory (an
    # import alias counts as what it imports).
    func = recv.func  # type: ignore[attr-defined]
    callee = ast_dotted(func)
    if callee is None or callee.split(".", 1)[0] not in imported or ast_callee(func, aliases) not in FACTORIES:
        return None
    if not (recv.args or recv.keywords):  # type: ignore[attr-defined]
        return None
    values = [*recv.args, *(k.value for k in recv.keywords if k.arg != "device")]  # type: ignore[attr-defined]
    return CONSTANT if all(_literal(v, imported) for v in values) else None


def _arguments(call: ast.Call) -> list[ast.AST]:
    return [*call.args, *(k.value for k in call.keywords)]


def _literal(e: ast.AST, imported: frozenset[str]) -> bool:
    """The rule's ``_literal`` (wider): any constant, arithmetic on literals,
    a list or tuple of them, a one-clause comprehension over them, any name
    (``_constants_in``, ``_sizes_in``), an attribute of an imported name whose last name is
    lowercase (``torch.float32``: names.qualified_name needs the import; its
    ``torch.`` head is not checked here)."""
    kind = type(e)
    if kind is ast.Constant:
        return True
    if kind is ast.UnaryOp:
        return _literal(e.operand, imported)  # type: ignore[attr-defined]
    if kind is ast.BinOp:
        return _literal(e.left, imported) and _literal(e.right, imported)  # type: ignore[attr-defined]
    if kind is ast.List or kind is ast.Tuple:
        return all(_literal(el, imported) for el in e.elts)  # type: ignore[attr-defined]
    if kind is ast.Starred:
        return _literal(e.value, imported)  # type: ignore[attr-defined]
    if kind is ast.ListComp or kind is ast.GeneratorExp:
        generators = e.generators  # type: ignore[attr-defined]
        if len(generators) != 1 or generators[0].ifs:
            return False
        return _literal(generators[0].iter, imported) and _literal(e.elt, imported)  # type: ignore[attr-defined]
    if kind is ast.Name:
        # Any name: an UPPER_CASE one ``_constants_in`` may find constant, one
        # a comprehension binds, or one ``_sizes_in`` may find an integer the loop keeps.
        return True
    if kind is ast.Attribute:
        key = ast_dotted(e)
        return key is not None and key.split(".", 1)[0] in imported and e.attr[:1].islower()  # type: ignore[attr-defined]
    return False


def move_sites(
    stmt: ast.AST,
    moves: bool,
    targets: Container[str],
    verbs: bool,
    aliases: dict[str, str],
    imported: frozenset[str] = frozenset(),
) -> tuple[int, bool, bool]:
    """Read ``stmt``'s own expressions (not its blocks): the strongest move
    receiver found (``moves``: MODULE beats CONSTANT, 0 for none; a module
    named as one of the loop's ``targets`` is the loop's own or rebound
    in its body (gate/rebinds.py), never reported; ``imported``: see ``receiver``), whether a training verb is called (``verbs``), whether a
    comprehension MEM201 visits is there."""
    children = CHILDREN.get(type(stmt))
    if children is None:
        return 0, False, False
    found, verb, comprehension = 0, False, False
    # Two stacks, not a flag per node: what a move may be reported in, and
    # what lies under a lambda or a comprehension (read after, for verbs
    # and comprehensions only).
    movable: list[object] = []
    shut: list[object] = []
    first = movable if moves else shut
    for field in children.singles:
        if field not in STATEMENT_BLOCKS:
            first.append(getattr(stmt, field))
    for field in children.lists:
        if field not in STATEMENT_BLOCKS:
            first.extend(getattr(stmt, field))
    table = CHILDREN
    for stack, may_move in ((movable, True), (shut, False)):
        push, extend, pop = stack.append, stack.extend, stack.pop
        while stack:
            node = pop()
            kind = type(node)
            children = table.get(kind)
            if children is None:
                if kind is list:
                    extend(node)  # type: ignore[arg-type]
                continue
            if kind is ast.Call:
                func = node.func  # type: ignore[attr-defined]
                if may_move and type(func) is ast.Attribute and func.attr in _MOVES and found != MODULE:
                    what = receiver(node, aliases, imported)  # type: ignore[arg-type]
                    if what == CONSTANT or (what == MODULE and ast_dotted(func.value) not in targets):
                        found = max(found, what)  # type: ignore[type-var]
                if verbs and not verb and ast_callee(func, aliases) in VERB_CALLS:
                    verb = True
            elif kind in _UNMOVABLE:
                comprehension = comprehension or kind in _COMPREHENSIONS
                if may_move:
                    for field in children.singles:
                        shut.append(getattr(node, field))
                    for field in children.lists:
                        shut.extend(getattr(node, field))
                    continue
            for field in children.singles:
                push(getattr(node, field))
            for field in children.lists:
                extend(getattr(node, field))
    return found, verb, comprehension


# The methods that run on every call of an object (``forward``) or every
# construction (``__init__``): MEM703's per-call path (a class of a project
# whose other modules call or build it once per batch).
PER_CALL_METHODS = frozenset({"forward", "__call__", "__init__"})
_BROADCASTS = frozenset({"expand", "expand_as"})


def constant_move_in_method(facts) -> bool:
    """A ``.to(``/``.cuda(`` on a ``torch`` factory call (through shaping
    and broadcasting methods) in a ``forward``/``__call__``/``__init__`` of a
    module-level class: the only moves MEM703's per-call path reports
    (``_per_call``)."""
    aliases = facts._aliases
    moves = [call for call in facts._calls if _moves_a_factory(call, aliases)]
    if not moves:
        return False
    spans = line_spans(
        [
            stmt
            for cls in facts._class_nodes
            for stmt in cls.body
            if type(stmt) is ast.FunctionDef and stmt.name in PER_CALL_METHODS
        ]
    )
    return any(in_spans(call, spans) for call in moves)


def _functions_with_moves(tree: ast.AST, aliases: dict[str, str]) -> list[ast.FunctionDef]:
    """The module-level functions whose code holds both a move of a
    factory's value or of a name and a ``torch`` factory call: the others
    are not walked again (module-level functions are a small part of a
    model file, whose code lives in classes)."""
    out = []
    attribute, name, call = ast.Attribute, ast.Name, ast.Call
    for fn in getattr(tree, "body", ()):
        if type(fn) is not ast.FunctionDef:
            continue
        moved = built = False
        for c in nodes(fn):
            if type(c) is not call:
                continue
            func = c.func  # type: ignore[attr-defined]
            kind = type(func)
            if kind is attribute:
                last = func.attr  # type: ignore[attr-defined]
                if last in _MOVES:
                    moved = moved or type(func.value) is name or _a_factory(func.value, aliases)  # type: ignore[attr-defined]
                    continue
            elif kind is name:
                last = aliases.get(func.id, func.id)  # type: ignore[attr-defined]
            else:
                continue
            built = built or last in FACTORIES
            if moved and built:
                out.append(fn)
                break
    return out


def constant_move_in_function(tree: ast.AST, aliases: dict[str, str]) -> bool:
    """A ``.to(``/``.cuda(`` in a module-level function, outside any loop,
    ``try``, lambda or comprehension of it, of a ``torch`` factory call
    through shaping and broadcasting methods and subscripts, or of a name
    the function binds to such a value (``I = torch.eye(d)[None]`` then
    ``I = I.cuda()``): the only moves MEM703's per-call path reports for a
    function another module calls once per batch (``_per_call_function``,
    whose ``_function_of`` goes through statements, ``with`` and ``if`` only)."""
    for fn in _functions_with_moves(tree, aliases):
        moves: list[ast.AST] = []
        built: set[str] = set()
        todo: list[ast.AST] = list(fn.body)
        while todo:
            stmt = todo.pop()
            if type(stmt) in (ast.If, ast.With):
                todo += stmt.body + getattr(stmt, "orelse", [])  # type: ignore[attr-defined]
                continue
            if type(stmt) in (ast.For, ast.While, ast.AsyncFor, ast.Try, ast.FunctionDef, ast.ClassDef):
                continue
            stack: list[ast.AST] = [stmt]
            while stack:
                node = stack.pop()
                if type(node) in (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp):
                    continue
                if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr in _MOVES:  # type: ignore[attr-defined]
                    moves.append(node.func.value)  # type: ignore[attr-defined]
                stack.extend(ast.iter_child_nodes(node))
        if moves:
            # The name's value may be bound anywhere in the function (the rule's bindings.values_in).
            for node in ast.walk(fn):
                kind = type(node)
                if kind in (ast.Assign, ast.AnnAssign, ast.NamedExpr) and _a_factory(node.value, aliases):  # type: ignore[attr-defined]
                    targets = node.targets if kind is ast.Assign else [node.target]  # type: ignore[attr-defined]
                    built |= {t.id for t in targets if type(t) is ast.Name}
        if any(_a_factory(r, aliases) or (type(r) is ast.Name and r.id in built) for r in moves):  # type: ignore[attr-defined]
            return True
    return False


def _a_factory(recv: ast.AST, aliases: dict[str, str]) -> bool:
    """A ``torch`` factory call, through shaping and broadcasting methods
    and subscripts."""
    while True:
        if type(recv) is ast.Subscript:
            recv = recv.value  # type: ignore[attr-defined]
        elif type(recv) is ast.Call and type(recv.func) is ast.Attribute and recv.func.attr in SHAPING | _BROADCASTS:  # type: ignore[attr-defined]
            recv = recv.func.value  # type: ignore[attr-defined]
        else:
            break
    return type(recv) is ast.Call and ast_callee(recv.func, aliases) in FACTORIES  # type: ignore[attr-defined]


def _moves_a_factory(node: ast.AST, aliases: dict[str, str]) -> bool:
    if type(node) is not ast.Call or type(node.func) is not ast.Attribute or node.func.attr not in _MOVES:  # type: ignore[attr-defined]
        return False
    recv = node.func.value  # type: ignore[attr-defined]
    while type(recv) is ast.Call and type(recv.func) is ast.Attribute and recv.func.attr in SHAPING | _BROADCASTS:  # type: ignore[attr-defined]
        recv = recv.func.value  # type: ignore[attr-defined]
    return type(recv) is ast.Call and ast_callee(recv.func, aliases) in FACTORIES  # type: ignore[attr-defined]


def moves_own_target(loop: ast.For | ast.AsyncFor) -> bool:
    """``for net in nets: net.to(device); net(x)``: the loop's body moves the
    one name its ``for`` binds and calls it (the rule's
    ``_same_models_per_batch``, wider: any depth, any block, any argument)."""
    target = loop.target
    if type(target) is not ast.Name or type(loop.iter) not in (ast.Name, ast.Attribute):
        return False
    name = target.id  # type: ignore[attr-defined]
    moved = called = False
    for stmt in loop.body:
        for node in ast.walk(stmt):
            if type(node) is not ast.Call:
                continue
            func = node.func  # type: ignore[attr-defined]
            if type(func) is ast.Name:
                called = called or func.id == name  # type: ignore[attr-defined]
            elif type(func) is ast.Attribute and func.attr in _MOVES:  # type: ignore[attr-defined]
                recv = func.value  # type: ignore[attr-defined]
                moved = moved or (type(recv) is ast.Name and recv.id == name)  # type: ignore[attr-defined]
            if moved and called:
                return True
    return False
