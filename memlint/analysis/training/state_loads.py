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
import re
import textwrap
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Literal, NamedTuple

import libcst as cst

from memlint.analysis.scope.callgraph import bound_params
from memlint.analysis.scope.literal_branches import agreed_values, bound_values, decided_branches, fixed_values
from memlint.analysis.scope.names import ImportTable, dotted_name, mentions
from memlint.analysis.scope.option_choices import OptionChoices
from memlint.analysis.scope.options import ModuleOptions
from memlint.analysis.training.construction_order import SelfMethods, starts_on_cpu
from memlint.analysis.training.cpu_attrs import stable_cpu_attrs
from memlint.analysis.training.cpu_devices import cpu_device_names, is_cpu_device, moves_to_cpu
from memlint.analysis.training.cpu_dicts import CpuDicts
from memlint.analysis.training.cpu_saves import CpuSaves, cpu_saves
from memlint.analysis.training.factory_classes import FactoryClasses
from memlint.analysis.training.inert_slots import inert_slot
from memlint.analysis.training.model_holders import holds_in_place
from memlint.analysis.training.optimizer_args import handed_no_module
from memlint.analysis.training.parallel_wrappers import machine_parallel
from memlint.analysis.training.vision_tables import torchvision_table_entry
from memlint.parse.traversal import visit_fast
from memlint.project.class_moves import class_moves_to_a_device
from memlint.project.forward_copies import qualified, tensor_functions
from memlint.vocabulary.kinds import Kind, guess_kind_from_name
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
_STAYS = frozenset(
    {
        "eval",
        "train",
        "float",
        "double",
        "requires_grad_",
        "load_state_dict",
        "state_dict",
        "parameters",
        "named_parameters",
        "modules",
        "named_modules",
        "children",
        "zero_grad",
        "apply",  # ``net.apply(init_weights)``: initialises the weights in place
        # transformers builds the new embedding on the old one's device.
        "resize_token_embeddings",
    }
)
# Builtins that look at a model and never move it (``print(model)``).
_LOOKS = frozenset({"print", "repr", "str", "len", "type", "id", "isinstance", "hasattr", "getattr"})
_MOVES = frozenset({"to", "cuda", "xpu", "mps", "to_empty", "ipu", "npu"})


# Wrappers that deep-copy the model they are given and leave the copy on its
# device unless told one (``AveragedModel(model, device=None, ...)``).
_COPIES_IN_PLACE = frozenset({"torch.optim.swa_utils.AveragedModel"})

_CPU_BUILDERS = ("torchvision.models.", "torch.nn.", "timm.create_model", "timm.models.")
# Packages whose models' methods are theirs, not the project's (_still_method).
_LIBRARIES = frozenset({"torch", "torchvision", "timm", "transformers", "diffusers", "peft", "accelerate"})
# Builtins and modules whose calls never return a model: an argument bound
# from one (``num_tag = len(enc.classes_)``) is not a model being wrapped.
_NOT_MODELS = frozenset(
    {"len", "int", "float", "str", "bool", "list", "dict", "tuple", "set", "sorted", "range", "sum", "max", "min"}
    | {"abs", "round", "open", "zip", "enumerate", "format", "vars"}
)
# Bases of a class that is never a model (``class AttrDict(dict)``).
_PLAIN_BASES = frozenset(
    {"object", "dict", "list", "tuple", "set", "str", "int", "float", "OrderedDict", "defaultdict"}
)
_NOT_MODEL_MODULES = ("json.", "yaml.", "os.", "math.", "argparse.", "re.", "numpy.", "random.", "torch.device")
# Callees named for the settings they return (``configs.get_config()``,
# ``load_cfg(path)``, ``parser.parse_args()``): what they return is no model.
_SETTINGS_CALLEE = re.compile(
    r"(get|load|make|parse|read)_?(config|configs|cfg|conf|args|arguments|opts?|options|hparams|settings)",
    re.IGNORECASE,
)


def _evaluated_name(call: cst.Call) -> str:
    """As project/summary.py's ``evaluated_name``, on libcst: ``get_pose_net``
    for ``eval('models.' + name + '.get_pose_net')``."""
    if not (isinstance(call.func, cst.Name) and call.func.value == "eval" and len(call.args) == 1):
        return ""
    arg = call.args[0]
    if arg.keyword is not None or arg.star:
        return ""
    tail = arg.value
    while isinstance(tail, cst.BinaryOperation) and isinstance(tail.operator, cst.Add):
        tail = tail.right
    value = tail.evaluated_value if isinstance(tail, cst.SimpleString) else None
    if not isinstance(value, str) or "." not in value:
        return ""
    name = value.rpartition(".")[2]
    return name if name.isidentifier() else ""


def _swallowed(init: cst.FunctionDef, star: object) -> bool:
    """``init``'s ``**kwargs`` is absent or never read (HRNet's
    ``def __init__(self, cfg, **kwargs)``): no ``device=`` reaches a layer.
    As project/cpu_builders.py's ``_swallowed``."""
    if not isinstance(star, cst.Param):
        return True
    return not mentions(init.body, star.name.value)


def _run_time_pick(value: cst.BaseExpression) -> bool:
    """``eval(model_type)`` of a name read at run time (audioset's
    ``Model = eval(args.model_type)``): a class picked by name from the
    module's own names, as ``_dynamic_class`` picks one from a module named
    at run time. Which class, and whether it moves itself, is not known;
    built without a device, the load into it is not claimed. A string
    (``eval('models.' + name + '.get_pose_net')``) is ``_evaluated_name``'s."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "eval"):
        return False
    if len(value.args) != 1 or value.args[0].keyword is not None or value.args[0].star:
        return False
    return isinstance(value.args[0].value, (cst.Name, cst.Attribute))


class _Moves(cst.CSTVisitor):
    """A device move, or a value built on a device (``torch.ones(4,
    device="cuda")`` made a parameter of the model)."""

    def __init__(self) -> None:
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _MOVES:
            self.found = True
        elif any(_on_a_device(arg) for arg in node.args):
            self.found = True


def _on_a_device(arg: cst.Arg) -> bool:
    """``device=...`` but ``device="cpu"``."""
    if arg.keyword is None or arg.keyword.value not in ("device", "device_map"):
        return False
    return not (isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value == "cpu")


# Calls that may place what they are handed on a device (the project summary's ``_PLACES``).
_PLACES = _MOVES | {"prepare", "prepare_model", "setup", "setup_module", "initialize"}


class _Placing(cst.CSTVisitor):
    """In a function: whether a call in it may place something on a device,
    and its plain calls (``helper(m)``), to follow into this module's functions."""

    def __init__(self) -> None:
        self.places = False
        self.called: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute):
            self.places = self.places or func.attr.value in _PLACES
        elif isinstance(func, cst.Name):
            self.called.append(node)


_MODULE_BASES = frozenset({"nn.Module", "torch.nn.Module"})


def _plain_module(cls: cst.ClassDef) -> bool:
    """``class Decoder(nn.Module)``: one base, ``nn.Module`` itself, no metaclass."""
    return len(cls.bases) == 1 and not cls.keywords and dotted_name(cls.bases[0].value) in _MODULE_BASES


