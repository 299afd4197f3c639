"""Classes picked from a registry that a project decorator fills (index side).

SECOND's ``voxelnet.py`` keeps ``REGISTERED_NETWORK_CLASSES = {}``, fills it
only through ``@register_voxelnet`` (``REGISTERED_NETWORK_CLASSES[name] =
cls; return cls``) on classes of its own and of ``net_multi_head.py``, and
hands one back by name (``get_voxelnet_class(name)``); a builder in another
module builds ``get_voxelnet_class(cfg.name)(...)``. What it builds is "one
of the registered classes", and a question about it is answered only when
every one of them agrees (typed_objects.py, as for dynamic_classes.py).

object_types.py spells a call of a lookup's result ``%`` + the lookup as the
module spells it: ``get_cls(name)(...)`` is ``%pkg.get_cls``,
``REG[name](...)`` and ``REG.get(name)(...)`` are ``%pkg.REG`` (an imported
``REG``). Here (``registered_classes``), read from the files themselves on
the first question (few projects ask one):

- the registry: a module-level name bound once to ``{}``, written only by
  register functions and otherwise only read (subscripted, ``.get``,
  ``.keys()``..., ``in``, iterated, ``len``, formatted), in its module and
  in every module that names it (one that writes it, or hands it on, makes
  its contents unknown);
- a register function: a module-level function of the registry's module
  whose first parameter is stored (``REG[key] = cls``), returned
  (``return cls``) and read only as ``cls.__name__``;
- a lookup: the registry itself, or a module-level function of its module
  whose every ``return`` is ``REG[...]`` or ``REG.get(x)``;
- the registered classes: every module-level class decorated with a register
  function (``@register`` or ``@module.register``) in any module of the
  project. A file that names a register function any other way (a call,
  an alias, a class decorated inside a function) makes the answer unknown.

Every project file is scanned (as bytes, for the names) and counts as read
by the view: a file edited to register one more class changes the answer.
Unknown stays silent: None for any doubt, and the classes must all agree.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from memlint.read.source import read_bytes

# ``typed``: typed_objects.TypedObjects, which imports this module (so no import back).
TypedObjects = Any

# Reads of a registry that neither change it nor hand it on.
_READ_METHODS = frozenset({"get", "keys", "values", "items", "__contains__"})
_READ_CALLS = frozenset({"len", "print", "sorted", "list", "str", "repr", "set", "tuple"})


@dataclass
class _Registries:
    """One module's registries: register function -> registry, lookup -> registry."""

    registers: dict[str, str] = field(default_factory=dict)
    lookups: dict[str, str] = field(default_factory=dict)
    # Registries written once as a literal of plain names and never changed
    # (pysot's ``TRACKS = {'SiamRPNTracker': SiamRPNTracker, ...}``): registry
    # -> the names, as the module spells them, one of which a lookup calls.
    literals: dict[str, tuple[str, ...]] = field(default_factory=dict)


def registered_classes(typed: TypedObjects, spelled: str, path: str) -> tuple[str, ...] | None:
    """The project classes (``file\\0Class``) a class looked up through
    ``spelled`` (as ``path`` spells it, ``%`` dropped) may be; None when not known."""
    if spelled.startswith(":"):
        found: tuple[str, str] | None = (path, spelled[1:])
    elif spelled.startswith("*"):
        return None
    else:
        found = typed.index.resolve(spelled, path)
    if found is None or not found[1] or "." in found[1]:
        return None
    home, name = found
    cache = _cache(typed, "_registered")
    key = (home, name)
    if key not in cache:
        cache[key] = _classes(typed, home, name)
    reads, classes = cache[key]
    for read in reads:
        typed.index._note_read(read)
    return classes


def _cache(typed: TypedObjects, name: str) -> dict:
    """A dict kept on the index's TypedObjects (one per index, like its other caches)."""
    found = getattr(typed, name, None)
    if found is None:
        found = {}
        setattr(typed, name, found)
    return found


def _classes(typed: TypedObjects, home: str, name: str) -> tuple[frozenset[str], tuple[str, ...] | None]:
    """(the files read, the classes) of lookup ``name`` of module ``home``."""
    homes = _cache(typed, "_registry_homes")  # home -> (its tree, its registries), parsed once
    if home not in homes:
        try:
            data = read_bytes(home) or b""
        except OSError:
            data = b""
        # Most callees asked about are factories of no registry: no ``{``, no parse.
        tree = _parsed(data) if b"{" in data else None
        homes[home] = (tree, module_registries(tree) if tree is not None else _Registries())
    tree, registries = homes[home]
    registry = registries.lookups.get(name)
    if tree is None or registry is None:
        return frozenset({home}), None
    registers = {fn for fn, r in registries.registers.items() if r == registry}
    literal = registries.literals.get(registry)
    files = sorted(f for f in typed.index.modules.files if f.endswith(".py"))
    words = [w.encode() for w in (registry, *registers)]
    classes: set[str] = set()
    for file in files:
        try:
            data = read_bytes(file) or b""
        except OSError:
            return frozenset(files), None
        if not any(w in data for w in words):
            continue
        other = tree if file == home else _parsed(data)
        if other is None:
            return frozenset(files), None
        found = _registered_in(typed, other, file, home, registry, registers)
        if found is None:
            return frozenset(files), None
        classes.update(found)
    spelled = _spellings(tree, literal) if literal else ()
    for value in literal or ():
        typed.index._note_read(home)
        found = typed.qualify(spelled[value], home) if value in spelled else None
        if found is None:
            return frozenset(files), None  # one entry the project cannot type: the lookup is unknown
        classes.update(found)
    return frozenset(files), tuple(sorted(classes)) or None


