"""Module-level functions that build a model on the CPU (MEM701's builders
across modules): ``def alexnet(pretrained=False, **kwargs): model =
AlexNet(**kwargs); ...; return model`` in vision/nn/alexnet.py, called as
``net = alexnet(True)`` from a script.

A builder here moves nothing (it is one of ``cpu_functions``: no device move,
no call of a module function that moves), and every ``return`` gives a class
of the same module that moves nothing (``cpu_classes``), called with no
``device=``/``device_map=``, either directly or through a local name bound
only so. ``**kwargs`` is accepted when the class's ``__init__`` takes no
device and takes no ``**kwargs`` itself or never reads it. As analysis/training/cpu_models.py's
``built_on_cpu`` for a builder of the module being linted, on Python's
``ast`` (the project summary's tree).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Collection

from memlint.gate.ast_fields import nodes
from memlint.project.layer_functions import layer_functions
from memlint.project.layer_lists import Walk, list_values
from memlint.vocabulary.kinds import Kind, guess_kind_from_name

_DEVICE_WORDS = frozenset({"device", "device_map"})
# Calls in an argument that return no model (``AlexNet(num_classes=len(names))``).
_PLAIN_CALLS = frozenset({"len", "int", "float", "str", "bool", "tuple", "list", "dict", "min", "max", "sum"})
_BUILTINS = frozenset(dir(builtins))
# How ``classes`` marks a layer function (layer_functions.py): an argument, never a builder.
_LAYERS = "layers:"
# How a foreign builder's needs mark a module a name is picked from at run time.
_GETATTR = "getattr:"


def builders(
    tree: ast.Module, cpu_classes: Collection[str], cpu_functions: Collection[str], walk: Walk = nodes
) -> tuple[list[str], list[str]]:
    """``(cpu_builders, foreign_builders)``: the second are builders that
    would be CPU builders if some classes they build, which this module does
    not define (imported, or through ``from .msc import *``), are CPU classes
    of their own module: ``"fn=MSC,DeepLabV2"`` (the project stage resolves
    the names, index.py). ``walk``: the summary's NodeLists, so each
    candidate is walked once for its layer lists, its returns and its locals."""
    # Most modules have no candidate: skip the module-wide binding count.
    if not any(isinstance(stmt, ast.FunctionDef) and stmt.name in cpu_functions for stmt in tree.body):
        return [], []
    inits: dict[str, ast.FunctionDef | None] = {}
    counts: dict[str, int] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            counts[stmt.name] = counts.get(stmt.name, 0) + 1
        if isinstance(stmt, ast.ClassDef):
            inits[stmt.name] = next(
                (s for s in stmt.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
            )
    classes = {name for name in cpu_classes if counts.get(name) == 1 and name in inits}
    # ``nn.Linear(...)``: a torch.nn layer built from constants is a fresh model
    # on the CPU (marked ``nn.*`` for each spelling torch.nn has here).
    classes |= {prefix + ".*" for prefix in _torch_nn_spellings(tree, counts)}
    # ``vgg(cfg, 3)`` returning a local list of fresh layers: an argument a
    # class may take as it takes a fresh layer (layer_functions.py).
    classes |= {
        _LAYERS + name
        for name in layer_functions(
            [
                stmt
                for stmt in tree.body
                if isinstance(stmt, ast.FunctionDef) and stmt.name in cpu_functions and counts.get(stmt.name) == 1
            ],
            lambda value, values, stores: _fresh_layer(value, values, stores, classes),
            walk,
        )
    }
    # Counted once, and only when a builder returns a class the module does
    # not define (most builders return one of its own).
    bound = _LazyBindings(tree)
    imported = {
        (a.asname or a.name).split(".")[0]
        for stmt in tree.body
        if isinstance(stmt, (ast.Import, ast.ImportFrom))
        for a in stmt.names
        if a.name != "*"
    }
    star = any(isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names) for stmt in tree.body)
    candidates = [
        stmt
        for stmt in tree.body
        if isinstance(stmt, ast.FunctionDef) and stmt.name in cpu_functions and counts.get(stmt.name) == 1
    ]
    found: list[str] = []
    foreign: dict[str, str] = {}
    # Each candidate's walk, once: the passes below re-judge only its returns.
    scans: dict[int, tuple[list[ast.expr | None], _Locals] | None] = {}
    changed = True
    while changed:  # a builder returning another builder's model (``return mobilenetv2_T_w(6, 0.5, n)``)
        changed = False
        for stmt in candidates:
            if stmt.name in found or stmt.name in foreign:
                continue
            # Names of classes the module does not define, bound once by an
            # import or reached through a star import (never assigned).
            needed: set[str] = set()
            if id(stmt) not in scans:
                scans[id(stmt)] = _scan(stmt, walk)
            scan = scans[id(stmt)]
            if scan is not None and _returns_built(
                *scan, classes | set(found), inits, _Foreign(bound, imported, star, needed)
            ):
                if needed:
                    foreign[stmt.name] = f"{stmt.name}={','.join(sorted(needed))}"
                else:
                    found.append(stmt.name)
                    changed = True
    return (
        [stmt.name for stmt in candidates if stmt.name in found],
        [foreign[stmt.name] for stmt in candidates if stmt.name in foreign],
    )


class _Foreign:
    """Class names a builder may build that other modules define: a name
    bound once at module level, by a top-level import, or one not bound here
    at all when the module has a star import (nor a builtin); the ones used
    land in ``needed``."""

    def __init__(self, bound: _LazyBindings, imported: set[str], star: bool, needed: set[str]) -> None:
        self.bound = bound
        self.imported = imported
        self.star = star
        self.needed = needed

    def accepts(self, name: str) -> bool:
        if name not in self.imported and (not self.star or name in _BUILTINS):
            return False  # neither case below can hold: no need to count (timm's ``_create_resnet``)
        count = self.bound.counts().get(name, 0)
        if (count == 1 and name in self.imported) or (count == 0 and self.star and name not in _BUILTINS):
            self.needed.add(name)
            return True
        return False


class _LazyBindings:
    """``_module_bindings(tree)``, counted on the first question only."""

    walks = 0  # module walks so far, for the cost test

    def __init__(self, tree: ast.Module) -> None:
        self._tree = tree
        self._counts: dict[str, int] | None = None

    def counts(self) -> dict[str, int]:
        if self._counts is None:
            _LazyBindings.walks += 1
            self._counts = _module_bindings(self._tree)
        return self._counts


def _module_bindings(tree: ast.Module) -> dict[str, int]:
    """How often each name is bound at module level, in any form; imports
    count once per alias, ``from m import *`` binds nothing named."""
    counts: dict[str, int] = {}
    for stmt in tree.body:
        for node in nodes(stmt):
            names: list[str] = []
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"]
            elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                names = [node.id]
            elif isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node is not stmt:
                continue
            for name in names:
                counts[name] = counts.get(name, 0) + 1
    for stmt in tree.body:
        if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            counts[stmt.name] = counts.get(stmt.name, 0) + 1
    return counts


# A builder holds none of these but itself.
_NESTED_SCOPES = frozenset({ast.Yield, ast.YieldFrom, ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef})


def _scan(fn: ast.FunctionDef, walk: Walk = nodes) -> tuple[list[ast.expr | None], _Locals] | None:
    """A builder candidate's returns and local names, in one walk; None for
    a function that is no builder whatever the classes (a generator, a
    nested scope, ``global``, no ``return``)."""
    returns: list[ast.expr | None] = []
    stores: dict[str, int] = {}
    values: dict[str, list[ast.expr]] = {}
    # Runs on every node of every builder candidate: the classes tested by identity, names first.
    name_, store_ = ast.Name, ast.Store
    for node in walk(fn):
        kind = node.__class__
        if kind is name_:
            if node.ctx.__class__ is store_:  # type: ignore[attr-defined]
                stores[node.id] = stores.get(node.id, 0) + 1  # type: ignore[attr-defined]
        elif kind in _NESTED_SCOPES:
            if node is not fn:
                return None  # a generator, or a nested scope whose returns are not the builder's
        elif kind is ast.Return:
            returns.append(node.value)  # type: ignore[attr-defined]
        elif kind is ast.Assign:
            if len(node.targets) == 1:  # type: ignore[attr-defined]
                for target, value in _bound_pairs(node.targets[0], node.value):  # type: ignore[attr-defined]
                    values.setdefault(target, []).append(value)
        elif kind is ast.Global or kind is ast.Nonlocal:
            return None
    if not returns:
        return None
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    return returns, _Locals(stores, values, params, fn, walk)


def _bound_pairs(target: ast.expr, value: ast.expr) -> list[tuple[str, ast.expr]]:
    """What each name of an assignment's target is bound to: ``a = v``;
    ``a, b = x, y`` element by element; ``base_, extras_, head_ =
    multibox(...)`` each to a part of the call's value, which holds only what
    the whole does (a call judged fresh returns fresh parts)."""
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if not isinstance(target, (ast.Tuple, ast.List)) or not all(isinstance(t, ast.Name) for t in target.elts):
        return []
    names = [t.id for t in target.elts if isinstance(t, ast.Name)]
    if isinstance(value, (ast.Tuple, ast.List)):
        if len(value.elts) != len(names) or any(isinstance(v, ast.Starred) for v in value.elts):
            return []
        return list(zip(names, value.elts))
    return [(name, value) for name in names] if isinstance(value, ast.Call) else []


def _returns_built(
    returns: list[ast.expr | None],
    local: _Locals,
    classes: set[str],
    inits: dict[str, ast.FunctionDef | None],
    foreign: _Foreign | None,
) -> bool:
    # ``return`` / ``return None`` in an error branch gives no model at all.
    built = [v for v in returns if not (v is None or (isinstance(v, ast.Constant) and v.value is None))]
    return bool(built) and all(_built_or_bound(value, classes, inits, foreign, local) for value in built)


class _Locals:
    """A builder's local names: how often each is stored, what it is bound to."""

    def __init__(
        self,
        stores: dict[str, int],
        values: dict[str, list[ast.expr]],
        params: set[str],
        fn: ast.FunctionDef,
        walk: Walk = nodes,
    ) -> None:
        self.stores = stores
        self.values = values
        self.params = params
        self.fn = fn
        self._walk = walk
        self._lists: dict[str, list[ast.expr] | None] = {}

    def list_values(self, name: str) -> list[ast.expr] | None:
        """layer_lists.list_values, once per name."""
        if name not in self._lists:
            self._lists[name] = (
                list_values(self.fn, name, walk=self._walk) if name in self.stores and name not in self.params else None
            )
        return self._lists[name]

    def names(self) -> set[str]:
        return set(self.stores) | self.params


