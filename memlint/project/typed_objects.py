"""Types from call sites, joined across the project (index side).

``object_types.py`` records, per module, spellings only: which names hold
the result of which call, every call of a project function with the typed
arguments it passes, the factories' returns, the methods that run a model
attribute's forward with grad on. Here they are resolved in the project:

- a parameter is typed when every call site of its function, in any
  module, passes an argument of known type for it (and the function is
  never handed out as a value): the union of those types;
- ``self.<attr>`` set from an ``__init__`` parameter has that parameter's
  type over every construction site of the class;
- a factory's result is what each of its ``return`` s builds ("one of"
  several classes, through other factories, up to ``_MAX_HOPS``).

Precision first: an untyped site, an unresolved spelling, a class we cannot
read makes the whole answer unknown. Every module read counts as a
dependency of the view (``ProjectIndex._note_read``, via ``summary``).
"""

from __future__ import annotations

from typing import Any

from memlint.project.class_registries import registered_classes
from memlint.project.dynamic_classes import candidates
from memlint.project.held_models import held_forward
from memlint.project.object_types import CONTAINER_ITEM, FORWARD_PART, ObjectTypes
from memlint.project.off_forwards import attribute_forward_off
from memlint.project.plain_forwards import plain_forward
from memlint.project.tuple_factories import split_element
from memlint.project.wordless_factories import factory_returns
from memlint.vocabulary.kinds import names_a_model_method

# ``index``: the ProjectIndex (index.py imports this module, so no import back).
ProjectIndex = Any

_MAX_HOPS = 4
# A base class that defines none of a project class's methods.
_EMPTY_BASES = frozenset({"object", "Module", "nn.Module", "torch.nn.Module", "torch.nn.modules.module.Module"})
YES, NO, ABSENT = "yes", "no", "absent"
# torch.nn layers that own parameters as built by default: running one records a graph.
_TORCH_LAYERS = frozenset(
    {"Linear", "Bilinear", "Embedding", "EmbeddingBag", "LSTM", "GRU", "RNN", "MultiheadAttention", "PReLU"}
    | {f"{k}{d}d" for k in ("Conv", "ConvTranspose", "BatchNorm") for d in (1, 2, 3)}
    | {"LayerNorm", "GroupNorm", "Transformer", "TransformerEncoder", "TransformerDecoder"}
)
# What a constructor argument a method runs may be: a torch layer, or a
# ``Sequential`` of them handed in as a part (an encoder).
_ARGUMENT_LAYERS = _TORCH_LAYERS | {"Sequential"}
_TORCH_SCHEDULERS = "torch.optim.lr_scheduler."


