"""The arguments of a call after which nothing in the calling function can
backpropagate through what they hold (MEM103 across modules).

base_GAN.py's generator step ends with ``GDPPLoss(phiDReal, phiGFake)``,
a helper of another module that backpropagates its loss once with
``retain_graph=True``; after the call the step only clips, steps the
optimizer and returns numbers. The graph the helper went through dies with
the step: its ``retain_graph=True`` keeps buffers for nothing.

``final_args(fn, call, trains)`` -> the parameter keys ("0", "1"... by
position, else the keyword) of ``call`` (a call in ``fn``'s body, in no loop
of it) whose argument is a local name such that:

- every name it is computed from in ``fn`` and every name computed from
  those (its graph) is bound only by plain assignments (``x = ...``,
  ``a, x = ...``), is no parameter, no ``global``/``nonlocal``, and is not
  read in a nested function, lambda or class;
- no name of that graph is read after the call, except as a number or a cut
  graph (``x.item()``, ``x.detach()``, ``x.shape``, ``len(x)``);
- no name of that graph is kept anywhere, before or after: an attribute or
  subscript assignment, an augmented assignment, a ``return``/``yield``, an
  argument of a container's ``append``/``extend``/``insert``/``add``...;
- nothing after the call in ``fn`` backpropagates: no ``.backward(``, no
  ``grad(`` of autograd, no call of ``self.m(...)`` or ``m(...)`` where
  ``m`` names a function or method of the module that backpropagates
  (``trains``). Functions of other modules are trusted not to, as
  retained_sites.py trusts them within a module.

Values the graph reads from outside (a parameter, an attribute such as the
step's data batch) are the caller's inputs: as in retained_sites.py's
``done_after``, only values known to be computed in the function count.
Read on Python's ``ast``, once per function holding such a call
(``ScopeFlow``), then per call.
"""

from __future__ import annotations

import ast

from memlint.project.arg_modes import dotted

_CUT_METHODS = frozenset({"item", "detach", "tolist", "numpy", "size", "dim", "numel", "cpu"})
_CUT_ATTRS = frozenset({"data", "shape", "dtype", "device", "grad", "requires_grad"})
_CUT_FUNCTIONS = frozenset({"float", "int", "len", "bool", "str", "round"})
_CONTAINER_ADD = frozenset({"append", "extend", "insert", "add", "appendleft", "update", "put", "setdefault"})

_Pos = tuple[int, int]


def _pos(node: ast.AST) -> _Pos:
    return (node.lineno, node.col_offset)  # type: ignore[attr-defined]


def _end(node: ast.AST) -> _Pos:
    return (node.end_lineno or node.lineno, node.end_col_offset or 0)  # type: ignore[attr-defined]