def _built_or_bound(
    value: ast.expr,
    classes: set[str],
    inits: dict[str, ast.FunctionDef | None],
    foreign: _Foreign | None,
    local: _Locals | None,
) -> bool:
    """``value`` builds a model on the CPU, or is a local name every binding of which does."""
    if isinstance(value, ast.Name) and local is not None and value.id in local.stores:
        bound = local.values.get(value.id, [])
        if not bound or len(bound) != local.stores[value.id]:
            return False
        # Not through another local name: one level, no cycles.
        return all(_built(v, classes, inits, foreign, None) for v in bound)
    return _built(value, classes, inits, foreign, local)


def _built(
    value: ast.expr,
    classes: set[str],
    inits: dict[str, ast.FunctionDef | None],
    foreign: _Foreign | None = None,
    local: _Locals | None = None,
) -> bool:
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        return _torch_layer(value, classes) or (local is not None and _unpacked_layers(value, classes, local))
    if isinstance(value, ast.Call) and _picked_by_name(value.func, foreign):
        return _plain_arguments(value)
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
        return False
    name = value.func.id
    if local is not None and name in local.names():
        return False
    if name not in classes and (foreign is None or not foreign.accepts(name)):
        return False
    if any(k.arg in _DEVICE_WORDS for k in value.keywords):
        return False
    # ``MSC(base=DeepLabV2(...))``, or ``base`` bound so: a part built here, on
    # the CPU, is no model from elsewhere; ``Wrapper(net)`` wraps a model that
    # may be on a device.
    for part in (*value.args, *(k.value for k in value.keywords)):
        if isinstance(part, ast.Name) and local is not None and part.id in local.stores:
            bound = local.values.get(part.id, [])
            if not bound or len(bound) != local.stores[part.id]:
                return False
            if not all(_no_model(v) or _part_built(v, classes, inits, foreign, None) for v in bound):
                return False
        elif not (_no_model(part) or _part_built(part, classes, inits, foreign, local)):
            return False
    if any(isinstance(a, ast.Starred) for a in value.args) or any(k.arg is None for k in value.keywords):
        init = inits.get(value.func.id)
        if init is None or not _swallowed(init, init.args.kwarg) or not _swallowed(init, init.args.vararg):
            return False
        params = (*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs)
        if any(p.arg in _DEVICE_WORDS for p in params):
            return False
    return True


