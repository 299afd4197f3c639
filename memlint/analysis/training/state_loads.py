"""Where a checkpoint's state dict goes when it is loaded.

Two questions MEM701 asks about ``torch.load`` (``facts.checkpoints``):

- ``into_cpu_model(call)``: the ``x.load_state_dict(...)`` call loads into a
  model that is still on the CPU at that point: bound earlier in the same
  function, in a block around the load (not in one branch), to a newly built
  model whose constructor is known not to move it (a class of this module
  whose methods make no device move but of tensors they build and hand back,
  project/class_moves.py; a function of the project returning one, project/
  cpu_builders.py; ``torchvision.models.resnet50()``,
  ``timm.create_model``, a ``torch.nn`` layer, ``from_pretrained(name)``
  without ``device_map``; not a wrapper of another model such as
  ``DataParallel(net)``; an argument from ``get_config()`` is none), with
  nothing in between (an ``if``'s other branches excluded) that may move it (a device
  move, the model handed to a call, rebound, or a loop around the load that
  moves it later). A load into a part of such a model (``model.base``) is
  into it; a part rebound to a name or moved loses it. A file that builds models on a device (``with
  torch.device("cuda"):``, ``torch.set_default_device``) has no model known
  to be on the CPU. A class of another module is not known (the project
  stage may tell later).
- ``helper_loads(call, arg)``: ``call`` is a function known to pass its
  argument ``arg`` to ``load_state_dict``: a function of this module whose
  body calls ``x.load_state_dict(param)`` on that parameter
  (``load_weights(model, torch.load(p))``), or a library helper documented
  to do so (peft's ``set_peft_model_state_dict(model, state_dict)``).

``saves_only_cpu`` is the module's summary for the project stage: every
checkpoint this module writes holds CPU tensors (cpu_saves.py).
"""

from __future__ import annotations

import ast
import builtins
import textwrap
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import libcst as cst

from memlint.analysis.scope.callgraph import bound_params
from memlint.analysis.scope.literal_branches import agreed_values
from memlint.analysis.scope.names import ImportTable, dotted_name
from memlint.analysis.scope.option_choices import OptionChoices
from memlint.analysis.scope.options import ModuleOptions
from memlint.analysis.training.construction_order import SelfMethods, starts_on_cpu
from memlint.analysis.training.cpu_attrs import stable_cpu_attrs
from memlint.analysis.training.cpu_devices import cpu_device_names
from memlint.analysis.training.cpu_models import (
    MOVES,
    NOT_MODEL_MODULES,
    NOT_MODELS,
    PLACES,
    PLAIN_BASES,
    SETTINGS_CALLEE,
    STAYS,
    CpuModels,
    Placing,
    Shape,
    built_on_cpu,
    evaluated_name,
    moves_anything,
    reads_only,
    swallowed,
)
from memlint.analysis.training.cpu_saves import CpuSaves, cpu_saves
from memlint.analysis.training.factory_classes import FactoryClasses
from memlint.analysis.training.model_holders import holds_in_place
from memlint.analysis.training.optimizer_args import handed_no_module
from memlint.parse.traversal import visit_fast
from memlint.project.class_moves import class_moves_to_a_device
from memlint.project.forward_copies import qualified, tensor_functions
from memlint.vocabulary.loading import loading_name
from memlint.vocabulary.settings_values import config_reader, returns_settings

if TYPE_CHECKING:
    from memlint.analysis.scope.callgraph import CallGraph
    from memlint.analysis.scope.objects import ObjectTable
    from memlint.project.view import ProjectView

# Library functions that call ``model.load_state_dict(sd)`` on the argument
# at this position (or keyword): peft's set_peft_model_state_dict(model,
# peft_model_state_dict, adapter_name="default", ...) loads it with
# ``model.load_state_dict(..., strict=False)``.
LIBRARY_LOADERS: dict[str, tuple[int, str]] = {
    "peft.set_peft_model_state_dict": (1, "peft_model_state_dict"),
    "peft.utils.set_peft_model_state_dict": (1, "peft_model_state_dict"),
    "peft.utils.save_and_load.set_peft_model_state_dict": (1, "peft_model_state_dict"),
}


# Calls on a model that leave it where it is.
class _MovedNames(cst.CSTVisitor):
    """Names moved to a device in place: ``net.cuda()``, ``net.to(device)``."""

    def __init__(self) -> None:
        self.moved: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in MOVES and isinstance(func.value, cst.Name):
            self.moved.add(func.value.value)


_MUTATORS = frozenset({"update", "setdefault", "__setitem__", "pop", "clear"})


def _runtime_import(value: cst.BaseExpression) -> bool:
    """``__import__(...)`` or ``importlib.import_module(...)``: a module named at run time."""
    if not isinstance(value, cst.Call):
        return False
    if isinstance(value.func, cst.Name):
        return value.func.value in ("__import__", "import_module")
    return dotted_name(value.func) == "importlib.import_module"