def _parsed(data: bytes) -> ast.Module | None:
    try:
        return ast.parse(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


# -- the registry's own module --------------------------------------------------
def module_registries(tree: ast.Module) -> _Registries:
    """The decorator-filled registries of a module (see the module's docstring)."""
    out = _Registries()
    bound: dict[str, int] = {}
    empty: set[str] = set()
    literals: dict[str, tuple[str, ...]] = {}
    for stmt in tree.body:
        for target in _stored_names(stmt):
            bound[target] = bound.get(target, 0) + 1
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Dict)
        ):
            names = _literal_names(stmt.value)
            if not stmt.value.keys:
                empty.add(stmt.targets[0].id)
            elif names:
                literals[stmt.targets[0].id] = names
    candidates = {n for n in empty if bound.get(n) == 1}
    functions = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef) and not s.decorator_list}
    for registry, names in sorted(literals.items()):
        if bound.get(registry) != 1 or not _only_read(tree, {registry}, set()):
            continue
        out.literals[registry] = names
        out.lookups[registry] = registry
        for fn in functions.values():
            if _looks_up(fn, registry):
                out.lookups[fn.name] = registry
    if not candidates:
        return out
    for registry in sorted(candidates):
        registers = [fn for fn in functions.values() if _registers_into(fn, registry)]
        if not registers:
            continue
        allowed = {id(n) for fn in registers for n in _register_stores(fn, registry)}
        if not _only_read(tree, {registry}, allowed):
            continue
        for fn in registers:
            out.registers[fn.name] = registry
        out.lookups[registry] = registry
        for fn in functions.values():
            if _looks_up(fn, registry):
                out.lookups[fn.name] = registry
    return out


