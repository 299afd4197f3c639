"""Wrappers that hold a model in eval mode and run it (index side).

pysot's trackers are no ``nn.Module``: ``SiamRPNTracker.__init__(model)``
keeps the model it is handed as ``self.model`` and switches it to eval, and
``tracker.track(img)`` runs ``self.model.track(x_crop)``, with grad on. The
model's class is not known here (a parameter, built by a factory in another
module), so ``typed_objects.forward_of`` finds no forward; but the wrapper
itself says what the call is: an inference step of a model it keeps in eval
mode. A loop calling such a method per item is an evaluation loop (MEM201).

``held_forward(typed, typ, method)`` answers, for one project class
(``file\\0Class``), from the files themselves on the first question (few
projects ask one; each file read counts as read by the view):

- the method (the class's own, or the nearest base's) runs ``self.<attr>``
  or a method of it, not under ``no_grad``, and calls no ``backward``,
  ``step`` or ``train`` of anything;
- the class or a base switches ``self.<attr>`` to eval in its
  ``__init__``'s own statements;
- no class of that chain switches it (or itself) back to train, freezes
  it, assigns it outside ``__init__`` or backpropagates anywhere.

Unknown stays silent: a base the project cannot read, a class defined
twice, any doubt gives None.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from memlint.gate.ast_fields import children
from memlint.gate.ast_names import ast_dotted
from memlint.read.source import read_bytes

# ``typed``: typed_objects.TypedObjects (which imports this module, so no import back).
TypedObjects = Any

_MAX_HOPS = 4
# ``self.<attr>.eval()``, spaces and line breaks allowed (_switches_to_eval's shape).
_EVAL_SWITCH = re.compile(rb"self\s*\.\s*\w+\s*\.\s*eval\s*\(\s*\)")
_EMPTY_BASES = frozenset({"object", "Module", "nn.Module", "torch.nn.Module"})
_OFF = frozenset({"no_grad", "inference_mode"})
# Calls that train, or turn a part's gradients off: the class is no plain inference wrapper.
_TRAINING_CALLS = frozenset({"backward", "step", "train", "requires_grad_", "zero_grad"})


def held_forward(typed: TypedObjects, typ: str, method: str) -> str | None:
    """ "Class.m runs self.<attr>, held in eval mode ..., file:line" when an
    instance of ``typ`` runs a model it holds in eval mode in ``method``
    (see the module's docstring); None otherwise."""
    if not _may_switch(typed, typ):
        return None
    chain = _chain(typed, typ)
    if not chain:
        return None
    for path, node in chain:
        fn = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == method), None)
        if fn is None:
            continue
        runs = _runs(fn)
        if runs is None:
            return None
        for attr, line in runs:
            holder = _held_in_eval(chain, attr)
            if holder is not None:
                where = f"{typed.index.modules.display(path)}:{line}"
                return f"{node.name}.{method} runs self.{attr}, held in eval mode by {holder}.__init__, with autograd on, {where}"
        return None
    return None


def _may_switch(typed: TypedObjects, typ: str) -> bool:
    """Some module of ``typ``'s class chain (the classes ``_chain`` would
    read) spells ``self.<attr>.eval()``: a byte scan before any parse, so a
    large project keeps no tree of the classes it only asks about (most
    modules of transformers switch no attribute to eval)."""
    todo, hops = [typ], 0
    while todo and hops <= _MAX_HOPS:
        hops += 1
        if "\0" not in todo[0]:
            return False
        path, cls = todo.pop(0).split("\0")
        if _switch_bytes(typed, path):
            return True
        todo += [q for q in _bases(typed, path, cls)[1] if q]
    return False


def _bases(typed: TypedObjects, path: str, cls: str) -> tuple[list[str] | None, list[str | None]]:
    """``cls``'s bases as ``path``'s summary lists them (None when unknown),
    and the project class each names past ``object``/``nn.Module``: its one
    qualified type, or None when it names no single one."""
    objects = typed.objects(path)
    spelled = next((b for c, b in objects.bases if c == cls), None) if objects is not None else None
    named: list[str | None] = []
    for base in spelled or ():
        if base.rpartition(".")[2] in ("object", "Module") or base in _EMPTY_BASES:
            continue
        q = (f"{path}\0{base[1:]}",) if base.startswith(":") else typed.qualify(base, path)
        named.append(q[0] if q and len(q) == 1 else None)
    return spelled, named


def _switch_bytes(typed: TypedObjects, path: str) -> bool:
    cache = getattr(typed, "_held_switches", None)
    if cache is None:
        cache = typed._held_switches = {}
    if path not in cache:
        cache[path] = _EVAL_SWITCH.search(read_bytes(path) or b"") is not None
    typed.index._note_read(path)
    return bool(cache[path])


