"""Folders a module puts on ``sys.path`` relative to its own file.

``_init_paths.py`` beside a project's scripts (``import _init_paths`` first,
then ``from model.faster_rcnn.vgg16 import vgg16``) computes the folder it
adds instead of writing it out::

    this_dir = osp.dirname(__file__)
    add_path(osp.join(this_dir, "lib"))      # def add_path(p): sys.path.insert(0, p)

Such a folder is anchored at the module's file, not at the folder a script
is run from, so it holds for the module itself and for every module that
imports it. Read from the module-level statements only, in the forms that
say it plainly: ``__file__`` through ``os.path.dirname``/``abspath``/
``realpath``/``normpath``/``join`` with string literals, ``pathlib.Path``'s
``parent``/``parents[k]``/``resolve()``/``/ "lib"``, ``str(...)``, a name
bound once at module level to one of those, handed to ``sys.path.insert`` /
``sys.path.append`` or to a module-level function whose body inserts its
parameter so. Anything else is unknown and adds nothing.
"""

from __future__ import annotations

import ast
import posixpath

from memlint.project.arg_modes import dotted

_FILE = "<file>"  # the value of ``__file__`` itself (not a folder)
_SAME = frozenset({"os.path.abspath", "os.path.realpath", "os.path.normpath", "str"})
_PATH_SAME = frozenset({"resolve", "absolute"})
_INSERTS = frozenset({"sys.path.insert", "sys.path.append"})


class PathSetup:
    """Fed the module-level statements in order (``assign``, ``call``);
    ``folders(tree)`` gives the folders, relative to the module's own folder."""

    def __init__(self, bindings: dict[str, str]) -> None:
        self.bindings = bindings  # the module's import bindings, as the summary walker keeps them
        self.values: dict[str, str | None] = {}  # module-level names bound to a path (None: bound twice)
        self.found: list[str] = []
        self.pending: list[tuple[str, list[tuple[int, str]]]] = []  # (a local function, its folder arguments)

    def _qualified(self, func: ast.expr) -> str:
        name = dotted(func)
        head, _, rest = name.partition(".")
        target = self.bindings.get(head)
        if target is None:
            return name
        return f"{target}.{rest}" if rest else target

    def value(self, node: ast.expr) -> str | None:
        """``node`` as a folder relative to the module's folder, ``_FILE`` for
        the module's own file, None when it is not one of the plain forms."""
        if isinstance(node, ast.Name):
            return _FILE if node.id == "__file__" else self.values.get(node.id)
        if isinstance(node, ast.Attribute):
            inner = self.value(node.value)
            if node.attr == "parent" and inner is not None:
                return _up(inner, 1)
            return None
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
            inner = self.value(node.value.value)
            k = node.slice
            if inner is not None and isinstance(k, ast.Constant) and isinstance(k.value, int) and k.value >= 0:
                return _up(inner, k.value + 1)
            return None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            inner = self.value(node.left)
            part = node.right
            if inner not in (None, _FILE) and isinstance(part, ast.Constant) and isinstance(part.value, str):
                return _join(inner, part.value)  # type: ignore[arg-type]
            return None
        if not isinstance(node, ast.Call) or node.keywords:
            return None
        name = self._qualified(node.func)
        args = node.args
        if name in ("pathlib.Path", "pathlib.PurePath") and len(args) == 1:
            return self.value(args[0])
        if isinstance(node.func, ast.Attribute) and node.func.attr in _PATH_SAME and not args:
            return self.value(node.func.value)
        if name in _SAME and len(args) == 1:
            return self.value(args[0])
        if name == "os.path.dirname" and len(args) == 1:
            inner = self.value(args[0])
            return None if inner is None else _up(inner, 1)
        if name == "os.path.join" and args:
            base = self.value(args[0])
            parts = [a.value for a in args[1:] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if base in (None, _FILE) or len(parts) != len(args) - 1:
                return None
            return _join(base, *parts)  # type: ignore[arg-type]
        return None

    def assign(self, targets: list[ast.expr], value: ast.expr | None) -> None:
        for target in targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Name):
                    folder = self.value(value) if value is not None and target is node else None
                    self.values[node.id] = None if node.id in self.values else folder

    def call(self, node: ast.Call) -> None:
        """A module-level call: ``sys.path.insert(0, folder)``, or a local
        function handed folders (read once its body is known)."""
        if self._qualified(node.func) in _INSERTS:
            folder = self.value(node.args[-1]) if node.args and not node.keywords else None
            if folder not in (None, _FILE):
                self.found.append(folder)  # type: ignore[arg-type]
            return
        if isinstance(node.func, ast.Name):
            folders = [(i, self.value(a)) for i, a in enumerate(node.args)]
            known = [(i, f) for i, f in folders if f not in (None, _FILE)]
            if known:
                self.pending.append((node.func.id, known))  # type: ignore[arg-type]

    def folders(self, tree: ast.Module) -> list[str]:
        if self.pending:
            helpers = _inserting_helpers(tree, {name for name, _ in self.pending}, self._qualified)
            for name, known in self.pending:
                index = helpers.get(name)
                self.found += [folder for i, folder in known if i == index]
        return list(dict.fromkeys(self.found))


def _inserting_helpers(tree: ast.Module, names: set[str], qualified) -> dict[str, int]:
    """The module-level functions among ``names``, defined once, whose body
    hands one of their positional parameters to ``sys.path.insert/append``:
    name -> that parameter's position."""
    defs: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in names:
            defs.setdefault(stmt.name, []).append(stmt)
    out: dict[str, int] = {}
    for name, found in defs.items():
        if len(found) != 1:
            continue
        params = [a.arg for a in (*found[0].args.posonlyargs, *found[0].args.args)]
        for node in ast.walk(found[0]):
            if (
                isinstance(node, ast.Call)
                and qualified(node.func) in _INSERTS
                and node.args
                and isinstance(node.args[-1], ast.Name)
                and node.args[-1].id in params
            ):
                out[name] = params.index(node.args[-1].id)
                break
    return out


def _up(value: str, levels: int) -> str:
    """The folder ``levels`` above ``value`` (the file counts as its folder's child)."""
    if value == _FILE:
        return _up(".", levels - 1) if levels > 1 else "."
    return posixpath.normpath(posixpath.join(value, *([".."] * levels)))


def _join(base: str, *parts: str) -> str | None:
    if any(posixpath.isabs(p) or "\\" in p for p in parts):
        return None  # an absolute folder, or one written for Windows: not the project's
    return posixpath.normpath(posixpath.join(base, *parts))