def _picked_by_name(func: ast.expr, foreign: _Foreign | None) -> bool:
    """``getattr(builder, hparams.builder)``: what a module imported here
    (bound once, by its import) holds under a name read at run time. Marked
    ``getattr:builder`` in ``needed``: the project stage says whether every
    function and class that module may give builds on the CPU (index.py)."""
    if foreign is None or not (isinstance(func, ast.Call) and isinstance(func.func, ast.Name)):
        return False
    if func.func.id != "getattr" or len(func.args) != 2 or func.keywords or not isinstance(func.args[0], ast.Name):
        return False
    module = func.args[0].id
    counts = foreign.bound.counts()
    if module not in foreign.imported or counts.get(module, 0) != 1 or "getattr" in counts:
        return False
    foreign.needed.add(_GETATTR + module)
    return True


def _plain_arguments(call: ast.Call) -> bool:
    """No device, nothing unpacked, and no argument that may be a model."""
    if any(k.arg is None or k.arg in _DEVICE_WORDS for k in call.keywords):
        return False
    if any(isinstance(a, ast.Starred) for a in call.args):
        return False
    return all(_no_model(part) for part in (*call.args, *(k.value for k in call.keywords)))


def _part_built(
    part: ast.expr,
    classes: set[str],
    inits: dict[str, ast.FunctionDef | None],
    foreign: _Foreign | None,
    local: _Locals | None,
) -> bool:
    """A constructor's argument holding only fresh CPU modules: a model built
    here, or a call of a layer function (``vgg(cfg, 3)``, marked in
    ``classes``) on arguments that are such parts or no model; never a
    builder's result by itself (``multibox(net)`` hands ``net`` back)."""
    if _built(part, classes, inits, foreign, local):
        return True
    if not (isinstance(part, ast.Call) and isinstance(part.func, ast.Name) and _LAYERS + part.func.id in classes):
        return False
    if local is not None and part.func.id in local.names():
        return False
    if any(isinstance(a, ast.Starred) for a in part.args) or any(k.arg is None for k in part.keywords):
        return False
    return all(
        _no_model(a) or _part_built(a, classes, inits, foreign, local)
        for a in (*part.args, *(k.value for k in part.keywords))
    )