class TypedObjects:
    def __init__(self, index: ProjectIndex) -> None:
        self.index = index
        self._sites: dict[str, list[tuple[str, tuple]]] | None = None  # last name -> (file, site)
        self._definers: dict[str, set[str]] | None = None  # method name -> files defining one
        self._wordless: dict[str, list[tuple[str, tuple[str, ...]]]] | None = None  # path -> its factories

    # -- reading -------------------------------------------------------------
    def objects(self, path: str) -> ObjectTypes | None:
        summary = self.index.full_summary(path)
        if summary is None:  # no training word: what it binds, read once (index.summary)
            summary = self.index.summary(path)
        return summary.objects if summary is not None else None

    def qualify(self, spelling: str, path: str, hops: int = 0) -> tuple[str, ...] | None:
        """The types a value spelled ``spelling`` in ``path`` may hold:
        ``file\\0Class`` for a project class, the dotted name for an
        installed one; None when unknown."""
        if hops > _MAX_HOPS or spelling.startswith("^"):
            return None  # ``^``: a class itself, not an instance (dynamic_classes.py)
        if spelling.startswith("?"):
            return candidates(self, spelling, path)  # one of the classes a run-time import may pick
        if spelling.startswith("%"):
            return registered_classes(self, spelling[1:], path)  # one of a decorator-filled registry's classes
        if spelling.startswith(":"):
            found: tuple[str, str] | None = (path, spelling[1:])
        elif spelling.startswith("*"):
            exports: dict[str, tuple[str, str]] = {}
            for source in self.index._star_sources(path):
                exports.update(self.index._exports(source))
            kind, where = exports.get(spelling[1:], ("", ""))
            found = (where, spelling[1:]) if kind == "define" else None
            if found is None:
                return None
        else:
            base, element = split_element(spelling)  # ``get_optimizer#1`` (tuple_factories.py)
            found = self.index.resolve(base, path)
            if found is None:
                if element or spelling.startswith(".") or not spelling.rpartition(".")[2][:1].isupper():
                    return None
                return (spelling,)  # an installed class (``torch.optim.lr_scheduler.LambdaLR``)
            if element and found[1]:
                found = (found[0], found[1] + element)
        if found is None or not found[1]:
            return None
        objects = self.objects(found[0])
        name = found[1]
        if objects is None:
            factories = self._wordless_factories(found[0])
        elif any(c == name for c, _ in objects.bases):
            return (f"{found[0]}\0{name}",)
        else:
            factories = objects.returns
        for fn, returns in factories:
            if fn == name:
                out: set[str] = set()
                for r in returns:
                    t = self.qualify(r, found[0], hops + 1)
                    if t is None:
                        return None
                    out.update(t)
                return tuple(sorted(out))
        return None

    def _wordless_factories(self, path: str) -> list[tuple[str, tuple[str, ...]]]:
        """The factories of a module with no training word (wordless_factories.py),
        read once; none for any other module the summaries do not hold."""
        if path not in self.index.modules.files:
            return []  # not a file of the project
        if self._wordless is None:
            self._wordless = {}
        if path not in self._wordless:
            self._wordless[path] = list(factory_returns(path).items())
        return self._wordless[path]

    def _all_sites(self) -> dict[str, list[tuple[str, tuple]]]:
        """Every recorded call site of the project, by the last name it
        spells; built once per index (linear in the project)."""
        if self._sites is None:
            self._sites = {}
            for path, data in self.index.summaries.items():
                if data is None:
                    continue
                if isinstance(data, dict):
                    raw = (data.get("objects") or {}).get("sites", ())
                    sites = [(str(c), int(ln), tuple((str(k), tuple(t)) for k, t in args)) for c, ln, args in raw]
                else:
                    sites = data.objects.sites if data.objects is not None else []
                for site in sites:
                    last = site[0].rpartition(".")[2].lstrip(":*")
                    self._sites.setdefault(last, []).append((path, site))
        return self._sites

    def sites_of(self, name: str) -> list[tuple[str, tuple]]:
        """The recorded call sites spelling ``name`` last, (file, site), in
        the walk's order (the live index finds them by its word index)."""
        return self._all_sites().get(name, [])

    def definers_of(self, method: str) -> list[str]:
        """The project files defining a method named ``method`` in a class
        (``Model.extract_feature``); the map is built once per index."""
        if self._definers is None:
            self._definers = {}
            for path, data in self.index.summaries.items():
                if data is None:
                    continue
                if isinstance(data, dict):
                    names = [str(f.get("name", "")) for f in data.get("functions", ())]
                else:
                    names = [f.name for f in data.functions]
                for name in names:
                    cls, dot, m = name.rpartition(".")
                    if dot and "." not in cls:
                        self._definers.setdefault(m, set()).add(path)
        return sorted(self._definers.get(method, ()))

    def named_forward(self, method: str) -> str | None:
        """``self.model.extract_feature(x)`` on a model whose class the
        project cannot name (ST-GCN builds it from a config string): the
        callee's description when every project class defining ``method``
        is an ``nn.Module`` whose ``method`` runs one of its layers with grad
        on (forward_of); None for a definer that is no model, a method that
        runs no layer (reads attributes, sums parameters), or none at all
        (forward_by_name)."""
        found = None
        for path in self._definers_in_order(method):
            summary = self.index.full_summary(path)
            if summary is None:
                return None
            for f in summary.functions:
                cls, dot, m = f.name.rpartition(".")
                if not dot or m != method:
                    continue
                if cls not in summary.model_classes:
                    return None
                if f.backprops or f.steps or f.grad == "off":
                    return None
                answer = self._runs_layer(path, f.name)
                if answer is None:
                    return None
                found = found or answer
        return found

    def forward_by_name(self, method: str) -> bool:
        """No project class defines ``method`` and its name marks a forward
        (``forward_lip``): the model's class comes from an import the
        project does not hold, and the name is all there is to read."""
        return _forward_named(method) and not any(True for _ in self._definers_in_order(method))

    def _definers_in_order(self, method: str):
        """definers_of's files, and the needle holders the index left for
        later (index.lazy_holding, narrow.py) that define ``method``, in
        order: each holder is summarised only when the answer is still open."""
        lazy = getattr(self.index, "lazy_holding", None)
        candidates = lazy(method) if lazy is not None else []
        if not candidates:
            yield from self.definers_of(method)
            return
        known = set(self.definers_of(method))
        for path in sorted(known.union(candidates)):
            if path in known or _defines_method(self.index._held(path), method):
                yield path

    def _runs_layer(self, path: str, name: str, hops: int = 0) -> str | None:
        """``Model.extract_feature`` (of ``path``) runs, with grad on, a
        layer that owns parameters: a torch layer (``self.fcn = nn.Conv2d(...)``)
        or a project ``nn.Module``; its description, else None."""
        objects = self.objects(path) if hops <= _MAX_HOPS else None
        for m, attr, line, ctor, via in objects.forwards if objects is not None else ():
            if m != name:
                continue
            if not ctor:
                if not self._layer_argument(path, name.rpartition(".")[0], attr):
                    continue
                return f"{name} runs the {attr} with autograd on, {self.index.modules.display(path)}:{line}"
            spelled = ctor.split("|")
            for c in spelled:
                if self._layer_part(c, spelled, path):
                    continue
                q = self.qualify(c, path) or ()
                torch_layer = len(q) == 1 and q[0].startswith("torch.nn.") and q[0].rpartition(".")[2] in _TORCH_LAYERS
                if not torch_layer and not self._model_class(c, path, via, hops):
                    return None
            return f"{name} runs the {attr} with autograd on, {self.index.modules.display(path)}:{line}"
        return None

    def _layer_argument(self, path: str, cls: str, attr: str) -> bool:
        """``self.encoder = encoder`` in ``cls.__init__`` (its only
        assignment), and every construction site in the project passes a
        torch layer, a torch ``Sequential`` (an encoder built as one:
        protonets' ``Protonet(encoder)``) or a project model for it."""
        objects = self.objects(path)
        param = next((p for c, a, p in objects.init_attrs if c == cls and a == attr), None) if objects else None
        types = self.param_types(path, f"{cls}.__init__", param) if param else None
        if not types:
            return False
        for typ in types:
            if "\0" in typ:
                where, name = typ.split("\0")
                summary = self.index.full_summary(where)
                if summary is None or name not in summary.model_classes:
                    return False
            elif not (typ.startswith("torch.nn.") and typ.rpartition(".")[2] in _ARGUMENT_LAYERS):
                return False
        return True

    def param_types(self, path: str, function: str, param: str) -> tuple[str, ...] | None:
        """The types every call site in the project passes for ``param`` of
        ``function`` (a module-level function, or ``Class.__init__``: its
        construction sites) in ``path``."""
        objects = self.objects(path)
        if objects is None:
            return None
        callee = function[: -len(".__init__")] if function.endswith(".__init__") else function
        if "." in callee or callee in objects.escaped:
            return None
        params = next((p for f, p in objects.params if f == function), None)
        if params is None or param not in params:
            return None
        position = params.index(param)
        found: set[str] = set()
        seen = False
        for where, (spelling, _line, args) in self.sites_of(callee):
            if where == path:
                if spelling != f":{callee}":
                    continue
            else:
                if spelling.startswith(":"):
                    continue
                target = self._target(spelling, where)
                if target != (path, callee):
                    continue
                self.index._note_read(where)
            seen = True
            types = next((t for k, t in args if k == param or k == str(position)), None)
            if types is None:
                return None
            for spelled in types:
                q = self.qualify(spelled, where)
                if q is None:
                    return None
                found.update(q)
        return tuple(sorted(found)) if seen and found else None

    def _target(self, spelling: str, where: str) -> tuple[str, str] | None:
        if spelling.startswith("*"):
            exports: dict[str, tuple[str, str]] = {}
            for source in self.index._star_sources(where):
                exports.update(self.index._exports(source))
            kind, defining = exports.get(spelling[1:], ("", ""))
            return (defining, spelling[1:]) if kind == "define" else None
        return self.index.resolve(spelling, where)

    def receiver_types(self, path: str, scope: str, receiver: str) -> tuple[str, ...] | None:
        """The types ``receiver`` (a name, or ``self.<attr>``) holds in
        ``scope`` ("" for the module, ``f``, ``Class.method``) of ``path``."""
        objects = self.objects(path)
        if objects is None:
            return None
        head, dot, attr = receiver.partition(".")
        if dot and head != "self" and "." not in attr:
            owners = self.receiver_types(path, scope, head)
            return self.attribute_types(owners, attr) if owners else None
        if receiver.startswith("self."):
            cls, _, _method = scope.rpartition(".")
            attr = receiver[len("self.") :]
            for c, a, p in objects.init_attrs:
                if c == cls and a == attr:
                    return self.param_types(path, f"{cls}.__init__", p)
            return self._scheduler_attr_types(objects, path, cls, attr)
        for s, n, spelled in objects.bound:
            if s == scope and n == receiver:
                out: set[str] = set()
                for sp in spelled:
                    q = self.qualify(sp, path)
                    if q is None:
                        return None
                    out.update(q)
                return tuple(sorted(out))
        return self.param_types(path, scope, receiver)

    def _scheduler_attr_types(self, objects: ObjectTypes, path: str, cls: str, attr: str) -> tuple[str, ...] | None:
        """The types ``self.<attr>`` holds in ``cls``'s methods when it is
        named for a scheduler and every assignment of it in the class is a
        call of a class or a factory (``self.scheduler =
        utility.make_scheduler(args, self.optimizer)``, whose every
        ``return`` builds ``lrs.StepLR``): ObjectTypes.scheduler_attrs."""
        spelled = next((t for c, a, t in objects.scheduler_attrs if c == cls and a == attr), None)
        if not spelled:
            return None
        out: set[str] = set()
        for sp in spelled:
            q = self.qualify(sp, path)
            if q is None:
                return None
            out.update(q)
        return tuple(sorted(out))

    def attribute_types(self, owners: tuple[str, ...], attr: str) -> tuple[str, ...] | None:
        """The types ``<object>.<attr>`` holds for an object of one of the
        project classes ``owners`` (``trainer.gen_a``: ``self.gen_a =
        AdaINGen(...)`` in ``MUNIT_Trainer``, ObjectTypes.attr_types); None
        when one of them is installed, or does not assign it itself."""
        out: set[str] = set()
        for typ in owners:
            if "\0" not in typ:
                return None
            path, cls = typ.split("\0")
            objects = self.objects(path)
            spelled = next((t for c, a, t in objects.attr_types if c == cls and a == attr), None) if objects else None
            if not spelled:
                return None
            for sp in spelled:
                q = self.qualify(sp, path) if not sp.startswith(":") else (f"{path}\0{sp[1:]}",)
                if q is None:
                    return None
                out.update(q)
        return tuple(sorted(out))

    def torch_scheduler(self, path: str, cls: str, hops: int = 0) -> str | None:
        """The torch LR scheduler (dotted name) that the project class
        ``cls`` of ``path`` subclasses, through one base per class, with no
        class on the way defining its own ``step()``: stepping it moves to the
        next rate as torch's does (``class WarmupPolyLR(_LRScheduler)`` with
        its own ``get_lr``). None otherwise, and for ``ReduceLROnPlateau``,
        whose ``step`` takes a metric."""
        objects = self.objects(path) if hops <= _MAX_HOPS else None
        if objects is None:
            return None
        bases = next((b for c, b in objects.bases if c == cls), None)
        if bases is None or len(bases) != 1 or any(f == f"{cls}.step" for f, _ in objects.params):
            return None
        base = bases[0]
        if base.startswith(_TORCH_SCHEDULERS):
            return None if base.endswith("ReduceLROnPlateau") else base
        found = (
            (path, base[1:])
            if base.startswith(":")
            else None
            if base.startswith("*")
            else self.index.resolve(base, path)
        )
        if found is None or not found[1] or "." in found[1]:
            return None
        return self.torch_scheduler(found[0], found[1], hops + 1)

    # -- methods -------------------------------------------------------------
    def forward_of(self, typ: str, method: str, hops: int = 0) -> tuple[str, str] | None:
        """(YES, "Class.m runs the attr with autograd on, file:line"), (NO, "")
        for a method that runs none that way, (ABSENT, "") for a class that
        does not have it; None when we cannot tell."""
        if "\0" not in typ or hops > _MAX_HOPS:
            return None
        path, cls = typ.split("\0")
        objects = self.objects(path)
        if objects is None:
            return None
        summary = self.index.full_summary(path)
        name = f"{cls}.{method}"
        for m, attr, line, ctor, via in objects.forwards:
            if m != name:
                continue
            facts = next((f for f in summary.functions if f.name == name), None) if summary is not None else None
            if facts is not None and (facts.backprops or facts.steps or facts.grad == "off"):
                return (NO, "")
            if attribute_forward_off(self, path, name, attr, ctor, via):
                return (NO, "")  # the attribute's class runs that method under a grad-off decorator
            spelled = ctor.split("|")
            if ctor and not all(self._layer_part(c, spelled, path) or self._model_class(c, path, via) for c in spelled):
                return None
            where = f"{self.index.modules.display(path)}:{line}"
            return (YES, f"{name} runs the {attr} with autograd on, {where}")
        if any(f == name for f, _ in objects.params):
            return (NO, "")
        bases = next((b for c, b in objects.bases if c == cls), None)
        if bases is None:
            return None
        for base in bases:
            if base.rpartition(".")[2] in ("object", "Module") or base in _EMPTY_BASES:
                continue
            q = self.qualify(base, path) if not base.startswith(":") else (f"{path}\0{base[1:]}",)
            if q is None or len(q) != 1:
                return None
            found = self.forward_of(q[0], method, hops + 1)
            if found is None or found[0] != ABSENT:
                return found
        return (ABSENT, "")

    def _layer_part(self, spelled: str, ctor: list[str], path: str) -> bool:
        """``spelled`` (one of an attribute's constructors ``ctor``, as
        object_types records them) is a layer the method runs without its
        class being named: an item of a torch layer container, the mark of a
        part the class's ``forward`` runs, or, for such a part, a
        constructor the project cannot type (``get_convnet(args)``, a
        factory returning tuples). A constructor typed to anything but a
        layer still decides."""
        if spelled in (FORWARD_PART, CONTAINER_ITEM):
            return True
        return FORWARD_PART in ctor and self.qualify(spelled, path) is None

    def _model_class(self, ctor: str, path: str, via: str, hops: int = 0) -> bool:
        """``ctor`` (as ``path`` spells it) builds a project ``nn.Module``;
        with ``via``, one whose method ``via`` runs its own forward, or
        runs a layer of its own in turn (``self.encoder.forward_masks(x)``
        handing on to ``TabNetEncoder.forward_masks``, _runs_layer)."""
        q = self.qualify(ctor, path)
        # A factory building one of several classes (``define_G``): each must be one.
        return bool(q) and all(self._one_model_class(t, via, hops) for t in q or ())

    def _one_model_class(self, typ: str, via: str, hops: int) -> bool:
        if "\0" not in typ:
            return False
        where, cls = typ.split("\0")
        summary = self.index.full_summary(where)
        if summary is None or cls not in summary.model_classes:
            return False
        if not via:
            return True
        objects = summary.objects
        if objects is None:
            return False
        if f"{cls}.{via}" in objects.self_forwards:
            return True
        facts = next((f for f in summary.functions if f.name == f"{cls}.{via}"), None)
        if facts is None or facts.backprops or facts.steps or facts.grad == "off":
            return False
        return self._runs_layer(where, f"{cls}.{via}", hops + 1) is not None

    def method_forward(self, types: tuple[str, ...], method: str) -> str | None:
        """The message part naming the callee when the method runs a model
        forward with grad on for every type that has it; None otherwise."""
        found = None
        for typ in types:
            through = plain_forward(self, typ, method)
            answer = (YES, through) if through is not None else self.forward_of(typ, method)
            if answer is None or answer[0] == NO:
                return None
            if answer[0] == YES and found is None:
                found = answer[1]
        return found

    def method_steps(self, types: tuple[str, ...], method: str) -> str | None:
        """What ``<receiver>.method(...)`` steps, in order: "o" an optimizer,
        "s" a library scheduler (FunctionFacts.step_attrs), when every type
        is a project class defining ``method`` and all of them step alike;
        None otherwise (an installed class, an inherited method, a
        difference, a scheduler attribute not known to hold a library one)."""
        found: set[str] = set()
        for typ in types:
            if "\0" not in typ:
                return None
            path, cls = typ.split("\0")
            summary = self.index.full_summary(path)
            facts = next((f for f in summary.functions if f.name == f"{cls}.{method}"), None) if summary else None
            if facts is None:
                return None
            if any(k == "s" and not self._library_scheduler_attr(path, cls, a) for k, a in facts.step_attrs):
                return None
            found.add("".join(k for k, _ in facts.step_attrs))
        return found.pop() if len(found) == 1 else None

    def method_passes(self, types: tuple[str, ...], method: str) -> bool:
        """Every type is a project class whose own ``method`` runs a whole
        pass over data on each call (FunctionFacts.passes, data_passes.py);
        an installed class or an inherited method is not known to."""
        for typ in types:
            if "\0" not in typ:
                return False
            path, cls = typ.split("\0")
            summary = self.index.full_summary(path)
            facts = next((f for f in summary.functions if f.name == f"{cls}.{method}"), None) if summary else None
            if facts is None or not facts.passes:
                return False
        return bool(types)

    def _library_scheduler_attr(self, path: str, cls: str, attr: str) -> bool:
        """``self.<attr>`` of ``cls`` holds a torch scheduler wherever the
        class assigns it (``get_scheduler(self.dis_opt, hp)``, a factory)."""
        objects = self.objects(path)
        spelled = next((t for c, a, t in objects.scheduler_attrs if c == cls and a == attr), None) if objects else None
        if not spelled:
            return False
        for sp in spelled:
            q = self.qualify(sp, path)
            if not q or not all(t.startswith(_TORCH_SCHEDULERS) for t in q):
                return False
        return True


