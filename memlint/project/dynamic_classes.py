"""Classes picked at run time from a module named by a string.

``importlib.import_module("models." + opt.model + "_model")`` names no module
a reader can follow, yet the project holds every module it may name: those
whose dotted name starts with ``models.`` and ends with ``_model``. A class
taken from such a module is "one of these classes":

- ``getattr(mod, "Net")`` / ``mod.Net``: the class ``Net`` of each candidate
  module that has one (a module without it would raise, so it is not the one);
- ``for name, cls in mod.__dict__.items(): if ... issubclass(cls, BaseModel):
  model = cls`` (pix2pix's ``find_model_using_name``) or ``getattr(mod, name)``
  kept only under ``issubclass(x, BaseModel)``: each class of the candidate
  modules that is ``BaseModel`` or subclasses it.

A class picked by a computed name with no such test may be anything the
module binds (an installed class it imports, a function): not known.

Summary side (spellings only, this module's ``ast`` tree): the module-level
functions that return such a class (``pickers``), spelled
``?<prefix>;<suffix>;=<Name>`` or ``?<prefix>;<suffix>;<<base as spelled>``,
and the same spelling for a direct call of a picked class.
object_types.py spells a name holding the class itself with a leading ``^``
(``model = find_model_using_name(opt.model)``) and the result of calling it
without (``instance = model()``): an instance of one of those classes.

Index side (``candidates``): the spelling read as the classes of the project
(``file\\0Class``), or None when any part is unknown (the package is not the
project's, a base cannot be read, no candidate module): precision first.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from typing import Any

from memlint.gate.ast_fields import nodes
from memlint.gate.ast_names import ast_dotted

ProjectIndex = Any  # index.ProjectIndex (no import back)

_IMPORTERS = frozenset({"importlib.import_module"})
# What iterates a module's namespace: ``mod.__dict__.items()``, ``vars(mod).items()``,
# ``inspect.getmembers(mod)``: the second element of each pair is one of its values.
_MEMBERS = frozenset({"inspect.getmembers"})
_MAX_BASES = 8


# -- summary side ---------------------------------------------------------------
def _str(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _parts(node: ast.AST) -> list[str | None] | None:
    """``node`` as constant pieces and computed ones (None), left to right;
    None when it is not a string built by ``+``, an f-string, ``.format`` or ``%s``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _parts(node.left), _parts(node.right)
        if left is None or right is None:
            return None
        return left + right
    text = _str(node)
    if text is not None:
        return [text]
    if isinstance(node, ast.JoinedStr):
        return [_str(v) if isinstance(v, ast.Constant) else None for v in node.values]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        fmt = _str(node.func.value)
        if fmt is None or "{{" in fmt or "}}" in fmt or "{" not in fmt:
            return None
        head, _, rest = fmt.partition("{")
        _, _, tail = rest.rpartition("}")
        return [head, None, tail]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        fmt = _str(node.left)
        if fmt is None or fmt.count("%") != 1 or "%s" not in fmt:
            return None
        head, _, tail = fmt.partition("%s")
        return [head, None, tail]
    if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
        return [None]
    return None


def module_pattern(arg: ast.AST, bound: Callable[[str], ast.AST | None]) -> tuple[str, str] | None:
    """(prefix, suffix) of the module name ``arg`` builds, with a computed
    part between them and a package in the prefix (``"models." + name``);
    ``bound``: the one value a name is bound to, for ``import_module(module_file)``."""
    if isinstance(arg, ast.Name):
        value = bound(arg.id)
        if value is None:
            return None
        arg = value
    parts = _parts(arg)
    if parts is None or None not in parts:
        return None
    first = parts.index(None)
    last = len(parts) - 1 - parts[::-1].index(None)
    prefix = "".join(p for p in parts[:first] if p)
    suffix = "".join(p for p in parts[last + 1 :] if p)
    if not prefix.rpartition(".")[0] or prefix.startswith("."):
        return None  # no package named: the module may be anything installed
    return prefix, suffix


