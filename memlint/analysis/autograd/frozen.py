"""Modules whose parameters are frozen.

Frozen means no parameter of the module requires grad (RULES.md, "Frozen
means"): ``model.requires_grad_(False)`` (also chained on a name,
``model.eval().requires_grad_(False).to(device)``), ``for p in
model.parameters(): p.requires_grad = False`` (or ``p.requires_grad_(False)``,
``p.detach_()``), a module built frozen (``Net().requires_grad_(False)``),
a copy or alias of a module frozen before it (``G_ema =
copy.deepcopy(G).eval()``: ``deepcopy``, ``.to()``, ``.eval()``,
``.train()``, ``.cpu()``, ``.cuda()`` keep what they copy), a helper that
freezes its argument (DiT's ``requires_grad(ema, False)``, CycleGAN's
``set_requires_grad(nets, False)``, or any function of the module whose body
freezes one of its parameters) and a parent frozen whole (``self.ema`` frozen
freezes ``self.ema.block``). Such parameters are not leaves autograd guards,
and the model's outputs carry no history for inputs that need none.

Within one scope the answer is flow-insensitive: a module is frozen when it is
frozen somewhere and never thawed, nor any part of it nor any parent
(``requires_grad_(True)``, ``p.requires_grad = flag``); only a copy and a
new part look at the order (the original must be frozen before it is copied;
``model.fc = nn.Linear(d, 2)`` after ``model`` is frozen thaws it in part,
before it is frozen with the rest). A function also
sees the module-level models frozen at the top of its module (names it does
not bind itself) and a method the ``self.`` attributes its class freezes.

``FreezeHelper`` is the per-function summary (which parameter a function
freezes, under which flag): small and serialisable, so that the project stage
can carry it to the modules that import the function.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from memlint.analysis.scope.names import dotted_name
from memlint.analysis.scope.own_returns import own_returns
from memlint.parse.traversal import visit_fast

if TYPE_CHECKING:
    from memlint.analysis.scope.callgraph import CallGraph, Scope

_WRAPPERS = frozenset({"list", "tuple", "reversed", "tqdm", "iter"})
# Methods of nn.Module that return the module itself and leave requires_grad
# as it was: a chain of them names the same (frozen or not) module.
_RETURNS_SELF = frozenset({"eval", "train", "to", "cuda", "cpu", "float", "half", "double", "bfloat16", "share_memory"})
_COPIES = frozenset({"copy.deepcopy", "deepcopy"})


@dataclass(frozen=True)
class FreezeHelper:
    """A function that freezes its parameter ``param`` (at position
    ``index``): always when ``flag`` is None, else when its parameter
    ``flag`` (at ``flag_index``) is ``False`` (``flag_default`` when the
    call leaves it out: True freezes, False thaws, None unknown)."""

    index: int
    param: str
    flag: str | None = None
    flag_index: int | None = None
    flag_default: bool | None = None


# DiT's ``requires_grad(model, flag=True)`` and CycleGAN's
# ``set_requires_grad(nets, requires_grad=False)``, wherever they are defined.
KNOWN_HELPERS: Mapping[str, FreezeHelper] = {
    "requires_grad": FreezeHelper(0, "model", "flag", 1, None),
    "set_requires_grad": FreezeHelper(0, "nets", "requires_grad", 1, None),
}


def frozen_modules(
    scope: cst.CSTNode, helpers: Mapping[str, FreezeHelper] = KNOWN_HELPERS, builders: frozenset[str] = frozenset()
) -> frozenset[str]:
    """The dotted names of modules ``scope`` freezes and never thaws
    (``requires_grad_(True)``, ``p.requires_grad = flag``)."""
    visitor = _Freezes(helpers, builders=builders)
    visit_fast(scope, visitor)
    return visitor.result()


def ever_frozen(
    scope: cst.CSTNode, helpers: Mapping[str, FreezeHelper] = KNOWN_HELPERS, builders: frozenset[str] = frozenset()
) -> frozenset[str]:
    """The dotted names of modules ``scope`` freezes somewhere."""
    visitor = _Freezes(helpers, builders=builders)
    visit_fast(scope, visitor)
    return frozenset(visitor.frozen)


def is_frozen_key(key: str, frozen: frozenset[str] | set[str]) -> bool:
    """``key`` or a parent of it (``self.ema`` for ``self.ema.block``) is in ``frozen``."""
    while True:
        if key in frozen:
            return True
        if "." not in key:
            return False
        key = key.rsplit(".", 1)[0]


def _related(a: str, b: str) -> bool:
    """One is ``b`` or a parent or a part of the other."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def parameter_loop_targets(target: cst.BaseExpression, iterable: cst.BaseExpression) -> list[tuple[str, str]]:
    """``[("p", "model")]`` for ``for p in model.parameters()``; also
    ``named_parameters()``, ``enumerate``, ``zip`` and ``list(...)``."""
    if not isinstance(iterable, cst.Call):
        return []
    func = iterable.func
    args = [a.value for a in iterable.args if a.keyword is None and not a.star]
    if isinstance(func, cst.Name) and func.value in _WRAPPERS and len(args) == 1:
        return parameter_loop_targets(target, args[0])
    if isinstance(func, cst.Name) and func.value == "enumerate" and args and isinstance(target, cst.Tuple):
        if len(target.elements) == 2:
            return parameter_loop_targets(target.elements[1].value, args[0])
        return []
    if isinstance(func, cst.Name) and func.value == "zip" and isinstance(target, cst.Tuple):
        if len(target.elements) != len(args):
            return []
        out: list[tuple[str, str]] = []
        for el, arg in zip(target.elements, args):
            out.extend(parameter_loop_targets(el.value, arg))
        return out
    if isinstance(func, cst.Attribute) and not iterable.args:
        owner = dotted_name(func.value)
        if owner is None:
            return []
        if func.attr.value == "parameters" and isinstance(target, cst.Name):
            return [(target.value, owner)]
        if func.attr.value == "named_parameters" and isinstance(target, cst.Tuple) and len(target.elements) == 2:
            el = target.elements[1].value
            if isinstance(el, cst.Name):
                return [(el.value, owner)]
    return []