def object_facts(index: ProjectIndex, path: str) -> tuple[tuple, tuple, tuple, tuple, tuple]:
    """The view's ``object_forwards`` (scope, receiver, method, message) and
    ``object_types`` (scope, receiver, types: installed classes by dotted
    name, project classes as ``file:Class``; receivers of ``.step()``) of
    ``path``, and its ``object_steps`` (scope, receiver, method, what the
    method steps: ``method_steps``), and its ``object_passes`` (scope,
    receiver, method: the method runs a whole pass over data, ``method_passes``),
    and of the forwards, those (scope, receiver, method) where every class
    runs a model it holds in eval mode (held_models.py): evidence of evaluation."""
    typed = index.typed_objects()
    objects = typed.objects(path)
    if objects is None or not objects.receivers:
        return (), (), (), (), ()
    held = []
    passes = []
    forwards = []
    steps = []
    types_out = []
    seen: dict[tuple[str, str], tuple[str, ...] | None] = {}
    shown_keys: set[tuple[str, str]] = set()
    for scope, receiver, method in objects.receivers:
        key = (scope, receiver)
        if key not in seen:
            seen[key] = typed.receiver_types(path, scope, receiver)
        types = seen[key]
        # Kept in the view only for what a rule asks (MEM802: the object a
        # ``.step()`` goes to, whatever method of it comes first), so a view
        # holds no more than it needs.
        if types is not None and method == "step" and key not in shown_keys:
            shown_keys.add(key)
            types_out.append((scope, receiver, tuple(_shown(index, typed, t) for t in types)))
        if types is None:
            continue
        message = typed.method_forward(types, method)
        if message is None:
            message = _held_forwards(typed, types, method)
            if message is not None:
                held.append((scope, receiver, method))
        if message is not None:
            forwards.append((scope, receiver, method, message))
        stepped = typed.method_steps(types, method) if method != "step" else None
        if stepped:
            steps.append((scope, receiver, method, stepped))
        if typed.method_passes(types, method):
            passes.append((scope, receiver, method))
    return tuple(forwards), tuple(types_out), tuple(steps), tuple(passes), tuple(held)


