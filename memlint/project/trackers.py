"""Loss trackers that keep the tensor they are given.

``AverageMeter.update(self, val, n=1)`` doing ``self.sum += val * n``: fed a
loss that carries autograd history, once per batch, it chains every batch's
graph onto ``self.sum`` (MEM102, reported where the loss is handed over,
which is often another module's training loop). Read on Python's ``ast``
tree: the module summary keeps these for other modules, and the analysis
reads the checked module's own the same way.

Precision first: only a plain class (no base but ``object``), only a method
named like a tracker's, and only when nothing in the method may turn the
value into a number or drop its graph (``.item()``, ``float()``,
``.detach()``, ``.data``, ``torch.``..., a parameter rebound): then the
method keeps exactly what it is given.

A ``**kwargs`` method (``update(self, batch=1, **kwargs)`` doing
``self.sum[k] += kwargs[k]``) keeps every keyword argument that does not
name one of its parameters: recorded with position ``KEYWORDS`` and, in
``param``, the ``**`` name then the named parameters (``"kwargs batch"``).
Only the stored value matters there: the method may compute ``float(batch)``
for its average, but nothing may convert, test or rebind a keyword value.
"""

from __future__ import annotations

import ast
import collections
from typing import NamedTuple

from memlint.vocabulary.trackers import KEYWORDS

TRACKER_METHODS = frozenset({"update", "add", "append", "record", "accumulate"})
# Any call of these methods in the method (``.data`` read at all): it may
# convert or detach what it stores.
_CONVERTS = frozenset(
    {"item", "detach", "detach_", "cpu", "numpy", "tolist", "float", "int", "double", "clone", "sum", "mean", "to"}
)
_CONVERTERS = frozenset({"float", "int", "round", "isinstance", "hasattr", "type", "np", "numpy", "torch", "math"})
_PLAIN_BASES = frozenset({"object"})


class TensorTracker(NamedTuple):
    """``cls.method`` keeps its parameter ``param`` (positional ``position``,
    0 after ``self``) in ``self.<attr>`` across calls, at ``line``."""

    cls: str
    method: str
    position: int
    param: str
    attr: str
    line: int


def tensor_trackers(tree: ast.Module) -> list[TensorTracker]:
    """The tensor trackers among the classes of ``tree``, at any depth (a
    class defined in a function is used there by its name); a name given to
    two classes is ambiguous and left out."""
    classes = class_defs(tree)
    named = collections.Counter(n.name for n in classes)
    out = []
    for node in classes:
        if node.keywords or named[node.name] > 1:
            continue
        if any(not (isinstance(b, ast.Name) and b.id in _PLAIN_BASES) for b in node.bases):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.FunctionDef) and stmt.name in TRACKER_METHODS:
                found = _keeps(node.name, stmt)
                if found is not None:
                    out.append(found)
    return out


# The fields of a statement that hold statements (an ``except``'s, a ``case``'s
# own node included): a class is a statement, never inside an expression.
_STATEMENT_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def class_defs(tree: ast.Module) -> list[ast.ClassDef]:
    """Every class of ``tree``, in ``ast.walk``'s order (breadth first), found
    through statements only: ``ast.walk`` also enters every expression, a
    whole walk of the module (~3 CPU s over transformers) to find a few classes."""
    out: list[ast.ClassDef] = []
    todo: collections.deque[ast.AST] = collections.deque([tree])
    blocks = _BLOCKS
    while todo:
        node = todo.popleft()
        kind = node.__class__
        if kind is ast.ClassDef:
            out.append(node)  # type: ignore[arg-type]
        fields = blocks.get(kind)
        if fields is None:
            fields = blocks[kind] = _blocks(kind)
        for name in fields:
            todo.extend(getattr(node, name))
    return out


def _blocks(kind: type) -> tuple[str, ...]:
    """The fields of a statement class that hold statements, in their order (as ``ast.walk``)."""
    return tuple(name for name in getattr(kind, "_fields", ()) if name in _STATEMENT_FIELDS)


# Statement class -> _blocks(class), filled as classes are met: the fields
# of every statement of every summarised module are otherwise tested each time.
_BLOCKS: dict[type, tuple[str, ...]] = {}


def _keeps(cls: str, fn: ast.FunctionDef) -> TensorTracker | None:
    args = fn.args
    if args.kwarg is not None and not (args.posonlyargs or args.vararg or fn.decorator_list) and args.args:
        from memlint.project.keyword_trackers import keeps_keywords

        kept = keeps_keywords(fn)
        return TensorTracker(cls, fn.name, KEYWORDS, *kept) if kept is not None else None
    if args.posonlyargs or args.vararg or args.kwarg or not args.args or fn.decorator_list:
        return None
    params = [a.arg for a in args.args[1:]]
    defaults = len(args.defaults)
    # Parameters without a default: the values handed over (``n=1`` is a count).
    values = params[: len(params) - defaults] if defaults else params
    if not values:
        return None
    for sub in ast.walk(fn):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _CONVERTS:
            return None
        if isinstance(sub, ast.Attribute) and sub.attr == "data":
            return None
        if isinstance(sub, ast.Name) and sub.id in _CONVERTERS:
            return None
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)) and sub.id in params:
            return None  # rebound: what it holds now is unknown
    for stmt in ast.walk(fn):
        param = None
        attr = ""
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) and _self_attr(stmt.target):
            param, attr = _operand(stmt.value, values), stmt.target.attr  # type: ignore[union-attr]
        elif (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and _self_attr(stmt.targets[0])
            and isinstance(stmt.value, ast.BinOp)
            and isinstance(stmt.value.op, ast.Add)
            and _same_attr(stmt.value.left, stmt.targets[0])
        ):
            param, attr = _operand(stmt.value.right, values), stmt.targets[0].attr  # type: ignore[attr-defined]
        elif (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute)
            and stmt.value.func.attr == "append"
            and _self_attr(stmt.value.func.value)
            and len(stmt.value.args) == 1
        ):
            param, attr = _operand(stmt.value.args[0], values), stmt.value.func.value.attr  # type: ignore[attr-defined]
        if param is not None:
            return TensorTracker(cls, fn.name, params.index(param), param, attr, stmt.lineno)  # type: ignore[attr-defined]
    return None


def _operand(expr: ast.expr, params: list[str]) -> str | None:
    """``val``, ``val * n``, ``n * val``, ``val / n``: the parameter kept."""
    if isinstance(expr, ast.Name) and expr.id in params:
        return expr.id
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Mult, ast.Div)):
        return _operand(expr.left, params) or (_operand(expr.right, params) if isinstance(expr.op, ast.Mult) else None)
    return None


def _self_attr(target: ast.AST) -> bool:
    return isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"


def _same_attr(a: ast.AST, b: ast.AST) -> bool:
    return _self_attr(a) and a.attr == b.attr  # type: ignore[attr-defined]