def _class_names(cls: cst.ClassDef) -> set[str]:
    """The names a class body binds at its own level (class attributes, methods)."""
    bound: set[str] = set()
    for stmt in cls.body.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            bound.add(stmt.name.value)
        for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else ():
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else []
            if isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                targets = [small.target]
            bound.update(t.value for t in targets if isinstance(t, cst.Name))
    return bound


# What a builder returns (_CpuModels._shape): per item, ("dict" | "model",
# the constructors of its models), None for an item of another kind; and
# whether it is a tuple to unpack (``return nets, meta``) or one value (``return nets``).
ShapeItem = tuple[str, frozenset[str]]


class Shape(NamedTuple):
    unpacked: bool
    items: tuple[ShapeItem | None, ...]


def _constructor(value: cst.BaseExpression) -> str:
    """``Net`` for ``Net(...).eval()``: the callee under a chain of methods ("" if none);
    of a model built on the CPU (``_built_on_cpu``), a move in the chain is to the CPU."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        if value.func.attr.value not in ("eval", "train", "float", "double", "requires_grad_", "to", "cpu"):
            break
        value = value.func.value
    return (dotted_name(value.func) or "") if isinstance(value, cst.Call) else ""


def _params_entry(group: cst.BaseExpression) -> cst.BaseExpression | None:
    """The ``"params"`` value of an optimizer's parameter group (a dict literal)."""
    if not isinstance(group, cst.Dict):
        return None
    for element in group.elements:
        key = element.key if isinstance(element, cst.DictElement) else None
        if isinstance(key, cst.SimpleString) and key.evaluated_value == "params":
            return element.value  # type: ignore[union-attr]
    return None


def _literal(value: cst.BaseExpression) -> bool:
    """A string or number literal (``"vqvae"``, ``-1``): never a model."""
    if isinstance(value, cst.UnaryOperation):
        value = value.expression
    return isinstance(value, (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float))


def _loops_reaching(loops: list[cst.CSTNode], bound_in: tuple[int, ...]) -> tuple[cst.CSTNode, ...]:
    """The loops around a load whose next iteration reaches it with the model
    of this one: not a loop whose body rebuilds the model before the load
    (``for w in weights: net = TSN(...); net.load_state_dict(...); net.cuda()``
    loads each file into a fresh CPU model; a move later in the body moves
    only the model the next iteration replaces)."""
    return tuple(loop for loop in loops if id(getattr(loop, "body", None)) not in bound_in)


def _moves_anything(node: cst.CSTNode) -> bool:
    visitor = _Moves()
    visit_fast(node, visitor)
    return visitor.found


def _torch_container(qualified: str) -> bool:
    """``nn.TransformerDecoder(layer, 6)``, ``nn.Sequential(a, b)``: a torch.nn
    class keeps the modules it is handed where they are (not the
    ``DataParallel`` wrappers, which move theirs to their first device)."""
    head, _, last = qualified.rpartition(".")
    return head == "torch.nn" and last[:1].isupper() and "Parallel" not in last


def _built_on_cpu(
    value: cst.BaseExpression,
    names: ImportTable,
    cpu_classes: Callable[[cst.BaseExpression], bool],
    wraps: Callable[[cst.BaseExpression], bool],
    takes_no_device: Callable[[cst.BaseExpression], bool] = lambda func: False,
    cpu_devices: frozenset[str] = frozenset(),
) -> bool:
    """A model built here, on the CPU (see the module's docstring); no
    ``device=`` argument, no device move in the chain or the arguments, no
    argument that may be a model (a wrapper, ``wraps``). A chain ending with
    a move to the CPU (``build().to(device)`` with ``device`` the CPU device,
    ``cpu_devices``: cpu_devices.py) puts whatever it builds there."""
    placed = False  # the last move of the chain is to the CPU
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        func = value.func
        if not placed and moves_to_cpu(value, cpu_devices):
            placed = True
            value = func.value
            continue
        if func.attr.value in _MOVES:
            return False
        if func.attr.value not in ("eval", "train", "float", "double", "requires_grad_"):
            break
        value = func.value
    if not isinstance(value, cst.Call):
        return False
    if any(
        a.keyword is not None and a.keyword.value in ("device", "device_map") and not is_cpu_device(a.value)
        for a in value.args
    ):
        return False  # ``device="cpu"`` builds there
    if any(a.star for a in value.args) and not takes_no_device(value.func):
        return False  # a device may be among them
    # ``BertForMaskedLM.from_pretrained(bert_model)``: its one positional
    # argument is a name or path, not a model to wrap (``PeftModel.
    # from_pretrained(model, path)`` takes two and is judged as a wrapper).
    named = isinstance(value.func, cst.Attribute) and value.func.attr.value == "from_pretrained"
    positional = [a for a in value.args if a.keyword is None]
    for arg in value.args:
        if named and len(positional) == 1 and arg is positional[0]:
            continue
        # ``from_pretrained(path, config=config)``: the settings the weights
        # are built from (a config object or its path), never a model to wrap.
        settings = named and arg.keyword is not None and arg.keyword.value == "config"
        if not settings and wraps(arg.value):
            return False  # ``DataParallel(net)``: wraps a model built before
        if _moves_anything(arg.value):
            return False
    if placed or cpu_classes(value.func) or torchvision_table_entry(value.func, names):
        return True
    name = dotted_name(value.func)
    if name is None or config_reader(name):
        return False  # ``RobertaConfig.from_pretrained(path)``: settings, no model
    if name.rsplit(".", 1)[-1] == "from_pretrained":
        return True
    return (names.call_name(value) or "").startswith(_CPU_BUILDERS)


