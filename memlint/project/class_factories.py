"""Functions that pick a class from a registry of the module (MEM701's
dynamic constructors): FCGF's ``load_model(name)`` returns one of
``MODELS``, a module-level list filled at import from the classes of the
project modules handed to ``add_models(module)``
(``MODELS.extend([getattr(module, a) for a in dir(module) if ...])``), and a
script builds ``Model = load_model(cfg.model); model = Model(...)``.

A registry is a module-level name bound once to a list or dict literal of
plain names (possibly empty) that the module only fills (``X.append(Name)``,
``X.extend([...])``, ``X += [...]``, ``X[k] = Name``) with plain names or
with every attribute of a module (``[getattr(m, a) for a in dir(m) ...]``:
any filter keeps a subset; ``m`` a module name, or the parameter of a
module-level function called only at module level with module names), and
otherwise only reads (subscripted, iterated, compared, aliased by a name
that is only read so). A factory is a module-level function whose every
``return`` gives ``None`` or an element of one registry, directly or
through local names bound only so, dict or list comprehensions keeping
the element (``{m.__name__: m for m in MODELS}``), subscripts and ``.get``.

``factories`` gives, per factory, its candidate sources: plain names as
this module spells them, and ``@m`` for every attribute of module ``m``;
index.py judges them (classes or builders that move nothing, modules whose
every class moves nothing). A registry read any other way (handed to a
call that may add a moving class, returned whole) has no known contents.
Read on Python's ``ast`` tree of the project summary, and on the linted
module's own tree for a factory of its own (state_loads.py).
"""

from __future__ import annotations

import ast

from memlint.gate.ast_fields import nodes
from memlint.gate.ast_names import ast_dotted

_FILLS = frozenset({"append", "extend"})
_READS = frozenset({"get", "keys", "values", "items", "index", "count", "copy"})


def factories(tree: ast.Module) -> dict[str, list[str]]:
    """Factory name -> its candidate sources (see the module's docstring)."""
    registries = _registry_candidates(tree)
    if not registries:
        return {}
    # Each statement walked once, for every question below; the module-level
    # functions first (a modeling file's classes are most of its code).
    functions = {
        id(stmt): nodes(stmt) for stmt in tree.body if isinstance(stmt, ast.FunctionDef) and not stmt.decorator_list
    }
    # Which function draws from which candidate, before the rest of the
    # module is walked to check how each is filled and read (most modules
    # with a module-level table have no such function).
    drawing: dict[str, str] = {}
    for stmt in tree.body:
        walked = functions.get(id(stmt))
        if walked is not None and any(isinstance(n, ast.Name) and n.id in registries for n in walked):
            drawn = _drawn_from(stmt, walked, set(registries))  # type: ignore[arg-type]
            if drawn is not None:
                drawing[stmt.name] = drawn  # type: ignore[attr-defined]
    if not drawing:
        return {}
    walks = [(stmt, functions.get(id(stmt)) or nodes(stmt)) for stmt in tree.body]
    sources = _filled(tree, walks, {name: registries[name] for name in set(drawing.values())})
    out = {fn: sorted(sources[drawn]) for fn, drawn in drawing.items() if drawn in sources}
    counts: dict[str, int] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            counts[stmt.name] = counts.get(stmt.name, 0) + 1
    return {name: found for name, found in out.items() if counts.get(name) == 1}


def _registry_candidates(tree: ast.Module) -> dict[str, list[str]]:
    """Module-level names bound to a list or dict literal of plain names."""
    found: dict[str, list[str] | None] = {}
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            continue
        value = stmt.value
        items = (
            value.elts
            if isinstance(value, (ast.List, ast.Tuple))
            else value.values
            if isinstance(value, ast.Dict)
            else None
        )
        name = stmt.targets[0].id
        if items is None or name in found or not all(isinstance(i, ast.Name) for i in items):
            found[name] = None  # bound twice, or to something else
            continue
        found[name] = [i.id for i in items]  # type: ignore[attr-defined]
    return {name: names for name, names in found.items() if names is not None}