class _Function:
    """One function's names bound once, and its imported modules."""

    def __init__(self, fn: ast.AST, qualified: Callable[[ast.AST], str | None]) -> None:
        self.qualified = qualified
        self.values: dict[str, list[ast.AST]] = {}
        self.loops: dict[str, ast.AST] = {}  # a loop's value name -> the iterable it reads
        self.parents: dict[int, ast.AST] = {}
        self.returns: list[ast.Return] = []
        todo = [fn]
        while todo:
            node = todo.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                    continue
                self.parents[id(child)] = node
                todo.append(child)
            if isinstance(node, ast.Return):
                self.returns.append(node)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.values.setdefault(node.targets[0].id, []).append(node.value)
            elif isinstance(node, ast.For):
                target = node.target
                if isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[1], ast.Name):
                    self.loops[target.elts[1].id] = node.iter
                    self.values.setdefault(target.elts[1].id, []).append(node)
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name) and not (
                        isinstance(target, ast.Tuple) and len(target.elts) == 2 and sub is target.elts[1]
                    ):
                        self.values.setdefault(sub.id, []).append(node)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
                self.values.setdefault(node.target.id, []).append(node)
            elif isinstance(node, (ast.Import, ast.ImportFrom, ast.With, ast.Global, ast.Nonlocal)):
                for sub in ast.walk(node):
                    if isinstance(sub, ast.alias):
                        self.values.setdefault((sub.asname or sub.name).split(".")[0], []).append(node)
                    elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                        self.values.setdefault(sub.id, []).append(node)
                if isinstance(node, (ast.Global, ast.Nonlocal)):
                    for n in node.names:
                        self.values.setdefault(n, []).append(node)

    def once(self, name: str) -> ast.AST | None:
        values = self.values.get(name, [])
        return values[0] if len(values) == 1 else None

    def module(self, node: ast.AST) -> tuple[str, str] | None:
        """The pattern of the module ``node`` is: ``import_module(p)`` or a
        name bound once to one."""
        if isinstance(node, ast.Name):
            value = self.once(node.id)
            if value is None or not isinstance(value, ast.Call):
                return None
            node = value
        if not isinstance(node, ast.Call) or self.qualified(node.func) not in _IMPORTERS:
            return None
        if len(node.args) != 1 or node.keywords:
            return None  # ``import_module("." + name, package=...)``: relative
        return module_pattern(node.args[0], self.once)

    def _members_of(self, iterable: ast.AST) -> tuple[str, str] | None:
        """``mod.__dict__.items()``, ``vars(mod).items()``, ``inspect.getmembers(mod)``."""
        if not isinstance(iterable, ast.Call):
            return None
        func = iterable.func
        if isinstance(func, ast.Attribute) and func.attr == "items" and not iterable.args:
            owner = func.value
            if isinstance(owner, ast.Attribute) and owner.attr == "__dict__":
                return self.module(owner.value)
            if isinstance(owner, ast.Call) and ast_dotted(owner.func) == "vars" and len(owner.args) == 1:
                return self.module(owner.args[0])
            return None
        if self.qualified(func) in _MEMBERS and len(iterable.args) == 1:
            return self.module(iterable.args[0])
        return None

    def _subclass_test(self, use: ast.AST, name: str) -> str | None:
        """The base spelled in ``issubclass(name, Base)``, a conjunct of the
        test of an ``if`` around ``use`` (inside this function)."""
        node = use
        while id(node) in self.parents:
            parent = self.parents[id(node)]
            if isinstance(parent, ast.If) and node is not parent.test and any(node is s for s in parent.body):
                test = parent.test
                conjuncts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
                for c in conjuncts:
                    if (
                        isinstance(c, ast.Call)
                        and ast_dotted(c.func) == "issubclass"
                        and len(c.args) == 2
                        and isinstance(c.args[0], ast.Name)
                        and c.args[0].id == name
                    ):
                        return ast_dotted(c.args[1])
            node = parent
        return None

    def pick(self, value: ast.AST, use: ast.AST, spell: Callable[[str], str | None]) -> str | None:
        """The spelling of the class ``value`` (read at ``use``) picks from a
        module named at run time; None when it is no such pick."""
        if isinstance(value, ast.Attribute):
            pattern = self.module(value.value)
            return f"?{pattern[0]};{pattern[1]};={value.attr}" if pattern else None
        if isinstance(value, ast.Call) and ast_dotted(value.func) == "getattr" and len(value.args) == 2:
            pattern = self.module(value.args[0])
            if pattern is None:
                return None
            attr = _str(value.args[1])
            if attr is not None and attr.isidentifier():
                return f"?{pattern[0]};{pattern[1]};={attr}"
            return None  # a computed name: only under a subclass test (``pick_name``)
        if isinstance(value, ast.Name) and value.id in self.loops:
            pattern = self._members_of(self.loops[value.id])
            base = self._subclass_test(use, value.id) if pattern else None
            spelled = spell(base) if base else None
            return f"?{pattern[0]};{pattern[1]};<{spelled}" if pattern and spelled else None
        return None

    def named_pick(self, name: str, spell: Callable[[str], str | None]) -> list[str] | None:
        """The spellings of the classes ``name`` may hold when every binding
        of it is None or a pick (``model = None`` ... ``model = cls``)."""
        found: list[str] = []
        for value in self.values.get(name, []):
            if isinstance(value, ast.Constant) and value.value is None:
                continue
            if not isinstance(value, ast.expr):
                return None  # a loop target, an import, a ``global``: not known
            use = self._assignment_of(name, value)
            spelled = self.pick(value, use, spell) if use is not None else None
            if spelled is None and isinstance(value, ast.Call) and ast_dotted(value.func) == "getattr":
                # ``cls = getattr(mod, name)`` kept under ``issubclass(cls, Base)``
                pattern = self.module(value.args[0]) if len(value.args) == 2 else None
                base = self._guarded_use(name)
                spelled = f"?{pattern[0]};{pattern[1]};<{spell(base)}" if pattern and base and spell(base) else None
            if spelled is None:
                return None
            found.append(spelled)
        return found or None

    def _assignment_of(self, name: str, value: ast.AST) -> ast.AST | None:
        node = self.parents.get(id(value))
        return node if isinstance(node, ast.Assign) else None

    def _guarded_use(self, name: str) -> str | None:
        """Every ``return name`` sits under ``issubclass(name, Base)``: that base."""
        bases = set()
        for node in self.returns:
            if isinstance(node.value, ast.Name) and node.value.id == name:
                bases.add(self._subclass_test(node, name))
        return bases.pop() if len(bases) == 1 else None