class _CpuModels(cst.CSTVisitor):
    """In source order, per function: which names hold a model built on the
    CPU and not moved since; the ``load_state_dict`` calls made on one."""

    def __init__(
        self,
        names: ImportTable,
        cpu_classes: Callable[[cst.BaseExpression], bool],
        may_be_model: Callable[[cst.BaseExpression, cst.Call | None], bool],
        stays: Callable[[cst.Call], bool],
        cpu_params: Callable[[cst.FunctionDef], frozenset[str]],
        resolve: Callable[[cst.Call], cst.FunctionDef | None] = lambda call: None,
        takes_no_device: Callable[[cst.BaseExpression], bool] = lambda func: False,
        cpu_hierarchy: Callable[[str], bool] = lambda name: False,
        cpu_module: Callable[[str], bool] = lambda spelled: False,
        cpu_object: Callable[[str], bool] = lambda spelled: False,
        plain_class: Callable[[str], bool] = lambda name: False,
        cpu_factory: Callable[[cst.BaseExpression], bool] = lambda value: False,
        cpu_holder: Callable[[cst.Call], bool] = lambda call: False,
        cpu_methods: frozenset[str] = frozenset(),
        literal_params: Callable[[cst.FunctionDef], frozenset[str]] = lambda fn: frozenset(),
        cpu_devices: frozenset[str] = frozenset(),
        branch_values: Callable[[cst.FunctionDef], Mapping[str, object]] = lambda fn: {},
        returned_shape: Callable[[cst.FunctionDef], Shape | None] = lambda fn: None,
    ) -> None:
        self.names = names
        self.cpu_devices = cpu_devices  # names holding the CPU device (cpu_devices.py)
        # Per function, the literal every call binds a parameter to (``init_nets(...,
        # device='cpu')``): the arms of an ``if`` it decides that never run are
        # not walked (``dead``), and a parameter holding ``"cpu"`` is a CPU
        # device in the function (``local_cpu``): literal_branches.py.
        self.branch_values = branch_values
        self.dead: set[int] = set()
        self.local_cpu: list[frozenset[str]] = [frozenset()]
        # Per function: what every ``return`` gives, when it holds models on the
        # CPU (a dict of them, or a tuple of them and other values): ``_shape``.
        # False: some return gives something else. ``returned_shape``: the same,
        # of a walk before, for the calls of those functions.
        self.shapes: dict[cst.FunctionDef, Shape | Literal[False]] = {}
        self.returned_shape = returned_shape
        # Parameters every caller hands a string or a number (``load_model("vqvae",
        # ...)``): a path on which one keeps that value loads into no model.
        self.literal_params = literal_params
        # Method names every class of the project defining them defines so
        # that it moves nothing (project/method_moves.py, ProjectView.cpu_methods).
        self.cpu_methods = cpu_methods
        # ``evaluator = Evaluator(model=model)``: a plain class whose code moves
        # nothing keeps the model where it is; a later use of the holder may
        # hand it on, and loses what it holds (``_use_holders``).
        self.cpu_holder = cpu_holder
        self.holders: list[dict[str, list[str]]] = [{}]  # per function: holder name -> the models it holds
        self._holding: int | None = None  # the call a single name is being bound to
        self._held: tuple[int, list[str]] | None = None  # that call, and the models it was handed
        # ``load_model(name)`` returning one class of a registry of CPU classes (factory_classes.py).
        self.cpu_factory = cpu_factory
        # A module-level model of another project module built on the CPU
        # and named nowhere else there (``net.vgg``, ProjectView.cpu_objects).
        self.cpu_object = cpu_object
        self.plain_class = plain_class  # a class on builtins only: what it builds is no model
        self.cpu_hierarchy = cpu_hierarchy  # a class whose code and bases move nothing
        self.cpu_module = cpu_module  # a module whose every class is built on the CPU (``getattr(m, name)``)
        # Per frame: names bound to ``getattr(<such a module>, name)``, with the blocks open then.
        self.aliases: list[dict[str, tuple[int, ...]]] = [{}]
        self.cpu_classes = cpu_classes
        self.may_be_model = may_be_model  # (an argument, the call its name was bound from)
        self.stays = stays  # a call that moves none of its arguments (a project function)
        self.cpu_params = cpu_params  # the parameters every caller passes a CPU model
        self.resolve_call = resolve  # the function of this module a call runs
        self.takes_no_device = takes_no_device
        # Per function of this module, each call of it here: parameter -> a
        # model on the CPU is passed to it.
        self.local_args: dict[cst.FunctionDef, list[dict[str, bool]]] = {}
        # The same calls: parameter -> a literal string or number is passed to it.
        self.literal_args: dict[cst.FunctionDef, list[dict[str, bool]]] = {}
        # The same calls: parameter -> the literal value it is bound to (literal_branches.py).
        self.call_values: dict[cst.FunctionDef, list[dict[str, object]]] = {}
        # Per function: every ``return`` gives a model on the CPU.
        self.returns: dict[cst.FunctionDef, bool] = {}
        self.functions: list[cst.FunctionDef] = []
        self.classes: list[cst.ClassDef | None] = [None]  # the class whose body is being walked (per scope)
        # Per function: its ``self`` when it is the ``__init__`` of a plain
        # ``nn.Module`` subclass (no attribute of it is set before it runs).
        self.fresh_self: list[tuple[str, cst.ClassDef] | None] = [None]
        # name -> the blocks open when it was bound
        self.frames: list[dict[str, tuple[int, ...]]] = [{}]
        self.seen: list[dict[str, cst.Call]] = [{}]  # names bound in the frame from a call
        # Per function: an optimizer built over a model on the CPU here, and
        # that model (``opt = Adam(net.parameters())``): it loads its state
        # onto the CPU while the model is still there.
        self.optimizers: list[dict[str, str]] = [{}]
        self.loops: list[cst.CSTNode] = []
        self.blocks: list[int] = []
        # Per ``if`` open now: the node, the frame at the start of its body, the frame at its end.
        self.ifs: list[list] = []
        # Per function: each name's bindings (any form), as points of the walk.
        self.writes: list[dict[str, list[int]]] = [{}]
        # Per function: the constructors a name was built on the CPU from.
        self.built_by: list[dict[str, set[str]]] = [{}]
        self.seq = 0
        # load_state_dict call -> (receiver, the loops around it)
        self.candidates: dict[cst.Call, tuple[str, tuple[cst.CSTNode, ...]]] = {}
        self.device_default = False
        # Per method name that says it loads weights: for each use of it
        # (``net.load_pretrained_model(...)``), whether it is a call on a model
        # on the CPU at that point (a reference that is no call: False).
        self.method_uses: dict[str, list[bool]] = {}
        self._call_funcs: set[int] = set()
        # Wrappers of a model on the CPU that copy it where it is (``AveragedModel(net)``).
        self._cpu_copies: set[int] = set()
        # Constructor calls rebuilding a part of a model on the CPU from its own
        # parts (``model.cls = Head(model.config, model.emb.weight)``): call -> the model.
        self._rebuilt: dict[int, str] = {}
        # Arguments that named a model on the CPU when handed to their call
        # (``ResnetFC(torchvision_net)``): a wrapper of one wraps no device model.
        self._handed_on_cpu: set[int] = set()
        self.cpu_dicts = CpuDicts()  # ``d[k] = Net()`` ... ``for k, v in d.items()``
        self._dict_store: str | None = None
        self._dict_pick: str | None = None  # ``x = d[k]`` from a dict of models on the CPU

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._write(node.name.value)
        self.writes.append({})
        self.built_by.append({})
        params = node.params
        literal = self.literal_params(node)
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            # A parameter holding a string or a number is no model: a branch
            # that leaves it so cannot reach a load (``_bound_in_every_branch``).
            if param.name.value not in literal:
                self._write(param.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                self._write(star.name.value)
        self.frames.append({})
        self.cpu_dicts.enter_function()
        self.seen.append({})
        self.optimizers.append({})
        self.aliases.append({})
        self.holders.append({})
        self.functions.append(node)
        self._decide(node)
        cls = self.classes[-1]
        fresh = node.name.value == "__init__" and cls is not None and params.params and _plain_module(cls)
        self.fresh_self.append((params.params[0].name.value, cls) if fresh and cls is not None else None)
        self.classes.append(None)
        body = node.body
        # Bound in the function's own block: what its callers pass.
        self.frames[-1].update(dict.fromkeys(self.cpu_params(node), (*self.blocks, id(body))))

    def _decide(self, fn: cst.FunctionDef) -> None:
        values = fixed_values(fn, self.branch_values(fn))
        self.local_cpu.append(frozenset(name for name, value in values.items() if value == "cpu"))
        for node, taken in decided_branches(fn, values).items():
            if taken:
                if node.orelse is not None:
                    self.dead.add(id(node.orelse))
            else:
                self.dead.add(id(node.body))

    def _cpu_names(self) -> frozenset[str]:
        """The names holding the CPU device here: the module's, and the
        function's parameters every call binds to ``"cpu"``."""
        return self.cpu_devices | self.local_cpu[-1] if self.local_cpu[-1] else self.cpu_devices

    def visit_Else(self, node: cst.Else) -> bool:
        return id(node) not in self.dead  # an arm no call takes

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.local_cpu.pop()
        self.fresh_self.pop()
        self.classes.pop()
        self.writes.pop()
        self.built_by.pop()
        self.frames.pop()
        self.cpu_dicts.leave_function()
        self.seen.pop()
        self.optimizers.pop()
        self.aliases.pop()
        self.holders.pop()
        self.functions.pop()

    def visit_Return(self, node: cst.Return) -> None:
        # A builder returns a model on the CPU on every path (``return Net(...)``).
        if self.functions:
            value = node.value
            cpu = value is not None and (self._on_cpu_here(value) or self._built(value))
            fn = self.functions[-1]
            self.returns[fn] = self.returns.get(fn, True) and cpu
            shape = self._shape(value) if value is not None else None
            before = self.shapes.get(fn)
            self.shapes[fn] = shape if shape is not None and before in (None, shape) else False

    def _shape(self, value: cst.BaseExpression) -> Shape | None:
        """What ``return value`` gives, read as a builder's result: a dict of
        models on the CPU (``("dict", constructors)``), or a tuple holding at
        least one such dict or model (``return nets, meta, types``: per item,
        ``("dict" | "model", constructors)`` or None for anything else)."""
        if isinstance(value, cst.Tuple):
            if any(isinstance(el, cst.StarredElement) for el in value.elements):
                return None
            items = tuple(self._item_shape(el.value) for el in value.elements)
            return Shape(True, items) if any(items) else None
        item = self._item_shape(value)
        return Shape(False, (item,)) if item is not None and item[0] == "dict" else None

    def _item_shape(self, value: cst.BaseExpression) -> tuple[str, frozenset[str]] | None:
        if isinstance(value, cst.Name) and self.cpu_dicts.dicts[-1]:
            held = self.cpu_dicts.returned(value.value, lambda blocks: self.blocks[: len(blocks)] == list(blocks))
            if held is not None:
                return ("dict", held)
        if self._built(value):
            return ("model", frozenset({_constructor(value)}))
        if self._on_cpu_here(value):
            return ("model", frozenset(self.built_by[-1].get(dotted_name(value) or "", ())))
        return None

    def visit_Yield(self, node: cst.Yield) -> None:
        if self.functions:
            self.returns[self.functions[-1]] = False
            self.shapes[self.functions[-1]] = False

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool:
        self.blocks.append(id(node))
        self._enter_branch(node)
        return id(node) not in self.dead  # an arm no call takes

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self.blocks.pop()
        self._leave_branch(original_node)

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> bool:
        self.blocks.append(id(node))
        self._enter_branch(node)
        return id(node) not in self.dead

    def leave_SimpleStatementSuite(self, original_node: cst.SimpleStatementSuite) -> None:
        self.blocks.pop()
        self._leave_branch(original_node)

    # An ``if``'s branches exclude each other: what one does to a model (hands
    # it to ``train(net)``) does not reach a load in another (``elif``/``else``).
    # Each branch starts from the frame at the start of the ``if`` body; after
    # the ``if``, a name is on the CPU only when it is so at the end of both.
    #
    # A name built on the CPU in every branch of an ``if``/``elif``/``else``
    # (``if args.net == "vgg16": net = vgg16(...) elif ...: net = resnet(...)
    # else: print(...)``) is on the CPU after it: a branch that leaves the name
    # unbound (never bound before the ``if`` nor in the branch) cannot reach
    # a later use of it.
    def visit_If(self, node: cst.If) -> bool:
        # An ``elif`` is an ``if`` in its parent's ``orelse``: "before" is before the whole chain.
        chain = self.ifs[-1][5] if self.ifs and self.ifs[-1][0].orelse is node else self.seq
        self.ifs.append([node, None, None, self.seq, self.seq, chain])
        return id(node) not in self.dead  # an ``elif`` no call reaches

    def _enter_branch(self, block: cst.CSTNode) -> None:
        if self.ifs and self.ifs[-1][0].body is block:
            self.ifs[-1][1] = dict(self.frames[-1])

    def _leave_branch(self, block: cst.CSTNode) -> None:
        if self.ifs and self.ifs[-1][0].body is block and self.ifs[-1][1] is not None:
            self.ifs[-1][2] = dict(self.frames[-1])
            self.ifs[-1][4] = self.seq
            self.frames[-1].clear()
            self.frames[-1].update(self.ifs[-1][1])

    def leave_If(self, original_node: cst.If) -> None:
        _, _, body_end, start, middle, chain = self.ifs.pop()
        if body_end is not None:
            frame = self.frames[-1]
            other = original_node.orelse.body if isinstance(original_node.orelse, cst.Else) else None
            both = self._bound_in_every_branch(body_end, start, middle, chain)
            for key in [k for k, v in frame.items() if body_end.get(k) != v]:
                # Rebuilt on the CPU in the body (``if opt.PCB: net = PCB(n)``)
                # and on the CPU on the other path too: on the CPU after the ``if``.
                if (
                    key in body_end
                    and self._joins(body_end[key], original_node.body)
                    and self._joins(frame[key], other)
                ):
                    both.append(key)
                del frame[key]
            for key in both:
                frame[key] = tuple(self.blocks)

    def _joins(self, bound_in: tuple[int, ...], branch: cst.CSTNode | None) -> bool:
        """A binding made in a block around the ``if`` being left or in the
        branch's own block (not in a loop or block nested in it): it holds
        at the end of that branch. An ``elif`` was joined when it was left."""
        outer = list(bound_in[: len(self.blocks)]) == self.blocks[: len(bound_in)]
        return outer and (len(bound_in) <= len(self.blocks) or (branch is not None and bound_in[-1] == id(branch)))

    def _bound_in_every_branch(self, body_end: dict, start: int, middle: int, chain: int) -> list[str]:
        after, end = self.frames[-1], self.seq
        found = []
        for key in {*body_end, *after}:
            if not self._written(key, start, end) or self._written_on_path(key, chain):
                continue  # bound on the CPU before the ``if`` (kept as before), or bound before it
            in_body = self._written(key, start, middle)
            in_else = self._written(key, middle, end)
            # A branch that does not bind it leaves a plain name unbound; an
            # attribute may have been set anywhere (another method), but in
            # the ``__init__`` of a plain ``nn.Module`` subclass
            # (``self.model = A(...)`` in every arm) nothing set it before.
            unbound = "." not in key or self._unset_attribute(key)
            if (key in body_end if in_body else unbound) and (key in after if in_else else unbound):
                found.append(key)
        return found

    def _unset_attribute(self, key: str) -> bool:
        """``key`` is ``self.name`` in the ``__init__`` of a plain ``nn.Module``
        subclass whose body does not bind ``name`` (no class attribute)."""
        fresh = self.fresh_self[-1]
        owner, _, attr = key.partition(".")
        return fresh is not None and owner == fresh[0] and "." not in attr and attr not in _class_names(fresh[1])

    def _written_on_path(self, key: str, end: int) -> bool:
        """``key`` was bound before ``end`` on the path to this point: a
        binding in the body of an enclosing ``if`` whose ``elif``/``else``
        is being walked (``if a: model = A() elif b: if d: model = B()``)
        excludes this path and does not count."""
        skipped = [(entry[3], entry[4]) for entry in self.ifs if entry[2] is not None]
        points = self.writes[-1].get(key, ())
        return any(p < end and not any(lo <= p < hi for lo, hi in skipped) for p in points)

    def _written(self, key: str, start: int, end: int) -> bool:
        """``key`` was bound (in any form) between the two points of the walk."""
        points = self.writes[-1].get(key, ())  # in walk order
        first = bisect_left(points, start)
        return first < len(points) and points[first] < end

    def _write(self, key: str | None) -> None:
        if key is not None:
            self.writes[-1].setdefault(key, []).append(self.seq)
            self.seq += 1

    def _write_target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._write_target(element.value)
        elif isinstance(target, cst.StarredElement):
            self._write_target(target.value)
        else:
            self._write(dotted_name(target))

    def visit_AsName(self, node: cst.AsName) -> None:
        self._write_target(node.name)  # ``with ... as x``, ``except E as x``, ``import a as x``

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None:
            self._write((dotted_name(node.name) or "").split(".")[0] or None)
        local = node.evaluated_alias or node.evaluated_name
        if len(self.frames) == 1 and self.cpu_object(local):
            self.frames[-1][local] = tuple(self.blocks)  # ``from net import vgg``: that model, on the CPU

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._write_target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._write_target(node.target)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._write(node.name.value)
        self.classes.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.classes.pop()

    def _enter_loop(self, node: cst.CSTNode) -> None:
        self.loops.append(node)

    def _leave_loop(self, node: cst.CSTNode) -> None:
        self.loops.pop()

    def visit_For(self, node: cst.For) -> None:
        self._write_target(node.target)
        self._enter_loop(node)
        found = self.cpu_dicts.loop(node, lambda blocks: self.blocks[: len(blocks)] == list(blocks))
        if found is not None:
            self.frames[-1][found[0]] = tuple(self.blocks)
            self.built_by[-1][found[0]] = set(found[1])

    def visit_Name(self, node: cst.Name) -> None:
        if self.cpu_dicts.dicts[-1]:
            self.cpu_dicts.seen(node)

    def leave_For(self, original_node: cst.For) -> None:
        self._leave_loop(original_node)

    def visit_While(self, node: cst.While) -> None:
        self._enter_loop(node)

    def leave_While(self, original_node: cst.While) -> None:
        self._leave_loop(original_node)

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            if isinstance(item.item, cst.Call) and self.names.call_name(item.item) == "torch.device":
                self.device_default = True

    def _lost(self, key: str) -> None:
        """``key`` may have moved: it and the loads of it in a loop open now
        (the next iteration loads into a moved model) are not on the CPU.
        Its parts go with it (``self.fc`` built, then ``self.cuda()``)."""
        frame = self.frames[-1]
        frame.pop(key, None)
        self.cpu_dicts.lost(key)
        if frame:
            prefix = key + "."
            for part in [k for k in frame if k.startswith(prefix)]:
                del frame[part]
        open_loops = {id(loop) for loop in self.loops}
        for call, (receiver, loops) in list(self.candidates.items()):
            if receiver == key and any(id(loop) in open_loops for loop in loops):
                del self.candidates[call]

    def visit_Assign(self, node: cst.Assign) -> None:
        # ``model.cls = BertOnlyMLMHead(model.config, model.bert.emb.weight)``:
        # a part of a model on the CPU rebuilt by a class from the model's own
        # parts, with no device argument and no move: the new part is built
        # where they are, and nothing leaves the model.
        value = node.value
        self._dict_store = self.cpu_dicts.storing(node)
        self._dict_pick = self.cpu_dicts.reading(node)
        single = len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)
        self._holding = id(value) if single and isinstance(value, cst.Call) else None
        if len(node.targets) != 1 or not isinstance(value, cst.Call) or _moves_anything(value):
            return
        key = dotted_name(node.targets[0].target)
        owner = self._owner(key) if key and "." in key else None
        callee = (dotted_name(value.func) or "").rpartition(".")[2]
        if owner is None or owner == key or not callee[:1].isupper():
            return
        if any(a.star or (a.keyword is not None and a.keyword.value in ("device", "device_map")) for a in value.args):
            return
        self._rebuilt[id(value)] = owner

    def leave_Assign(self, original_node: cst.Assign) -> None:
        if self._dict_store is not None:
            self._store_in_dict(self._dict_store, original_node.value)
            self._dict_store = None
        self._use_holders((original_node.value,))  # ``ev2 = ev``: an alias that may hand it on
        held, self._held = self._held, None
        for t in original_node.targets:
            if isinstance(t.target, cst.Name):
                self.holders[-1].pop(t.target.value, None)
            self._write_target(t.target)
            key = dotted_name(t.target)
            if key is None:
                continue
            # Rebound, a name stored into a dict (``d[k] = net``) no longer
            # names the dict's model (a move in the value was seen before).
            self.cpu_dicts.unlink(key)
            self._lost(key)
            owner = self._owner(key)
            value = original_node.value
            named = isinstance(value, cst.Attribute) or (
                isinstance(value, cst.Name) and value.value not in ("True", "False", "None")
            )
            if (
                owner is not None
                and (named or _moves_anything(value))
                and not self._plain_instance(value)
                and not self._inert_slot(owner, value)
            ):
                self._lost(owner)  # ``model.base = net``: a part that may be anywhere
            self.aliases[-1].pop(key, None)
            if (
                self._built(original_node.value)
                or id(original_node.value) in self._cpu_copies
                or self._imported_cpu_object(original_node.value)
            ):
                self.frames[-1][key] = tuple(self.blocks)
                # Every class this name was built from, in any branch (judged together).
                self.built_by[-1].setdefault(key, set()).add(_constructor(original_node.value))
            elif "." not in key and (
                self._cpu_getattr(original_node.value)
                or self.cpu_factory(original_node.value)
                or _run_time_pick(original_node.value)
                or self._cpu_class_choice(original_node.value)
            ):
                self.aliases[-1][key] = tuple(self.blocks)
            elif (
                model := self._optimized_cpu_model(original_node.value) or self._helper_optimizer(key, value)
            ) is not None:
                self.frames[-1][key] = tuple(self.blocks)
                self.optimizers[-1][key] = model
            root = key.split(".", 1)[0]
            # ``args.n_gpu = torch.cuda.device_count()`` sets a part: ``args``
            # is still what its own binding made it (``add_args(parser)``).
            if isinstance(original_node.value, cst.Call) and (root == key or root not in self.seen[-1]):
                self.seen[-1][root] = original_node.value
        if held is not None and held[0] == id(original_node.value):
            # ``model = DefectModel(model, args)``: the name now means the
            # holder; what it meant before is reached only through it.
            holder = dotted_name(original_node.targets[0].target) or ""
            self.holders[-1][holder] = [key for key in held[1] if key != holder]
        self._picked(original_node)
        self.cpu_dicts.bound(original_node, tuple(self.blocks), self._dict_model)
        self._received(original_node)

    def _store_in_dict(self, name: str, value: cst.BaseExpression) -> None:
        """``d[k] = Net()``, or ``d[k] = net`` of a name holding a model on the
        CPU here (whose later move then drops ``d``); anything else drops ``d``."""
        if self._built(value):
            self.cpu_dicts.stored(name, _constructor(value))
        elif isinstance(value, cst.Name) and self._on_cpu_here(value):
            for constructor in self.built_by[-1].get(value.value, None) or {""}:
                self.cpu_dicts.stored(name, constructor, value.value)
        else:
            self.cpu_dicts.stored(name, None)

    def _received(self, node: cst.Assign) -> None:
        """``nets, meta, kinds = init_nets(...)`` (or ``nets = init_nets(...)``)
        of a function of this module whose every return gives models on the
        CPU (``_shape``, of the walk before): the names they are bound to hold
        them, as after building them here."""
        value = node.value
        if len(node.targets) != 1 or not isinstance(value, cst.Call):
            return
        callee = self.resolve_call(value)
        shape = self.returned_shape(callee) if callee is not None else None
        if shape is None or not _built_on_cpu(
            value, self.names, lambda func: True, self._wraps, self.takes_no_device, self._cpu_names()
        ):
            return  # handed a model, a device, or moved on the way
        target = node.targets[0].target
        pairs: list[tuple[cst.BaseExpression, ShapeItem | None]]
        if isinstance(target, (cst.Tuple, cst.List)) and shape.unpacked:
            if len(target.elements) != len(shape.items):
                return
            if any(isinstance(e, cst.StarredElement) for e in target.elements):
                return
            pairs = [(e.value, item) for e, item in zip(target.elements, shape.items)]
        elif isinstance(target, cst.Name) and not shape.unpacked:
            pairs = [(target, shape.items[0])]
        else:
            return
        for name, item in pairs:
            if item is None or not isinstance(name, cst.Name):
                continue
            kind, constructors = item
            if kind == "dict":
                self.cpu_dicts.received(name.value, tuple(self.blocks), constructors)
            else:
                self.frames[-1][name.value] = tuple(self.blocks)
                self.built_by[-1][name.value] = set(constructors)

    def _dict_model(self, value: cst.BaseExpression) -> str | None:
        """The constructor of ``value``, a model built on the CPU (a dict literal's entry); else None."""
        return (_constructor(value) or None) if self._built(value) else None

    def _picked(self, node: cst.Assign) -> None:
        """``x = d[k]`` from a dict of models built on the CPU (cpu_dicts.py): ``x`` is one."""
        name, self._dict_pick = self._dict_pick, None
        if name is None or not isinstance(node.targets[0].target, cst.Name):
            return
        key = node.targets[0].target.value
        found = self.cpu_dicts.picked(name, key, lambda blocks: self.blocks[: len(blocks)] == list(blocks))
        if found:
            self.frames[-1][key] = tuple(self.blocks)
            self.built_by[-1][key] = found

    def _use_holders(self, values: Iterable[cst.BaseExpression]) -> None:
        """A holder of models (``evaluator``) used in ``values`` (a call's
        receiver or arguments, an assigned value): it may hand them on to
        code that moves them, so they are no longer known on the CPU."""
        holders = self.holders[-1]
        if not holders:
            return
        for value in values:
            root = value
            while isinstance(root, (cst.Attribute, cst.Subscript, cst.Call)):
                root = root.func if isinstance(root, cst.Call) else root.value
            if isinstance(root, cst.Name) and root.value in holders:
                for key in holders.pop(root.value):
                    self._lost(key)

    def _plain_instance(self, value: cst.BaseExpression) -> bool:
        """``value`` is a name bound in this function to an instance of a
        plain class (``enc = BertLikeSentencePieceTextEncoder(t)``, on no
        base but ``object``): set as an attribute of a model, it brings no
        tensor from anywhere; nor does a value read from one
        (``model.config.vocab_size = enc.vocab_size``)."""
        while isinstance(value, cst.Attribute):
            value = value.value
        if not isinstance(value, cst.Name):
            return False
        built = self.seen[-1].get(value.value)
        return built is not None and isinstance(built.func, cst.Name) and self.plain_class(built.func.value)

    def _inert_slot(self, owner: str, value: cst.BaseExpression) -> bool:
        """``self.activation = activation`` in the ``__init__`` of a model
        under construction (``owner`` its ``self``), from a parameter not
        rebound yet whose default is a layer that owns no tensor
        (inert_slots.py): the store puts nothing of the model on a device."""
        fresh = self.fresh_self[-1]
        if fresh is None or fresh[0] != owner or not isinstance(value, cst.Name) or not self.functions:
            return False
        return len(self.writes[-1].get(value.value, ())) == 1 and inert_slot(
            self.functions[-1], value.value, self.names
        )

    def _imported_cpu_object(self, value: cst.BaseExpression) -> bool:
        """``vgg = net.vgg`` at module level: a model another project module
        builds on the CPU at import and never names again. Only at module
        level, where the code before it is all in view (a function may run
        after anything has moved the shared object)."""
        if len(self.frames) != 1 or not isinstance(value, (cst.Name, cst.Attribute)):
            return False
        spelled = dotted_name(value)
        return spelled is not None and self.cpu_object(spelled)

    def _optimized_cpu_model(self, value: cst.BaseExpression) -> str | None:
        """The model on the CPU here whose parameters ``value`` builds a torch
        optimizer over, else None: ``torch.optim.Adam(net.parameters(), lr)``,
        or parameter groups each drawn from parts of it
        (``[{"params": get_parameters_conv(net.model, "weight")}, ...]``,
        lightweight-pose's train.py)."""
        qn = (self.names.call_name(value) if isinstance(value, cst.Call) else None) or ""
        if not isinstance(value, cst.Call) or not qn.startswith("torch.optim.") or "lr_scheduler" in qn:
            return None
        first = value.args[0] if value.args else None
        if first is None or first.keyword is not None or first.star:
            return None
        groups: list[cst.BaseExpression] = [first.value]
        if isinstance(first.value, (cst.List, cst.Tuple)):
            groups = []
            for element in first.value.elements:
                found = _params_entry(element.value)
                if found is None:
                    return None
                groups.append(found)
        owners = {self._params_owner(group) for group in groups}
        return owners.pop() if len(owners) == 1 and None not in owners else None

    def _helper_optimizer(self, key: str, value: cst.BaseExpression) -> str | None:
        """The model on the CPU here that ``value``, a call of a project
        function that moves nothing (``stays``), builds an optimizer over:
        ``optimizer = make_optimizer(cfg, model)`` (named for an optimizer,
        the target or the callee), handed that one model and nothing else
        that may be a model or a device. A fresh optimizer holds no state
        until it steps, and loads its state onto its parameters' device."""
        if not isinstance(value, cst.Call) or not value.args or not self.stays(value):
            return None
        callee = (dotted_name(value.func) or "").rpartition(".")[2]
        if guess_kind_from_name(key) is not Kind.OPTIMIZER and "optim" not in callee.lower():
            return None
        owners: set[str] = set()
        for arg in value.args:
            if arg.star or (arg.keyword is not None and arg.keyword.value in ("device", "device_map")):
                return None
            spelled = dotted_name(arg.value)
            if spelled is not None and re.search(r"device|cuda|gpu", spelled.rsplit(".", 1)[-1], re.IGNORECASE):
                return None
            owner = self._owner(spelled) if spelled is not None else None
            if owner is not None and self._key_here(owner):
                owners.add(owner)
            elif self._wraps(arg.value) or _moves_anything(arg.value):
                return None  # another model, or a value on a device
        return owners.pop() if len(owners) == 1 else None

    def _params_owner(self, params: cst.BaseExpression) -> str | None:
        """The model on the CPU here that ``params`` draws its parameters from:
        ``net.parameters()``, or a call handed only parts of it and constants
        (``get_parameters_bn(net.cpm, "bias")``)."""
        if not isinstance(params, cst.Call):
            return None
        func = params.func
        if isinstance(func, cst.Attribute) and func.attr.value == "parameters" and not params.args:
            return self._owner(dotted_name(func.value)) if self._on_cpu_here(func.value) else None
        owners: set[str | None] = set()
        for arg in params.args:
            if arg.star or isinstance(arg.value, (cst.SimpleString, cst.Integer, cst.Float)):
                continue
            spelled = dotted_name(arg.value)
            owner = self._owner(spelled) if spelled is not None else None
            owners.add(owner if owner is not None and self._key_here(owner) else None)
        return owners.pop() if len(owners) == 1 else None

    def _own_method(self, key: str, method: str) -> bool:
        """``net.create_architecture()`` on a model built from classes none of
        whose code, bases included, moves anything: a method of its own (or
        of ``nn.Module`` but a move) leaves it where it is."""
        classes = self.built_by[-1].get(key, set())
        return bool(classes) and method not in _MOVES and all(map(self.cpu_hierarchy, classes))

    def _still_method(self, key: str, method: str) -> bool:
        """``model.get_parameter_groups()``: a method the project defines only
        so that it moves nothing, called on a model no library built (a
        library's class may define the name otherwise)."""
        if method not in self.cpu_methods:
            return False
        for built in self.built_by[-1].get(key, set()):
            head = built.split(".", 1)[0]
            qualified = self.names.bindings.get(head, head) if head else ""
            if built.endswith("from_pretrained") or qualified.split(".", 1)[0] in _LIBRARIES:
                return False
        return True

    def _owner(self, key: str | None) -> str | None:
        """``key`` if it names a model on the CPU here, else the one of its
        owners that does (``model`` for ``model.base``)."""
        frame = self.frames[-1]
        while key is not None and key not in frame:
            key = key.rsplit(".", 1)[0] if "." in key else None
        return key

    def _on_cpu_here(self, value: cst.BaseExpression) -> bool:
        """``value`` names a model on the CPU, bound in a block around this point."""
        return self._key_here(dotted_name(value) or "")

    def _key_here(self, key: str) -> bool:
        bound_in = self.frames[-1].get(key)
        return bound_in is not None and self.blocks[: len(bound_in)] == list(bound_in)

    def _built(self, value: cst.BaseExpression) -> bool:
        return _built_on_cpu(value, self.names, self._cpu_callee, self._wraps, self.takes_no_device, self._cpu_names())

    def _cpu_callee(self, func: cst.BaseExpression) -> bool:
        """A class or builder that moves nothing, or a name bound here (in a
        block around this point) to a class fetched from a module whose every
        class moves nothing (``model_cls = getattr(p2ch14.model, name)``)."""
        if self._cpu_getattr(func):
            return True
        if isinstance(func, cst.Name) and func.value in self.aliases[-1]:
            bound_in = self.aliases[-1][func.value]
            return self.blocks[: len(bound_in)] == list(bound_in)
        return self.cpu_classes(func)

    def _cpu_class_choice(self, value: cst.BaseExpression) -> bool:
        """``F if args.uncond else CCF`` (JEM's ``model_cls``), or a class
        named alone (``model_cls = CCF``): every class the name may get is
        one that builds on the CPU, so a call of the name builds there too."""
        if isinstance(value, cst.IfExp):
            return self._cpu_class_choice(value.body) and self._cpu_class_choice(value.orelse)
        return isinstance(value, (cst.Name, cst.Attribute)) and self._cpu_callee(value)

    def _cpu_getattr(self, value: cst.BaseExpression) -> bool:
        """``getattr(p2ch14.model, name)`` of a module whose every class is built on the CPU,
        or the same lookup spelled ``models.__dict__[name]``."""
        if (
            isinstance(value, cst.Subscript)
            and isinstance(value.value, cst.Attribute)
            and value.value.attr.value == "__dict__"
        ):
            spelled = dotted_name(value.value.value)
            return spelled is not None and self.cpu_module(spelled)
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "getattr"):
            return False
        if len(value.args) not in (2, 3) or any(a.keyword is not None or a.star for a in value.args):
            return False
        spelled = dotted_name(value.args[0].value)
        return spelled is not None and self.cpu_module(spelled)

    def _copies_cpu_model(self, call: cst.Call) -> bool:
        """``AveragedModel(net)`` of a model on the CPU here, with no device
        (by keyword or position): its copy of ``net`` is on the CPU too."""
        if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
            return False
        return self._on_cpu_here(call.args[0].value)

    def _wraps(self, arg: cst.BaseExpression) -> bool:
        """``arg`` may be a model bound before (``DataParallel(net)``), not
        known on the CPU when it was handed over."""
        if id(arg) in self._handed_on_cpu:
            return False
        root = arg
        while isinstance(root, (cst.Attribute, cst.Subscript)):
            root = root.value
        if not isinstance(root, cst.Name):
            return False
        return self.may_be_model(arg, self.seen[-1].get(root.value))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if id(node) not in self._call_funcs and loading_name(node.attr.value):
            self.method_uses.setdefault(node.attr.value, []).append(False)

    def visit_Call(self, node: cst.Call) -> None:
        qn = self.names.call_name(node) or ""
        if qn == "torch.set_default_device":
            self.device_default = True
        frame = self.frames[-1]
        if isinstance(node.func, cst.Attribute):
            self._call_funcs.add(id(node.func))
            if loading_name(node.func.attr.value):
                on_cpu = self._on_cpu_here(node.func.value) or self._built(node.func.value)
                self.method_uses.setdefault(node.func.attr.value, []).append(on_cpu)
        callee = self.resolve_call(node)
        if callee is not None:  # what this call passes, before handing it over loses it
            self.local_args.setdefault(callee, []).append(
                {
                    name: self._on_cpu_here(arg.value) or self._built(arg.value)
                    for arg, name in bound_params(node, callee)
                }
            )
            bound = bound_params(node, callee)
            self.literal_args.setdefault(callee, []).append({name: _literal(arg.value) for arg, name in bound})
            self.call_values.setdefault(callee, []).append(bound_values(node, callee))
        if self.cpu_dicts.dicts[-1]:
            self.cpu_dicts.item_method(node, _STAYS)  # ``nets[0].state_dict()``
        if qn in _COPIES_IN_PLACE and self._copies_cpu_model(node):
            self._cpu_copies.add(id(node))  # before handing the model over loses it
        looks = isinstance(node.func, cst.Name) and node.func.value in _LOOKS
        # ``super(Net, self)``: a proxy of the instance, handed nowhere; what
        # runs is the method called on it (``_super_call``).
        looks = looks or _super_proxy(node) or _reads_only(qn or dotted_name(node.func) or "")
        # ``nn.Module.__init__(self)``: the old spelling of ``super().__init__()``.
        looks = looks or (qn.startswith("torch.nn.") and qn.endswith(".__init__"))
        # ``MultiStepLR(optimizer, ...)``: a scheduler reads the optimizer's learning rates, moves nothing.
        looks = looks or qn.startswith("torch.optim.lr_scheduler.")
        rebuilds = self._rebuilt.get(id(node))
        self._use_holders((node.func, *(arg.value for arg in node.args)))
        holds = self._holding == id(node) and self.cpu_holder(node)
        kept: list[str] = []
        # A class of the project's that moves nothing (``ResnetFC(resnet)``;
        # not a library wrapper: ``DataParallel`` moves to its one GPU, unless
        # how many it has depends on the machine: parallel_wrappers.py).
        if (dotted_name(node.func) or "").rpartition(".")[2][:1].isupper() and (
            self._cpu_callee(node.func) or _torch_container(qn) or machine_parallel(node, qn)
        ):
            self._handed_on_cpu.update(id(a.value) for a in node.args if not a.star and self._on_cpu_here(a.value))
        for arg in [] if looks or self.stays(node) else node.args:
            key = self._owner(dotted_name(arg.value))
            if key is not None and key != rebuilds:
                if holds:
                    kept.append(key)  # held by the new object, not moved (yet)
                else:
                    self._lost(key)  # handed to a call that may move it (or a part of it)
        if kept:
            self._held = (id(node), kept)
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        if isinstance(func.value, cst.Call) and _super_proxy(func.value):
            self._super_call(func.value, func.attr.value)
            return
        # ``model.base.load_state_dict(sd)``: a part of a model on the CPU is on the CPU.
        key = self._owner(dotted_name(func.value))
        if key is None:
            return
        method = func.attr.value
        if method == "load_state_dict":
            bound_in = frame[key]
            model = self.optimizers[-1].get(key)
            if model is not None and model not in frame:
                return  # the model its parameters belong to has moved since: so has its state
            if self.blocks[: len(bound_in)] == list(bound_in):  # bound in a block around the load
                self.candidates[node] = (key, _loops_reaching(self.loops, bound_in))
        elif method not in _STAYS and not self.stays(node) and not moves_to_cpu(node, self._cpu_names()):
            # (``net.to("cpu")`` leaves a model on the CPU where it is.) A method
            # of the model itself (not of a part, whose class is not known here).
            if not (
                key == dotted_name(func.value) and (self._own_method(key, method) or self._still_method(key, method))
            ):
                self._lost(key)

    def _super_call(self, proxy: cst.Call, method: str) -> None:
        """``super().cuda()``, ``super(Net, self).setup()``: a method of a base
        run on the instance; only ``__init__`` (the bases judged where the
        instance is said to start on the CPU) and methods that keep a model
        in place leave it there."""
        if method == "__init__" or method in _STAYS:
            return
        this = dotted_name(proxy.args[1].value) if len(proxy.args) == 2 else None
        fresh = self.fresh_self[-1]
        for key in {this, fresh[0] if fresh is not None else None, "self"}:
            if key is not None and key in self.frames[-1]:
                self._lost(key)


