"""MEM201's path through a typed project object, call by call.

The rule's ``_object_forward`` reads, in a loop, a call ``<receiver>.<m>(...)``
whose receiver project/object_types.py may type: a name that is a
parameter (a method's ``self`` dropped) or bound by ``=``, ``self.<attr>``
in a method, or one such name's attribute (``trainer.gen_a``); or a call of a
bound-method alias (``encode(x)`` after ``encode = trainer.gen_a.encode if
a2b else trainer.gen_b.encode``: objects.bound_methods), and only with
evidence of evaluation for that call: its loop's function named for it, the
method named for it, a keyword named for it, or a switch to eval
(``trainer.eval()``) before it. The file-wide evidence (eval_call,
eval_function_loops, asks_an_object_to_evaluate) is asked first; this walk
then keeps only files where one loop call can carry it. Every test is a
superset of the rule's (any keyword named for evaluation, whatever its value;
an eval switch anywhere; any alias of an attribute or a conditional; a name
bound by ``=`` anywhere in the file; a parameter re-bound or not), so
the gate stays necessary.
"""

from __future__ import annotations

import ast
from typing import Any

from memlint.gate.eval import innermost_function
from memlint.gate.syntax import in_spans, line_spans
from memlint.vocabulary.tokens import EVAL_FUNCTION_TOKENS, name_tokens

GateFacts = Any  # gate/facts.GateFacts (no import circle)

# What objects._bind keeps as a binding's value that bound_methods may read
# as attributes: the value itself, or an element of a tuple or list.
_ALIAS_VALUES = (ast.Attribute, ast.IfExp, ast.Tuple, ast.List)


def _alias_names(facts: GateFacts) -> set[str]:
    """Names some ``=``, ``: T =`` or ``:=`` binds to a value that may be a
    method of an object (an attribute, a conditional, a tuple of them)."""
    names: set[str] = set()
    pairs = [(t, a.value) for a in facts._assigns for t in a.targets] + list(facts._bindings)
    for target, value in pairs:
        if type(value) in _ALIAS_VALUES:
            names.update(n.id for n in ast.walk(target) if type(n) is ast.Name)  # type: ignore[attr-defined]
    return names


def _depth(node: ast.AST) -> int:
    """The attributes above the root name: ``policy`` 0, ``self.agent`` 1."""
    depth = 0
    while type(node) is ast.Attribute:
        node = node.value  # type: ignore[attr-defined]
        depth += 1
    return depth


def _assigned_names(facts: GateFacts) -> set[str]:
    """Names some ``name = value`` binds (object_types types a name only
    through such stores, every one of them typed)."""
    return {a.targets[0].id for a in facts._assigns if len(a.targets) == 1 and type(a.targets[0]) is ast.Name}  # type: ignore[attr-defined]


def _is_method(fn: ast.AST, facts: GateFacts) -> bool:
    """``fn`` is written directly in a class body (object_types' ``cls``)."""
    return any(fn is stmt for cls in facts._class_nodes for stmt in cls.body)


def _is_parameter(fn: ast.AST | None, name: str, method: bool) -> bool:
    """``name`` is a parameter of ``fn`` that a call site may type: a
    method's first one is dropped (unless a ``staticmethod``), as
    object_types._function drops it."""
    if fn is None:
        return False
    a = fn.args  # type: ignore[attr-defined]
    positional = a.posonlyargs + a.args
    if method and not any(type(d) is ast.Name and d.id == "staticmethod" for d in fn.decorator_list):  # type: ignore[attr-defined]
        positional = positional[1:]
    params = positional + a.kwonlyargs + [p for p in (a.vararg, a.kwarg) if p is not None]
    return any(p.arg == name for p in params)


def _named_for_evaluation(name: str | None) -> bool:
    return bool(name and name_tokens(name) & EVAL_FUNCTION_TOKENS)


def switches_by_method(method: str) -> bool:
    """``setup_to_test``: a method other than ``eval``/``train`` named for
    evaluation, which the project may know to switch an object's models to
    eval (project/method_evals.py reads only such names)."""
    return method not in ("eval", "train") and _named_for_evaluation(method)


def _switch_roots(facts: GateFacts) -> set[str]:
    """The root names of the receivers of methods that may switch an
    object's models to eval (``model`` of ``model.setup_to_test(p)``): the
    rule's switch is on the loop call's receiver or an object holding it."""
    roots: set[str] = set()
    for call in facts._calls:
        func = call.func
        if type(func) is not ast.Attribute or not switches_by_method(func.attr):  # type: ignore[attr-defined]
            continue
        root = func.value  # type: ignore[attr-defined]
        while type(root) is ast.Attribute:
            root = root.value  # type: ignore[attr-defined]
        if type(root) is ast.Name:
            roots.add(root.id)  # type: ignore[attr-defined]
    return roots


def calls_a_switch_method(facts: GateFacts) -> bool:
    """Some ``x.m(...)`` may switch an object's models to eval
    (``switches_by_method``): MEM201's evidence besides ``.eval()``."""
    return any(switches_by_method(m) for m in facts.called) and bool(_switch_roots(facts))


def may_evaluate_a_typed_object(facts: GateFacts) -> bool:
    """Some loop call may be ``_object_forward``'s, with its evidence."""
    spans = line_spans(facts._loop_nodes)
    switched: set[str] | None = None  # _switch_roots, on first need
    aliases: set[str] | None = None
    assigned: set[str] | None = None
    for call in facts._calls:
        func = call.func
        kind = type(func)
        if kind is not ast.Attribute and kind is not ast.Name:
            continue
        if not in_spans(call, spans):
            continue
        if kind is ast.Name:
            aliases = _alias_names(facts) if aliases is None else aliases
            if func.id in aliases:  # type: ignore[attr-defined]
                return True
            continue
        root = func.value  # type: ignore[attr-defined]
        while type(root) is ast.Attribute:
            root = root.value  # type: ignore[attr-defined]
        if type(root) is not ast.Name:
            continue  # ``items[0].run(x)``: no dotted receiver
        depth = _depth(func.value)  # type: ignore[attr-defined]
        if depth > 1:
            continue  # ``self.a.b.m(x)``: object_types keeps no such receiver
        fn = innermost_function(facts._functions, call)
        method = fn is not None and _is_method(fn, facts)
        if not (root.id == "self" and depth == 1 and method):  # type: ignore[attr-defined]
            # ``self.agent.act(x)`` in a method is typed through the class; any
            # other receiver only through a typed name: a parameter (not a
            # method's ``self``) or a name some ``=`` binds.
            assigned = _assigned_names(facts) if assigned is None else assigned
            if root.id not in assigned and not _is_parameter(fn, root.id, method):  # type: ignore[attr-defined]
                continue  # ``for sample in text: sample.count(...)``, ``self.decoder(x)``
        if (
            facts.eval_call
            or _named_for_evaluation(func.attr)  # type: ignore[attr-defined]
            or any(_named_for_evaluation(k.arg) for k in call.keywords)
        ):
            return True
        switched = _switch_roots(facts) if switched is None else switched
        if root.id in switched:  # type: ignore[attr-defined]
            return True  # ``model.setup_to_test(p)`` before ``model.colorize(x)``: the view may confirm it
        if fn is not None and _named_for_evaluation(getattr(fn, "name", None)):
            return True
    return False
