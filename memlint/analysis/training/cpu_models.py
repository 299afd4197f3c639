"""Which models are still on the CPU where a state dict is loaded into them.

``CpuModels`` walks one function for Checkpoints.into_cpu_model (state_loads.py):
the ``x.load_state_dict(...)`` call loads into a model that is still on the CPU
at that point: bound earlier in the same function, in a block around the load
(not in one branch), to a newly built model whose constructor is known not to
move it (a class of this module whose methods make no device move but of
tensors they build and hand back, project/class_moves.py; a function of the
project returning one, project/cpu_builders.py; ``torchvision.models.resnet50()``,
``timm.create_model``, a ``torch.nn`` layer, ``from_pretrained(name)`` without
``device_map``; not a wrapper of another model such as ``DataParallel(net)``; an
argument from ``get_config()`` is none), with nothing in between (an ``if``'s
other branches excluded) that may move it (a device move, the model handed to a
call, rebound, or a loop around the load that moves it later). A load into a
part of such a model (``model.base``) is into it; a part rebound to a name or
moved loses it. A file that builds models on a device (``with
torch.device("cuda"):``, ``torch.set_default_device``) has no model known to be
on the CPU. A class of another module is not known (the project stage may tell
later).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping
from typing import Literal, NamedTuple

import libcst as cst

from memlint.analysis.scope.callgraph import bound_params
from memlint.analysis.scope.literal_branches import bound_values, decided_branches, fixed_values
from memlint.analysis.scope.names import ImportTable, dotted_name, mentions
from memlint.analysis.training.cpu_devices import is_cpu_device, moves_to_cpu
from memlint.analysis.training.cpu_dicts import CpuDicts
from memlint.analysis.training.inert_slots import inert_slot
from memlint.analysis.training.parallel_wrappers import machine_parallel
from memlint.analysis.training.state_flow import key_source
from memlint.analysis.training.vision_tables import torchvision_table_entry
from memlint.parse.traversal import visit_fast
from memlint.vocabulary.kinds import Kind, guess_kind_from_name
from memlint.vocabulary.loading import loading_name
from memlint.vocabulary.settings_values import config_reader

STAYS = frozenset(
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
MOVES = frozenset({"to", "cuda", "xpu", "mps", "to_empty", "ipu", "npu"})


# Wrappers that deep-copy the model they are given and leave the copy on its
# device unless told one (``AveragedModel(model, device=None, ...)``).
_COPIES_IN_PLACE = frozenset({"torch.optim.swa_utils.AveragedModel"})

_CPU_BUILDERS = ("torchvision.models.", "torch.nn.", "timm.create_model", "timm.models.")
# Packages whose models' methods are theirs, not the project's (_still_method).
_LIBRARIES = frozenset({"torch", "torchvision", "timm", "transformers", "diffusers", "peft", "accelerate"})
# Builtins and modules whose calls never return a model: an argument bound
# from one (``num_tag = len(enc.classes_)``) is not a model being wrapped.
NOT_MODELS = frozenset(
    {"len", "int", "float", "str", "bool", "list", "dict", "tuple", "set", "sorted", "range", "sum", "max", "min"}
    | {"abs", "round", "open", "zip", "enumerate", "format", "vars"}
)
# Bases of a class that is never a model (``class AttrDict(dict)``).
PLAIN_BASES = frozenset({"object", "dict", "list", "tuple", "set", "str", "int", "float", "OrderedDict", "defaultdict"})
NOT_MODEL_MODULES = ("json.", "yaml.", "os.", "math.", "argparse.", "re.", "numpy.", "random.", "torch.device")
# Callees named for the settings they return (``configs.get_config()``,
# ``load_cfg(path)``, ``parser.parse_args()``): what they return is no model.
SETTINGS_CALLEE = re.compile(
    r"(get|load|make|parse|read)_?(config|configs|cfg|conf|args|arguments|opts?|options|hparams|settings)",
    re.IGNORECASE,
)


def evaluated_name(call: cst.Call) -> str:
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


def swallowed(init: cst.FunctionDef, star: object) -> bool:
    """``init``'s ``**kwargs`` is absent or never read (HRNet's
    ``def __init__(self, cfg, **kwargs)``): no ``device=`` reaches a layer.
    As project/cpu_builders.py's ``swallowed``."""
    if not isinstance(star, cst.Param):
        return True
    return not mentions(init.body, star.name.value)


def _run_time_pick(value: cst.BaseExpression) -> bool:
    """``eval(model_type)`` of a name read at run time (audioset's
    ``Model = eval(args.model_type)``): a class picked by name from the
    module's own names, as ``_dynamic_class`` picks one from a module named
    at run time. Which class, and whether it moves itself, is not known;
    built without a device, the load into it is not claimed. A string
    (``eval('models.' + name + '.get_pose_net')``) is ``evaluated_name``'s."""
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
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in MOVES:
            self.found = True
        elif any(_on_a_device(arg) for arg in node.args):
            self.found = True