def _filled(
    tree: ast.Module, walks: list[tuple[ast.stmt, list[ast.AST]]], registries: dict[str, list[str]]
) -> dict[str, set[str]]:
    """Each registry's sources, for the registries whose every use is a plain fill or a read."""
    sources = {name: set(names) for name, names in registries.items()}
    bad: set[str] = set()
    accounted: set[int] = set()
    top_defs = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef)}
    for stmt, walked in walks:
        for node in walked:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                holder = node.func.value
                if isinstance(holder, ast.Name) and holder.id in sources and node.func.attr in _FILLS:
                    added = _added(node, stmt, tree, top_defs)
                    if added is None:
                        bad.add(holder.id)
                    else:
                        sources[holder.id] |= added
                    accounted.add(id(holder))
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in sources:
                value = node.value
                if (
                    isinstance(node.op, ast.Add)
                    and isinstance(value, ast.List)
                    and all(isinstance(e, ast.Name) for e in value.elts)
                ):
                    sources[node.target.id] |= {e.id for e in value.elts}  # type: ignore[attr-defined]
                    accounted.add(id(node.target))
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if (
                        isinstance(target, ast.Subscript)
                        and isinstance(target.value, ast.Name)
                        and target.value.id in sources
                    ):
                        if isinstance(node.value, ast.Name) and len(node.targets) == 1:
                            sources[target.value.id].add(node.value.id)
                            accounted.add(id(target.value))
                        else:
                            bad.add(target.value.id)
    for stmt, walked in walks:
        for node in walked:
            if isinstance(node, ast.Name) and node.id in sources and id(node) not in accounted:
                if not isinstance(node.ctx, ast.Load) and not _the_binding(stmt, node):
                    bad.add(node.id)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                bad.update(n for n in node.names if n in sources)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in sources:
                bad.add(node.name)
    bad |= _escaping(walks, set(sources), accounted)
    return {name: found for name, found in sources.items() if name not in bad}


def _the_binding(stmt: ast.stmt, node: ast.Name) -> bool:
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is node


def _added(call: ast.Call, stmt: ast.stmt, tree: ast.Module, top_defs: dict[str, ast.FunctionDef]) -> set[str] | None:
    """What ``X.append(Name)`` / ``X.extend([...])`` adds, None if not known."""
    if call.keywords or len(call.args) != 1:
        return None
    arg = call.args[0]
    if call.func.attr == "append":  # type: ignore[attr-defined]
        return {arg.id} if isinstance(arg, ast.Name) else None
    if isinstance(arg, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Name) for e in arg.elts):
        return {e.id for e in arg.elts}  # type: ignore[attr-defined]
    module = _module_attributes(arg)
    if module is None:
        return None
    if not (isinstance(stmt, ast.FunctionDef) and module in {a.arg for a in stmt.args.args}):
        return {"@" + module} if isinstance(stmt, (ast.Expr, ast.Assign)) else None
    # ``add_models(module)``: each module-level call hands a module name.
    index = [a.arg for a in stmt.args.args].index(module)
    modules: set[str] = set()
    for other in tree.body:
        for node in nodes(other):
            if isinstance(node, ast.Name) and node.id == stmt.name and other is not stmt:
                call_stmt = other if isinstance(other, ast.Expr) and isinstance(other.value, ast.Call) else None
                if call_stmt is None or call_stmt.value.func is not node:  # type: ignore[attr-defined]
                    return None  # called in a function, or handed on: its modules are not known
                args = call_stmt.value.args  # type: ignore[attr-defined]
                if len(args) <= index or not isinstance(args[index], (ast.Name, ast.Attribute)):
                    return None
                spelled = ast_dotted(args[index])
                if spelled is None:
                    return None
                modules.add("@" + spelled)
    return modules or None


def _module_attributes(arg: ast.expr) -> str | None:
    """``[getattr(m, a) for a in dir(m) if ...]``: ``m``'s name, else None."""
    if not (isinstance(arg, ast.ListComp) and len(arg.generators) == 1):
        return None
    gen = arg.generators[0]
    elt = arg.elt
    if gen.is_async or not isinstance(gen.target, ast.Name):
        return None
    if not (isinstance(elt, ast.Call) and isinstance(elt.func, ast.Name) and elt.func.id == "getattr"):
        return None
    if (
        len(elt.args) != 2
        or elt.keywords
        or not (isinstance(elt.args[1], ast.Name) and elt.args[1].id == gen.target.id)
    ):
        return None
    it = gen.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "dir" and len(it.args) == 1):
        return None
    module, listed = ast_dotted(elt.args[0]), ast_dotted(it.args[0])
    return module if module is not None and module == listed else None