def _chain(typed: TypedObjects, typ: str) -> list[tuple[str, ast.ClassDef]] | None:
    """The class of ``typ`` and its project bases, nearest first; None when a
    base is not a project class we can read (its methods are not known)."""
    out: list[tuple[str, ast.ClassDef]] = []
    todo = [typ]
    while todo:
        if len(out) > _MAX_HOPS or "\0" not in todo[0]:
            return None
        path, cls = todo.pop(0).split("\0")
        node = _class(typed, path, cls)
        if node is None:
            return None
        out.append((path, node))
        spelled, named = _bases(typed, path, cls)
        if spelled is None or len(spelled) != len(node.bases) or None in named:
            return None
        todo += [q for q in named if q]
    return out


def _class(typed: TypedObjects, path: str, cls: str) -> ast.ClassDef | None:
    """The module-level class ``cls`` of ``path``, parsed once per index."""
    cache = getattr(typed, "_held_trees", None)
    if cache is None:
        cache = typed._held_trees = {}
    if path not in cache:
        try:
            cache[path] = ast.parse((read_bytes(path) or b"").decode("utf-8-sig"))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
            cache[path] = None
    typed.index._note_read(path)
    tree = cache[path]
    if tree is None:
        return None
    found = [n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name == cls]
    return found[0] if len(found) == 1 and isinstance(found[0], ast.ClassDef) else None


def _runs(fn: ast.FunctionDef) -> list[tuple[str, int]] | None:
    """The attributes ``fn`` runs with grad on (``self.model.track(x)``,
    ``self.model(x)``), with the line of the last run of each; None when it
    trains, or runs one under ``no_grad``, or is decorated with it."""
    if any(
        (ast_dotted(d.func if isinstance(d, ast.Call) else d) or "").rpartition(".")[2] in _OFF
        for d in fn.decorator_list
    ):
        return None
    found: dict[str, int] = {}
    off: set[str] = set()
    todo: list[tuple[ast.AST, bool]] = [(s, False) for s in fn.body]
    while todo:
        node, grad_off = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.With, ast.AsyncWith)):
            inner = grad_off or any(
                (
                    ast_dotted(i.context_expr.func if isinstance(i.context_expr, ast.Call) else i.context_expr) or ""
                ).rpartition(".")[2]
                in _OFF
                for i in node.items
            )
            todo += [(s, inner) for s in node.body]
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _TRAINING_CALLS:
                return None
            # ``self.model.track(x)`` or ``self.model(x)`` (a method of the
            # wrapper's own is never held in eval: _held_in_eval decides).
            attr = _self_attr(node.func.value) or _self_attr(node.func)
            if attr is not None and grad_off:
                off.add(attr)
            elif attr is not None:
                found[attr] = max(found.get(attr, 0), node.lineno)
        todo += [(child, grad_off) for child in children(node)]
    return sorted((a, ln) for a, ln in found.items() if a not in off)


def _self_attr(node: ast.AST) -> str | None:
    """``X`` of ``self.X``."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _held_in_eval(chain: list[tuple[str, ast.ClassDef]], attr: str) -> str | None:
    """The class of ``chain`` whose ``__init__`` switches ``self.<attr>`` to
    eval, when no class of the chain undoes it (see the module's docstring)."""
    holder = None
    for _path, node in chain:
        for fn in node.body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if fn.name == "__init__" and holder is None and any(_switches_to_eval(s, attr) for s in fn.body):
                holder = node.name
            if _undoes(fn, attr):
                return None
    return holder


def _switches_to_eval(stmt: ast.stmt, attr: str) -> bool:
    """``self.<attr>.eval()`` as a statement."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "eval"
        and not call.args
        and _self_attr(call.func.value) == attr
    )


def _undoes(fn: ast.FunctionDef | ast.AsyncFunctionDef, attr: str) -> bool:
    """``fn`` trains (a ``backward``, an optimizer ``step``), switches the
    attribute or the object to train, freezes or thaws the attribute's
    parameters, or binds the attribute anew outside ``__init__``."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name in ("backward", "step", "zero_grad"):
                return True
            if name in ("train", "requires_grad_", "parameters", "named_parameters"):
                receiver = node.func.value
                if _self_attr(receiver) == attr or (isinstance(receiver, ast.Name) and receiver.id == "self"):
                    return True
        if isinstance(node, ast.Attribute) and node.attr == "requires_grad" and not isinstance(node.ctx, ast.Load):
            return True
        if (
            fn.name != "__init__"
            and isinstance(node, ast.Attribute)
            and not isinstance(node.ctx, ast.Load)
            and _self_attr(node) == attr
        ):
            return True
    return False
