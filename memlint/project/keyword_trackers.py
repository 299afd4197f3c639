"""Loss trackers whose ``update(self, batch=1, **kwargs)`` keeps the keyword
values it is given: ``self.sum[k] += kwargs[k]`` or, over
``kwargs.items()``, ``self.sum[k] += v`` (SiamMask's ``AverageMeter``, fed
``avg.update(cls_loss=cls_loss)`` once per batch: MEM102).

Read on Python's ``ast`` tree, like project/trackers.py. Precision first:
only the value as it was handed over (times or divided by something) counts
as kept, and the method is given up when anything may turn a keyword value
into a number, test it or replace it: a call that is handed one or is
called on one (``float(kwargs[k])``, ``v.item()``, ``isinstance(v, ...)``),
``.data``, a rebound value name, ``kwargs[k] = ...``, or a method of
``kwargs`` other than those that read it.
"""

from __future__ import annotations

import ast

# Methods of ``kwargs`` that read it without changing what it holds.
_READERS = frozenset({"items", "keys", "values", "get"})


def keeps_keywords(fn: ast.FunctionDef) -> tuple[str, str, int] | None:
    """``fn`` (with a ``**`` parameter) as a keyword tracker: its ``param``
    (the ``**`` name, then the named parameters), the ``self`` slot it keeps
    values in and that line; or None."""
    kw = fn.args.kwarg.arg  # type: ignore[union-attr]
    named = [a.arg for a in fn.args.args[1:]] + [a.arg for a in fn.args.kwonlyargs]
    values, loop_targets = _value_names(fn, kw)
    stores: list[ast.AST] = []
    for sub in ast.walk(fn):
        if isinstance(sub, ast.Attribute) and sub.attr == "data":
            return None
        if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
            if sub.id == kw or (sub.id in values and id(sub) not in loop_targets):
                return None  # rebound: what it holds now is unknown
        if isinstance(sub, ast.Subscript) and _is_name(sub.value, kw) and not isinstance(sub.ctx, ast.Load):
            return None  # ``kwargs[k] = float(kwargs[k])``
        if isinstance(sub, ast.Call):
            func = sub.func
            if isinstance(func, ast.Attribute) and _is_name(func.value, kw):
                if func.attr not in _READERS:
                    return None  # ``kwargs.update(...)``, ``kwargs.pop(...)``
                continue
            if _appends_to_self(sub):
                stores.append(sub)
                continue
            if _mentions(func, kw, values) or any(_mentions(a, kw, values) for a in sub.args):
                return None
            if any(_mentions(k.value, kw, values) for k in sub.keywords):
                return None
    for stmt in ast.walk(fn):
        kept = None
        attr = None
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add):
            attr = _self_slot(stmt.target)
            kept = _operand(stmt.value, kw, values)
        elif (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.value, ast.BinOp)
            and isinstance(stmt.value.op, ast.Add)
            and ast.dump(stmt.value.left) == ast.dump(stmt.targets[0])
        ):
            attr = _self_slot(stmt.targets[0])
            kept = _operand(stmt.value.right, kw, values)
        elif isinstance(stmt, ast.Expr) and any(stmt.value is s for s in stores):
            call = stmt.value
            attr = _self_slot(call.func.value)  # type: ignore[attr-defined]
            kept = _operand(call.args[0], kw, values)  # type: ignore[attr-defined]
        if attr is not None and kept:
            return " ".join([kw, *named]), attr, stmt.lineno  # type: ignore[attr-defined]
    return None


def _value_names(fn: ast.FunctionDef, kw: str) -> tuple[set[str], set[int]]:
    """The names a loop binds to ``kw``'s values (``for k, v in kwargs.items()``,
    ``for v in kwargs.values()``), and the ids of those loop targets."""
    names: set[str] = set()
    targets: set[int] = set()
    for sub in ast.walk(fn):
        if not isinstance(sub, (ast.For, ast.comprehension)):
            continue
        it = sub.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and _is_name(it.func.value, kw)):
            continue
        target = sub.target
        if it.func.attr == "items" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            target = target.elts[1]
        elif it.func.attr != "values":
            continue
        if isinstance(target, ast.Name):
            names.add(target.id)
            targets.add(id(target))
    return names, targets


def _operand(expr: ast.expr, kw: str, values: set[str]) -> bool:
    """``kwargs[k]``, ``v``, either times or divided by something."""
    if isinstance(expr, ast.Name):
        return expr.id in values
    if isinstance(expr, ast.Subscript):
        return _is_name(expr.value, kw)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Mult, ast.Div)):
        return _operand(expr.left, kw, values) or (isinstance(expr.op, ast.Mult) and _operand(expr.right, kw, values))
    return False


def _mentions(expr: ast.AST, kw: str, values: set[str]) -> bool:
    """Whether ``expr`` reads ``kw`` or one of its value names."""
    return any(isinstance(n, ast.Name) and (n.id == kw or n.id in values) for n in ast.walk(expr))


def _appends_to_self(call: ast.Call) -> bool:
    """``self.x.append(one)``, ``self.x[k].append(one)``."""
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "append"
        and len(call.args) == 1
        and not call.keywords
        and _self_slot(func.value) is not None
    )


def _self_slot(target: ast.AST) -> str | None:
    """``x`` of ``self.x`` or ``self.x[k]``: where the method keeps a value across calls."""
    if isinstance(target, ast.Subscript):
        target = target.value
    if isinstance(target, ast.Attribute) and _is_name(target.value, "self"):
        return target.attr
    return None


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name