def pickers(
    tree: ast.Module, qualified: Callable[[ast.AST], str | None], spell: Callable[[str], str | None]
) -> dict[str, tuple[str, ...]]:
    """The module-level functions whose every ``return`` hands back a class
    picked from a module named at run time: name -> spellings."""
    out: dict[str, tuple[str, ...]] = {}
    for fn in tree.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not _mentions_importer(fn, qualified):
            continue
        scope = _Function(fn, qualified)
        found: set[str] = set()
        ok = bool(scope.returns)
        for ret in scope.returns:
            value = ret.value
            if value is None or (isinstance(value, ast.Constant) and value.value is None):
                continue
            if isinstance(value, ast.Name):
                spelled = scope.named_pick(value.id, spell)
                if spelled is None:
                    ok = False
                    break
                found.update(spelled)
                continue
            one = scope.pick(value, ret, spell)
            if one is None:
                ok = False
                break
            found.add(one)
        if ok and found:
            out[fn.name] = tuple(sorted(found))
    return out


def _mentions_importer(fn: ast.AST, qualified: Callable[[ast.AST], str | None]) -> bool:
    return any(n.__class__ is ast.Call and qualified(n.func) in _IMPORTERS for n in nodes(fn))  # type: ignore[attr-defined,operator]


def direct_pick(func: ast.AST, qualified: Callable[[ast.AST], str | None]) -> str | None:
    """``getattr(importlib.import_module(p), "Net")`` or
    ``importlib.import_module(p).Net`` as a callee: the class's spelling."""
    if isinstance(func, ast.Attribute):
        inner: ast.AST = func.value
        attr: str | None = func.attr
    elif isinstance(func, ast.Call) and ast_dotted(func.func) == "getattr" and len(func.args) == 2:
        inner, attr = func.args[0], _str(func.args[1])
    else:
        return None
    if not attr or not isinstance(inner, ast.Call) or qualified(inner.func) not in _IMPORTERS:
        return None
    if len(inner.args) != 1 or inner.keywords:
        return None
    pattern = module_pattern(inner.args[0], lambda _name: None)
    return f"?{pattern[0]};{pattern[1]};={attr}" if pattern else None