class ScopeFlow:
    """One function's plain-name bindings and reads, built once."""

    def __init__(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, numeric: frozenset[str] = frozenset()) -> None:
        args = fn.args
        self.params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
        self.params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        self.numeric = numeric  # functions and methods of the module that return only numbers
        self.top = {id(stmt) for stmt in fn.body}
        # name -> (where, the names its value reads, the statement is in the body's top block)
        self.binds: dict[str, list[tuple[_Pos, set[str], bool]]] = {}
        self.plain: dict[str, bool] = {}  # name -> every binding is a plain assignment
        # name -> (where, "cut" | "kept" | "use", the assignment it feeds: (where, its plain targets))
        self.reads: dict[str, list[tuple[_Pos, str, tuple[_Pos, tuple[str, ...]] | None]]] = {}
        self.nested: set[str] = set()
        self.declared: set[str] = set()
        self.backwards: list[_Pos] = []
        self.calls: list[tuple[_Pos, str]] = []  # (where, the called name: ``m`` of ``self.m(...)``, ``f(...)``)
        self.parents: dict[int, ast.AST] = {}
        self.looped: set[str] = set()  # names bound inside a loop: a value may be carried
        self._depth = 0
        for stmt in fn.body:
            self._walk(stmt)

    # -- the walk --------------------------------------------------------------
    def _walk(self, node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            self.nested |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            return
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            self.declared.update(node.names)
        elif isinstance(node, ast.Assign):
            self._bind(node)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
            self.plain[node.target.id] = False
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.comprehension)):
            for target in _targets(node):
                for name in _names(target):
                    self.plain[name] = False
        elif isinstance(node, ast.NamedExpr):
            self.plain[node.target.id] = False
        elif isinstance(node, ast.Call):
            self._call(node)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            self.reads.setdefault(node.id, []).append((_pos(node), *self._kind(node)))
        loop = isinstance(node, (ast.For, ast.AsyncFor, ast.While))
        self._depth += loop
        for child in ast.iter_child_nodes(node):
            self.parents[id(child)] = node
            self._walk(child)
        self._depth -= loop

    def _bind(self, node: ast.Assign) -> None:
        read = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
        top = id(node) in self.top
        for target in node.targets:
            plain = _plain_target(target)
            for name in _names(target):
                self.binds.setdefault(name, []).append((_pos(node), read, top))
                self.plain[name] = self.plain.get(name, True) and plain
                if self._depth:
                    self.looped.add(name)

    def _call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr == "backward" or (func.attr == "grad" and dotted(func.value).endswith("autograd")):
                self.backwards.append(_pos(node))
            elif isinstance(func.value, ast.Name) and func.value.id == "self":
                self.calls.append((_pos(node), func.attr))
        elif isinstance(func, ast.Name):
            if func.id in ("backward", "grad"):
                self.backwards.append(_pos(node))
            self.calls.append((_pos(node), func.id))

    def _kind(self, read: ast.Name) -> tuple[str, tuple[_Pos, tuple[str, ...]] | None]:
        """How a read is used: cut to a number, kept somewhere, or used (and
        the plain assignment whose value it feeds)."""
        node: ast.AST = read
        while True:
            parent = self.parents.get(id(node))
            if parent is None:
                return "use", None
            if isinstance(parent, ast.Attribute) and parent.value is node:
                if parent.attr in _CUT_ATTRS:
                    return "cut", None
                grand = self.parents.get(id(parent))
                if isinstance(grand, ast.Call) and grand.func is parent and parent.attr in _CUT_METHODS:
                    return "cut", None
            if isinstance(parent, ast.Call) and node is not parent.func:
                func = parent.func
                if isinstance(func, ast.Name) and func.id in _CUT_FUNCTIONS:
                    return "cut", None
                if _callee(func) in self.numeric:
                    return "cut", None  # ``self.penalty(out, y)`` returns ``loss.item()``
                if isinstance(func, ast.Attribute) and func.attr in _CONTAINER_ADD:
                    return "kept", None
            if isinstance(parent, (ast.Return, ast.Yield, ast.YieldFrom, ast.AugAssign, ast.Starred)):
                return "kept", None
            if isinstance(parent, (ast.Assign, ast.AnnAssign)):
                targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
                if node is not parent.value:
                    return "use", None
                if any(not _plain_target(t) for t in targets):
                    return "kept", None
                return "use", (_pos(parent), tuple(n for t in targets for n in _names(t)))
            if isinstance(parent, (ast.Dict, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp, ast.GeneratorExp)):
                return "kept", None
            if isinstance(parent, ast.stmt):
                return "use", None
            node = parent

    # -- per call ----------------------------------------------------------------
    def final_args(self, call: ast.Call, trains: frozenset[str] | set[str]) -> tuple[str, ...]:
        end = _end(call)
        if any(p >= end for p in self.backwards):
            return ()
        if any(p >= end and name in trains for p, name in self.calls):
            return ()
        at = _pos(call)
        keyed = _keyed_args(call)
        handed = {_pos(arg) for _key, arg in keyed if isinstance(arg, ast.Name)}
        return tuple(key for key, arg in keyed if isinstance(arg, ast.Name) and self._final(arg.id, at, end, handed))

    def _final(self, name: str, at: _Pos, end: _Pos, handed: set[_Pos]) -> bool:
        """Every value the graph of ``name`` (read at ``at``) runs through,
        and every value computed from one of them, dies in the function."""
        graph: set[tuple[str, _Pos]] = set()
        stack: list[tuple[str, _Pos]] = []
        reaching = self._reaching(name, at)
        if not reaching:
            return False
        for b in reaching:
            graph.add((name, b))
            stack.append((name, b))
        while stack:
            key, where = stack.pop()
            binding = next(x for x in self.binds[key] if x[0] == where)
            for dep in binding[1]:  # what it is computed from
                if dep not in self.binds:
                    continue  # a parameter, an attribute's root, a global: the caller's inputs
                found = self._reaching(dep, where)
                if found is None:
                    return False
                for b in found:
                    if (dep, b) not in graph:
                        graph.add((dep, b))
                        stack.append((dep, b))
            for pos, kind, feeds in self._reads_of(key, where):  # what is computed from it
                if pos in handed:
                    continue  # handed to the call itself
                if kind == "kept" or (kind == "use" and pos >= end):
                    return False
                for target in feeds[1] if feeds is not None else ():
                    if not self._local(target):
                        return False
                    if (target, feeds[0]) not in graph:
                        graph.add((target, feeds[0]))
                        stack.append((target, feeds[0]))
        return True

    def _local(self, name: str) -> bool:
        return (
            self.plain.get(name, False)
            and name not in self.params
            and name not in self.declared
            and name not in self.nested
            and name not in self.looped
        )

    def _reaching(self, name: str, at: _Pos) -> list[_Pos] | None:
        """The bindings of ``name`` a read at ``at`` may see: the last one of
        the body's top block before it and any later one in a nested block;
        None when ``name`` is no plain local."""
        if not self._local(name):
            return None
        before = [b for b in self.binds[name] if b[0] < at]
        tops = [b[0] for b in before if b[2]]
        start = max(tops) if tops else (0, 0)
        return [b[0] for b in before if b[0] >= start] or None

    def _reads_of(self, name: str, where: _Pos):
        """The reads that may see the binding of ``name`` at ``where``: after
        it, before the next binding of the top block."""
        nxt = min((b[0] for b in self.binds[name] if b[2] and b[0] > where), default=(10**9, 0))
        return [r for r in self.reads.get(name, ()) if where < r[0] < nxt]


