"""Which methods of the project may move the model they are called on (MEM701).

``model.get_parameter_groups()`` between building a model on the CPU and
loading a checkpoint into it (psa's train_cls.py) ends "still on the CPU"
when nothing says what the method does. A method whose code provably moves
nothing keeps it there: no device move (``.to(``, ``.cuda(``, ``prepare``...)
anywhere in its body; ``self`` never handed on (an argument, an alias, a
store) nor a part of it handed to a call but a builtin that only looks;
a method called on ``self`` or a part of it either ``nn.Module``'s that
leave it where it is (``self.modules()``, ``load_state_dict`` without
``assign``) or another such method of the same class; nothing stored into ``self`` but a constant (a stored
submodule may be anywhere).

The project's answer is by name: a method name is still when every class
of every summarised module that defines it defines it so (``moving``
lists the others); the index joins them (index.method_still). A module
of the project without a training word has no summary: a definition there
is not seen (its class holds no ``torch`` word, so it is no model of its
own making).
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable

from memlint.gate.ast_fields import nodes
from memlint.project.class_moves import MOVES
from memlint.project.node_lists import NodeLists

# Calls that put a model on a device without ``.to(``: accelerate's and
# Lightning Fabric's ``prepare``/``setup``, DeepSpeed's ``initialize``.
PLACES = MOVES | {"prepare", "prepare_model", "setup", "setup_module", "initialize", "half", "bfloat16"}
# ``nn.Module`` methods that leave a module where it is.
MODULE_STAYS = frozenset(
    {"modules", "named_modules", "children", "named_children", "parameters", "named_parameters"}
    | {"buffers", "named_buffers", "state_dict", "eval", "train", "requires_grad_", "zero_grad"}
)
# Methods of builtin values, never of a model (what a view need not ask).
_CONTAINERS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "items", "keys", "values", "get", "update", "setdefault"}
    | {"add", "discard", "copy", "format", "join", "split", "strip", "replace", "startswith", "endswith"}
    | {"item", "size", "numel", "dim", "tolist", "numpy", "detach", "clone", "view", "reshape", "format_map"}
)
# Decorators that run the method as written (``@torch.no_grad()``, ``@property``).
_PLAIN_DECORATORS = frozenset(
    {"property", "cached_property", "abstractmethod", "no_grad", "inference_mode", "export", "ignore", "unused"}
)
# Builtins that only look at what they are given (``isinstance(m, nn.Conv2d)``).
_LOOKS = frozenset(
    {"isinstance", "len", "print", "list", "tuple", "sorted", "enumerate", "zip", "iter", "id", "type", "sum"}
)


def method_moves(tree: ast.Module, walk: NodeLists | None = None, nested: bool = True) -> tuple[list[str], list[str]]:
    """The names of the methods of the module's classes (at any depth) that
    move nothing (``still``), and of the others (``moving``). ``walk``: the
    summary's node lists, so each method is walked once for every helper.
    ``nested``: False when the caller knows every class of the module is a
    statement of its body (the summary's walk counts them): then no other
    statement is walked for classes, as none would be found."""
    walk = walk if walk is not None else NodeLists()
    still: set[str] = set()
    moving: set[str] = set()
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    for stmt in tree.body if nested else ():  # ``if ...: class A`` and classes built in functions
        if not isinstance(stmt, ast.ClassDef):
            classes.extend(n for n in walk(stmt) if isinstance(n, ast.ClassDef))
    while classes:
        cls = classes.pop()
        methods: dict[str, list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, list[ast.AST]]]] = {}
        for stmt in cls.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if _unread(stmt.name):
                    moving.add(stmt.name)  # not read (a walk of every ``forward`` costs): taken as moving
                    if nested:
                        classes.extend(n for n in ast.iter_child_nodes(stmt) if isinstance(n, ast.ClassDef))
                    continue
                found = walk(stmt)
                methods.setdefault(stmt.name, []).append((stmt, found))
                if nested:
                    classes.extend(n for n in found if isinstance(n, ast.ClassDef))
            elif isinstance(stmt, ast.ClassDef):
                classes.append(stmt)
            elif nested and not isinstance(stmt, (ast.Expr, ast.Pass)):
                classes.extend(n for n in walk(stmt) if isinstance(n, ast.ClassDef))
        moves = {name: any(_may_move(fn, found, methods) for fn, found in defs) for name, defs in methods.items()}
        changed = True
        while changed:  # a method calling a moving one of its class moves too
            changed = False
            for name, defs in methods.items():
                if not moves[name] and any(
                    _self_calls(fn, found) & {m for m, v in moves.items() if v} for fn, found in defs
                ):
                    moves[name] = changed = True
        for name, flag in moves.items():
            (moving if flag or name in PLACES else still).add(name)
    return sorted(still - moving), sorted(moving)


def loads_in_place(call: ast.Call) -> bool:
    """``m.load_state_dict(sd)`` without ``assign``: the tensors are copied
    into the parameters where they are, so the module stays where it is
    (``assign=True`` makes the loaded tensors the parameters: they may be
    anywhere)."""
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "load_state_dict"
        and not any(k.arg in ("assign", None) for k in call.keywords)
    )


def _unread(name: str) -> bool:
    """Methods read as moving without a look: special methods and forwards
    (run on data, not called between building a model and loading it)."""
    return name.startswith(("__", "forward"))


def called_methods(calls: Iterable[ast.Call], imported: Collection[str] = ()) -> list[str]:
    """The names ``calls`` (a module's) call as methods of what a name holds
    (``model.name(...)``, ``self.model.name(...)``; not of a module it
    imports, ``torch.load``), but ``nn.Module``'s that stay: where a view
    asks method_moves' answer."""
    found = set()
    for n in calls:
        if isinstance(n.func, ast.Attribute):
            root = n.func.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id not in imported:
                found.add(n.func.attr)
    return sorted(found - PLACES - MODULE_STAYS - _CONTAINERS)


def _self_name(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The name ``fn`` gives its instance; None for a method read as moving:
    no instance (``staticmethod``, ``classmethod``) or a decorator that may
    wrap it in code not read here."""
    params = fn.args.posonlyargs + fn.args.args
    if not params or not all(_plain_decorator(d) for d in fn.decorator_list):
        return None
    return params[0].arg


def _plain_decorator(decorator: ast.expr) -> bool:
    func = decorator.func if isinstance(decorator, ast.Call) else decorator
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return last in _PLAIN_DECORATORS


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def _derived(found: list[ast.AST], this: str) -> set[str]:
    """``self`` and the local names bound from it or a part of it
    (``for m in self.modules()``, ``head = self.fc``): a part of the model."""
    names = {this}
    bindings: list[tuple[ast.expr, ast.expr]] = []
    for node in found:
        kind = node.__class__
        if kind not in _BINDS:  # most nodes: one set lookup
            continue
        if kind is ast.Assign:
            bindings.extend((t, node.value) for t in node.targets)  # type: ignore[attr-defined]
        elif kind in _BINDS_ONE:
            if node.value is not None:  # type: ignore[attr-defined]
                bindings.append((node.target, node.value))  # type: ignore[attr-defined]
        elif kind in _LOOPS:
            bindings.append((node.target, node.iter))  # type: ignore[attr-defined]
        else:
            bindings.extend((i.optional_vars, i.context_expr) for i in node.items if i.optional_vars is not None)  # type: ignore[attr-defined]
    # Each value's names read once, not once per pass (_touches, spelled out).
    read = [(target, _reads_super(value), _names_in(value)) for target, value in bindings]
    for _ in range(3):  # chains of aliases (``a = self.x; b = a.y``), a few deep
        known = len(names)
        for target, from_super, used in read:
            if from_super or not used.isdisjoint(names):
                names.update(_names_in(target))
        if len(names) == known:
            break  # nothing added: another pass reads the same names
    return names


# The nodes _derived reads a binding of (by class, tested by identity).
_BINDS_ONE = frozenset({ast.AnnAssign, ast.AugAssign, ast.NamedExpr})
_LOOPS = frozenset({ast.For, ast.AsyncFor, ast.comprehension})
_BINDS = _BINDS_ONE | _LOOPS | {ast.Assign, ast.With, ast.AsyncWith}
_STORES = frozenset({ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete})


def _reads_super(value: ast.expr) -> bool:
    root = _root(value)
    return isinstance(root, ast.Name) and root.id == "super"


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in _subtree(node) if n.__class__ is ast.Name}  # type: ignore[attr-defined]


def _touches(value: ast.expr, names: set[str]) -> bool:
    """``value`` reads ``super`` or a name of ``names``. A name or a chain of
    attributes on one (``self``, ``self.conv``: most receivers and arguments)
    holds that one name only, read without a walk of its subtree: _may_move
    asks this of every call's receiver and arguments, and a walk per call
    re-read every nested call's arguments once per call around it."""
    root = value
    while root.__class__ is ast.Attribute:
        root = root.value  # type: ignore[attr-defined]
    if root.__class__ is ast.Name:
        return root.id == "super" or root.id in names  # type: ignore[attr-defined]
    if root.__class__ is ast.Constant:
        return False
    if _reads_super(value):
        return True
    return any(n.__class__ is ast.Name and n.id in names for n in _subtree(value))  # type: ignore[attr-defined]


def _subtree(node: ast.AST) -> list[ast.AST]:
    """The nodes of a small expression that may hold a name (not ``ast.walk``:
    the summary counts its walks; ``nodes`` reads each class's fields from a
    table, where ``iter_child_nodes`` tests every field's value)."""
    return nodes(node)


def _self_calls(fn: ast.FunctionDef | ast.AsyncFunctionDef, found: list[ast.AST]) -> set[str]:
    """The methods ``fn`` (its nodes ``found``) calls on ``self`` itself (``self.m(...)``)."""
    this = _self_name(fn)
    return {
        n.func.attr
        for n in found
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id == this
    }


# Calls on a local container that keep what they are given where it is.
_KEEPS_HERE = frozenset({"append", "extend", "add", "insert"})


def _plainly_moves(found: list[ast.AST], this: str, methods: dict) -> bool:
    """A first look, with no alias followed: a move, or a call of a method of
    ``self`` or of a part (``self.conv(x)``) not known to stay: most methods
    (every ``forward``) end here."""
    for node in found:
        if node.__class__ is ast.Attribute:
            if node.attr in PLACES:  # type: ignore[attr-defined]
                return True
        elif node.__class__ is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            if func.__class__ is ast.Attribute and func.attr not in MODULE_STAYS and not loads_in_place(node):  # type: ignore[arg-type]
                root = func.value
                while root.__class__ is ast.Attribute:
                    root = root.value
                direct = func.value.__class__ is ast.Name and func.value.id == this
                if root.__class__ is ast.Name and root.id == this and not (direct and func.attr in methods):
                    return True
    return False


def _may_move(fn: ast.FunctionDef | ast.AsyncFunctionDef, found: list[ast.AST], methods: dict) -> bool:
    """``fn`` may move its model, read alone (its calls of its class's other
    methods are joined by method_moves)."""
    this = _self_name(fn)
    if this is None or _plainly_moves(found, this, methods):
        return True
    parts = _derived(found, this)
    for node in found:
        kind = node.__class__
        if kind is ast.Attribute:
            if node.attr in PLACES:  # type: ignore[attr-defined]
                return True
            continue
        if kind is ast.Name:
            if node.id == this and node.ctx.__class__ is not ast.Load:  # type: ignore[attr-defined]
                return True  # ``self`` rebound
            continue
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in _LOOKS:
                continue
            args = [*node.args, *(k.value for k in node.keywords)]
            if isinstance(func, ast.Attribute) and _touches(func.value, parts):
                direct = isinstance(func.value, ast.Name) and func.value.id == this
                if not (func.attr in MODULE_STAYS or (direct and func.attr in methods) or loads_in_place(node)):
                    return True  # a method of a part, or inherited: not known
            elif isinstance(func, ast.Attribute) and func.attr in _KEEPS_HERE:
                continue  # ``groups[0].append(m.weight)``: a local list keeps it
            elif isinstance(func, ast.Name) and func.id == "super":
                continue
            if any(_touches(a, parts) for a in args):
                return True  # a part of the model handed to code not read here
        elif kind in _STORES:
            targets = node.targets if kind is ast.Assign or kind is ast.Delete else [node.target]  # type: ignore[attr-defined]
            value = getattr(node, "value", None)
            stored = [t for t in targets if not isinstance(t, ast.Name) and _touches(t, parts)]
            if stored and not isinstance(value, ast.Constant):
                return True  # a part set: it may be anywhere
    return False