# -- index side -----------------------------------------------------------------
def candidate_modules(index: ProjectIndex, prefix: str, suffix: str, path: str) -> list[str] | None:
    """The project files ``import_module(prefix + x + suffix)`` may import,
    as ``path`` resolves the package; None when the package is not the project's."""
    package, _, start = prefix.rpartition(".")
    found = index.resolve(package, path)
    if found is None or found[1] or not found[0].endswith("__init__.py"):
        return None
    folder = os.path.dirname(found[0])
    out = []
    for file in sorted(index.modules.files):
        if not file.startswith(folder + os.sep) or not file.endswith(".py"):
            continue
        rel = os.path.relpath(file, folder)[: -len(".py")].replace(os.sep, ".")
        if rel.endswith(".__init__"):
            rel = rel[: -len(".__init__")]
        elif rel == "__init__":
            continue
        middle = rel[len(start) : len(rel) - len(suffix)] if len(rel) >= len(start) + len(suffix) else ""
        if rel.startswith(start) and rel.endswith(suffix) and middle:
            out.append(file)
    return out or None


def candidates(typed: Any, spelling: str, path: str) -> tuple[str, ...] | None:
    """The project classes (``file\\0Class``) a picked-class spelling of
    ``path`` may be; None when not known."""
    body = spelling[1:]
    try:
        prefix, suffix, pick = body.split(";", 2)
    except ValueError:
        return None
    index = typed.index
    modules = candidate_modules(index, prefix, suffix, path)
    if modules is None:
        return None
    out: set[str] = set()
    if pick.startswith("="):
        name = pick[1:]
        for module in modules:
            classes = _namespace_classes(typed, module)
            if classes is None:
                return None
            if name in classes:
                found = classes[name]
                if found is None:
                    return None  # bound, but not to a class the project holds
                out.add(found)
        return tuple(sorted(out)) or None
    if not pick.startswith("<"):
        return None
    base = typed.qualify(pick[1:], path)
    if base is None or len(base) != 1 or "\0" not in base[0]:
        return None
    for module in modules:
        classes = _namespace_classes(typed, module)
        if classes is None:
            return None
        for cls in classes.values():
            if cls is None:
                continue  # an installed class or a value of another kind: no subclass of a project class
            sub = _subclasses(typed, cls, base[0], 0)
            if sub is None:
                return None
            if sub:
                out.add(cls)
    return tuple(sorted(out)) or None


def _namespace_classes(typed: Any, module: str) -> dict[str, str | None] | None:
    """The classes ``module`` binds at its top: its own, and the project
    classes it imports (``file\\0Class``); an imported name that is not a
    project class maps to None."""
    objects = typed.objects(module)
    summary = typed.index.summary(module)
    if objects is None or summary is None:
        return None
    typed.index._note_read(module)
    out: dict[str, str | None] = {c: f"{module}\0{c}" for c, _ in objects.bases if "." not in c}
    for name, target in summary.imports.items():
        if name in out:
            continue
        found = typed.index.resolve(target, module)
        if found is None or not found[1] or "." in found[1]:
            out[name] = None
            continue
        other = typed.objects(found[0])
        out[name] = (
            f"{found[0]}\0{found[1]}" if other is not None and any(c == found[1] for c, _ in other.bases) else None
        )
    return out


def _subclasses(typed: Any, cls: str, base: str, depth: int) -> bool | None:
    """``cls`` is ``base`` or derives from it through project classes; None when a base cannot be read."""
    if cls == base:
        return True
    if depth > _MAX_BASES:
        return None
    path, name = cls.split("\0")
    objects = typed.objects(path)
    bases = next((b for c, b in objects.bases if c == name), None) if objects is not None else None
    if bases is None:
        return None
    for spelled in bases:
        if spelled in ("object", "?") or spelled.rpartition(".")[2] in ("object",):
            continue
        q = (f"{path}\0{spelled[1:]}",) if spelled.startswith(":") else typed.qualify(spelled, path)
        if q is None:
            if spelled.split(".")[0] in ("torch", "nn"):
                continue  # an installed base: no project class above it
            return None
        for one in q:
            if "\0" not in one:
                continue
            found = _subclasses(typed, one, base, depth + 1)
            if found is None or found:
                return found
    return False