def _held_forwards(typed: TypedObjects, types: tuple[str, ...], method: str) -> str | None:
    """The description of the first class when every class ``types`` may be
    runs, in ``method``, a model it holds in eval mode (held_models.py)."""
    if not types or any("\0" not in t for t in types):
        return None
    found = [held_forward(typed, t, method) for t in types]
    return found[0] if all(found) else None


def _forward_named(method: str) -> bool:
    """``forward_lip``, ``forward_features``: a method named as one of a
    model's forwards. Asked only of a method no project class defines."""
    return method.startswith("forward_") and len(method) > len("forward_")


def named_forwards(index: ProjectIndex, path: str) -> tuple[str, ...]:
    """The view's ``forward_methods``: the methods ``path`` calls on a
    receiver (``self.model.extract_feature(x)``) that run a model forward
    wherever the project defines them (TypedObjects.named_forward)."""
    typed = index.typed_objects()
    objects = typed.objects(path)
    if objects is None or not objects.receivers:
        return ()
    return tuple(sorted(m for m in model_methods(objects) if typed.named_forward(m) is not None))


def forwards_by_name(index: ProjectIndex, path: str) -> tuple[str, ...]:
    """The view's ``forward_names``: the methods ``path`` calls on a
    receiver it switches to eval in the same scope (``self.__S__.eval()``,
    ``self.__S__.forward_lip(x)``) that no project class defines and whose
    name marks a forward (TypedObjects.forward_by_name)."""
    typed = index.typed_objects()
    objects = typed.objects(path)
    if objects is None or not objects.receivers:
        return ()
    switched = {(scope, r) for scope, r, m in objects.receivers if m == "eval"}
    asked = {m for scope, r, m in objects.receivers if (scope, r) in switched and _forward_named(m)}
    return tuple(sorted(m for m in asked if typed.forward_by_name(m)))