def _freezes(expr: cst.BaseExpression) -> bool | None:
    """True for ``False``, False for ``True``; None (not known) otherwise."""
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "False"
    return None


def _chain(value: cst.BaseExpression) -> tuple[cst.BaseExpression, bool | None]:
    """The receiver under a chain of module methods, and what the outermost
    ``requires_grad_`` in it does: ``(model, True)`` for
    ``model.eval().requires_grad_(False).to(d)``, ``(model, None)`` for
    ``model.eval()``. Stops at a method that may return something else."""
    verdict: bool | None = None
    seen = False
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        method = value.func.attr.value
        if method == "requires_grad_":
            if not seen:
                verdict = _freezes(value.args[0].value) if value.args else False
                seen = True
        elif method not in _RETURNS_SELF:
            break
        value = value.func.value
    return value, verdict


def _frozen_chain(value: cst.BaseExpression) -> bool | None:
    """``copy.deepcopy(model).eval().requires_grad_(False)``: the outermost
    ``requires_grad_`` of a chain of calls (True frozen, False thawed)."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        if value.func.attr.value == "requires_grad_":
            return _freezes(value.args[0].value) if value.args else False
        value = value.func.value
    return None


def _copied(value: cst.BaseExpression) -> str | None:
    """The module ``value`` copies or names again: ``G`` for
    ``copy.deepcopy(G).eval()``, ``G.to(device)`` or ``G``."""
    root, _ = _chain(value)
    if isinstance(root, cst.Call) and dotted_name(root.func) in _COPIES and len(root.args) == 1:
        root, _ = _chain(root.args[0].value)
    return dotted_name(root)


# torch.nn layers that hold parameters (compared by the constructor's last
# dotted part). A parameter-free replacement (``model.fc = nn.Identity()``)
# leaves a frozen model frozen.
_TRAINABLE_LAYERS = frozenset(
    {
        "Linear",
        "Bilinear",
        "Conv1d",
        "Conv2d",
        "Conv3d",
        "ConvTranspose1d",
        "ConvTranspose2d",
        "ConvTranspose3d",
        "Embedding",
        "LSTM",
        "GRU",
        "RNN",
        "BatchNorm1d",
        "BatchNorm2d",
        "BatchNorm3d",
        "LayerNorm",
        "GroupNorm",
        "MultiheadAttention",
    }
)


def _fresh_trainable(value: cst.BaseExpression) -> bool:
    """``nn.Linear(d, 2)``, or ``nn.Sequential(...)`` holding one: a new
    layer with parameters that require grad."""
    if not isinstance(value, cst.Call):
        return False
    name = (dotted_name(value.func) or "").rsplit(".", 1)[-1]
    if name in _TRAINABLE_LAYERS:
        return True
    if name == "Sequential":
        return any(_fresh_trainable(a.value) for a in value.args)
    return False


def _bind(call: cst.Call, index: int, name: str) -> cst.BaseExpression | None:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return positional[index].value if index < len(positional) else None


class _Freezes(cst.CSTVisitor):
    """In source order: what is frozen (``frozen``), thawed (``thawed``) and
    the state now (``state``: last word per dotted name), for copies."""

    def __init__(
        self,
        helpers: Mapping[str, FreezeHelper],
        inherited: frozenset[str] = frozenset(),
        top_level_only: bool = False,
        builders: frozenset[str] = frozenset(),
    ) -> None:
        self.helpers = helpers
        # Functions of this module returning a module they froze
        # (FrozenModules.builders): ``self.model = self.__load_model()``.
        self.builders = builders
        self.frozen: set[str] = set(inherited)
        self.thawed: set[str] = set()
        # key -> name of the flag it was set from (``p.requires_grad = flag``)
        self.flagged: dict[str, str] = {}
        self.state: dict[str, bool] = dict.fromkeys(inherited, True)
        self.bound: set[str] = set()  # plain names assigned in the scope
        self._loops: list[tuple[str, str]] = []  # (parameter variable, its module)
        # Per enclosing ``zip`` over the parameters of several modules: the
        # modules it froze, and those frozen before it (see leave_For).
        self._zips: list[tuple[cst.For, set[str], frozenset[str]]] = []
        self._top_level_only = top_level_only

    def result(self) -> frozenset[str]:
        return frozenset(k for k in self.frozen if not any(_related(k, t) for t in self.thawed))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return not self._top_level_only

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return not self._top_level_only

    def _frozen_now(self, key: str) -> bool:
        while True:
            if key in self.state:
                return self.state[key]
            if "." not in key:
                return False
            key = key.rsplit(".", 1)[0]

    def _set(self, key: str, freezes: bool) -> None:
        for other in [k for k in self.state if k.startswith(key + ".")]:
            del self.state[other]
        self.state[key] = freezes
        if freezes:
            self.frozen.add(key)
            return
        self.thawed.add(key)
        parts = key.split(".")
        for i in range(1, len(parts)):
            parent = ".".join(parts[:i])
            if self.state.get(parent):
                self.state[parent] = False  # a part of it trains again

    def _record(self, key: str | None, freezes: bool | None, flag: cst.BaseExpression | None = None) -> None:
        """``key`` (a module, or a loop's parameter variable) is frozen or thawed."""
        if key is None:
            return
        owners = {o for n, o in self._loops if n == key} or {key}
        if freezes and self._zips and any(n == key for n, _ in self._loops):
            self._zips[-1][1].update(owners)
        for owner in owners:
            if freezes is None:
                if isinstance(flag, cst.Name):
                    self.flagged[owner] = flag.value
                self._set(owner, False)  # not known: treated as thawed
            else:
                self._set(owner, freezes)

    def visit_For(self, node: cst.For) -> None:
        targets = parameter_loop_targets(node.target, node.iter)
        self._loops.extend(targets)
        if len({owner for _, owner in targets}) > 1:
            self._zips.append((node, set(), frozenset(k for k, v in self.state.items() if v)))

    def leave_For(self, original_node: cst.For) -> None:
        for _ in parameter_loop_targets(original_node.target, original_node.iter):
            self._loops.pop()
        if self._zips and self._zips[-1][0] is original_node:
            _, froze, before = self._zips.pop()
            if len(froze) > 1:
                # ``for e, d in zip(enc.parameters(), dec.parameters())`` stops at
                # the shorter list: the other module keeps parameters that
                # require grad, and which one that is cannot be told here. A
                # zip that freezes one side only (an EMA copy beside the model
                # it follows) pairs equal lists and stays a freeze.
                for owner in froze - before:
                    self.frozen.discard(owner)
                    self.state.pop(owner, None)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "detach_" and not node.args:
            key = dotted_name(func.value)
            if any(n == key for n, _ in self._loops):
                self._record(key, True)
        elif isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_":
            # ``requires_grad_()`` defaults to True; ``m.eval().requires_grad_(False)`` is ``m``'s
            receiver, _ = _chain(func.value)
            flag = node.args[0].value if node.args else None
            self._record(dotted_name(receiver), _freezes(flag) if flag is not None else False, flag)
        else:
            name = func.value if isinstance(func, cst.Name) else None
            if isinstance(func, cst.Attribute) and func.attr.value in self.helpers:
                name = func.attr.value  # ``self.set_requires_grad(...)``
            helper = self.helpers.get(name) if name is not None else None
            if helper is not None:
                self._helper_call(node, helper)

    def _helper_call(self, node: cst.Call, helper: FreezeHelper) -> None:
        target = _bind(node, helper.index, helper.param)
        if target is None:
            return
        freezes: bool | None = True
        if helper.flag is not None:
            value = _bind(node, helper.flag_index if helper.flag_index is not None else -1, helper.flag)
            freezes = helper.flag_default if value is None else _freezes(value)
        modules = [e.value for e in target.elements] if isinstance(target, (cst.List, cst.Tuple)) else [target]
        for module in modules:
            self._record(dotted_name(module), freezes)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            target = t.target
            if isinstance(target, cst.Name):
                self.bound.add(target.value)
            if isinstance(target, cst.Attribute) and target.attr.value == "requires_grad":
                key = dotted_name(target.value)
                if any(n == key for n, _ in self._loops):
                    self._record(key, _freezes(node.value), node.value)
                continue
            key = dotted_name(target)
            if key is None:
                continue
            verdict = _frozen_chain(node.value)
            if verdict is None and self.builders and _built_frozen(node.value, self.builders):
                verdict = True
            if verdict is not None:
                self._record(key, verdict)
                continue
            source = _copied(node.value)
            if source is not None and source != key and self._frozen_now(source):
                self._record(key, True)  # a copy (or another name) of a frozen module
            elif "." in key and self._frozen_now(key.rsplit(".", 1)[0]) and _fresh_trainable(node.value):
                # ``model.fc = nn.Linear(d, 2)`` after freezing ``model``: the new
                # head's parameters require grad, so the model trains again in part.
                self._set(key, False)
            else:
                # Bound to something else: not known to be frozen from here on.
                for other in [k for k in self.state if _related(k, key) and k.startswith(key)]:
                    del self.state[other]


def helper_summary(fn: cst.FunctionDef, helpers: Mapping[str, FreezeHelper] = KNOWN_HELPERS) -> FreezeHelper | None:
    """What ``fn`` freezes of its own parameters: the first parameter it
    freezes always, or by one of its parameters used as the flag."""
    params = [p for p in (*fn.params.posonly_params, *fn.params.params)]
    names = [p.name.value for p in params]
    if names and names[0] in ("self", "cls"):
        params, names = params[1:], names[1:]
    if not names:
        return None
    visitor = _Freezes(helpers)
    visit_fast(fn.body, visitor)
    settled = visitor.result()
    for i, name in enumerate(names):
        if name in settled:
            return FreezeHelper(i, name)
        flag = visitor.flagged.get(name)
        if flag in names and not any(_related(name, t) for t in visitor.thawed - {name}):
            j = names.index(flag)  # type: ignore[arg-type]
            default = params[j].default
            return FreezeHelper(i, name, flag, j, _freezes(default) if default is not None else None)
    return None


_MAY_FREEZE = frozenset({"requires_grad_", "requires_grad", "detach_"})


class _Mentions(cst.CSTVisitor):
    """Whether the module spells anything that may freeze a model."""

    def __init__(self) -> None:
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in _MAY_FREEZE or node.attr.value in KNOWN_HELPERS:
            self.found = True

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in KNOWN_HELPERS:
            self.found = True  # defined in another module


def _built_frozen(value: cst.BaseExpression, builders: frozenset[str]) -> bool:
    """``build()`` or ``self.build()`` for a function of ``builders``."""
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if isinstance(func, cst.Name):
        return func.value in builders
    return (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and func.value.value == "self"
        and func.attr.value in builders
    )


class FrozenModules:
    """The module's frozen models, asked per scope (``facts.frozen``)."""

    def __init__(
        self, module: cst.Module, calls: CallGraph, imported: Mapping[str, FreezeHelper] | None = None
    ) -> None:
        self.module = module
        self.calls = calls
        # Helpers of other modules, by the name this module calls them
        # (the project stage's door; this module's own functions win).
        self._imported = dict(imported or {})
        self._helpers: dict[str, FreezeHelper] | None = None
        self._ever: frozenset[str] | None = None
        self._top: frozenset[str] | None = None
        self._scopes: dict[int, frozenset[str]] = {}
        self._classes: dict[int, frozenset[str]] = {}
        self._closures: dict[int, frozenset[str]] = {}
        self._mentions: bool | None = None
        self._builders: frozenset[str] | None = None

    def _may_freeze(self) -> bool:
        """One cheap walk: a module that never names ``requires_grad``,
        ``requires_grad_``, ``detach_`` (every helper of its own freezes
        through one of them) nor calls a known helper freezes nothing."""
        if self._mentions is None and self._imported:
            self._mentions = True  # a helper of another module may freeze
        if self._mentions is None:
            visitor = _Mentions()
            visit_fast(self.module, visitor)
            self._mentions = visitor.found
        return self._mentions

    @property
    def helpers(self) -> Mapping[str, FreezeHelper]:
        """The known helpers and this module's own functions that freeze an
        argument, by name (a name defined twice with different answers is
        left out)."""
        if self._helpers is None:
            own: dict[str, FreezeHelper | None] = {}
            for fn in self.calls.functions:
                name = fn.name.value
                found = helper_summary(fn)
                own[name] = found if name not in own or own[name] == found else None
            table = {**KNOWN_HELPERS, **self._imported}
            for name, found in own.items():
                if found is None:
                    table.pop(name, None)  # a project function of that name that freezes nothing
                else:
                    table[name] = found
            self._helpers = table
        return self._helpers

    @property
    def builders(self) -> frozenset[str]:
        """Functions of this module (by name; a name defined twice with
        different answers is left out) whose every ``return`` hands back a
        plain name their own statements froze (DINO's ``__load_model``:
        ``for p in model.parameters(): p.requires_grad = False``, then
        ``return model``): what they return is frozen."""
        if self._builders is None:
            found: dict[str, bool] = {}
            if self._may_freeze():
                for fn in self.calls.functions:
                    returns, _ = own_returns(fn)
                    own = self._own_statements(fn) if returns else frozenset()
                    ok = bool(returns) and all(isinstance(r, cst.Name) and r.value in own for r in returns)
                    name = fn.name.value
                    found[name] = ok and found.get(name, True)
            self._builders = frozenset(n for n, ok in found.items() if ok)
        return self._builders

    def ever_frozen(self) -> frozenset[str]:
        """Every dotted name the module freezes somewhere (copies included)."""
        if self._ever is None:
            self._ever = ever_frozen(self.module, self.helpers, self.builders) if self._may_freeze() else frozenset()
        return self._ever

    def ever_frozen_key(self, key: str) -> bool:
        return is_frozen_key(key, self.ever_frozen())

    def _top_level(self) -> frozenset[str]:
        """Models frozen by the module's own statements (outside defs and
        classes), thawed nowhere in the module."""
        if self._top is None:
            top = _Freezes(self.helpers, top_level_only=True, builders=self.builders)
            visit_fast(self.module, top)
            everywhere = _Freezes(self.helpers, builders=self.builders)
            visit_fast(self.module, everywhere)
            self._top = frozenset(
                k for k in top.frozen if not any(_related(k, t) for t in top.thawed | everywhere.thawed)
            )
        return self._top

    def _class_attributes(self, cls: cst.ClassDef) -> frozenset[str]:
        """``self.`` attributes a class freezes in one method and thaws in none."""
        if id(cls) not in self._classes:
            frozen = frozen_modules(cls, self.helpers, self.builders)
            self._classes[id(cls)] = frozenset(k for k in frozen if k.startswith("self."))
        return self._classes[id(cls)]

    def frozen_in(self, scope: Scope) -> frozenset[str]:
        """The dotted names frozen (and never thawed) where ``scope`` runs."""
        if id(scope) in self._scopes:
            return self._scopes[id(scope)]
        if not self._may_freeze():
            found: frozenset[str] = frozenset()
        elif isinstance(scope, cst.Module):
            found = frozen_modules(scope, self.helpers, self.builders)
        else:
            params = {p.name.value for p in (*scope.params.posonly_params, *scope.params.params)}
            params |= {p.name.value for p in scope.params.kwonly_params}
            inherited = set(self._top_level())
            cls = self.calls.class_of.get(scope)
            if cls is not None:
                inherited |= self._class_attributes(cls)
            outer = self._enclosing_function(scope)
            if outer is not None:  # a closure sees the models its enclosing function froze
                inherited |= self._own_statements(outer)
            inherited = {k for k in inherited if k.startswith("self.") or k.split(".", 1)[0] not in params}
            visitor = _Freezes(self.helpers, frozenset(inherited), builders=self.builders)
            visit_fast(scope.body, visitor)
            # A module-level name the function binds itself is another object.
            found = frozenset(
                k for k in visitor.result() if k not in inherited or k.split(".", 1)[0] not in visitor.bound
            )
        self._scopes[id(scope)] = found
        return found

    def _own_statements(self, fn: cst.FunctionDef) -> frozenset[str]:
        """Plain names ``fn``'s own statements freeze (its nested defs left out)."""
        if id(fn) not in self._closures:
            own = _Freezes(self.helpers, top_level_only=True)
            visit_fast(fn.body, own)
            self._closures[id(fn)] = frozenset(k for k in own.result() if not k.startswith("self."))
        return self._closures[id(fn)]

    def _enclosing_function(self, scope: cst.FunctionDef) -> cst.FunctionDef | None:
        cur = self.calls.parents.get(scope)
        while cur is not None and not isinstance(cur, (cst.FunctionDef, cst.ClassDef)):
            cur = self.calls.parents.get(cur)
        return cur if isinstance(cur, cst.FunctionDef) else None

    def is_frozen(self, key: str, scope: Scope) -> bool:
        """``key`` (``model``, ``self.ema.block``) names a frozen module where ``scope`` runs."""
        return is_frozen_key(key, self.frozen_in(scope))