def _on_a_device(arg: cst.Arg) -> bool:
    """``device=...`` but ``device="cpu"``."""
    if arg.keyword is None or arg.keyword.value not in ("device", "device_map"):
        return False
    return not (isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value == "cpu")


# Calls that may place what they are handed on a device (the project summary's ``PLACES``).
PLACES = MOVES | {"prepare", "prepare_model", "setup", "setup_module", "initialize"}


class Placing(cst.CSTVisitor):
    """In a function: whether a call in it may place something on a device,
    and its plain calls (``helper(m)``), to follow into this module's functions."""

    def __init__(self) -> None:
        self.places = False
        self.called: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute):
            self.places = self.places or func.attr.value in PLACES
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


# What a builder returns (CpuModels._shape): per item, ("dict" | "model",
# the constructors of its models), None for an item of another kind; and
# whether it is a tuple to unpack (``return nets, meta``) or one value (``return nets``).
ShapeItem = tuple[str, frozenset[str]]


class Shape(NamedTuple):
    unpacked: bool
    items: tuple[ShapeItem | None, ...]


def _constructor(value: cst.BaseExpression) -> str:
    """``Net`` for ``Net(...).eval()``: the callee under a chain of methods ("" if none);
    of a model built on the CPU (``built_on_cpu``), a move in the chain is to the CPU."""
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


class _AllCalls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.found.append(node)


def _any_callee(func: cst.BaseExpression) -> bool:
    return True


def _loops_reaching(loops: list[cst.CSTNode], bound_in: tuple[int, ...]) -> tuple[cst.CSTNode, ...]:
    """The loops around a load whose next iteration reaches it with the model
    of this one: not a loop whose body rebuilds the model before the load
    (``for w in weights: net = TSN(...); net.load_state_dict(...); net.cuda()``
    loads each file into a fresh CPU model; a move later in the body moves
    only the model the next iteration replaces)."""
    return tuple(loop for loop in loops if id(getattr(loop, "body", None)) not in bound_in)


def moves_anything(node: cst.CSTNode) -> bool:
    visitor = _Moves()
    visit_fast(node, visitor)
    return visitor.found


def _torch_container(qualified: str) -> bool:
    """``nn.TransformerDecoder(layer, 6)``, ``nn.Sequential(a, b)``: a torch.nn
    class keeps the modules it is handed where they are (not the
    ``DataParallel`` wrappers, which move theirs to their first device)."""
    head, _, last = qualified.rpartition(".")
    return head == "torch.nn" and last[:1].isupper() and "Parallel" not in last