def _swallowed(init: ast.FunctionDef, star: ast.arg | None) -> bool:
    """``init``'s ``**kwargs`` (or ``*args``) is absent or never read:
    HRNet's ``def __init__(self, cfg, **kwargs)`` takes what its builder
    passes on and drops it, so no ``device=`` can reach a layer."""
    if star is None:
        return True
    return not any(isinstance(n, ast.Name) and n.id == star.arg for n in nodes(init))


def _no_model(arg: ast.expr) -> bool:
    """``arg`` is no model: no name guessed to be one (``net``, ``self.model``;
    an optimizer's name is none), no call but of a builtin."""
    for node in nodes(arg):
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in _PLAIN_CALLS):
            return False
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        # ``AoAModel(opt)``: a name read as an optimizer is no module to wrap;
        # a class that moves nothing builds its own parameters on the CPU whatever
        # optimizer (or ``opt`` namespace of options) it is handed.
        if name is not None and guess_kind_from_name(name) not in (None, Kind.OPTIMIZER):
            return False
    return True


def _torch_nn_spellings(tree: ast.Module, counts: dict[str, int]) -> set[str]:
    """How this module spells ``torch.nn``: ``nn`` after ``import torch.nn as
    nn`` or ``from torch import nn``, ``torch.nn`` after ``import torch``;
    not names a ``def`` or ``class`` of the module rebinds."""
    out: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                if a.name == "torch.nn" and a.asname:
                    out.add(a.asname)
                elif a.name in ("torch", "torch.nn") and not a.asname:
                    out.add("torch.nn")
        elif isinstance(stmt, ast.ImportFrom) and stmt.module == "torch" and not stmt.level:
            out.update(a.asname or a.name for a in stmt.names if a.name == "nn")
    return {s for s in out if not counts.get(s.split(".")[0])}