def _spellings(tree: ast.Module, names: tuple[str, ...]) -> dict[str, str]:
    """``names`` as typed_objects.qualify spells them in their module: the
    import's target, or ``:name`` for a class or function defined there."""
    from memlint.project.summary import module_bindings

    bindings, _star = module_bindings(tree)
    defined = {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    out = {n: bindings[n] for n in names if n in bindings}
    out.update({n: f":{n}" for n in names if n in defined and n not in out})
    return out


def _literal_names(table: ast.Dict) -> tuple[str, ...]:
    """The values of a dict literal keyed by constants whose every value is
    a plain name (a class, a factory); () for any other literal."""
    if not all(isinstance(k, ast.Constant) for k in table.keys):
        return ()
    if not all(isinstance(v, ast.Name) for v in table.values):
        return ()
    return tuple(dict.fromkeys(v.id for v in table.values))  # type: ignore[attr-defined]


def _stored_names(stmt: ast.stmt) -> list[str]:
    """The module-level names ``stmt`` binds (a def, a class, an import, an assignment)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in stmt.names]
    return [n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)]


def _first_param(fn: ast.FunctionDef) -> str | None:
    positional = [*fn.args.posonlyargs, *fn.args.args]
    return positional[0].arg if positional else None


def _register_stores(fn: ast.FunctionDef, registry: str) -> list[ast.Name]:
    """The ``registry`` names of ``registry[key] = <first parameter>`` in ``fn``."""
    param = _first_param(fn)
    out = []
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Subscript)
            and isinstance(node.targets[0].value, ast.Name)
            and node.targets[0].value.id == registry
            and isinstance(node.value, ast.Name)
            and node.value.id == param
        ):
            out.append(node.targets[0].value)
    return out


def _registers_into(fn: ast.FunctionDef, registry: str) -> bool:
    """``fn`` stores its first parameter in ``registry`` and hands it back
    unchanged: every ``return`` is that parameter, which is never rebound
    and read otherwise only as ``<param>.__name__``."""
    param = _first_param(fn)
    stores = _register_stores(fn, registry)
    if param is None or not stores:
        return False
    allowed = {id(s.value) for s in _assigns_of(fn, stores)}
    returns = 0
    for node in ast.walk(fn):
        if isinstance(node, (ast.Lambda, ast.AsyncFunctionDef, ast.ClassDef, ast.Yield, ast.YieldFrom)) or (
            isinstance(node, ast.FunctionDef) and node is not fn
        ):
            return False
        if isinstance(node, ast.Return):
            if not (isinstance(node.value, ast.Name) and node.value.id == param):
                return False
            allowed.add(id(node.value))
            returns += 1
        elif isinstance(node, ast.Attribute) and node.attr == "__name__" and isinstance(node.value, ast.Name):
            allowed.add(id(node.value))
    if not returns:
        return False
    return all(id(n) in allowed for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == param)


def _assigns_of(fn: ast.FunctionDef, stores: list[ast.Name]) -> list[ast.Assign]:
    ids = {id(s) for s in stores}
    return [
        n
        for n in ast.walk(fn)
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Subscript) and id(n.targets[0].value) in ids
    ]


def _looks_up(fn: ast.FunctionDef, registry: str) -> bool:
    """Every ``return`` of ``fn`` is ``registry[...]`` or ``registry.get(x)``
    (and ``fn`` binds no name ``registry`` of its own)."""
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
    if not returns or any(
        isinstance(n, ast.Name) and n.id == registry and not isinstance(n.ctx, ast.Load) for n in ast.walk(fn)
    ):
        return False
    if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and n is not fn for n in ast.walk(fn)):
        return False
    return all(_element_of(r.value, registry) for r in returns)


def _element_of(value: ast.AST | None, registry: str) -> bool:
    if isinstance(value, ast.Subscript):
        return isinstance(value.value, ast.Name) and value.value.id == registry
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get":
        holder = value.func.value
        return isinstance(holder, ast.Name) and holder.id == registry and len(value.args) == 1 and not value.keywords
    return False


def _only_read(tree: ast.Module, names: set[str], allowed: set[int]) -> bool:
    """Every use of ``names`` in ``tree`` is a read that neither changes nor
    hands on what it holds (or one of the ``allowed`` nodes, or its binding
    at module level, or a ``global`` statement)."""
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    top = {id(s.targets[0]) for s in tree.body if isinstance(s, ast.Assign) and len(s.targets) == 1}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id in names) or id(node) in allowed:
            continue
        if not isinstance(node.ctx, ast.Load):
            if id(node) in top:
                continue
            return False
        if not _a_read(node, parents.get(id(node))):
            return False
    return True


def _a_read(node: ast.AST, parent: ast.AST | None) -> bool:
    if isinstance(parent, ast.Subscript):
        return parent.value is node and isinstance(parent.ctx, ast.Load)
    if isinstance(parent, ast.Attribute):
        return parent.attr in _READ_METHODS
    if isinstance(parent, ast.Compare):
        return any(c is node for c in parent.comparators)
    if isinstance(parent, (ast.FormattedValue, ast.comprehension, ast.For)):
        return not isinstance(parent, (ast.comprehension, ast.For)) or parent.iter is node
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name):
        return parent.func.id in _READ_CALLS and any(a is node for a in parent.args)
    return False


# -- every module of the project ------------------------------------------------
def _registered_in(
    typed: TypedObjects, tree: ast.Module, file: str, home: str, registry: str, registers: set[str]
) -> set[str] | None:
    """The classes ``file`` registers with one of ``registers`` (functions
    of ``home``); None when it names the registry or a register function
    in a way not read here."""
    from memlint.project.summary import module_bindings

    bindings, _star = module_bindings(tree)
    # The names this module knows the registry and its register functions
    # by: their own names in ``home``, the aliases it imports them as.
    local_registers = set(registers) if file == home else set()
    local_registry = {registry} if file == home else set()
    modules: set[str] = set()  # names bound to ``home`` itself (``import pkg.voxelnet as v``)
    for local, target in bindings.items():
        found = typed.index.resolve(target, file)
        if found is None or found[0] != home:
            continue
        if found[1] in registers:
            local_registers.add(local)
        elif found[1] == registry:
            local_registry.add(local)
        elif not found[1]:
            modules.add(local)
    out: set[str] = set()
    decorators: set[int] = set()
    for stmt in tree.body:
        if not isinstance(stmt, ast.ClassDef):
            continue
        for deco in stmt.decorator_list:
            if _names_register(deco, local_registers, modules, registers):
                out.add(f"{file}\0{stmt.name}")
                decorators.add(id(deco))
    allowed = set(decorators)
    if file == home:
        fns = [s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name in registers]
        allowed |= {id(n) for fn in fns for n in _register_stores(fn, registry)}
    for node in ast.walk(tree):
        if id(node) in allowed:
            continue
        if isinstance(node, ast.Name) and (node.id in local_registers or _star and node.id in registers):
            return None  # a call, an alias, a nested class's decorator, a star import's name: not followed
        if isinstance(node, ast.Attribute) and (node.attr in registers or node.attr == registry):
            return None  # ``pkg.voxelnet.register(...)``, ``voxelnet.REG[k] = C``: not followed
    if local_registry and not _only_read(tree, local_registry, allowed):
        return None
    return out


def _names_register(deco: ast.AST, local: set[str], modules: set[str], registers: set[str]) -> bool:
    if isinstance(deco, ast.Name):
        return deco.id in local
    return isinstance(deco, ast.Attribute) and deco.attr in registers and ast_head(deco) in modules


def ast_head(node: ast.Attribute) -> str | None:
    """``a`` of ``a.b`` (a plain name holding the module), else None."""
    return node.value.id if isinstance(node.value, ast.Name) else None