# Functions that read a model's numbers or options and move nothing
# (``int(math.log(self.opts.size, 2))``): builtins, and modules of the
# standard library that know nothing of devices.
_READS_ONLY = _LOOKS | frozenset(
    {"torch.load", "int", "float", "round", "abs", "min", "max", "bool", "format", "sorted", "sum"}
)
_READING_MODULES = frozenset({"math", "os", "json", "logging", "re", "warnings", "copy"})


def _reads_only(qualified: str) -> bool:
    return qualified in _READS_ONLY or qualified.partition(".")[0] in _READING_MODULES


def _super_proxy(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Name) and call.func.value == "super"


class _MovedNames(cst.CSTVisitor):
    """Names moved to a device in place: ``net.cuda()``, ``net.to(device)``."""

    def __init__(self) -> None:
        self.moved: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _MOVES and isinstance(func.value, cst.Name):
            self.moved.add(func.value.value)


_MUTATORS = frozenset({"update", "setdefault", "__setitem__", "pop", "clear"})


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
    return (dotted_name(base) or "").rsplit(".", 1)[-1] in _PLAIN_BASES


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
        # Per function of this module, what it returns when that holds models on the CPU (_CpuModels._shape).
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
    ) -> _CpuModels:
        """A walk of the module; ``decide``: the arms of ``if`` statements no call takes are not walked."""
        literal = literal or {}
        visitor = _CpuModels(
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
        if init is None or not _swallowed(init, init.params.star_kwarg):
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
            named = _evaluated_name(func)
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
        if isinstance(func, cst.Name) and func.value in _NOT_MODELS and func.value not in self.calls.classes:
            return False
        if (self.names.call_name(bound_from) or "").startswith(_NOT_MODEL_MODULES):
            return False
        if _SETTINGS_CALLEE.fullmatch((dotted_name(func) or "").rsplit(".", 1)[-1]):
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
        if holds_in_place(call, self._cpu_builder, _moves_anything):
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
            found = _Placing()
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
            looks = lambda call: _reads_only(names.call_name(call) or dotted_name(call.func) or "")  # noqa: E731
            redefined = lambda fn: _redefined(calls, fn)  # noqa: E731
            self._self_methods = SelfMethods(calls.resolve, _PLACES, _STAYS, redefined, looks)
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
            built = lambda value: _built_on_cpu(  # noqa: E731
                value, self.names, self._cpu_builder, wraps, self._takes_no_device
            )
            found = stable_cpu_attrs(self.module, cls, _STAYS, built)
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
        if not _moves_anything(cls):
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