def _torch_layer(call: ast.Call, classes: set[str]) -> bool:
    """``nn.Linear(512, 10)``: a torch.nn class (capitalised, no
    ``DataParallel``) called on constants or such layers only, no device,
    nothing unpacked: a fresh module on the CPU that holds no model from
    elsewhere."""
    if not _torch_class(call, classes):
        return False
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    if any(k.arg in _DEVICE_WORDS for k in call.keywords):
        return False
    parts = (*call.args, *(k.value for k in call.keywords))
    # ``nn.Sequential(nn.Linear(4, 4), nn.ReLU())``: fresh layers inside.
    return all(
        _no_model(part)
        or (isinstance(part, ast.Call) and isinstance(part.func, ast.Attribute) and _torch_layer(part, classes))
        for part in parts
    )


def _torch_class(call: ast.Call, classes: set[str]) -> bool:
    """``call`` builds a torch.nn class, as this module spells torch.nn, that wraps no model
    (``DataParallel`` moves the module it wraps to its first device)."""
    func = call.func
    assert isinstance(func, ast.Attribute)
    prefix = func.value
    spelled = prefix.id if isinstance(prefix, ast.Name) else ""
    if isinstance(prefix, ast.Attribute) and isinstance(prefix.value, ast.Name):
        spelled = f"{prefix.value.id}.{prefix.attr}"
    return bool(spelled) and spelled + ".*" in classes and func.attr[:1].isupper() and "Parallel" not in func.attr


def _unpacked_layers(call: ast.Call, classes: set[str], local: _Locals) -> bool:
    """``nn.Sequential(*layers)``: a torch.nn container of a local list the
    builder only fills with fresh torch.nn layers, directly or through a local
    name bound only to one (``conv2d = nn.Conv2d(...)``; layer_lists.py)."""
    if call.keywords or len(call.args) != 1 or not isinstance(call.args[0], ast.Starred):
        return False
    listed = call.args[0].value
    if not isinstance(listed, ast.Name) or not _torch_class(call, classes):
        return False
    values = local.list_values(listed.id)
    if not values:
        return False
    return all(_fresh_layer(value, local.values, local.stores, classes) for value in values)


def _fresh_layer(value: ast.expr, values: dict[str, list[ast.expr]], stores: dict[str, int], classes: set[str]) -> bool:
    """``value`` is a fresh torch.nn layer, or a local name bound only to one
    (``conv2d = nn.Conv2d(...)``)."""
    bound = [value]
    if isinstance(value, ast.Name):
        bound = values.get(value.id, [])
        if not bound or len(bound) != stores.get(value.id, 0):
            return False
    return all(
        isinstance(layer, ast.Call) and isinstance(layer.func, ast.Attribute) and _torch_layer(layer, classes)
        for layer in bound
    )
