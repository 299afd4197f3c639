"""Functions of a module and who calls them, indexed in one pass.

Several analyses need to look through calls to functions defined in the same
file: a training loop whose backward lives in ``train_step()``, an evaluation
helper that is only ever called under ``torch.no_grad()``, a loss computed by
``compute_loss()``. Only calls that resolve unambiguously are followed:
``foo(...)`` to the one ``def foo`` visible from the call, ``self.foo(...)`` to
a method of the enclosing class (or of a base class defined in the module).
Anything else is an unknown callee, and analyses treat it as such.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence

import libcst as cst

from memlint.parse.traversal import ParentMap, tree_index

Scope = cst.FunctionDef | cst.Module


def bound_params(call: cst.Call, fn: cst.FunctionDef) -> list[tuple[cst.Arg, str]]:
    """The parameter of ``fn`` each argument of ``call`` binds to (``self``
    skipped for ``self.method(...)`` and ``obj.method(...)``); nothing from a
    ``*args`` on, whose positions are unknown."""
    positional = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)]
    if isinstance(call.func, cst.Attribute) and positional and positional[0] in ("self", "cls"):
        positional = positional[1:]
    named = set(positional) | {p.name.value for p in fn.params.kwonly_params}
    out: list[tuple[cst.Arg, str]] = []
    for i, arg in enumerate(call.args):
        if arg.star:
            break
        if arg.keyword is not None:
            if arg.keyword.value in named:
                out.append((arg, arg.keyword.value))
        elif i < len(positional):
            out.append((arg, positional[i]))
    return out


class CallGraph:
    """Also the analyses' view of the module's TreeIndex: ``parents``
    (node -> parent) and ``pos``/``end`` (source order as pre-order numbers),
    so that no analysis needs libcst's position metadata (computed by code
    generation) for a file that reports nothing."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._tree = tree_index(module)
        self.parents = ParentMap(module)
        self.functions: list[cst.FunctionDef] = []
        # Lexical owner of each function: enclosing function/module, and class.
        self.owner: dict[cst.FunctionDef, Scope] = {}
        self.class_of: dict[cst.FunctionDef, cst.ClassDef] = {}
        self.classes: dict[str, list[cst.ClassDef]] = defaultdict(list)
        self.methods: dict[cst.ClassDef, dict[str, cst.FunctionDef]] = defaultdict(dict)
        # Functions visible by bare name from a scope (module level or nested).
        self._defs_in: dict[Scope, dict[str, list[cst.FunctionDef]]] = defaultdict(lambda: defaultdict(list))
        # Every call, by the scope it is written in (nested defs excluded).
        self.calls_in: dict[Scope, list[cst.Call]] = defaultdict(list)
        self._call_scope: dict[cst.Call, Scope] = {}
        self._bare_refs: list[tuple[cst.Name, Scope]] = []
        self._stack: list[Scope] = [module]
        self._class_stack: list[cst.ClassDef] = []
        self._call_funcs: set[int] = set()
        self._walk()
        self._resolve()

    def _walk(self) -> None:
        # The module's shared TreeIndex lists these four classes in source
        # order; a def or class is left once the walk passes its subtree.
        enter = {
            cst.ClassDef: self.visit_ClassDef,
            cst.FunctionDef: self.visit_FunctionDef,
            cst.Call: self.visit_Call,
            cst.Name: self.visit_Name,
        }
        leave = {cst.ClassDef: self.leave_ClassDef, cst.FunctionDef: self.leave_FunctionDef}
        tree = self._tree
        nodes, end = tree.nodes, tree.end
        open_scopes: list[tuple[int, cst.CSTNode]] = []
        for i in tree.indices(0, tuple(enter)):
            while open_scopes and open_scopes[-1][0] <= i:
                _, done = open_scopes.pop()
                leave[done.__class__](done)
            node = nodes[i]
            enter[node.__class__](node)
            if node.__class__ in leave:
                open_scopes.append((end[i], node))
        while open_scopes:
            _, done = open_scopes.pop()
            leave[done.__class__](done)

    # -- source order ------------------------------------------------------
    def pos(self, node: cst.CSTNode) -> tuple[int, int]:
        """Where ``node`` starts, comparable with any other ``pos``/``end``."""
        return (self._index(node), 0)

    def end(self, node: cst.CSTNode) -> tuple[int, int]:
        """Just after the last node inside ``node`` (exclusive)."""
        return (self._tree.end[self._index(node)], 0)

    def between(
        self, nodes: Sequence[cst.CSTNode], start: tuple[int, int], end: tuple[int, int]
    ) -> Sequence[cst.CSTNode]:
        """The nodes of ``nodes`` (in source order) that start in [start, end),
        found by bisection: no scan of a whole scope's list per question."""
        lo, hi = 0, len(nodes)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.pos(nodes[mid]) < start:
                lo = mid + 1
            else:
                hi = mid
        first, hi = lo, len(nodes)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.pos(nodes[mid]) < end:
                lo = mid + 1
            else:
                hi = mid
        return nodes[first:lo]

    def _index(self, node: cst.CSTNode) -> int:
        i = self._tree.index.get(id(node))
        if i is None or self._tree.nodes[i] is not node:
            raise KeyError(node)  # not a (non-trivia) node of this module
        return i

    # -- collection -------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes[node.name.value].append(node)
        self._class_stack.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._class_stack.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node)
        outer = self._stack[-1]
        self.owner[node] = outer
        cls = self._class_stack[-1] if self._class_stack else None
        if cls is not None and self._directly_in_class(cls, node):
            self.class_of[node] = cls
            self.methods[cls][node.name.value] = node
        else:
            self._defs_in[outer][node.name.value].append(node)
        self._stack.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._stack.pop()

    def _directly_in_class(self, cls: cst.ClassDef, node: cst.FunctionDef) -> bool:
        body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
        return any(stmt is node for stmt in body)

    def visit_Call(self, node: cst.Call) -> None:
        scope = self._stack[-1]
        self.calls_in[scope].append(node)
        self._call_scope[node] = scope
        self._call_funcs.add(id(node.func))

    def visit_Name(self, node: cst.Name) -> None:
        self._bare_refs.append((node, self._stack[-1]))

    # -- resolution -------------------------------------------------------
    def _resolve(self) -> None:
        self.call_sites: dict[cst.FunctionDef, list[cst.Call]] = defaultdict(list)
        self.callee: dict[cst.Call, cst.FunctionDef] = {}
        self.inherited_sites: dict[cst.FunctionDef, list[cst.Call]] = defaultdict(list)
        subclasses = self._subclasses()
        for call, scope in self._call_scope.items():
            target = self._lookup_call(call, scope)
            if target is not None:
                self.callee[call] = target
                self.call_sites[target].append(call)
            if subclasses:
                self._add_inherited(call, scope, target, subclasses)
        # A function passed around by name (callbacks, ``map(f, ...)``,
        # ``threading.Thread(target=f)``) has callers we cannot see.
        self.escapes: set[cst.FunctionDef] = set()
        defined = {name for defs in self._defs_in.values() for name in defs}  # _visible finds nothing else
        for name, scope in self._bare_refs:
            if name.value not in defined or id(name) in self._call_funcs or _no_reference(name, self.parents):
                continue
            for fn in self._visible(name.value, scope):
                if fn.name is not name:
                    self.escapes.add(fn)
        del self._bare_refs

    def _subclasses(self) -> dict[cst.ClassDef, list[cst.ClassDef]]:
        """Each class of the module and the classes of the module that derive
        from it, directly or not (bases spelled as bare names)."""
        direct: dict[cst.ClassDef, list[cst.ClassDef]] = defaultdict(list)
        for defs in self.classes.values():
            for cls in defs:
                for base in cls.bases:
                    if isinstance(base.value, cst.Name):
                        for parent in self.classes.get(base.value.value, ()):
                            if parent is not cls:
                                direct[parent].append(cls)
        out: dict[cst.ClassDef, list[cst.ClassDef]] = {}
        for cls in direct:
            seen: list[cst.ClassDef] = []
            todo = list(direct[cls])
            while todo:
                sub = todo.pop()
                if sub not in seen and sub is not cls:
                    seen.append(sub)
                    todo.extend(direct.get(sub, ()))
            out[cls] = seen
        return out

    def _add_inherited(
        self,
        call: cst.Call,
        scope: Scope,
        target: cst.FunctionDef | None,
        subclasses: dict[cst.ClassDef, list[cst.ClassDef]],
    ) -> None:
        """``self._valid_epoch()`` in ``Base.train``: for a subclass that
        inherits ``train`` and defines (or inherits from another class than
        ``Base``) ``_valid_epoch``, this call runs that method: one of its
        call sites, kept apart (``inherited_sites``) from the call's own
        resolution, which names one function."""
        func = call.func
        if not (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == "self"
            and isinstance(scope, cst.FunctionDef)
        ):
            return
        caller = self.method_owner(scope)
        cls = self.class_of.get(caller)  # type: ignore[arg-type]
        if cls is None or caller is None:
            return
        for sub in subclasses.get(cls, ()):
            if self.find_method(sub, caller.name.value) is not caller:
                continue  # the subclass overrides the calling method
            method = self.find_method(sub, func.attr.value)
            if method is not None and method is not target and call not in self.inherited_sites[method]:
                self.inherited_sites[method].append(call)

    def _visible(self, name: str, scope: Scope) -> list[cst.FunctionDef]:
        while True:
            found = self._defs_in.get(scope, {}).get(name)
            if found:
                return found
            if isinstance(scope, cst.Module):
                return []
            scope = self.owner[scope]

    def _lookup_call(self, call: cst.Call, scope: Scope) -> cst.FunctionDef | None:
        func = call.func
        if isinstance(func, cst.Name):
            found = self._visible(func.value, scope)
            return found[0] if len(found) == 1 else None
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value in ("self", "cls")
            and isinstance(scope, cst.FunctionDef)
        ):
            cls = self.class_of.get(self.method_owner(scope))  # type: ignore[arg-type]
            if cls is not None:
                return self.find_method(cls, func.attr.value)
        return None

    # -- queries ----------------------------------------------------------
    def scope_name(self, scope: object) -> str:
        """A scope as the module summaries name it: ``Class.method``,
        ``function``, or ``""`` for the module's own statements."""
        if not isinstance(scope, cst.FunctionDef):
            return ""
        cls = self.class_of.get(scope)
        return f"{cls.name.value}.{scope.name.value}" if cls is not None else scope.name.value

    def method_owner(self, fn: cst.FunctionDef) -> cst.FunctionDef | None:
        """The method a (possibly nested) function belongs to."""
        node: Scope = fn
        while isinstance(node, cst.FunctionDef):
            if node in self.class_of:
                return node
            node = self.owner[node]
        return None

    def find_method(self, cls: cst.ClassDef, name: str, _seen: frozenset = frozenset()) -> cst.FunctionDef | None:
        found = self.methods.get(cls, {}).get(name)
        if found is not None:
            return found
        for base in cls.bases:
            if isinstance(base.value, cst.Name):
                for other in self.classes.get(base.value.value, ()):
                    if other not in _seen:
                        hit = self.find_method(other, name, _seen | {cls})
                        if hit is not None:
                            return hit
        return None

    def visible_functions(self, name: str, scope: Scope) -> list[cst.FunctionDef]:
        """The functions of this module ``name`` may refer to from ``scope``
        (its own defs, then its enclosing scopes')."""
        return list(self._visible(name, scope))

    def resolve(self, call: cst.Call) -> cst.FunctionDef | None:
        """The function defined in this module that ``call`` calls, if known."""
        return self.callee.get(call)

    def scope_of_call(self, call: cst.Call) -> Scope | None:
        return self._call_scope.get(call)

    def callees(self, scope: Scope) -> Iterator[tuple[cst.Call, cst.FunctionDef]]:
        for call in self.calls_in.get(scope, ()):
            fn = self.callee.get(call)
            if fn is not None:
                yield call, fn

    def reachable(self, scope: Scope) -> set[cst.FunctionDef]:
        """Functions called from ``scope``, directly or through others."""
        seen: set[cst.FunctionDef] = set()
        todo = [fn for _, fn in self.callees(scope)]
        while todo:
            fn = todo.pop()
            if fn in seen:
                continue
            seen.add(fn)
            todo.extend(f for _, f in self.callees(fn))
        return seen


def _no_reference(name: cst.Name, parents) -> bool:
    """``loss_avg.val`` or ``f(val=3)``: the name of an attribute or of a
    keyword refers to no function of this module (MORAN's ``val()`` did not
    escape through ``loss_avg.val()``)."""
    parent = parents.get(name)
    if isinstance(parent, cst.Attribute):
        return parent.attr is name
    return isinstance(parent, cst.Arg) and parent.keyword is name