def returns_number(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Every ``return`` of ``fn`` (one at least) gives a number: a literal,
    ``x.item()``, ``float(x)``..."""
    found = False
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return False
        if isinstance(node, ast.Return):
            value = node.value
            if value is None or not _number(value):
                return False
            found = True
        stack.extend(ast.iter_child_nodes(node))
    return found


def _number(value: ast.expr) -> bool:
    if isinstance(value, ast.Constant):
        return isinstance(value.value, (int, float)) and not isinstance(value.value, bool)
    if isinstance(value, ast.Call):
        func = value.func
        if isinstance(func, ast.Attribute) and func.attr == "item" and not value.args:
            return True
        return isinstance(func, ast.Name) and func.id in ("float", "int") and len(value.args) == 1
    return False


def _callee(func: ast.expr) -> str:
    """``m`` of ``self.m`` and of ``m``; "" otherwise."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        return func.attr
    return ""


def _keyed_args(call: ast.Call) -> list[tuple[str, ast.expr]]:
    out: list[tuple[str, ast.expr]] = []
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break
        out.append((str(i), arg))
    out.extend((k.arg, k.value) for k in call.keywords if k.arg is not None)
    return out


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        return [node.target]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [i.optional_vars for i in node.items if i.optional_vars is not None]
    return []


def _names(target: ast.AST) -> list[str]:
    """The names a target binds (``a, *b``; not ``self`` of ``self.x``)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Starred):
        return _names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _names(e)]
    return []


def _plain_target(target: ast.expr) -> bool:
    return isinstance(target, ast.Name) or (
        isinstance(target, (ast.Tuple, ast.List)) and all(_plain_target(e) for e in target.elts)
    )