def _escaping(walks: list[tuple[ast.stmt, list[ast.AST]]], registries: set[str], accounted: set[int]) -> set[str]:
    """Registries read otherwise than subscripted, iterated, compared, or
    bound to a name in a function that only reads that name so."""
    bad: set[str] = set()
    for stmt, walked in walks:
        aliases = {name: name for name in registries}  # name read here -> the registry it holds
        in_function = isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
        assigns = [n for n in walked if isinstance(n, ast.Assign)] if in_function else []
        for _ in range(3):  # an alias of an alias
            for node in assigns:
                if (
                    isinstance(node, ast.Assign)
                    and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Name)
                    and node.value.id in aliases
                    and node.targets[0].id not in aliases
                ):
                    aliases[node.targets[0].id] = aliases[node.value.id]
                    accounted.update((id(node.value), id(node.targets[0])))
        for read in walked:
            for kid in _read_positions(read):
                if isinstance(kid, ast.Name) and kid.id in aliases:
                    accounted.add(id(kid))
        for used in walked:
            if isinstance(used, ast.Name) and used.id in aliases and id(used) not in accounted:
                if isinstance(used.ctx, ast.Load):
                    bad.add(aliases[used.id])
                elif used.id not in registries:
                    bad.add(aliases[used.id])  # an alias rebound: what it holds is not known
    return bad


def _read_positions(node: ast.AST) -> list[ast.AST]:
    """The children of ``node`` read without being changed or handed on."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        return [node.value]
    if isinstance(node, (ast.comprehension, ast.For, ast.AsyncFor)):
        return [node.iter]
    if isinstance(node, ast.Compare):
        return list(node.comparators)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("len", "print"):
        return list(node.args)
    if isinstance(node, ast.Attribute) and node.attr in _READS:
        return [node.value]
    return []


def _drawn_from(fn: ast.FunctionDef, walked: list[ast.AST], registries: set[str]) -> str | None:
    """The one registry every ``return`` of ``fn`` gives an element of (or ``None``)."""
    stores: dict[str, int] = {}
    values: dict[str, list[ast.expr]] = {}
    returns: list[ast.expr] = []
    for node in walked:
        if node is not fn and isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Yield, ast.YieldFrom)
        ):
            return None
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return None
        if isinstance(node, ast.Return):
            if node.value is None or (isinstance(node.value, ast.Constant) and node.value.value is None):
                continue
            returns.append(node.value)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values.setdefault(node.targets[0].id, []).append(node.value)
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    if fn.args.vararg:
        params.add(fn.args.vararg.arg)
    if fn.args.kwarg:
        params.add(fn.args.kwarg.arg)
    local = _Flow(stores, values, params, registries)
    found = {local.element(value, 0) for value in returns}
    if len(found) != 1 or None in found:
        return None
    return found.pop()


class _Flow:
    """Which registry a value of a factory draws from."""

    def __init__(
        self, stores: dict[str, int], values: dict[str, list[ast.expr]], params: set[str], registries: set[str]
    ) -> None:
        self.stores = stores
        self.values = values
        self.params = params
        self.registries = registries

    def _bound(self, name: str) -> list[ast.expr] | None:
        bound = self.values.get(name, [])
        if name in self.params or not bound or len(bound) != self.stores.get(name, 0):
            return None
        return bound

    def _one(self, found: set[str | None]) -> str | None:
        return found.pop() if len(found) == 1 else None

    def element(self, value: ast.expr, depth: int) -> str | None:
        """The registry ``value`` is an element of."""
        if depth > 6:
            return None
        if isinstance(value, ast.Name):
            bound = self._bound(value.id)
            return None if bound is None else self._one({self.element(v, depth + 1) for v in bound})
        if isinstance(value, ast.Subscript) and isinstance(value.ctx, ast.Load):
            return self.container(value.value, depth + 1)
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get":
            if 1 <= len(value.args) <= 2 and not value.keywords:
                default = value.args[1] if len(value.args) == 2 else None
                if default is None or (isinstance(default, ast.Constant) and default.value is None):
                    return self.container(value.func.value, depth + 1)
        return None

    def container(self, value: ast.expr, depth: int) -> str | None:
        """The registry whose elements ``value``'s elements all are."""
        if depth > 6:
            return None
        if isinstance(value, ast.Name):
            if value.id in self.registries and value.id not in self.stores and value.id not in self.params:
                return value.id
            bound = self._bound(value.id)
            return None if bound is None else self._one({self.container(v, depth + 1) for v in bound})
        if isinstance(value, (ast.ListComp, ast.DictComp)) and len(value.generators) == 1:
            gen = value.generators[0]
            kept = value.elt if isinstance(value, ast.ListComp) else value.value
            if isinstance(gen.target, ast.Name) and isinstance(kept, ast.Name) and kept.id == gen.target.id:
                return self.container(gen.iter, depth + 1)
        return None