def _defines_method(data, method: str) -> bool:
    """A summary (or its JSON) defines ``method`` in a class (definers_of)."""
    if data is None:
        return False
    names = (
        [str(f.get("name", "")) for f in data.get("functions", ())]
        if isinstance(data, dict)
        else [f.name for f in data.functions]
    )
    return any(n.rpartition(".")[2] == method and "." in n and "." not in n.rpartition(".")[0] for n in names)


def model_methods(objects: ObjectTypes | None) -> set[str]:
    """The methods a module calls on a receiver named for a model
    (``self.model.extract_feature``, ``net.encode``) other than nn.Module's
    own API: the names whose definers decide whether the call is a forward
    (also needles: a module defining one is read, index.needles_for)."""
    if objects is None:
        return set()
    # ``self._network.eval()`` then ``self._network.extract_vector(x)`` in one
    # scope: the switch says the receiver is a model, whatever its name.
    switched = {(scope, r) for scope, r, m in objects.receivers if m == "eval"}
    return {
        m
        for scope, r, m in objects.receivers
        if names_a_model_method(r, m)
        or _typed_self_attr(objects, scope, r, m)
        or ((scope, r) in switched and names_a_model_method("model", m))
    }


def _typed_self_attr(objects: ObjectTypes, scope: str, receiver: str, method: str) -> bool:
    """``self.__S__.forward_lip(x)`` in a method of a class whose every
    assignment of ``self.__S__`` builds a project class (``attr_types``):
    the method may be a forward whatever the attribute's name says; the
    definers of ``method`` decide (TypedObjects.named_forward)."""
    head, dot, attr = receiver.partition(".")
    if head != "self" or not dot or "." in attr or not names_a_model_method("model", method):
        return False
    cls = scope.rpartition(".")[0]
    return any(c == cls and a == attr for c, a, _ in objects.attr_types)


def _shown(index: ProjectIndex, typed: TypedObjects, typ: str) -> str:
    """A type as the view shows it: an installed class by dotted name; a
    project class as ``file.py:Class``, or as the torch scheduler it
    subclasses when it keeps torch's ``step()`` (MEM802 reads it as one)."""
    if "\0" not in typ:
        return typ
    path, cls = typ.split("\0")
    return typed.torch_scheduler(path, cls) or f"{index.modules.display(path)}:{cls}"