class _Writes(cst.CSTVisitor):
    """Names bound (how many times) and names written into (``d[k] = v``,
    ``d.update(...)``) anywhere in the module: a table of model classes is
    trusted only when it is neither."""

    def __init__(self) -> None:
        self.bound: dict[str, int] = {}
        self.changed: set[str] = set()
        self.defs: dict[str, int] = {}  # ``def name`` anywhere
        # Bound any other way (a parameter, an import, a loop or ``with``
        # target, a class...): a name bound in a function is trusted only
        # when it is bound nowhere else in the module, whatever the form.
        self.other: dict[str, int] = {}
        # Each dict literal assigned to a plain name, anywhere: (the name, the assignment).
        self.dicts: list[tuple[str, cst.Assign]] = []
        self.star = False  # ``from m import *``: any name may be bound
        # Plain assignments of a module imported at run time (``arch = __import__(...)``).
        self.runtime: dict[str, int] = {}

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            self.star = True

    def _other(self, name: cst.BaseExpression | None) -> None:
        if isinstance(name, cst.Name):
            self.other[name.value] = self.other.get(name.value, 0) + 1
        elif isinstance(name, (cst.Tuple, cst.List)):
            for element in name.elements:
                self._other(element.value)
        elif isinstance(name, cst.StarredElement):
            self._other(name.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.defs[node.name.value] = self.defs.get(node.name.value, 0) + 1

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._other(node.name)

    def visit_Param(self, node: cst.Param) -> None:
        self._other(node.name)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None:  # ``import a as b``: visit_AsName counts ``b``
            self._other(cst.Name((dotted_name(node.name) or "").split(".")[0]))

    def visit_For(self, node: cst.For) -> None:
        self._other(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._other(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._other(node.name)  # ``with ... as x``, ``except E as x`` (imports are counted above)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._other(node.target)

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self._other(item.name)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        for item in node.names:
            self._other(item.name)

    def _target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.bound[target.value] = self.bound.get(target.value, 0) + 1
        elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            self.changed.add(target.value.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target(element.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._target(t.target)
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and isinstance(node.value, cst.Dict):
            self.dicts.append((node.targets[0].target.value, node))
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and _runtime_import(node.value):
            name = node.targets[0].target.value
            self.runtime[name] = self.runtime.get(name, 0) + 1

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)
        if isinstance(node.target, cst.Name):
            self.changed.add(node.target.value)  # ``MODELS |= {...}``

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value in _MUTATORS:
            self.changed.add(func.value.value)


def _no_instance(fn: cst.FunctionDef) -> bool:
    """A static or class method: its first parameter is no instance."""
    return any((dotted_name(d.decorator) or "") in ("staticmethod", "classmethod") for d in fn.decorators)


def _plain_base(base: cst.BaseExpression) -> bool:
    return (dotted_name(base) or "").rsplit(".", 1)[-1] in PLAIN_BASES


def _loaded_params(fn: cst.FunctionDef, into_cpu: Callable[[cst.Call], bool]) -> frozenset[str]:
    """The parameters of ``fn`` its body passes straight to ``x.load_state_dict``
    of a model not known to be on the CPU there (``into_cpu``): sgan's
    ``get_generator(checkpoint)`` builds its model, loads, then moves it, so
    the checkpoint handed to it is not doubled on a GPU."""
    visitor = _LoadArgs(into_cpu)
    visit_fast(fn.body, visitor)
    params = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
    return frozenset(visitor.loaded & params)


class _LoadArgs(cst.CSTVisitor):
    def __init__(self, into_cpu: Callable[[cst.Call], bool]) -> None:
        self.loaded: set[str] = set()
        self.into_cpu = into_cpu

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "load_state_dict" and node.args):
            return
        if self.into_cpu(node):
            return
        arg = next((a for a in node.args if a.keyword is not None and a.keyword.value == "state_dict"), node.args[0])
        if arg.keyword is not None and arg.keyword.value != "state_dict":
            return
        value = arg.value.value if isinstance(arg.value, cst.Subscript) else arg.value
        if isinstance(value, cst.Name):
            self.loaded.add(value.value)


class Checkpoints:
    """``facts.checkpoints``: what a module's checkpoints hold and where a
    loaded state dict goes."""

    def __init__(
        self,
        module: cst.Module,
        names: ImportTable,
        calls: CallGraph,
        imported_loaders: Mapping[str, tuple[int, str]] | None = None,
        imported_cpu_classes: frozenset[str] = frozenset(),
        objects: ObjectTable | None = None,
        project: ProjectView | None = None,
        python_tree: ast.Module | None = None,
        options: ModuleOptions | None = None,
    ) -> None:
        self.module = module
        self.names = names
        self.calls = calls
        # Functions of other modules that load an argument, by qualified name:
        # (position, parameter name), as LIBRARY_LOADERS (the project stage's door).
        self.loaders = {**LIBRARY_LOADERS, **(imported_loaders or {})}
        self._cpu_saves: CpuSaves | None = None
        self._cpu_loads: frozenset[int] | None = None
        # Per function of this module, the literal every call binds a parameter to (_branch_values).
        self._agreed: dict[cst.FunctionDef, dict[str, object]] = {}
        # Per function of this module, what it returns when that holds models on the CPU (CpuModels._shape).
        self._shapes: dict[cst.FunctionDef, Shape] = {}
        self._cpu_device_names: frozenset[str] | None = None  # made on first need (_cpu_devices)
        self._loaded: dict[cst.FunctionDef, frozenset[str]] = {}
        self._classes: dict[str, bool] = {}
        # Classes of other project modules that move nothing, by local name (the project stage).
        self.imported_cpu_classes = imported_cpu_classes | frozenset(project.cpu_classes if project else ())
        if project is not None and project.local_cpu_classes:
            # Imported in a function: only where no other binding of the name may run.
            self.imported_cpu_classes |= frozenset(n for n in project.local_cpu_classes if names.imported_only(n))
        self.objects = objects
        self.project = project
        self._tables: dict[str, cst.Dict | None] | None = None
        self._writes: _Writes | None = None
        self._local_args: dict[cst.FunctionDef, list[dict[str, bool]]] = {}
        self._builders: frozenset[cst.FunctionDef] = frozenset()
        self._settings: dict[cst.FunctionDef, bool] = {}  # _settings_call, per function of this module
        self._method_uses: dict[str, list[bool]] = {}
        self._placing: dict[cst.FunctionDef, bool] = {}
        self._stable: dict[cst.ClassDef, frozenset[str]] = {}
        self._factories: FactoryClasses | None = None
        self._self_methods: SelfMethods | None = None
        self._options: OptionChoices | None = None
        self._declared = options  # the module's option declarations (ModuleFacts.options), shared with MEM304
        self.python_tree = python_tree  # the module's ``ast`` tree, when the linter has it

    @property
    def saves_only_cpu(self) -> bool:
        """Every ``torch.save`` of this module writes CPU tensors (and there is one)."""
        return self._saves().only_cpu

    @property
    def saves_only_cpu_models(self) -> bool:
        """Every ``torch.save`` of this module that may write a model's state
        (all but an optimizer's, a scheduler's, a scaler's) writes CPU
        tensors, and there is one: what a load into a model reads back."""
        return self._saves().module_states_cpu

    @property
    def cpu_saved_keys(self) -> frozenset[str]:
        """The keys of saved dicts that only CPU saves of this module write
        (cpu_saves.py ``_SavedKeys``): a load read at one reads a CPU file."""
        return self._saves().cpu_keys

    @property
    def saves_no_models(self) -> bool:
        """No ``torch.save`` of this module may write a model's state."""
        return self._saves().no_module_states

    def _saves(self) -> CpuSaves:
        if self._cpu_saves is None:
            self._cpu_saves = cpu_saves(self.module, self.names)
        return self._cpu_saves

    def into_cpu_model(self, call: cst.Call) -> bool:
        """``call`` (``model.load_state_dict(...)``) loads into a model still on the CPU."""
        if self._cpu_loads is None:
            # ``self`` in the ``__init__`` of a class that moves nothing: a model under construction.
            constructing = {fn: self._self_built(fn) for fn in self.calls.functions if fn.name.value == "__init__"}
            visitor = self._cpu_models(lambda fn: constructing.get(fn, frozenset()))
            # The literal every call of a function binds a parameter to: the
            # arms of its ``if`` statements no call takes are not walked.
            agreed = {fn: self._branch_values(fn, visitor.call_values) for fn in visitor.call_values}
            self._agreed = {fn: values for fn, values in agreed.items() if values}
            if self._agreed:
                visitor = self._cpu_models(lambda fn: constructing.get(fn, frozenset()))
            # Functions of this module that build a model on the CPU (``def
            # Xception41(...): return Xception(...)``): a walk that knows them all.
            # Nested ones too (not methods): a call reaches one only through its own scope.
            builders = {fn for fn, cpu in visitor.returns.items() if cpu and self._builder_scope(fn)}
            # Builders of several models (``return nets, meta, kinds`` with ``nets`` a dict of them).
            self._shapes = {
                fn: shape for fn, shape in visitor.shapes.items() if shape is not False and self._builder_scope(fn)
            }
            if builders or self._shapes:
                self._builders = frozenset(builders)
                visitor = self._cpu_models(lambda fn: constructing.get(fn, frozenset()))
            # Parameters every caller passes a CPU model: a walk with them.
            self._local_args = visitor.local_args
            self._method_uses = visitor.method_uses
            seeds = {fn: self._cpu_params(fn) for fn in self.calls.functions}
            literal = {fn: self._literal_params(fn, visitor.literal_args) for fn in self.calls.functions}
            literal = {fn: params for fn, params in literal.items() if params}
            cpu_params = lambda fn: constructing.get(fn, frozenset())  # noqa: E731
            if any(seeds.values()) or literal:
                cpu_params = lambda fn: seeds.get(fn, frozenset())  # noqa: E731
                visitor = self._cpu_models(cpu_params, literal)
            loads = set(map(id, visitor.candidates))
            default = visitor.device_default
            if self._agreed:
                # A load in an arm no call takes is judged as if every arm
                # might run (a public helper's ``if pretrained:`` load, called
                # here only with the default): deciding arms never adds a finding.
                plain = self._cpu_models(cpu_params, literal, decide=False)
                loads |= set(map(id, plain.candidates))
                default = default or plain.device_default
            self._cpu_loads = frozenset() if default else frozenset(loads)
        return id(call) in self._cpu_loads

    def builds_on_cpu(self, func: cst.BaseExpression) -> bool:
        """``func(...)`` builds a model on the CPU (``_cpu_builder``)."""
        if self._cpu_loads is None:
            self.into_cpu_model(cst.Call(cst.Name("_")))  # the module's builders, read once
        return self._cpu_builder(func)

    def stays(self, call: cst.Call) -> bool:
        """``call`` moves nothing it is handed (``_stays``)."""
        return self._stays(call)

    def _cpu_models(
        self,
        cpu_params: Callable[[cst.FunctionDef], frozenset[str]],
        literal: Mapping[cst.FunctionDef, frozenset[str]] | None = None,
        decide: bool = True,
    ) -> CpuModels:
        """A walk of the module; ``decide``: the arms of ``if`` statements no call takes are not walked."""
        literal = literal or {}
        visitor = CpuModels(
            self.names,
            self._cpu_builder,
            self._may_be_model,
            self._stays,
            cpu_params,
            self.calls.resolve,
            self._takes_no_device,
            self._cpu_hierarchy,
            self._cpu_module,
            lambda spelled: self.project is not None and spelled in self.project.cpu_objects,
            self._plain_classes().__contains__,
            self._gives_cpu_class,
            self._cpu_holder,
            frozenset(self.project.cpu_methods) if self.project is not None else frozenset(),
            lambda fn: literal.get(fn, frozenset()),
            self._cpu_devices(),
            (lambda fn: self._agreed.get(fn, {})) if decide else (lambda fn: {}),
            lambda fn: self._shapes.get(fn),
        )
        visit_fast(self.module, visitor)
        return visitor

    def _cpu_devices(self) -> frozenset[str]:
        """The module's names holding the CPU device (cpu_devices.py), read once."""
        if self._cpu_device_names is None:
            self._cpu_device_names = cpu_device_names(self.module)
        return self._cpu_device_names

    def _literal_params(
        self, fn: cst.FunctionDef, literal_args: Mapping[cst.FunctionDef, list[dict[str, bool]]]
    ) -> frozenset[str]:
        """The parameters of ``fn`` (a function, not a method) to which every
        call hands a string or a number literal (sample.py's ``load_model(
        "vqvae", path, device)``): all its calls are in this module (none
        elsewhere in the project, never used as a value; without the
        project, a private function's), and there is one."""
        calls = literal_args.get(fn, [])
        if not calls or not self._local_calls_only(fn):
            return frozenset()
        params = (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)
        return frozenset(p.name.value for p in params if all(call.get(p.name.value, False) for call in calls))

    def _branch_values(
        self, fn: cst.FunctionDef, call_values: Mapping[cst.FunctionDef, list[dict[str, object]]]
    ) -> dict[str, object]:
        """The parameters of ``fn`` (a function, not a method) that every call
        binds to one literal (literal_branches.agreed_values), when all its
        calls are in this module, as ``_literal_params`` asks."""
        if not self._local_calls_only(fn):
            return {}
        return agreed_values(fn, call_values.get(fn, []))

    def _local_calls_only(self, fn: cst.FunctionDef) -> bool:
        """Every call of ``fn`` is a call of this module: a function, not a
        method, never used as a value, called from no other module of the
        project (without the project, a private function)."""
        if fn in self.calls.class_of or fn in self.calls.escapes:
            return False
        if self.calls.owner.get(fn) is self.module:
            name = fn.name.value
            if self.project is None and not name.startswith("_"):
                return False
            if self.project is not None and self.project.callers_of(name):
                return False
        return True

    def _cpu_module(self, spelled: str) -> bool:
        """``spelled`` (``models`` of ``models.__dict__[arch]``) is a module of
        the project whose every class moves nothing, or its head is bound
        nowhere here (``models`` never imported): the code cannot run as
        written, so what it builds is not known and nothing is claimed, as
        for an undefined class (``_undefined``)."""
        if self.project is not None and spelled in self.project.cpu_modules:
            return True
        return self._undefined(spelled.partition(".")[0])

    def _factory_classes(self) -> FactoryClasses:
        if self._factories is None:
            imported = frozenset(self.project.cpu_factories) if self.project is not None else frozenset()
            self._factories = FactoryClasses(self.module, self.python_tree, imported)
        return self._factories

    def _gives_cpu_class(self, value: cst.BaseExpression) -> bool:
        return self._factory_classes().gives_cpu_class(value, self._cpu_class, self._module_def)

    def _builder_scope(self, fn: cst.FunctionDef) -> bool:
        """``fn`` is a function of the module or nested in one, not a method."""
        owner = self.calls.owner.get(fn)
        return owner is self.module or (isinstance(owner, cst.FunctionDef) and fn not in self.calls.class_of)

    def _takes_no_device(self, func: cst.BaseExpression) -> bool:
        """``func`` is a class of this module whose ``__init__`` takes no
        device and no ``**kwargs``: ``AlexNet(**kwargs)`` passes none."""
        if not isinstance(func, cst.Name) or len(self.calls.classes.get(func.value, [])) != 1:
            return False
        init = self.calls.find_method(self.calls.classes[func.value][0], "__init__")
        if init is None or not swallowed(init, init.params.star_kwarg):
            return False
        params = (*init.params.posonly_params, *init.params.params, *init.params.kwonly_params)
        return not any(p.name.value in ("device", "device_map") for p in params)

    def _cpu_builder(self, func: cst.BaseExpression) -> bool:
        """``func(...)`` builds a model on the CPU: a class that moves nothing,
        of this module or another of the project (``Net``, ``models.Net``), or
        one picked from a module-level table of them (``MODELS[name](...)``)."""
        if isinstance(func, cst.Call):
            # ``eval('models.' + cfg.MODEL.NAME + '.get_pose_net')(cfg)``: every
            # function of that name in the project builds on the CPU.
            named = evaluated_name(func)
            if self._dynamic_class(func):
                return True  # what it builds is not known: nothing is claimed
            return bool(named) and self.project is not None and named in self.project.eval_builders
        if isinstance(func, cst.Subscript) and isinstance(func.value, cst.Name):
            if self._imported_table(func.value.value):
                return True
            table = self._table(func.value.value) or self._local_table(func.value.value, func)
            return table is not None and all(
                isinstance(e, cst.DictElement) and isinstance(e.value, cst.Name) and self._cpu_class(e.value.value)
                for e in table.elements
            )
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and self._runtime_module(func.value.value)
        ):
            # ``arch.Decoder(...)`` after ``arch = __import__("networks." + name)``: the class
            # is one of that name somewhere in the project, each building on the CPU
            # (ProjectView.eval_builders, as for a name handed to ``eval``).
            return self.project is not None and func.attr.value in self.project.eval_builders
        if isinstance(func, cst.Attribute):
            picked = self._option_values(func)
            if picked is not None:
                return all(self._cpu_builder(value) for value in picked)
        name = dotted_name(func)
        if name is None:
            return False
        if isinstance(func, cst.Name) and self._undefined(func.value):
            return True  # what it builds is not known: nothing is claimed
        if self.project is not None and name in self.project.unknown_classes:
            return True  # a class of code outside the project, reached through sys.path (unknown_classes.py)
        if self._builders and "." not in name and name not in self.calls.classes:
            defs = [fn for fn in self._builders if fn.name.value == name]
            if len(defs) == 1 and self.calls.owner.get(defs[0]) is not self.module:
                return self._local_def_called(func, defs[0])
            if defs:
                return len(defs) == 1 and self._module_def(name)
        return self._cpu_class(name)

    def _option_values(self, func: cst.Attribute) -> tuple[cst.BaseExpression, ...] | None:
        """``opts.base`` of ``opts.base(...)``: the objects the command-line
        option may hold (option_choices.py), when none of them is read from
        a namespace itself; a model built from it is on the CPU when every
        one of them builds there (RKD's ``--base`` table of backbones)."""
        if self._options is None:
            self._options = OptionChoices(self._declared or ModuleOptions(self.module))
        picked = self._options.values(func)
        if not picked or any(self._options.values(value) is not None for value in picked):
            return None
        return picked

    def _dynamic_class(self, func: cst.Call) -> bool:
        """``getattr(importlib.import_module(args.cam_network), "CAM")``: a
        class picked by name from a module named at run time (CCT's
        make_cam.py). Which class, and whether it moves itself, is not known;
        built without a device, the load into it is not claimed."""
        if not (isinstance(func.func, cst.Name) and func.func.value == "getattr") or len(func.args) != 2:
            return False
        inner = func.args[0].value
        return isinstance(inner, cst.Call) and self.names.call_name(inner) == "importlib.import_module"

    def _undefined(self, name: str) -> bool:
        """``name`` is bound nowhere in the module (no import, ``def``, class,
        assignment, parameter...), is no builtin, and no star import may
        bring it: the code cannot run as written (``inception_v3(...)``
        never imported), so the model it would build is not known. A star
        import of project modules brings only the names they bind
        (ProjectView.star_names, star_names.py)."""
        writes = self._all_writes()
        if name in writes.bound or name in writes.defs or name in writes.other:
            return False
        if writes.star and (self.project is None or self.project.star_names is None or name in self.project.star_names):
            return False
        return not hasattr(builtins, name) and name not in self.names.bindings

    def _imported_table(self, name: str) -> bool:
        """``name`` is a table of classes or builders that move nothing, of
        another project module (``from models import model_dict``), bound
        here by its import only and never written into."""
        if self.project is None or name not in self.project.cpu_tables:
            return False
        writes = self._all_writes()
        return not writes.bound.get(name, 0) and name not in writes.changed and writes.other.get(name, 0) == 1

    def _module_def(self, name: str) -> bool:
        """``name`` is bound once at module level, by its ``def``."""
        writes = self._all_writes()
        return writes.bound.get(name, 0) == 0 and writes.defs.get(name, 0) == 1

    def _all_writes(self) -> _Writes:
        if self._writes is None:
            self._writes = _Writes()
            visit_fast(self.module, self._writes)
        return self._writes

    def _runtime_module(self, name: str) -> bool:
        """``name`` is bound, anywhere in the module, only by plain assignments
        of a module imported at run time (``__import__``, ``importlib.import_module``)."""
        writes = self._all_writes()
        count = writes.runtime.get(name, 0)
        return (
            count > 0
            and writes.bound.get(name, 0) == count
            and not writes.other.get(name, 0)
            and not writes.defs.get(name, 0)
            and name not in writes.changed
        )

    def _bound_once(self, name: str, defs: int) -> bool:
        """``name`` is bound nowhere in the module but by its one ``def``
        (``defs=1``) or its one assignment (``defs=0``), in any form."""
        writes = self._all_writes()
        return (
            writes.defs.get(name, 0) == defs
            and writes.bound.get(name, 0) == 1 - defs
            and not writes.other.get(name, 0)
            and name not in writes.changed
        )

    def _local_def_called(self, func: cst.BaseExpression, fn: cst.FunctionDef) -> bool:
        """``func(...)`` calls the nested function ``fn``, whose name nothing else binds."""
        call = self.calls.parents.get(func)
        return (
            isinstance(call, cst.Call)
            and call.func is func
            and self.calls.resolve(call) is fn
            and self._bound_once(fn.name.value, defs=1)
        )

    def _local_table(self, name: str, use: cst.CSTNode) -> cst.Dict | None:
        """The dict literal ``name`` is bound to in a function around ``use``
        (a table of classes built where it is used): its one binding in the
        whole module, whatever the form, and never written into."""
        if not self._bound_once(name, defs=0):
            return None
        found = [assign for n, assign in self._all_writes().dicts if n == name]
        if len(found) != 1:
            return None
        scope = self.calls.parents.get(found[0])
        while scope is not None and not isinstance(scope, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            scope = self.calls.parents.get(scope)
        if not isinstance(scope, cst.FunctionDef):
            return None  # module level: ``_table``; a class body is not seen from its methods
        node = self.calls.parents.get(use)
        while node is not None and node is not scope:
            node = self.calls.parents.get(node)
        value = found[0].value
        return value if node is scope and isinstance(value, cst.Dict) else None

    def _table(self, name: str) -> cst.Dict | None:
        """The dict literal ``name`` is bound to at module level, once and
        never written into (``MODELS = {"alex": AlexNet, ...}``)."""
        if self._tables is None:
            tables: dict[str, cst.Dict | None] = {}
            for stmt in self.module.body:
                for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else ():
                    if isinstance(small, cst.Assign) and len(small.targets) == 1:
                        target = small.targets[0].target
                        if isinstance(target, cst.Name) and isinstance(small.value, cst.Dict):
                            # bound twice: which one a call sees is not known
                            tables[target.value] = None if target.value in tables else small.value
            self._tables = {n: t for n, t in tables.items() if t is not None and not self._written(n)}
        return self._tables.get(name)

    def _written(self, name: str) -> bool:
        """``name[k] = v``, ``name.update(...)``, or ``name`` bound again anywhere."""
        writes = self._all_writes()
        return name in writes.changed or writes.bound.get(name, 0) > 1

    def _may_be_model(self, arg: cst.BaseExpression, bound_from: cst.Call | None) -> bool:
        """``arg`` (a constructor's argument) may be a model: of a model's kind,
        or a plain name bound from a call that may return one."""
        kind = self.objects.kind_of(arg) if self.objects is not None else None
        if kind is not None and not handed_no_module(kind, bound_from is not None):
            return True  # a module, or an optimizer or loader tied to one
        if not isinstance(arg, cst.Name) or bound_from is None:
            return False  # ``checkpoint["input_size"]``, ``cfg.dim``: a part, not the model
        func = bound_from.func
        if isinstance(func, cst.Name) and func.value in NOT_MODELS and func.value not in self.calls.classes:
            return False
        if (self.names.call_name(bound_from) or "").startswith(NOT_MODEL_MODULES):
            return False
        if SETTINGS_CALLEE.fullmatch((dotted_name(func) or "").rsplit(".", 1)[-1]):
            return False
        if self._settings_call(bound_from):
            return False
        name = dotted_name(func)
        if name is not None and (
            name in self._plain_classes() or name in (self.project.plain_classes if self.project else ())
        ):
            return False
        return True

    def _settings_call(self, call: cst.Call) -> bool:
        """``call`` returns settings, never a model (vocabulary/settings_values.py):
        a configuration read (``config_class.from_pretrained(name)``), or a
        function of this module or another of the project whose every return is
        an argparse namespace (``args = add_args(parser)``)."""
        name = dotted_name(call.func)
        if name is not None and config_reader(name):
            return True
        if name is not None and self.project is not None and name in self.project.settings_functions:
            return True
        fn = self.calls.resolve(call) if isinstance(call.func, cst.Name) else None
        if fn is None or fn in self.calls.class_of:
            return False
        if fn not in self._settings:
            # Cut out of the text and read as ``ast``: asked only of a call
            # bound to a constructor's argument, rare.
            try:
                body = ast.parse(textwrap.dedent(self.module.code_for_node(fn))).body
            except SyntaxError:
                body = []
            self._settings[fn] = bool(body) and isinstance(body[0], ast.FunctionDef) and returns_settings(body[0])
        return self._settings[fn]

    def _plain_classes(self) -> frozenset[str]:
        return frozenset(
            name
            for name, defs in self.calls.classes.items()
            if len(defs) == 1
            and all(_plain_base(b.value) for b in defs[0].bases)
            and not any(b.keyword for b in defs[0].bases)
        )

    def _cpu_holder(self, call: cst.Call) -> bool:
        """``call`` builds a plain class (on builtins only, not a model)
        whose code moves nothing to a device, of this module or another of
        the project (``Evaluator(model=model)``): it holds what it is handed
        where it is."""
        name = dotted_name(call.func)
        if name is None:
            return False
        if holds_in_place(call, self._cpu_builder, moves_anything):
            return True  # a model class that moves nothing (model_holders.py)
        if name in self.calls.classes:
            return name in self._plain_classes() and self._cpu_class(name)
        project = self.project
        return project is not None and name in project.plain_classes and name in self.imported_cpu_classes

    def _stays(self, call: cst.Call) -> bool:
        """``call`` is a function of another project module that moves
        nothing, or ``self.method(...)`` of a class of this module that moves nothing."""
        fn = self.calls.resolve(call) if isinstance(call.func, cst.Attribute) else None
        if fn is not None and fn in self.calls.class_of:
            return self._cpu_class(self.calls.class_of[fn].name.value) or self._keeps_self(fn)
        if fn is None and isinstance(call.func, cst.Name):
            local = self.calls.resolve(call)
            if local is not None and self._builder_scope(local):
                # ``count_parameters(model)``: a function of this module (nested ones
                # too, not methods) that places nothing.
                return not self._places(local)
        name = dotted_name(call.func)
        return self.project is not None and name is not None and name in self.project.cpu_functions

    def _places(self, fn: cst.FunctionDef) -> bool:
        """``fn`` may place something on a device: a move in its body, or a
        call of a function of this module that may (as ``cpu_functions``
        reads another module's); memoised, a cycle counts as placing."""
        if fn not in self._placing:
            self._placing[fn] = True  # while it is read: a recursive call is not known to stay
            found = Placing()
            visit_fast(fn, found)
            places = found.places
            for call in found.called:
                if places:
                    break
                callee = self.calls.resolve(call)
                places = callee is not None and callee is not fn and self._places(callee)
            self._placing[fn] = places
        return self._placing[fn]

    def _cpu_hierarchy(self, name: str) -> bool:
        """``name`` is a class whose code and bases move nothing: one of this
        module (bases checked here), or of another project module (the
        project stage checked its bases and the classes it builds)."""
        local = self.calls.classes.get(name, [])
        if local:
            return len(local) == 1 and self._constructed_on_cpu(local[0], 0)
        return name in self.imported_cpu_classes

    def _self_built(self, fn: cst.FunctionDef) -> frozenset[str]:
        """``{"self"}`` for the ``__init__`` of a class whose construction
        stays on the CPU (``_constructed_on_cpu``): its ``self`` is a model
        under construction, on the CPU until something moves it."""
        cls = self.calls.class_of.get(fn)
        params = fn.params.params
        if cls is None or not params or _no_instance(fn):
            return frozenset()
        if not (self._constructed_on_cpu(cls, 0) or self._starts_on_cpu(cls, fn)):
            return frozenset()
        return frozenset({params[0].name.value})

    def _starts_on_cpu(self, cls: cst.ClassDef, init: cst.FunctionDef) -> bool:
        """A class that may move itself later, whose ``__init__`` starts with
        ``self`` on no device (construction_order.py), defined once and
        subclassed nowhere in the module: the walk of ``__init__`` in source
        order ends it at the first move."""
        name = cls.name.value
        if len(self.calls.classes.get(name, [])) != 1 or self._subclassed(cls):
            return False
        return starts_on_cpu(cls, init, self.names)

    def _subclassed(self, cls: cst.ClassDef) -> bool:
        name = cls.name.value
        return any(
            (dotted_name(base.value) or "").rpartition(".")[2] == name
            for defs in self.calls.classes.values()
            for other in defs
            for base in other.bases
        )

    def _keeps_self(self, fn: cst.FunctionDef) -> bool:
        """``self.method(...)`` with ``fn`` the method: it moves neither
        ``self`` nor what it is handed (construction_order.py)."""
        if self._self_methods is None:
            # Closures over the parts, not over ``self``: the analysis holds
            # them, and a cycle back to it would outlive the lint.
            names, calls = self.names, self.calls
            looks = lambda call: reads_only(names.call_name(call) or dotted_name(call.func) or "")  # noqa: E731
            redefined = lambda fn: _redefined(calls, fn)  # noqa: E731
            self._self_methods = SelfMethods(calls.resolve, PLACES, STAYS, redefined, looks)
        return self._self_methods.keeps(fn)

    def _constructed_on_cpu(self, cls: cst.ClassDef, depth: int) -> bool:
        """``cls`` (one definition) and each of its bases move nothing: a
        ``torch.nn`` class, a class of this module (so again) or of another
        project module that moves nothing; no metaclass."""
        name = cls.name.value
        if depth > 8 or len(self.calls.classes.get(name, [])) != 1 or not self._cpu_class(name):
            return False
        for base in cls.bases:
            spelled = dotted_name(base.value)
            if base.keyword is not None or spelled is None:
                return False
            if (self.names.qualified_name(base.value) or "").startswith("torch.nn."):
                continue
            local = self.calls.classes.get(spelled, [])
            if len(local) == 1 and local[0] is not cls:
                if not self._constructed_on_cpu(local[0], depth + 1):
                    return False
            elif spelled not in self.imported_cpu_classes:
                return False
        return True

    def _self_on_cpu(self, fn: cst.FunctionDef) -> frozenset[str]:
        """``{"self"}`` for a method that says it loads weights
        (``load_pretrained_model``) whose every use is a call on a model on
        the CPU (``model = DLA(...); model.load_pretrained_model()`` in a
        builder): in this module, and no other module of the project uses
        its name (without the project, only a private method's are known).
        With ``self.model`` for each attribute of a plain class that holds a
        model on the CPU in every method (``_stable_attrs``)."""
        params = fn.params.params
        name = fn.name.value
        if fn.name.value == "__init__":
            return self._self_built(fn)
        if not params or _no_instance(fn):
            return frozenset()
        this = params[0].name.value
        stable = frozenset(f"{this}.{attr}" for attr in self._stable_attrs(fn))
        return stable | self._loading_self(fn) if loading_name(name) else stable

    def _loading_self(self, fn: cst.FunctionDef) -> frozenset[str]:
        """``{"self"}`` when every use of the loading method ``fn`` is on a model on the CPU."""
        params = fn.params.params
        name = fn.name.value
        uses = self._method_uses.get(name, [])
        if not all(uses):
            return frozenset()
        if self.project is None and not (uses and name.startswith("_")):
            return frozenset()
        # Other modules' calls count when each is on a model they have just
        # built on the CPU (ProjectView.loading_cpu_elsewhere, cpu_receivers.py).
        elsewhere = self.project is not None and name in self.project.loading_elsewhere
        on_cpu_elsewhere = self.project is not None and name in self.project.loading_cpu_elsewhere
        if (elsewhere and not on_cpu_elsewhere) or not (uses or on_cpu_elsewhere):
            return frozenset()
        return frozenset({params[0].name.value})

    def _stable_attrs(self, fn: cst.FunctionDef) -> frozenset[str]:
        """The attributes of the plain class of the method ``fn`` that hold a
        model on the CPU in every method (cpu_attrs.py: SimGNN's trainer's
        ``self.model``), that no other project module switches, moves or
        hands over (without the project: private ones only)."""
        cls = self.calls.class_of.get(fn)
        if cls is None or cls.name.value not in self._plain_classes():
            return frozenset()
        if cls not in self._stable:
            wraps = lambda arg: self._may_be_model(arg, None)  # noqa: E731
            built = lambda value: built_on_cpu(  # noqa: E731
                value, self.names, self._cpu_builder, wraps, self._takes_no_device
            )
            found = stable_cpu_attrs(self.module, cls, STAYS, built)
            if self.project is None:
                found = frozenset(a for a in found if a.startswith("_"))
            else:
                found -= frozenset(self.project.switched_attrs)
            self._stable[cls] = found
        return self._stable[cls]

    def _cpu_params(self, fn: cst.FunctionDef) -> frozenset[str]:
        """The parameters of the module-level function ``fn`` to which every
        caller passes a model on the CPU: built there (``init_model(LeNetEncoder(),
        path)`` in main.py) or, in this module, a name still on the CPU at the
        call. A function called nowhere in the project that moves the
        parameter to a device itself (after the load) expects it on the CPU.
        Without the project only a private function's callers are all known;
        a nested function's callers are all in its own scope, in this module."""
        if fn in self.calls.class_of:
            return self._self_on_cpu(fn)
        if fn in self.calls.escapes:
            return frozenset()
        owner = self.calls.owner.get(fn)
        if owner is not self.module:
            local = self._local_args.get(fn, []) if isinstance(owner, cst.FunctionDef) else []
            return frozenset(
                p.name.value
                for p in fn.params.params
                if local and all(passed.get(p.name.value, False) for passed in local)
            )
        name = fn.name.value
        if self.project is None and not name.startswith("_"):
            return frozenset()
        local = self._local_args.get(fn, [])
        remote = self.project.callers_of(name) if self.project is not None else ()
        params = [p.name.value for p in fn.params.params]
        if not local and not remote:
            return frozenset(self._moved_params(fn)) if self.project is not None else frozenset()
        # ``optimizer=None`` left out by a caller: no state is loaded into it there.
        none_default = {
            p.name.value for p in fn.params.params if isinstance(p.default, cst.Name) and p.default.value == "None"
        }
        return frozenset(
            p
            for i, p in enumerate(params)
            if all(passed.get(p, False) for passed in local)
            and all(c.passes_cpu_model(i, p) or (p in none_default and c.omits(i, p)) for c in remote)
        )

    def _moved_params(self, fn: cst.FunctionDef) -> set[str]:
        """The parameters ``fn`` moves to a device itself (``net.cuda()``)."""
        params = {p.name.value for p in fn.params.params}
        visitor = _MovedNames()
        visit_fast(fn.body, visitor)
        return params & visitor.moved

    def _cpu_class(self, name: str) -> bool:
        """A class of this module (one definition) whose code moves nothing to a device."""
        if name not in self._classes:
            defs = self.calls.classes.get(name, [])
            if not defs:
                self._classes[name] = name in self.imported_cpu_classes
            else:
                self._classes[name] = len(defs) == 1 and not self._class_moves(defs[0])
        return self._classes[name]

    def _class_moves(self, cls: cst.ClassDef) -> bool:
        """``cls`` may move what it builds to a device: a move that is not of a
        fresh tensor (project/class_moves.py, read on the class's ``ast`` as the
        project summary reads other modules' classes)."""
        if not moves_anything(cls):
            return False
        try:
            tree = ast.parse(textwrap.dedent(self.module.code_for_node(cls)))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return True
        found = tree.body[-1] if tree.body else None
        functions = _module_functions(self.module, self._enclosing_block(cls))
        return not isinstance(found, ast.ClassDef) or class_moves_to_a_device(
            found,
            self.names.bindings,
            None,
            lambda: tensor_functions(functions(), lambda f: qualified(f, self.names.bindings)),
        )

    def _enclosing_block(self, cls: cst.ClassDef) -> cst.IndentedBlock | None:
        """The body of the function ``cls`` is defined in (a script's code
        wrapped in ``main()``), whose own functions its methods call first;
        None at module level."""
        block = self.calls.parents.get(cls)
        if isinstance(block, cst.IndentedBlock) and isinstance(self.calls.parents.get(block), cst.FunctionDef):
            return block
        return None

    def loaded_params(self, fn: cst.FunctionDef) -> frozenset[str]:
        """The parameters ``fn`` passes to ``load_state_dict`` (a per-function summary)."""
        if fn not in self._loaded:
            self._loaded[fn] = _loaded_params(fn, self.into_cpu_model)
        return self._loaded[fn]

    def helper_loads(self, call: cst.Call, arg: cst.Arg) -> bool:
        """``call`` passes ``arg`` on to ``load_state_dict``."""
        qn = self.names.call_name(call)
        if qn is not None and qn in self.loaders:
            index, keyword = self.loaders[qn]
            if arg.keyword is not None:
                return arg.keyword.value == keyword
            positional = [a for a in call.args if a.keyword is None]
            return not any(a.star for a in call.args) and index < len(positional) and positional[index] is arg
        fn = self.calls.resolve(call)
        if fn is None:
            return False
        loaded = self.loaded_params(fn)
        return any(a is arg and name in loaded for a, name in bound_params(call, fn))

    def project_loader(self, call: cst.Call, arg: cst.Arg) -> tuple[str, list[cst.BaseExpression | None]] | None:
        """``call`` runs a function of another project module that passes
        ``arg`` on to ``load_state_dict`` (ProjectView.state_loaders,
        project/state_helpers.py): its file and, per load it makes, the
        argument handed to the receiving parameter (None: a model the
        function moved to a device itself). None when ``arg`` reaches no
        load, or a ``*args``/``**kwargs`` hides which parameter it binds."""
        project = self.project
        if project is None or not project.state_loaders or arg.star:
            return None
        written = dotted_name(call.func)
        found = project.state_loader(written) if written else None
        if found is None:
            return None
        params, kwonly, state, path = found
        if isinstance(call.func, cst.Attribute) and params[:1] in (("self",), ("cls",)):
            return None  # a method: which class's is not known here
        bound: dict[str, cst.Arg] = {}
        for i, a in enumerate(call.args):
            if a.star:
                return None
            if a.keyword is not None:
                if a.keyword.value in params or a.keyword.value in kwonly:
                    bound[a.keyword.value] = a
            elif i < len(params):
                bound[params[i]] = a
        receivers: list[cst.BaseExpression | None] = []
        for param, into in state:
            if bound.get(param) is not arg:
                continue
            if not into:
                receivers.append(None)
            elif into in bound:
                receivers.append(bound[into].value)
        return (path, receivers) if receivers else None


def _redefined(calls: CallGraph, fn: cst.FunctionDef) -> bool:
    """A subclass of the module defines the method ``fn`` again."""
    cls = calls.class_of.get(fn)
    if cls is None:
        return True
    for defs in calls.classes.values():
        for other in defs:
            if any((dotted_name(b.value) or "").rpartition(".")[2] == cls.name.value for b in other.bases):
                if fn.name.value in calls.methods.get(other, {}):
                    return True
    return False


def _module_functions(
    module: cst.Module, block: cst.IndentedBlock | None = None
) -> Callable[[], list[ast.FunctionDef | ast.AsyncFunctionDef]]:
    """The module-level functions of ``module`` on Python's ``ast``, parsed
    when first asked (forward_copies.tensor_functions reads them). With
    ``block`` (the body of the function a class is defined in), that body's
    functions too: a name defined in both is defined twice, and
    tensor_functions then trusts neither."""

    def get() -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        out: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        statements = [*module.body, *(block.body if block is not None else ())]
        for stmt in statements:
            if isinstance(stmt, cst.FunctionDef):
                try:
                    tree = ast.parse(textwrap.dedent(module.code_for_node(stmt)))
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    continue
                out += [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        return out

    return get
