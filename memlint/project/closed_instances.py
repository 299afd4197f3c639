"""Instances of a project class that another module builds and calls in a
way that ends every graph it hands over (MEM103 across modules).

``cam = GradCAM(model)`` in main.py, then ``heat = cam(img)`` or
``cam.generate(img, k)`` once per image: when nothing in main.py
backpropagates, the instance is used only to call its methods, and each
call hands over values that are fresh at that call (bound in the loop
around it, not read after it), nothing can backpropagate again through the
graph a ``backward(retain_graph=True)`` in the method kept. Read on Python's
``ast`` tree by the module summary, once per scope that binds an instance
of an imported class (summary.py ``_Scope.instances``) and holds no
backward; the index then tells the class's module whether every module that
builds the class builds such an instance (index.py ``closed_classes``).

Precision first: a name bound more than once or otherwise than by the
constructor call, used otherwise than as the receiver of a method call or
as the callee, read inside a nested function, called twice in the scope,
or handed anything but constants and such fresh local names (a parameter,
an attribute, an expression, a name bound outside the loop of the call, a
loop target over a method's result such as ``feats.split(1)``, a name read
after the call) is not closed.
"""

from __future__ import annotations

import ast

from memlint.gate.ast_fields import children


def closed_instances(
    body: list[ast.stmt], params: set[str], instances: dict[str, str], bindings: dict[str, str]
) -> list[tuple[str, int]]:
    """``[("cam.GradCAM", 12)]``: the class (as ``instances`` spells it) and
    the line of the constructor call of each closed instance of the scope."""
    walk = _Walk(set(bindings))
    for stmt in body:
        walk.visit(stmt, (), False)
    out = []
    for name, spelled in instances.items():
        if not spelled or name in params:
            continue
        stores = walk.stores.get(name, [])
        if len(stores) != 1 or stores[0][1] != "ctor":
            continue
        calls = walk.uses.get(name, [])
        if len(calls) != 1 or name in walk.nested or walk.escapes.get(name):
            continue
        call, loops = calls[0]
        if all(_fresh(arg, call, loops, walk, params) for arg in (*call.args, *(k.value for k in call.keywords))):
            out.append((spelled, stores[0][0]))
    return out


def _fresh(arg: ast.expr, call: ast.Call, loops: tuple[ast.AST, ...], walk: _Walk, params: set[str]) -> bool:
    if isinstance(arg, ast.Constant):
        return True
    if not isinstance(arg, ast.Name) or arg.id in params or arg.id in walk.nested:
        return False
    stores = walk.stores.get(arg.id, [])
    inner = loops[-1] if loops else None
    if not stores or any(kind == "other" or (inner is not None and inner not in where) for _l, kind, where in stores):
        return False
    end = (call.end_lineno or call.lineno, call.end_col_offset or 0)
    for line, col, where in walk.loads.get(arg.id, []):
        if (line, col) > end or (inner is not None and inner not in where):
            return False  # kept past the call, or read from outside the loop that binds it afresh
    return True


class _Walk:
    """Bindings and reads of plain names in one scope, with the loops around
    each; names read in a nested function or class are ``nested``."""

    def __init__(self, modules: set[str]) -> None:
        self.modules = modules  # imported names: ``os.listdir(...)`` is a plain iterable
        # name -> [(line, "ctor" | "assign" | "for" | "other", loops around)]
        self.stores: dict[str, list[tuple[int, str, tuple[ast.AST, ...]]]] = {}
        self.loads: dict[str, list[tuple[int, int, tuple[ast.AST, ...]]]] = {}
        # name -> its method calls / calls of it, with the loops around
        self.uses: dict[str, list[tuple[ast.Call, tuple[ast.AST, ...]]]] = {}
        self.escapes: dict[str, bool] = {}
        self.nested: set[str] = set()

    def visit(self, node: ast.AST, loops: tuple[ast.AST, ...], nested: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            for child in children(node):
                self.visit(child, loops, True)
            return
        if isinstance(node, (ast.For, ast.AsyncFor)):
            self.visit(node.iter, loops, nested)
            inner = (*loops, node)
            kind = "for" if _plain_iterable(node.iter, self.modules) else "other"
            self._store(node.target, kind, inner, nested)
            for stmt in (*node.body, *node.orelse):
                self.visit(stmt, inner, nested)
            return
        if isinstance(node, ast.While):
            self.visit(node.test, loops, nested)
            for stmt in (*node.body, *node.orelse):
                self.visit(stmt, (*loops, node), nested)
            return
        if isinstance(node, ast.Assign):
            self.visit(node.value, loops, nested)
            ctor = isinstance(node.value, ast.Call) and len(node.targets) == 1
            for target in node.targets:
                self._store(target, "ctor" if ctor else "assign", loops, nested)
            return
        if isinstance(node, ast.Call):
            self._call(node, loops, nested)
            return
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                self._load(node, loops, nested)
                self.escapes[node.id] = True  # read as a value, not only called
            else:
                self._store(node, "other", loops, nested)
            return
        for child in children(node):
            self.visit(child, loops, nested)

    def _call(self, node: ast.Call, loops: tuple[ast.AST, ...], nested: bool) -> None:
        func = node.func
        receiver = func.value if isinstance(func, ast.Attribute) else func
        if isinstance(receiver, ast.Name):
            if nested:
                self.nested.add(receiver.id)
            self.uses.setdefault(receiver.id, []).append((node, loops))
        else:
            self.visit(func, loops, nested)
        for child in (*node.args, *node.keywords):
            self.visit(child, loops, nested)

    def _load(self, node: ast.Name, loops: tuple[ast.AST, ...], nested: bool) -> None:
        if nested:
            self.nested.add(node.id)
        self.loads.setdefault(node.id, []).append((node.lineno, node.col_offset, loops))

    def _store(self, target: ast.AST, kind: str, loops: tuple[ast.AST, ...], nested: bool) -> None:
        if isinstance(target, ast.Name):
            if nested:
                self.nested.add(target.id)
            self.stores.setdefault(target.id, []).append((target.lineno, kind, loops))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._store(element, "other" if kind == "ctor" else kind, loops, nested)
        elif isinstance(target, ast.Starred):
            self._store(target.value, "other", loops, nested)
        else:
            self.visit(target, loops, nested)  # ``x.attr = ...``, ``x[i] = ...``: reads ``x``


def _plain_iterable(expr: ast.expr, modules: set[str]) -> bool:
    """An iterable that hands fresh values, not pieces of one tensor:
    ``loader``, ``enumerate(tqdm(loader))``, ``os.listdir(folder)``, ``range(n)``;
    not ``feats.split(1)`` (a method of a value)."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                root = func.value
                while isinstance(root, ast.Attribute):
                    root = root.value
                if not (isinstance(root, ast.Name) and root.id in modules):
                    return False
            elif not isinstance(func, ast.Name):
                return False
    return True