def built_on_cpu(
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
        if func.attr.value in MOVES:
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
        if moves_anything(arg.value):
            return False
    if placed or cpu_classes(value.func) or torchvision_table_entry(value.func, names):
        return True
    name = dotted_name(value.func)
    if name is None or config_reader(name):
        return False  # ``RobertaConfig.from_pretrained(path)``: settings, no model
    if name.rsplit(".", 1)[-1] == "from_pretrained":
        return True
    return (names.call_name(value) or "").startswith(_CPU_BUILDERS)


class CpuModels(cst.CSTVisitor):
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
        # Per frame: names bound to ``torch.load(...)`` and not rebound since,
        # and the aliases of classes picked by that checkpoint's own entries
        # (``_checkpoint_pick``).
        self.loaded: list[set[str]] = [set()]
        self.picked: list[set[str]] = [set()]
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
        self.loaded.append(set())
        self.picked.append(set())
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
        self.loaded.pop()
        self.picked.pop()
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
            self.loaded[-1].discard(key)
            self.picked[-1].discard(key)
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
        if len(node.targets) != 1 or not isinstance(value, cst.Call) or moves_anything(value):
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
        # Judged before the targets are rebound: ``model = cut_head(model)``.
        kept = self._kept_on_cpu(original_node.value)
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
                and (named or moves_anything(value))
                and not self._plain_instance(value)
                and not self._inert_slot(owner, value)
            ):
                self._lost(owner)  # ``model.base = net``: a part that may be anywhere
            self.aliases[-1].pop(key, None)
            if (
                kept
                or self._built(original_node.value)
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
            elif "." not in key and self._checkpoint_pick(original_node.value):
                self.aliases[-1][key] = tuple(self.blocks)
                self.picked[-1].add(key)
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
        targets = original_node.targets
        if (
            len(targets) == 1
            and isinstance(targets[0].target, cst.Name)
            and isinstance(original_node.value, cst.Call)
            and self.names.call_name(original_node.value) == "torch.load"
        ):
            self.loaded[-1].add(targets[0].target.value)
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
        if shape is None or not built_on_cpu(
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
            elif self._wraps(arg.value) or moves_anything(arg.value):
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
        return bool(classes) and method not in MOVES and all(map(self.cpu_hierarchy, classes))

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
        takes_no_device = self.takes_no_device
        if self._checkpoint_build(value):
            takes_no_device = _any_callee  # its ``**kwargs`` are the checkpoint's own: no device
        return built_on_cpu(value, self.names, self._cpu_callee, self._wraps, takes_no_device, self._cpu_names())

    def _from_checkpoint(self, value: cst.BaseExpression) -> bool:
        """``value`` is an entry of a name bound here to ``torch.load(...)``
        (``data["network"]``, ``data.get("kwargs")``), not the whole load."""
        source = key_source(value)
        return source is not value and isinstance(source, cst.Name) and source.value in self.loaded[-1]

    def _checkpoint_pick(self, value: cst.BaseExpression) -> bool:
        """``loadmodule(data["package"], data["network"], prefix="")`` after
        ``data = torch.load(p)`` (pytorch_GAN_zoo's ``buildFeatureExtractor``):
        a class picked by names the checkpoint itself holds, every positional
        argument an entry of it, every keyword a literal. Whatever class it
        is, the checkpoint was written to rebuild it bare, with no device;
        calling it builds on the CPU until something moves it."""
        if not isinstance(value, cst.Call) or not value.args:
            return False
        positional = [a for a in value.args if a.keyword is None]
        if not positional or any(a.star for a in value.args):
            return False
        if not all(self._from_checkpoint(a.value) for a in positional):
            return False
        return all(_literal(a.value) for a in value.args if a.keyword is not None)

    def _checkpoint_build(self, value: cst.BaseExpression) -> bool:
        """``model_type(**data["kwargs"])`` with ``model_type`` a class the
        checkpoint picked (``_checkpoint_pick``) and every ``*``/``**``
        argument an entry of that checkpoint: the settings it was saved with."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
            return False
        if value.func.value not in self.picked[-1]:
            return False
        return all(self._from_checkpoint(a.value) for a in value.args if a.star)

    def _kept_on_cpu(self, value: cst.BaseExpression) -> bool:
        """``model = cut_head(model)`` with ``model`` on the CPU here and
        ``cut_head`` a function of this module that places nothing, directly
        or through the functions it calls (``stays``): handed only models on
        the CPU and literals, what it gives back is on the CPU too."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.args):
            return False
        fn = self.resolve_call(value)
        if fn is None or not self.stays(value) or not self._calls_nothing_unknown(fn, set()):
            return False
        if any(a.star or a.keyword is not None for a in value.args):
            return False
        return all(self._on_cpu_here(a.value) or _literal(a.value) for a in value.args) and any(
            self._on_cpu_here(a.value) for a in value.args
        )

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

    def _calls_nothing_unknown(self, fn: cst.FunctionDef, seen: set[int]) -> bool:
        """``fn`` calls only torch, builtins that never place (``list``,
        ``len``), methods of its own values, and functions of this module
        doing the same: ``stays`` trusts an imported helper it cannot read
        (``to_gpu(net)``), which is no proof for a model given back."""
        if id(fn) in seen:
            return False  # recursion: not read to the end
        seen.add(id(fn))
        calls = _AllCalls()
        visit_fast(fn.body, calls)
        for call in calls.found:
            qualified = self.names.call_name(call)
            if qualified is not None:
                if not qualified.startswith("torch."):
                    return False
            elif isinstance(call.func, cst.Name):
                local = self.resolve_call(call)
                if local is not None:
                    if not self._calls_nothing_unknown(local, seen):
                        return False
                elif call.func.value not in NOT_MODELS | _LOOKS:
                    return False
        return True

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
            self.cpu_dicts.item_method(node, STAYS)  # ``nets[0].state_dict()``
        if qn in _COPIES_IN_PLACE and self._copies_cpu_model(node):
            self._cpu_copies.add(id(node))  # before handing the model over loses it
        looks = isinstance(node.func, cst.Name) and node.func.value in _LOOKS
        # ``super(Net, self)``: a proxy of the instance, handed nowhere; what
        # runs is the method called on it (``_super_call``).
        looks = looks or _super_proxy(node) or reads_only(qn or dotted_name(node.func) or "")
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
        elif method not in STAYS and not self.stays(node) and not moves_to_cpu(node, self._cpu_names()):
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
        if method == "__init__" or method in STAYS:
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


def reads_only(qualified: str) -> bool:
    return qualified in _READS_ONLY or qualified.partition(".")[0] in _READING_MODULES


def _super_proxy(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Name) and call.func.value == "super"
