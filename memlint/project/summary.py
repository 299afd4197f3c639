"""A module's summary: what other modules of the project may ask of it.

Read in one walk of Python's ``ast`` tree (the tree the gate already has), so
a file that never reaches libcst costs no more than that walk. The summary
depends on the file's bytes alone, so it is cached by their digest: names are
kept as the module spells them after its imports (``engine.evaluate``,
``.utils.evaluate`` for a relative import, ``*evaluate`` for a bare name that
may come from a star import); ``index.py`` resolves them in the project.

What it holds:

- ``imports``: module-level names bound by an import, and what they name
  (``{"torch": "torch", "nn": "torch.nn"}``), ``stars`` (modules imported with
  ``*``), ``all_names`` (a literal ``__all__``) and ``defines`` (other names
  bound at module level): what ``from this import *`` brings;
- ``functions``: per module-level function and method, whether it
  backpropagates, switches a model to eval/train, is decorated with a grad
  mode;
- ``calls``: every call of an imported (or star-imported) name, with its
  context: the grad mode around it, inside a loop, in a scope that
  backpropagates;
- ``trackers``: classes whose ``update``/``add`` keeps a Python number
  (``self.sum += val.item()``): a loss tracker, not a tensor;
- ``classes`` (module-level classes with a ``forward``, ``__call__`` or
  ``__init__``) and ``trains`` (a backward runs inside a loop here): a class
  another module builds in its training loop, or builds where it trains,
  runs its methods once per batch (MEM703);
- ``model_classes`` (module-level ``nn.Module`` subclasses: what they build
  starts in train mode), ``plain_attrs`` (the ``self.<attr>`` a plain
  class assigns) and ``attr_switches`` (the attributes whose mode or
  device this module may set from outside: ``solver.G.eval()``,
  ``evaluate(solver.G)``, ``trainer.model.cuda()``): a plain class's model
  attribute no module switches stays in train mode in every method (MEM202,
  StarGAN's ``Solver.test``), one none moves on the CPU (MEM701);
- ``tensor_trackers``: classes whose ``update``/``add`` keeps the tensor it
  is given (``self.sum += val * n``, trackers.py): fed a loss with history
  in another module's loop, they keep every batch's graph (MEM102).
"""

from __future__ import annotations

import ast
import builtins
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memlint.gate.ast_fields import CHILD_READERS, children, nodes, read_nothing
from memlint.project.arg_modes import EVAL, TRAIN, ModeTrace, argument_keys, handed_names, may_set_mode
from memlint.project.arg_modes import dotted as _dotted
from memlint.project.checkpoint_files import checkpoint_facts, names_a_checkpoint_call
from memlint.project.class_factories import factories
from memlint.project.class_moves import MOVES as _MOVES
from memlint.project.class_moves import class_moves_to_a_device, class_needs
from memlint.project.closed_instances import closed_instances
from memlint.project.cpu_builders import builders
from memlint.project.cpu_construction import built_on_cpu
from memlint.project.cpu_receivers import cpu_uses, fresh_args, sets_default_device
from memlint.project.data_passes import names_data, passing, self_callee
from memlint.project.engine_factories import engine_factories
from memlint.project.engine_hooks import HookPlace, engine_hooks, hook_call_site, optimizer_step
from memlint.project.final_calls import ScopeFlow, returns_number
from memlint.project.forward_copies import module_tensor_functions
from memlint.project.gpu_args import gpu_arg_calls
from memlint.project.gpu_moves import gpu_call, imports_framework
from memlint.project.init_moves import init_placed
from memlint.project.local_imports import local_import, only_local
from memlint.project.method_modes import AttrCall, method_call_modes
from memlint.project.method_moves import called_methods, method_moves
from memlint.project.mode_layers import mode_entries
from memlint.project.model_tables import builds_only_on_cpu, model_tables
from memlint.project.module_objects import cpu_objects
from memlint.project.node_lists import NodeLists
from memlint.project.object_types import READ_IN_SCOPE, ObjectTypes, is_off_context, object_types
from memlint.project.off_decorators import off_decorators
from memlint.project.option_values import option_listed
from memlint.project.parameterless import holds_no_parameters
from memlint.project.plain_args import plain_args
from memlint.project.returned_loads import unmapped_return
from memlint.project.state_feeds import gpu_state_calls, is_device_move
from memlint.project.state_helpers import returns_builder_result, returns_on_device, state_params
from memlint.project.step_helpers import step_sequence, stepped_parameters
from memlint.project.sys_paths import PathSetup
from memlint.project.trackers import TensorTracker, tensor_trackers
from memlint.project.tuple_returns import BINDING_NODES, forward_items
from memlint.project.version_tests import version_tests
from memlint.project.wrapped_args import wrapped_args
from memlint.project.zeroed_grads import cleared
from memlint.vocabulary.kinds import Kind, guess_kind_from_name
from memlint.vocabulary.loading import LOADING_NAMES
from memlint.vocabulary.roots import NEVER_PROJECT_ROOTS
from memlint.vocabulary.settings_values import SETTINGS_CALLS, settings_functions

# Grad modes of a context: the call runs with grad on, off, or we cannot tell.
ON, OFF, UNKNOWN = "on", "off", "unknown"
# Inside a function, before its entry mode is known (resolved after the walk).
_INHERIT = "inherit"

# Heads that are never a project module: their calls are not kept.
_EXTERNAL = NEVER_PROJECT_ROOTS
_OFF_CONTEXTS = frozenset({"no_grad", "inference_mode"})
_SAVE_LOAD = frozenset({"save", "load"})
_BACKWARD = frozenset({"backward", "grad", "manual_backward"})
_TRACKER_METHODS = frozenset({"update", "add", "append", "record", "accumulate", "log"})
_UNKNOWN_CONTEXT_WORDS = ("eval", "infer", "no_grad", "nograd", "grad", "predict", "test")


@dataclass(frozen=True)
class CallSite:
    callee: str  # as the caller's imports name it: "engine.evaluate", ".utils.evaluate", "*evaluate"
    line: int
    grad: str  # ON / OFF / UNKNOWN around the call
    in_loop: bool
    backward: bool  # the scope holding the call backpropagates (its result may be part of that graph)
    # The innermost loop around the call backpropagates in its own iteration
    # (not only in a loop nested in it): the call runs once per batch.
    step: bool = False
    # The mode of the models it hands over (arg_modes.py), per argument that
    # is a dotted name with a known mode: (parameter key: "0", "1"... or the
    # keyword; "eval" or "train"; trained since the switch in the calling
    # scope; the project functions it was handed to since, as spelled).
    args: tuple[tuple[str, str, bool, tuple[str, ...]], ...] = ()
    written: str = ""  # the callee as the call writes it ("evaluate", "H.run"): how the view names it
    # Arguments that are a model built right there, on the CPU if its class
    # moves nothing: (the parameter, "0" by position or its keyword; the
    # constructor as the caller spells it, ":Name" for a class of its own).
    built: tuple[tuple[str, str], ...] = ()
    # Its result is loaded into a model the calling scope moved to a device
    # (state_feeds.py): a ``torch.load`` the callee returns makes a GPU copy (MEM701).
    gpu_state: bool = False
    # The arguments that are models the calling scope put on a device
    # (gpu_args.py): (parameter key, the functions as spelled here whose
    # calls bound the name, ":name" for one of this module; none: moved here).
    gpu_args: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # The elements of the tuple it returns, unpacked at the call, that are
    # loaded into such a model (``epoch, weights = load_checkpoint(p)``).
    gpu_items: tuple[int, ...] = ()
    # The calling scope switched a model to eval before the call (its last
    # switch, arg_modes.ModeTrace.evaluating_before) and does not backpropagate:
    # an evaluation, whatever mode the models it hands over are in (MEM201).
    eval_scope: bool = False
    # The parameters it passes a literal or a settings value
    # (``self.config.lambdaGP``, plain_args.py): no graph of the caller's.
    plain: tuple[str, ...] = ()
    # The parameters it passes a local name whose graph dies in the calling
    # scope after the call (final_calls.py): nothing there backpropagates again.
    final: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, data: dict) -> CallSite:
        args = tuple((str(k), str(m), bool(t), tuple(str(v) for v in via)) for k, m, t, via in data.get("args", ()))
        written = str(data.get("written", ""))
        step = bool(data.get("step", False))
        built = tuple((str(k), str(v)) for k, v in data.get("built", ()))
        gpu_state = bool(data.get("gpu_state", False))
        gpu_args = tuple((str(k), tuple(str(b) for b in via)) for k, via in data.get("gpu_args", ()))
        return cls(
            data["callee"],
            data["line"],
            data["grad"],
            data["in_loop"],
            data["backward"],
            step,
            args,
            written,
            built,
            gpu_state,
            gpu_args,
            tuple(int(i) for i in data.get("gpu_items", ())),
            bool(data.get("eval_scope", False)),
            tuple(str(k) for k in data.get("plain", ())),
            tuple(str(k) for k in data.get("final", ())),
        )


@dataclass(frozen=True)
class FunctionFacts:
    name: str  # "evaluate", "Trainer.validate"
    backprops: bool
    mode: str  # "", "eval", "train" or "both": the model modes it switches to
    grad: str  # its decorator's mode, "" without one
    # For a caller in another module to read its mode switches as its own
    # (loops.mode_events): its positional and keyword-only parameters, its
    # ``.eval()``/``.train()`` calls in order (receiver as it spells it,
    # "eval" or "train"), whether it calls something that may switch a mode
    # we cannot read, and whether it calls ``.step()`` (it may update weights).
    params: tuple[str, ...] = ()
    kwonly: tuple[str, ...] = ()
    switches: tuple[tuple[str, str], ...] = ()
    opaque: bool = False
    steps: bool = False
    # The parameters it only steps (``def optimizer_step(opt): opt.step()``,
    # project/step_helpers.py) and the line of that step; () when it does
    # anything else (it may clear the gradients itself).
    stepped: tuple[str, ...] = ()
    step_line: int = 0
    # A module-level function's training verbs in the order one call runs
    # them, each on the parameter it acts on (project/step_helpers.py
    # step_sequence): a caller's loop reads them at the call (MEM301/MEM303).
    sequence: tuple[tuple[str, str, int], ...] = ()
    # A method's ``self.<attr>.step()`` calls (no argument) in source order,
    # by what the attribute's name says it holds, with the attribute: ("o",
    # "g_optimizer") an optimizer, ("s", "dis_scheduler") a scheduler. A
    # caller in another module reads ``trainer.dis_update(...)`` as an
    # optimizer step (MEM802, typed_objects.method_steps).
    step_attrs: tuple[tuple[str, str], ...] = ()
    # A module-level function's parameters that reach ``load_state_dict``
    # unchanged, each with the receiving parameter, or "" for a model it
    # moved to a device itself (state_helpers.py): a load handed to it is an
    # inline load for MEM701. And whether it returns a model it moved to a
    # device on some path (``return DataParallel(net).cuda()``).
    state_params: tuple[tuple[str, str], ...] = ()
    gpu_return: bool = False
    # One call runs a whole pass over data: a loop of its own naming data or
    # backpropagating, or one of a function or ``self`` method of its module
    # it calls (data_passes.py). ``agent.collect_samples(n)`` in a loop
    # makes each iteration a rollout, not a batch (MEM702).
    passes: bool = False
    # A module-level function returning a ``torch.load`` without
    # ``map_location`` (returned_loads.py): the line of that load, else 0.
    unmapped_load: int = 0
    # The parameters (``optimizer``) and ``self`` attributes
    # (``self.optimizer``) whose ``.zero_grad()`` it calls, under a branch
    # or not (zeroed_grads.py): a loop calling it may clear them (MEM304).
    clears: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, data: dict) -> FunctionFacts:
        return cls(
            str(data["name"]),
            bool(data["backprops"]),
            str(data["mode"]),
            str(data["grad"]),
            tuple(str(p) for p in data.get("params", ())),
            tuple(str(p) for p in data.get("kwonly", ())),
            tuple((str(r), str(k)) for r, k in data.get("switches", ())),
            bool(data.get("opaque", False)),
            bool(data.get("steps", False)),
            tuple(str(p) for p in data.get("stepped", ())),
            int(data.get("step_line", 0)),
            tuple((str(k), str(p), int(n)) for k, p, n in data.get("sequence", ())),
            tuple((str(k), str(a)) for k, a in data.get("step_attrs", ())),
            tuple((str(p), str(r)) for p, r in data.get("state_params", ())),
            bool(data.get("gpu_return", False)),
            bool(data.get("passes", False)),
            int(data.get("unmapped_load", 0)),
            tuple(str(c) for c in data.get("clears", ())),
        )


@dataclass
class ModuleSummary:
    imports: dict[str, str] = field(default_factory=dict)
    # Imports a module-level assignment rebinds to what it builds from them
    # (``crnn = crnn.CRNN(...)`` after ``import models.crnn as crnn``): the
    # call still names the import's class (the view's CPU classes, MEM701).
    rebuilt: dict[str, str] = field(default_factory=dict)
    # Names bound by imports inside functions, never at module level, and
    # their targets (``from models.network_dncnn import DnCNN as net`` in
    # ``main()``): a call of one builds what an import names (the view's CPU
    # classes, MEM701), as after a module-level import (local_imports.py).
    # Only in a module that calls ``load_state_dict``.
    local_imports: dict[str, list[str]] = field(default_factory=dict)
    stars: list[str] = field(default_factory=list)
    all_names: list[str] | None = None
    defines: list[str] = field(default_factory=list)
    # A module-level loop, ``with`` or ``match`` may bind names ``defines``
    # misses: what ``from this import *`` brings is then not known (star_names.py).
    open_names: bool = False
    functions: list[FunctionFacts] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    trackers: list[str] = field(default_factory=list)
    # Module-level classes whose code moves nothing to a device (no ``.to(``,
    # ``.cuda(``...): a model built from one is on the CPU (MEM701).
    cpu_classes: list[str] = field(default_factory=list)
    # Module-level classes built on builtins only (``class AttrDict(dict)``):
    # what they build is never a model.
    plain_classes: list[str] = field(default_factory=list)
    # Module-level functions whose code moves nothing to a device (no
    # ``.to(``, ``.cuda(``, ``accelerator.prepare(``...): a model handed to
    # one stays where it is (MEM701).
    cpu_functions: list[str] = field(default_factory=list)
    # Module-level functions whose every return is an argparse namespace
    # (``args = parser.parse_args(); return args``): never a model (MEM701,
    # vocabulary/settings_values.py).
    settings_functions: list[str] = field(default_factory=list)
    # Method names of this module's classes whose code moves nothing, those
    # that may, and (where it loads a state dict) the method names it calls:
    # a model stays on the CPU through a still one (method_moves.py, MEM701).
    still_methods: list[str] = field(default_factory=list)
    moving_methods: list[str] = field(default_factory=list)
    called_methods: list[str] = field(default_factory=list)
    # Module-level functions among them that return a model of a cpu class
    # (``def alexnet(**kwargs): return AlexNet(**kwargs)``, cpu_builders.py).
    cpu_builders: list[str] = field(default_factory=list)
    # Builders of classes other modules define (``def DeepLabV2_MSC(n):
    # return MSC(base=DeepLabV2(n))`` after ``from .msc import *``), as
    # ``"fn=MSC,DeepLabV2"``: CPU builders when the project finds every name
    # a CPU class of its module (index.py).
    foreign_builders: list[str] = field(default_factory=list)
    # What each CPU class's being on the CPU depends on: its bases and the
    # classes it constructs, as spelled here (class_moves.class_needs).
    class_needs: list[str] = field(default_factory=list)
    # Module-level plain classes not in ``cpu_classes`` whose construction
    # moves nothing (cpu_construction.py): a trainer moving its models in a
    # ``cuda()`` method; their ``class_needs`` are listed too.
    cpu_built: list[str] = field(default_factory=list)
    # Folders a script puts on ``sys.path`` (``sys.path.append("..")``), as
    # written: relative ones are read from the script's own folder.
    sys_paths: list[str] = field(default_factory=list)
    # Folders it puts on ``sys.path`` computed from its own file
    # (``osp.join(osp.dirname(__file__), "lib")``, sys_paths.py), relative to
    # its folder: they hold for the modules that import it too.
    file_sys_paths: list[str] = field(default_factory=list)
    # Attribute names the module uses (``net.load_pretrained_model(...)``,
    # called or not, on any receiver) that say they load weights (LOADING):
    # a method of that name in another module may run from here (MEM701).
    loading_uses: list[str] = field(default_factory=list)
    # Of those, the names used otherwise than called under ``no_grad``
    # (``unit.load_from(w)`` with grad on, or not called): MEM401 trusts a
    # weight loader's in-place copies only when no module uses it so.
    loading_grad_uses: list[str] = field(default_factory=list)
    # Of ``loading_uses``, the names every use of which here is a call on a
    # model just built by a constructor, not moved nor named since
    # (cpu_receivers.py), with each constructor as spelled after the imports:
    # ``from_pretrained=model.GNN_graphpred`` (MEM701).
    loading_cpu_uses: list[str] = field(default_factory=list)
    # Functions named by a string handed to ``eval`` and called
    # (``eval('models.' + cfg.NAME + '.get_pose_net')(cfg)``): MEM701 trusts
    # such a call when every function of that name in the project is a CPU builder.
    eval_names: list[str] = field(default_factory=list)
    # Module-level dict literals of plain names, never written into
    # (``model_dict = {'resnet8': resnet8}``): name -> the names it holds (model_tables.py).
    tables: dict[str, list[str]] = field(default_factory=dict)
    # Every class ``getattr(this_module, name)`` can give moves nothing
    # (model_tables.builds_only_on_cpu); the modules this one hands to
    # ``getattr`` as written (``p2ch14.model``).
    cpu_module: bool = False
    getattr_modules: list[str] = field(default_factory=list)
    # Dotted names a command-line option lists as what it may hold
    # (``choices=dict(resnet50=backbone.ResNet50)``, ``default=backbone.ResNet50``):
    # the view judges the classes they name as it judges called ones (option_choices.py).
    option_values: list[str] = field(default_factory=list)
    # Functions returning one class of a module-level registry (FCGF's
    # ``load_model(name)`` over ``MODELS``): name -> its candidate sources,
    # plain names and ``@module`` (class_factories.py); and the functions of
    # other modules this one calls to get a class it then calls
    # (``Model = load_model(cfg.model); model = Model(...)``), by local name.
    factories: dict[str, list[str]] = field(default_factory=dict)
    factory_calls: list[str] = field(default_factory=list)
    # Module-level models built on the CPU and named nowhere else in the
    # module (``vgg = nn.Sequential(...)``, module_objects.py): ``net.vgg``
    # read from another module is a model on the CPU (MEM701).
    cpu_objects: list[str] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)
    trains: bool = False
    model_classes: list[str] = field(default_factory=list)
    # Of those, the ones proved to own no parameter (buffers and functional
    # ops only, parameterless.py): running one records no graph of its own.
    parameterless: list[str] = field(default_factory=list)
    # Per model class and module-level function: ``Name=*`` when it builds a
    # layer that reads the mode, else the callees it builds from (mode_layers.py).
    mode_entries: list[str] = field(default_factory=list)
    plain_attrs: list[str] = field(default_factory=list)
    attr_switches: list[str] = field(default_factory=list)
    tensor_trackers: list[TensorTracker] = field(default_factory=list)
    # Calls of a method on an instance of an imported class built in the
    # same scope (``solver = Solver(...); solver.test()``): the method as the
    # imports name it (``solver.Solver.test``) and the line. The index tells
    # the class's module where its methods are called from (MEM202's message).
    method_calls: list[tuple[str, int]] = field(default_factory=list)
    # The grad mode around each of them ("on", "off", "unknown"), in the same
    # order: MEM201 names the callers that run the method with grad on.
    method_grads: list[str] = field(default_factory=list)
    # Those method calls whose result the calling scope loads into a model it
    # moved to a device (state_feeds.py): a ``torch.load`` the method returns
    # makes a GPU copy (``model.load_state_dict(early_stopping.load_checkpoint())``
    # after ``model.cuda()``, MEM701).
    gpu_method_calls: list[tuple[str, int]] = field(default_factory=list)
    # Types from call sites (object_types.py): typed names, call sites with
    # typed arguments, factories' returns, methods that run a model's forward.
    objects: ObjectTypes | None = None
    # Instances of imported classes whose every use ends the graphs it is
    # handed (closed_instances.py): the class as the imports name it and the
    # line of the constructor call; and the imported classes this module
    # subclasses, as the imports name them (a subclass may call a method and
    # backpropagate again). The index tells the class's module (MEM103).
    closed_instances: list[tuple[str, int]] = field(default_factory=list)
    subclassed: list[str] = field(default_factory=list)
    # Checkpoint file names (checkpoint_files.py): written from a CPU state,
    # written from anything else, read by ``torch.load`` (MEM701).
    cpu_saved: list[str] = field(default_factory=list)
    other_saved: list[str] = field(default_factory=list)
    loaded_files: list[str] = field(default_factory=list)
    # What its saves that may hold a model's state write, whatever the file
    # names: "cpu", "other", "" for none (checkpoint_files.checkpoint_facts).
    model_saves: str = ""
    # Module-level classes whose ``forward`` returns a tuple some elements of
    # which carry no history (tuple_returns.py): class -> [length, positions...].
    forward_items: dict[str, list[int]] = field(default_factory=dict)
    # Method names this module calls with grad off (or in a mode it cannot
    # tell), and those named for evaluation it calls with grad on
    # (method_modes.py): the mode a method of another module is entered in.
    methods_off: list[str] = field(default_factory=list)
    methods_on: list[str] = field(default_factory=list)
    # The method names whose entry it judged off or unknown from its own
    # calls of them, that a call above took its mode from: entered with
    # grad on from another module, they run those calls with grad on.
    methods_relayed: list[str] = field(default_factory=list)
    # Module-level functions that only compare the running torch's version
    # (version_tests.py): name -> ">=1.1.0" or "<1.1.0".
    version_tests: dict[str, str] = field(default_factory=dict)
    # Module-level decorators of its own that run a function with grad off
    # (off_decorators.py): name -> "bare" (``@name``) or "called" (``@name()``).
    off_decorators: dict[str, str] = field(default_factory=dict)
    # Module-level functions returning an ignite engine whose process function
    # steps an optimizer (engine_factories.py): MEM802's ignite handlers.
    engine_factories: list[str] = field(default_factory=list)
    # The hooks its engine classes run by name, with their place in the
    # training loop (engine_hooks.py): MEM802's hook functions.
    engine_hooks: list[HookPlace] = field(default_factory=list)
    # Functions of other modules handed to ``model.apply(fn)`` here, as the
    # imports spell them (``training_utils.weights_init``, ``*weights_init``
    # after a star import): the view says which switch no mode (loops.py).
    applied: list[str] = field(default_factory=list)
    # Some call of it may put something on a device, or it imports a
    # framework that moves models (gpu_moves.py): MEM701 reads a project
    # none of whose modules does as one whose checkpoints stay on the CPU.
    gpu_moves: bool = True  # not known (an empty summary, a tree too deep): it may

    def to_json(self) -> dict:
        # dataclasses.asdict's result, written out: asdict deep-copies field
        # by field, a third of the cost of a cold run's cache writes.
        return {
            "imports": dict(self.imports),
            "rebuilt": dict(self.rebuilt),
            "local_imports": {k: list(v) for k, v in self.local_imports.items()},
            "stars": list(self.stars),
            "all_names": None if self.all_names is None else list(self.all_names),
            "defines": list(self.defines),
            "open_names": self.open_names,
            "functions": [dict(f.__dict__) for f in self.functions],
            "calls": [dict(c.__dict__) for c in self.calls],
            "trackers": list(self.trackers),
            "cpu_classes": list(self.cpu_classes),
            "plain_classes": list(self.plain_classes),
            "cpu_functions": list(self.cpu_functions),
            "settings_functions": list(self.settings_functions),
            "still_methods": list(self.still_methods),
            "moving_methods": list(self.moving_methods),
            "called_methods": list(self.called_methods),
            "cpu_builders": list(self.cpu_builders),
            "foreign_builders": list(self.foreign_builders),
            "class_needs": list(self.class_needs),
            "cpu_built": list(self.cpu_built),
            "sys_paths": list(self.sys_paths),
            "file_sys_paths": list(self.file_sys_paths),
            "loading_uses": list(self.loading_uses),
            "loading_grad_uses": list(self.loading_grad_uses),
            "loading_cpu_uses": list(self.loading_cpu_uses),
            "eval_names": list(self.eval_names),
            "tables": {k: list(v) for k, v in self.tables.items()},
            "cpu_module": self.cpu_module,
            "getattr_modules": list(self.getattr_modules),
            "option_values": list(self.option_values),
            "factories": {k: list(v) for k, v in self.factories.items()},
            "factory_calls": list(self.factory_calls),
            "cpu_objects": list(self.cpu_objects),
            "classes": list(self.classes),
            "trains": self.trains,
            "model_classes": list(self.model_classes),
            "parameterless": list(self.parameterless),
            "mode_entries": list(self.mode_entries),
            "plain_attrs": list(self.plain_attrs),
            "attr_switches": list(self.attr_switches),
            "tensor_trackers": [list(t) for t in self.tensor_trackers],
            "method_calls": [list(m) for m in self.method_calls],
            "method_grads": list(self.method_grads),
            "gpu_method_calls": [list(m) for m in self.gpu_method_calls],
            "objects": self.objects.to_json() if self.objects is not None else None,
            "closed_instances": [list(c) for c in self.closed_instances],
            "subclassed": list(self.subclassed),
            "cpu_saved": list(self.cpu_saved),
            "other_saved": list(self.other_saved),
            "loaded_files": list(self.loaded_files),
            "model_saves": self.model_saves,
            "forward_items": {k: list(v) for k, v in self.forward_items.items()},
            "methods_off": list(self.methods_off),
            "methods_on": list(self.methods_on),
            "methods_relayed": list(self.methods_relayed),
            "version_tests": dict(self.version_tests),
            "off_decorators": dict(self.off_decorators),
            "engine_factories": list(self.engine_factories),
            "engine_hooks": [list(h) for h in self.engine_hooks],
            "applied": list(self.applied),
            "gpu_moves": self.gpu_moves,
        }

    @classmethod
    def from_json(cls, data: dict) -> ModuleSummary:
        return cls(
            imports={str(k): str(v) for k, v in data["imports"].items()},
            rebuilt={str(k): str(v) for k, v in data.get("rebuilt", {}).items()},
            local_imports={str(k): [str(t) for t in v] for k, v in data.get("local_imports", {}).items()},
            stars=[str(s) for s in data["stars"]],
            all_names=None if data["all_names"] is None else [str(n) for n in data["all_names"]],
            defines=[str(n) for n in data["defines"]],
            open_names=bool(data.get("open_names", False)),
            functions=[FunctionFacts.from_json(f) for f in data["functions"]],
            calls=[CallSite.from_json(c) for c in data["calls"]],
            trackers=[str(t) for t in data["trackers"]],
            cpu_classes=[str(c) for c in data.get("cpu_classes", [])],  # absent from older caches
            plain_classes=[str(c) for c in data.get("plain_classes", [])],
            cpu_functions=[str(c) for c in data.get("cpu_functions", [])],
            settings_functions=[str(c) for c in data.get("settings_functions", [])],
            still_methods=[str(c) for c in data.get("still_methods", [])],
            moving_methods=[str(c) for c in data.get("moving_methods", [])],
            called_methods=[str(c) for c in data.get("called_methods", [])],
            cpu_builders=[str(c) for c in data.get("cpu_builders", [])],
            foreign_builders=[str(c) for c in data.get("foreign_builders", [])],
            class_needs=[str(c) for c in data.get("class_needs", [])],
            cpu_built=[str(c) for c in data.get("cpu_built", [])],
            sys_paths=[str(c) for c in data.get("sys_paths", [])],
            file_sys_paths=[str(c) for c in data.get("file_sys_paths", [])],
            loading_uses=[str(c) for c in data.get("loading_uses", [])],
            loading_grad_uses=[str(c) for c in data.get("loading_grad_uses", [])],
            loading_cpu_uses=[str(c) for c in data.get("loading_cpu_uses", [])],
            eval_names=[str(c) for c in data.get("eval_names", [])],
            tables={str(k): [str(n) for n in v] for k, v in data.get("tables", {}).items()},
            cpu_module=bool(data.get("cpu_module", False)),
            getattr_modules=[str(c) for c in data.get("getattr_modules", [])],
            option_values=[str(c) for c in data.get("option_values", [])],
            factories={str(k): [str(n) for n in v] for k, v in data.get("factories", {}).items()},
            factory_calls=[str(c) for c in data.get("factory_calls", [])],
            cpu_objects=[str(c) for c in data.get("cpu_objects", [])],
            classes=[str(c) for c in data.get("classes", [])],
            trains=bool(data.get("trains", False)),
            model_classes=[str(c) for c in data.get("model_classes", [])],
            parameterless=[str(c) for c in data.get("parameterless", [])],
            mode_entries=[str(c) for c in data.get("mode_entries", [])],
            plain_attrs=[str(c) for c in data.get("plain_attrs", [])],
            attr_switches=[str(c) for c in data.get("attr_switches", [])],
            tensor_trackers=[
                TensorTracker(str(c), str(m), int(i), str(p), str(a), int(n))
                for c, m, i, p, a, n in data.get("tensor_trackers", [])
            ],
            method_calls=[(str(m), int(n)) for m, n in data.get("method_calls", [])],
            method_grads=[str(g) for g in data.get("method_grads", [])],
            gpu_method_calls=[(str(m), int(n)) for m, n in data.get("gpu_method_calls", [])],
            closed_instances=[(str(c), int(n)) for c, n in data.get("closed_instances", [])],
            subclassed=[str(b) for b in data.get("subclassed", [])],
            objects=ObjectTypes.from_json(data["objects"]) if data.get("objects") else None,
            cpu_saved=[str(c) for c in data.get("cpu_saved", [])],
            other_saved=[str(c) for c in data.get("other_saved", [])],
            loaded_files=[str(c) for c in data.get("loaded_files", [])],
            model_saves=str(data.get("model_saves", "")),
            forward_items={str(k): [int(n) for n in v] for k, v in data.get("forward_items", {}).items()},
            methods_off=[str(n) for n in data.get("methods_off", [])],
            methods_on=[str(n) for n in data.get("methods_on", [])],
            methods_relayed=[str(n) for n in data.get("methods_relayed", [])],
            version_tests={str(k): str(v) for k, v in data.get("version_tests", {}).items()},
            off_decorators={str(k): str(v) for k, v in data.get("off_decorators", {}).items()},
            engine_factories=[str(n) for n in data.get("engine_factories", ())],
            engine_hooks=[
                HookPlace(str(c), str(a), str(k), str(p), str(m), int(n))
                for c, a, k, p, m, n in data.get("engine_hooks", ())
            ],
            applied=[str(n) for n in data.get("applied", ())],
            gpu_moves=bool(data.get("gpu_moves", True)),
        )


# A module whose text holds none of these words (the default pre-filter of the
# rules) says nothing other modules ask about: its summary is empty, whoever
# computes it (the lint workers, the flake8 plugin), so every front end reads
# the same project. ``.eval()``: MEM201's pre-filter lets in a module that
# evaluates a model it is handed without importing torch (protonets'
# utils/model.py), and its view needs its own functions (callers elsewhere
# under ``no_grad``).
_WORTH = ("torch", "backward", "zero_grad", ".step(", ".eval()", ".load_state_dict(")


def worth_summarising(text: str) -> bool:
    return any(word in text for word in _WORTH)


def summarise(tree: ast.Module) -> ModuleSummary:
    """The summary of one module's tree; an empty one for a tree too deep to walk."""
    try:
        walker = _Walker(tree)
        walker.summary.gpu_moves = walker._gpu
        walker.summary.objects = object_types(
            tree, walker.bindings, walker._has_star, walker.scope_nodes, walker.off_withs
        )
        return walker.summary
    except RecursionError:
        return ModuleSummary()


def summarise_text(text: str, always: bool = False) -> ModuleSummary | None:
    """The summary of a module's text; None when it holds no training word
    and ``always`` is not asked (what it imports is read only when another
    module asks, with ``summarise_exports``)."""
    if not always and not worth_summarising(text):
        return None
    tree = _parse(text)
    return summarise(tree) if tree is not None else ModuleSummary()


def module_bindings(tree: ast.Module) -> tuple[dict[str, str], bool]:
    """What the module's imports bind, as the summary reads them, and whether
    it star-imports (wordless_factories.py types a word-less module's factories)."""
    walker = _Walker.__new__(_Walker)
    walker.bindings, walker.summary, walker.module_defs, walker._has_star = {}, ModuleSummary(), set(), False
    walker._collect_imports(tree)
    return walker.bindings, walker._has_star


def summarise_exports(text: str) -> ModuleSummary:
    """Only what a module binds at module level (``imports``, ``stars``,
    ``defines``, ``all_names``, ``trackers``): enough to follow a re-export or
    a star import through a module whose calls are not needed (a package's
    ``__init__``, a module that cannot call the one asked about)."""
    tree = _parse(text)
    walker = _Walker.__new__(_Walker)
    walker.bindings, walker.summary, walker.module_defs, walker._has_star = {}, ModuleSummary(), set(), False
    walk = NodeLists()  # class_moves and parameterless read the same methods
    if tree is not None:
        try:
            walker._collect_imports(tree)
            walker.summary.trackers = [n.name for n in tree.body if isinstance(n, ast.ClassDef) and _is_tracker(n)]
            walker.summary.cpu_classes = [
                n.name
                for n in tree.body
                if isinstance(n, ast.ClassDef)
                and not class_moves_to_a_device(
                    n, walker.bindings, walk, module_tensor_functions(tree, walker.bindings)
                )
            ]
            walker.summary.plain_classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef) and _is_plain(n)]
            walker.summary.cpu_functions = _cpu_functions(tree)
            walker.summary.settings_functions = settings_functions(tree)
            walker.summary.still_methods, walker.summary.moving_methods = method_moves(tree, walk)
            walker.summary.model_classes = _model_classes(tree, walker.bindings)
            walker.summary.parameterless = _parameterless(tree, walker.summary.model_classes, walker.bindings, walk)
            walker.summary.mode_entries = mode_entries(tree, walker.summary.model_classes, walker.bindings, walk)
            walker.summary.tensor_trackers = tensor_trackers(tree)
            walker.summary.cpu_builders, walker.summary.foreign_builders = builders(
                tree, walker.summary.cpu_classes, walker.summary.cpu_functions, walk
            )
            walker.summary.class_needs = class_needs(tree, walker.summary.cpu_classes)
            # The model classes, moving or not, as the full walk lists them
            # (a class another module builds is judged by them, index.py).
            walker.summary.classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef) and _model_like(n)]
            walker.summary.tables = model_tables(tree)
            walker.summary.factories = factories(tree)
            walker.summary.forward_items = forward_items(tree, walker.bindings)
            walker.summary.version_tests = version_tests(tree)
            walker.summary.off_decorators = off_decorators(tree, walker.bindings)
            walker.summary.engine_factories = engine_factories(tree)
            walker.summary.engine_hooks = engine_hooks(tree)
            walker.summary.cpu_module = builds_only_on_cpu(tree, walker.summary.cpu_classes)
            walker.summary.cpu_objects = cpu_objects(tree, walker.bindings, walker.summary.cpu_classes)
            # A class or factory of a module with no training word may still
            # be what a typed name holds (project/typed_objects.py).
            walker.summary.objects = object_types(tree, walker.bindings, walker._has_star)
        except RecursionError:
            return ModuleSummary()
    return walker.summary


def _model_like(node: ast.ClassDef) -> bool:
    return any(isinstance(s, ast.FunctionDef) and s.name in ("forward", "__call__", "__init__") for s in node.body)


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@dataclass
class _Scope:
    name: str  # qualified name of the function, "" for the module
    decorator: str = ""  # its decorator's grad mode
    backprops: bool = False
    modes: set[str] = field(default_factory=set)
    # (line, callee, grad, loop, kind, the innermost loop's cell: [backpropagates in its own
    # iteration], the arguments that are a model built in place: CallSite.built)
    sites: list[tuple[int, str, str, bool, str, list[bool] | None, tuple[tuple[str, str], ...]]] = field(
        default_factory=list
    )
    site_calls: list[ast.Call] = field(default_factory=list)  # the call of each site
    trace: ModeTrace = field(default_factory=ModeTrace)  # its mode switches, for the modes calls hand over
    backwards: int = 0  # backward calls seen so far (a loop holding one trains)
    params: tuple[str, ...] = ()
    kwonly: tuple[str, ...] = ()
    steps: bool = False
    stepped: tuple[tuple[str, ...], int] = ((), 0)  # FunctionFacts.stepped, step_line
    sequence: tuple[tuple[str, str, int], ...] = ()  # FunctionFacts.sequence
    step_attrs: tuple[tuple[str, str], ...] = ()  # FunctionFacts.step_attrs
    # Uses of a loading name on a plain name (name, receiver), and the names
    # bound from a class of this module (``model = DLA(...)``): loading_uses.
    loading: list[tuple[str, str, ast.Call | None]] = field(default_factory=list)
    built_here: dict[str, str] = field(default_factory=dict)
    # The same for uses not called under no_grad (loading_grad_uses), and the
    # names bound from an imported name (``model = VisionTransformer(...)``).
    grad_loading: list[tuple[str, str]] = field(default_factory=list)
    built_imported: dict[str, str] = field(default_factory=dict)
    # Names bound (once) to an instance of an imported class: the class as the
    # imports name it; "" for a name bound otherwise too (method_calls). A
    # lower-case callee may be a class too (Graph-WaveNet's ``trainer``); the
    # index keys its methods by the class's name, so a function never matches.
    instances: dict[str, str] = field(default_factory=dict)
    loads_state: bool = False  # it calls ``.load_state_dict(``: state_feeds.py reads it
    copies_state: bool = False  # it calls ``.copy_(``: state_copies.py reads it
    calls_load: bool = False  # it calls a ``load``: returned_loads.py reads it
    unmapped_load: int = 0  # FunctionFacts.unmapped_load
    state_params: tuple[tuple[str, str], ...] = ()  # FunctionFacts.state_params
    # A loop of its own names data or backpropagates, and the functions and
    # ``self`` methods of its module it calls (FunctionFacts.passes).
    data_loop: bool = False
    local_calls: set[str] = field(default_factory=set)
    clears: tuple[str, ...] = ()  # FunctionFacts.clears
    node: ast.FunctionDef | ast.AsyncFunctionDef | None = None  # read again by final_calls.py


class _Walker:
    def __init__(self, tree: ast.Module) -> None:
        self.bindings: dict[str, str] = {}  # every import binding of the module (as ImportTable)
        self.summary = ModuleSummary()
        self.module_defs: set[str] = set()
        self._has_star = False
        self._applied: set[str] = set()
        self._collect_imports(tree)
        self.summary.off_decorators = off_decorators(tree, self.bindings)
        self._scopes: list[_Scope] = []
        self._local_calls: dict[str, list[str]] = {}  # module-level function -> grad modes of its local calls
        self._done: list[_Scope] = []
        self._tree = tree
        # The node lists of the methods class_moves.py walks, read again by
        # parameterless.py in _finish.
        self._node_lists = NodeLists()
        # Calls that may move something to a device, met so far in source
        # order: a class is a cpu class when its walk adds none (one walk of
        # the module, not one more of every class).
        self._moves = 0
        # The calls counted in _moves, in walk order: a method's are those met
        # while it is walked (class_moves.py reads them instead of filtering
        # every node of every method of a class that moves something).
        self._move_calls: list[ast.Call] = []
        self._device_moves = 0  # of them, to a device (``.cuda()``, ``.to(device)``: not ``.to(dtype)``): gpu_args.py
        # _cpu_functions, read in the same walk: per function of ``tree.body``
        # (in order), whether a call in it may place something on a device,
        # and the bare names it calls; the one being walked, with its nested code.
        self._top_defs = {id(n) for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self._placing: dict[str, tuple[bool, set[str]]] = {}
        # Module-level functions that call another of the module: each may
        # return what a function returning a moved model built (_chain_gpu_returns).
        self._builder_chains: dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, set[str]]] = {}
        self._in_top: list | None = None  # [places, called] of the function of tree.body being walked
        # Functions of tree.body calling ``parse_args``/``Namespace``: the only ones settings_functions reads.
        self._parses_in_top = False
        self._parsing: set[str] = set()
        # Calls of ``DataParallel`` met so far: wrapped_args proves nothing in a scope holding none.
        self._data_parallels = 0
        self._gpu = False  # ModuleSummary.gpu_moves: a call or an import met so far (gpu_moves.py)
        # Module-level functions returning a model they moved to a device, and
        # those that call ``load_state_dict`` (state_helpers.py, after the walk).
        self._gpu_returns: set[str] = set()
        self._state_fns: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, _Scope]] = []
        # Every function and method by its own name: final_calls.py asks which return only numbers.
        self._fn_nodes: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        self._numeric_names: frozenset[str] | None = None
        self._trains: frozenset[str] | None = None
        self._loops: list[list[bool]] = []  # the loops around the walk, innermost last
        self._switched: set[str] = set()  # attr_switches
        # Per class around the walk: it has a base, the ``self.<attr>`` its methods assign.
        self._class_stack: list[tuple[bool, set[str]]] = []
        self._hook_lines: list[int] = []  # calls of ``self.<attr>[...]`` in classes (engine_hooks)
        # engine_hooks reads a class only when it steps an optimizer: the
        # optimizer steps met so far (walked or not), and the module-level
        # classes holding one, by id.
        self._optimizer_steps = 0
        self._stepping: set[int] = set()
        self._loading: set[str] = set()  # ModuleSummary.loading_uses
        self._loading_cpu: dict[str, set[str]] = {}  # ModuleSummary.loading_cpu_uses (also loading_uses)
        self._loading_calls: dict[int, ast.Call] = {}  # the ``func`` of a loading-name call -> the call
        self._loading_grad: set[str] = set()  # ModuleSummary.loading_grad_uses
        self._off_calls: set[int] = set()  # the ``func`` of loading-name calls made under no_grad
        self._eval_names: set[str] = set()  # ModuleSummary.eval_names
        # Names bound to a module imported at run time (``arch = __import__("networks." + name)``):
        # a class called on one (``arch.Decoder(...)``) is named as ``eval`` would name it.
        self._runtime_modules: set[str] = set()
        self._getattr_modules: set[str] = set()  # ModuleSummary.getattr_modules
        self._option_values: set[str] = set()  # ModuleSummary.option_values
        # ModuleSummary.factory_calls: names bound to a call of an imported
        # name (``Model = load_model(...)``, name -> callee), names called.
        self._bound_calls: dict[str, str] = {}
        self._called_names: set[str] = set()
        self._local_imports: dict[str, list[str]] = {}  # ModuleSummary.local_imports
        self._loads_state = False  # a ``load_state_dict`` call: local_imports matter (MEM701)
        self._receiver_calls: list[ast.Call] = []  # ``x.m(...)`` calls: called_methods reads them (MEM701)
        self._checkpoints = False  # a ``save``/``load`` attribute is called: checkpoint_files
        # The callees named ``save``/``load`` (``torch.save``, ``np.load``,
        # ``save`` of ``from torch import save``), in the walk or in the parts
        # it does not enter: checkpoint_files finds nothing unless one is
        # ``torch.save``/``torch.load`` under the module's final imports.
        self._save_loads: list[ast.expr] = []
        # Calls whose result a moved model loads (CallSite.gpu_state, gpu_items).
        self._gpu_state: dict[int, set[int]] = {}
        # Method calls on instances of imported classes (method_calls), with the call.
        self._method_sites: list[tuple[str, int, ast.Call]] = []
        # Per call, its arguments that are models on a device (CallSite.gpu_args), as gpu_args.py gives them.
        self._gpu_args: dict[int, tuple[tuple[str, tuple[ast.Call, ...]], ...]] = {}
        self._attr_calls: list[AttrCall] = []  # every ``x.name(...)``: method_modes.py
        # Per entry of summary.method_calls: its scope and the grad mode around
        # it there, resolved once the module's own callers are known (_finish).
        self._method_modes: list[tuple[_Scope, str]] = []
        # class_needs, read in the same walk: the capitalised callees (as
        # spelled) of the module-level class being walked, and per class.
        self._class_calls: set[str] | None = None
        self._calls_of: dict[int, set[str]] = {}
        # object_types, read off this walk: per scope (the module's tree, a
        # function) the nodes of its own code object_types reads
        # (READ_IN_SCOPE) and tuple_returns' fresh names (BINDING_NODES), in
        # a pre-order; None outside any scope's own code (a class body, decorators).
        self.scope_nodes: dict[int, list[ast.AST]] = {}
        self._own: list[ast.AST] | None = None
        # object_types' ``forward`` that turns grad off: the ids of the
        # functions and classes holding, as their own code, a ``with`` of
        # ``no_grad``/``inference_mode`` (the innermost being walked: _owner).
        self.off_withs: set[int] = set()
        self._owner = id(tree)
        self._classes_met = 0  # every class of the module the walk entered, at any depth
        self._tensor_fns: tuple[tuple[tuple[str, str], ...], Callable[[], frozenset[str]]] | None = None
        self._scope(tree, _Scope(""), tree.body, grad=ON, loop=False)
        self._finish()

    # -- imports and module-level names ------------------------------------
    def _collect_imports(self, tree: ast.Module) -> None:
        """The module-level names (imports inside functions are bound by the
        walk, in source order, before the calls that follow them)."""
        self._paths = PathSetup(self.bindings)
        self._class_methods: dict[str, set[str] | None] = {}  # module-level class -> its own methods
        for stmt in tree.body:
            self._module_statement(stmt)
        self.summary.file_sys_paths = self._paths.folders(tree)

    def _bind(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.bindings[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    self.bindings[head] = head
            return
        base = "." * node.level + (node.module or "")
        for alias in node.names:
            if alias.name == "*":
                self._has_star = True
                continue
            sep = "" if base.endswith(".") or not base else "."
            self.bindings[alias.asname or alias.name] = f"{base}{sep}{alias.name}"

    def _module_statement(self, stmt: ast.stmt) -> None:
        s = self.summary
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            self._bind(stmt)
            for alias in stmt.names:
                if alias.name == "*":
                    s.stars.append("." * stmt.level + (stmt.module or "") if isinstance(stmt, ast.ImportFrom) else "")
                    continue
                local = alias.asname or alias.name.split(".")[0]
                if local in self.bindings:
                    s.imports[local] = self.bindings[local]
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            s.defines.append(stmt.name)
            self.module_defs.add(stmt.name)
            if isinstance(stmt, ast.ClassDef):
                methods = {f.name for f in stmt.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
                self._class_methods[stmt.name] = None if stmt.name in self._class_methods else methods
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            self._paths.assign(targets, None if isinstance(stmt, ast.AugAssign) else stmt.value)
            for target in targets:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name):
                        s.defines.append(node.id)
                        if node.id in s.imports and _builds_from(stmt.value, node.id):
                            s.rebuilt[node.id] = s.imports[node.id]
                        s.imports.pop(node.id, None)  # rebound: no longer the import
                        if node.id == "__all__":
                            s.all_names = _literal_names(stmt.value)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            folder = _sys_path_added(stmt.value)
            if folder is not None:
                s.sys_paths.append(folder)
            self._paths.call(stmt.value)
        elif isinstance(stmt, (ast.If, ast.Try)):  # ``try: import x`` guards
            for child in ast.iter_child_nodes(stmt):
                if isinstance(child, ast.stmt):
                    self._module_statement(child)
            for handler in getattr(stmt, "handlers", ()):
                for child in handler.body:
                    self._module_statement(child)
        elif isinstance(stmt, _OPEN_STATEMENTS):
            s.open_names = True  # its targets and body bind names not listed

    # -- the walk ----------------------------------------------------------
    def _scope(self, node: ast.AST, scope: _Scope, body: list[ast.stmt], grad: str, loop: bool) -> None:
        self._scopes.append(scope)
        outer_own, self._own = self._own, self.scope_nodes.setdefault(id(node), [])
        outer_owner, self._owner = self._owner, id(node)
        moves, wrappers = self._device_moves, self._data_parallels
        self._walk(body, grad, loop)
        self._own = outer_own
        self._owner = outer_owner
        self._scopes.pop()
        self._done.append(scope)
        # The few scopes that build an instance of an imported class (most
        # scopes bind names to other values: ``instances`` maps them to "").
        classes = {k: v for k, v in scope.instances.items() if v.rsplit(".", 1)[-1][:1].isupper()}
        if not scope.backprops and any(classes.values()):
            params = {*scope.params, *scope.kwonly}
            self.summary.closed_instances.extend(closed_instances(body, params, classes, self.bindings))
        if scope.loading or scope.grad_loading:
            self._loading_uses(node, scope, body)
        if scope.built_here or scope.built_imported:
            self._fresh_args(node, scope, body, wraps=self._data_parallels != wrappers)
        if scope.loads_state:
            self._gpu_state.update(gpu_state_calls(body))
        if self._device_moves != moves and scope.sites:  # the few scopes that move a model and call the project
            self._gpu_args.update(gpu_arg_calls(body))

    def _fresh_args(self, node: ast.AST, scope: _Scope, body: list[ast.stmt], wraps: bool = True) -> None:
        """Add to CallSite.built the names a project call is handed that hold
        a model just built (cpu_receivers.fresh_args): only the calls handed
        a name the scope bound from a constructor."""
        named = {*scope.built_here, *scope.built_imported}
        calls = [
            call
            for (_line, _callee, _grad, _loop, kind, _cell, _built), call in zip(scope.sites, scope.site_calls)
            if kind != "local" and any(isinstance(a, ast.Name) and a.id in named for a in _arg_values(call))
        ]
        found = fresh_args(node, body, calls, self._spelling) if calls else {}
        # ``wraps``: the scope calls ``DataParallel``, which every argument
        # wrapped_args proves is bound from.
        for key, wrapped in (wrapped_args(node, body, calls) if calls and wraps else {}).items():
            found[key] = (*found.get(key, ()), *wrapped)
        for i, call in enumerate(scope.site_calls):
            if id(call) in found:
                site = scope.sites[i]
                extra = tuple(b for b in found[id(call)] if b[0] not in {key for key, _ in site[6]})
                scope.sites[i] = (*site[:6], (*site[6], *extra))

    def _loading_uses(self, node: ast.AST, scope: _Scope, body: list[ast.stmt]) -> None:
        """Keep the scope's uses of loading names, but for a call on a name
        bound once, in the scope, to a class of this module that defines the
        method itself (``model = DLA(...); model.load_pretrained_model()``):
        that call runs this module's method, never another module's."""
        stores: dict[str, int] = {}
        for sub in ast.walk(node):
            kind = sub.__class__
            if kind is ast.Name and sub.ctx.__class__ is not ast.Load:  # type: ignore[attr-defined]
                stores[sub.id] = stores.get(sub.id, 0) + 1  # type: ignore[attr-defined]
                continue
            if kind is ast.arg:
                bound = [sub.arg]  # type: ignore[attr-defined]
            elif kind is ast.Global or kind is ast.Nonlocal:
                bound = list(sub.names)  # type: ignore[attr-defined]
            elif kind is ast.alias:
                bound = [(sub.asname or sub.name).split(".")[0]]  # type: ignore[attr-defined]
            elif kind in (
                ast.FunctionDef,
                ast.AsyncFunctionDef,
                ast.ClassDef,
                ast.ExceptHandler,
                ast.MatchAs,
                ast.MatchStar,
            ):
                bound = [getattr(sub, "name", None)]
            else:
                continue
            for name in bound:
                if isinstance(name, str):
                    stores[name] = stores.get(name, 0) + 2  # bound otherwise: never trusted
        others: list[tuple[str, str, ast.Call | None]] = []
        for name, receiver, call in scope.loading:
            cls = scope.built_here.get(receiver)
            methods = self._class_methods.get(cls) if cls is not None else None
            if methods is not None and name in methods and stores.get(receiver) == 1:
                continue
            if name in _MODULE_LOADERS or call is None:
                self._loading.add(name)
            else:
                others.append((name, receiver, call))
        if others:
            proven, loud = cpu_uses(node, body, others, stores, self._spelling)
            self._loading.update(loud)
            for name, spelled in proven.items():
                self._loading_cpu.setdefault(name, set()).update(spelled)
        for name, receiver in scope.grad_loading:
            cls = scope.built_here.get(receiver)
            methods = self._class_methods.get(cls) if cls is not None else None
            if stores.get(receiver) != 1:
                self._loading_grad.add(name)
            elif cls is not None:
                if not (methods is not None and name in methods):
                    self._loading_grad.add(name)
            else:
                # ``name@target``: the index tells whether that class defines
                # the method itself (then the call never reaches another class's).
                self._loading_grad.add(f"{name}@{scope.built_imported[receiver]}")

    def _visit(self, node: ast.AST, grad: str, loop: bool) -> None:
        self._walk([node], grad, loop)

    def _walk(self, todo: Sequence[ast.AST], grad: str, loop: bool) -> None:
        """Visit ``todo`` and the nodes below them, in pre-order, left to
        right, with one mode and loop flag: the nodes the walk enters its own
        way (a scope, a grad-mode block, a loop) through one table lookup,
        each with a walk of its own. Runs on every node of every module:
        a stack, not a call per node, and each class's children reader
        looked up once per node."""
        own = self._own  # each entered node's walk puts back what it changed
        stack = list(todo)
        stack.reverse()
        pop = stack.pop
        readers = CHILD_READERS
        call, attribute, name, constant, assign = ast.Call, ast.Attribute, ast.Name, ast.Constant, ast.Assign
        load, defs = ast.Load, self.module_defs
        while stack:
            node = pop()
            cls = node.__class__
            if cls is name:
                # object_types reads a name that binds, or one that reads a
                # function or class of the module (a superset of its own
                # ``defs``); most names read a local: not kept.
                if own is not None and (node.ctx.__class__ is not load or node.id in defs):  # type: ignore[attr-defined]
                    own.append(node)
                continue
            if cls is constant:
                continue
            if own is not None and cls in _KEPT_IN_SCOPE:
                own.append(node)
            if cls is call:
                self._call(node, grad, loop)  # type: ignore[arg-type]
            elif cls is attribute:
                if LOADING_NAMES[node.attr]:  # type: ignore[attr-defined]
                    self._loading_attribute(node)  # type: ignore[arg-type]
            elif cls in _ENTERED:
                _ENTERED[cls](self, node, grad, loop)
                continue
            elif cls is assign:
                self._assign(node)  # type: ignore[arg-type]
            elif cls is ast.Import or cls is ast.ImportFrom:
                self._bind(node)  # type: ignore[arg-type]
                self._gpu = self._gpu or imports_framework(node)  # type: ignore[arg-type]
                if len(self._scopes) > 1:
                    local_import(self._local_imports, node)  # type: ignore[arg-type]
                continue
            read = readers.get(cls, read_nothing)
            found = read(node) if read is not None else list(ast.iter_child_nodes(node))
            if found:
                found.reverse()
                stack += found

    def _enter_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, grad: str, _loop: bool) -> None:
        self._function(node, grad)

    def _enter_class(self, node: ast.ClassDef, _grad: str, _loop: bool) -> None:
        self._class(node)

    def _enter_lambda(self, node: ast.Lambda, _grad: str, _loop: bool) -> None:
        self._unvisited(node)

    def _enter_with(self, node: ast.With | ast.AsyncWith, grad: str, loop: bool) -> None:
        own = self._own
        if any(is_off_context(item.context_expr) for item in node.items):
            self.off_withs.add(self._owner)
        for item in node.items:
            self._visit(item.context_expr, grad, loop)
            self._unvisited(item.optional_vars)
            if own is not None and item.optional_vars is not None:  # object_types reads a with's target
                own += [n for n in nodes(item.optional_vars) if n.__class__ in _KEPT_IN_SCOPE]
            grad = self._context_mode(item.context_expr) or grad
        self._walk(node.body, grad, loop)

    def _enter_loop(self, node: ast.For | ast.AsyncFor | ast.While, grad: str, loop: bool) -> None:
        for name in ("target", "iter", "test"):
            child = getattr(node, name, None)
            if child is not None:
                self._visit(child, grad, loop)
        scope = self._scopes[-1]
        before = scope.backwards
        self._loops.append([False])
        self._walk(node.body, grad, True)
        self._loops.pop()
        if not scope.data_loop and (scope.backwards > before or names_data(node)):
            scope.data_loop = True
        scope.trace.loop(_start(node), _end(node), scope.backwards > before)
        self._walk(node.orelse, grad, loop)

    def _enter_comprehension(self, node: ast.AST, grad: str, _loop: bool) -> None:
        self._walk(children(node), grad, True)

    def _loading_attribute(self, node: ast.Attribute) -> None:
        """An attribute whose name says it loads weights (``net.load_pretrained(...)``)."""
        receiver = node.value
        scope = self._scopes[-1]
        if id(node) in self._off_calls:
            pass
        elif receiver.__class__ is ast.Name and (
            receiver.id in scope.built_here or receiver.id in scope.built_imported  # type: ignore[attr-defined]
        ):
            scope.grad_loading.append((node.attr, receiver.id))  # type: ignore[attr-defined]  # judged at its end
        else:
            self._loading_grad.add(node.attr)
        call = self._loading_calls.get(id(node))
        if receiver.__class__ is ast.Name and (
            receiver.id in scope.built_here  # type: ignore[attr-defined]
            # ``model.from_pretrained(p)`` on an imported class's instance: cpu_receivers.py
            # (not torch.nn.Module's own loaders, which no project method is known to be).
            or (receiver.id in scope.built_imported and call is not None and node.attr not in _MODULE_LOADERS)  # type: ignore[attr-defined]
        ):
            scope.loading.append((node.attr, receiver.id, call))  # type: ignore[attr-defined]  # judged at its end
        else:
            self._loading.add(node.attr)

    def _assign(self, node: ast.Assign) -> None:
        if self._class_stack:
            for target in node.targets:
                if _self_attr(target):
                    self._class_stack[-1][1].add(target.attr)  # type: ignore[attr-defined]
        if len(node.targets) == 1 and node.targets[0].__class__ is ast.Name:
            name = node.targets[0].id  # type: ignore[attr-defined]
            value = node.value
            if runtime_import(value):
                self._runtime_modules.add(name)
            if (
                value.__class__ is ast.Call
                and value.func.__class__ is ast.Name  # type: ignore[attr-defined]
                and value.func.id in self._class_methods  # type: ignore[attr-defined]
            ):
                self._scopes[-1].built_here[name] = value.func.id  # type: ignore[attr-defined]
            elif (built := _unchained(value)).__class__ is ast.Call and built.func.__class__ is ast.Name:  # type: ignore[attr-defined]
                if built is value and built.func.id in self.bindings:  # type: ignore[attr-defined]
                    self._bound_calls[name] = built.func.id  # type: ignore[attr-defined]
                if built.func.id in self.bindings:  # type: ignore[attr-defined]
                    # ``net = ViT_seg(...).cuda()`` is still the instance built (TransUNet's train.py).
                    self._scopes[-1].built_imported[name] = self.bindings[built.func.id]  # type: ignore[attr-defined]
            self._instance(name, value)

    def _chain_gpu_returns(self) -> None:
        """A function returning what one returning a moved model built
        (``create_model`` -> ``define_net``) returns a moved model too; to a
        fixed point, each function read once it calls a known one."""
        gpu = self._gpu_returns
        pending = {name: entry for name, entry in self._builder_chains.items() if name not in gpu}
        grew = bool(gpu)
        while grew and pending:
            grew = False
            for name, (fn, called) in list(pending.items()):
                if called & gpu and returns_builder_result(fn, frozenset(gpu)):
                    gpu.add(name)
                    del pending[name]
                    grew = True

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, grad: str) -> None:
        if id(node) in self._top_defs:
            self._in_top, self._parses_in_top = [False, set()], False
            self._walk_function(node, grad)
            places, called = self._in_top
            self._in_top = None
            if self._parses_in_top:
                self._parsing.add(node.name)
            if places and node.name not in self._placing and returns_on_device(node):
                self._gpu_returns.add(node.name)
            if node.name in self._placing:
                places = True  # defined twice: which one runs is not known
                self._gpu_returns.discard(node.name)
                self._builder_chains.pop(node.name, None)
            elif called:
                self._builder_chains[node.name] = (node, called)
            self._placing[node.name] = (places, called)
        else:
            self._walk_function(node, grad)

    def _walk_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, grad: str) -> None:
        outer = self._scopes[-1]
        own, self._own = self._own, None  # object_types reads no decorator
        for dec in node.decorator_list:
            self._visit(dec, grad, False)
        self._own = own
        self._unvisited(*_signature_parts(node.args), node.returns, *getattr(node, "type_params", ()))
        decorator = ""
        for dec in node.decorator_list:
            decorator = self._context_mode(dec) or self._off_decorator(dec) or decorator
        name = f"{outer.name}.{node.name}" if outer.name else node.name
        scope = _Scope(name, decorator=decorator, node=node)
        self._fn_nodes.setdefault(node.name, []).append(node)
        args = node.args
        scope.params = tuple(a.arg for a in (*args.posonlyargs, *args.args))
        scope.kwonly = tuple(a.arg for a in args.kwonlyargs)
        if not outer.name:  # a module-level function: another module may call it
            scope.stepped = stepped_parameters(node)
        outer_loops, self._loops = self._loops, []  # a function's body is not its definer's loop
        self._scope(node, scope, node.body, grad=decorator or _INHERIT, loop=False)
        self._loops = outer_loops
        if not outer.name and (scope.backprops or scope.steps):  # the few that train: read once more
            scope.sequence = step_sequence(node, self.module_defs)
        if not outer.name and scope.calls_load:
            scope.unmapped_load = unmapped_return(node, self.bindings)
        if not outer.name and (scope.loads_state or scope.copies_state):  # read after the walk
            self._state_fns.append((node, scope))

    def _class(self, node: ast.ClassDef) -> None:
        self._classes_met += 1
        outer = self._scopes[-1]
        name = f"{outer.name}.{node.name}" if outer.name else node.name
        moves, device_moves = self._moves, self._device_moves
        top = not outer.name and self._class_calls is None
        if top:
            self._class_calls = set()
            steps = self._optimizer_steps
        self._unvisited(*node.decorator_list, *node.bases, *node.keywords, *getattr(node, "type_params", ()))
        for base in node.bases:
            head, _, rest = _dotted(base).partition(".")
            if head in self.bindings:
                self.summary.subclassed.append(self.bindings[head] + (f".{rest}" if rest else ""))
        self._class_stack.append((not _is_plain(node) or bool(node.keywords), set()))
        own, self._own = self._own, None  # object_types reads a class's methods only
        outer_owner, self._owner = self._owner, id(node)
        method_moves: dict[int, list[ast.Call]] = {}  # id of a method -> the move calls its walk met
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._scopes.append(_Scope(name))
                first = len(self._move_calls)
                self._function(stmt, ON)
                method_moves[id(stmt)] = self._move_calls[first:]
                decorators = self._scopes.pop()  # what the method's decorators use
                self._loading.update(used for used, _, _ in decorators.loading)
            else:
                self._visit(stmt, ON, False)
        self._own = own
        self._owner = outer_owner
        _has_base, assigned = self._class_stack.pop()
        if self._device_moves != device_moves:  # the few classes moving a model: their methods' arguments
            self._methods_gpu_args(node)
        if top:
            self._calls_of[id(node)] = self._class_calls  # type: ignore[assignment]
            self._class_calls = None
            if self._optimizer_steps != steps:
                self._stepping.add(id(node))
        if not outer.name and _is_tracker(node):
            self.summary.trackers.append(node.name)
        # No move met in its walk (most classes), or only moves of fresh
        # tensors (class_moves.py reads the class again only then).
        if not outer.name and (
            self._moves == moves
            or not class_moves_to_a_device(
                node, self.bindings, self._node_lists, self._tensor_functions(), method_moves.get
            )
        ):
            self.summary.cpu_classes.append(node.name)
        elif (
            not outer.name
            and _is_plain(node)
            and built_on_cpu(node, self.bindings, self._node_lists, self._tensor_functions())
        ):
            self.summary.cpu_built.append(node.name)
        if not outer.name and _is_plain(node):
            self.summary.plain_classes.append(node.name)
            if not node.keywords:
                self.summary.plain_attrs.extend(sorted(assigned))
        if not outer.name and _model_like(node):
            self.summary.classes.append(node.name)

    def _tensor_functions(self) -> Callable[[], frozenset[str]]:
        """module_tensor_functions under the imports bound so far, one per
        set of bindings: the classes of a module ask it with the same ones
        (a function's own imports may bind more between two classes)."""
        key = tuple(self.bindings.items())
        if self._tensor_fns is None or self._tensor_fns[0] != key:
            self._tensor_fns = (key, module_tensor_functions(self._tree, dict(self.bindings)))
        return self._tensor_fns[1]

    def _methods_gpu_args(self, node: ast.ClassDef) -> None:
        """CallSite.gpu_args of the methods of ``node`` that call the project
        with an attribute ``__init__`` moved to a device (``load_network(
        self.net, p)`` in ``resume``; init_moves.py)."""
        placed = init_placed(node)
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in placed:
                self._gpu_args.update(gpu_arg_calls(stmt.body, placed[stmt.name]))

    def _unvisited(self, *parts: ast.AST | None) -> None:
        """Parts of the tree the walk does not enter (a lambda, a signature,
        a class's bases, a ``with``'s target): scanned for device moves, the
        names a class constructs, loading names, placing calls and
        ``save``/``load`` callees only, in one pass over each part's nodes
        (every signature of every function comes here)."""
        for part in parts:
            if part is None or part.__class__ in _NO_CALL_OR_ATTRIBUTE:
                continue
            for node in nodes(part):
                kind = node.__class__
                if kind is ast.Call:
                    self._gpu = self._gpu or gpu_call(node)  # type: ignore[arg-type]
                    func = node.func  # type: ignore[attr-defined]
                    callee = func.__class__
                    if callee is ast.Attribute:
                        if func.attr in _MOVES:
                            self._moves += 1
                            self._move_calls.append(node)  # type: ignore[arg-type]
                        elif func.attr == "step" and optimizer_step(node):
                            self._optimizer_steps += 1
                        if func.attr in _SAVE_LOAD:
                            self._save_loads.append(func)
                    elif callee is ast.Name and func.id in _SAVE_LOAD:
                        self._save_loads.append(func)
                    if self._class_calls is not None:
                        self._constructs(_dotted(func))
                    if self._in_top is not None:
                        self._placed(node)  # type: ignore[arg-type]
                elif kind is ast.Attribute and LOADING_NAMES[node.attr]:  # type: ignore[attr-defined]
                    self._loading.add(node.attr)  # type: ignore[attr-defined]

    def _placed(self, call: ast.Call) -> None:
        """_cpu_functions' reading of one call of the function of ``tree.body`` being walked."""
        func = call.func
        if func.__class__ is ast.Attribute:
            if func.attr in _PLACES:  # type: ignore[attr-defined]
                self._in_top[0] = True  # type: ignore[index]
            if func.attr in SETTINGS_CALLS:  # type: ignore[attr-defined]
                self._parses_in_top = True
        elif func.__class__ is ast.Name:
            self._in_top[1].add(func.id)  # type: ignore[attr-defined,index]
            if func.id in SETTINGS_CALLS:  # type: ignore[attr-defined]
                self._parses_in_top = True

    def _call(self, node: ast.Call, grad: str, loop: bool) -> None:
        scope = self._scopes[-1]
        func = node.func
        self._gpu = self._gpu or gpu_call(node)
        if self._in_top is not None:
            self._placed(node)
        # Dispatched once on the callee's class (every call of every module
        # comes here): ``x.m(...)`` (most calls), ``f(...)``, anything else.
        shape = func.__class__
        if shape is ast.Attribute:
            last = func.attr  # type: ignore[attr-defined]
            # The callee's spelling from its receiver's: one walk of the chain, not two.
            receiver = _dotted(func.value)  # type: ignore[attr-defined]
            dotted = f"{receiver}.{last}" if receiver else ""
            self._receiver_calls.append(node)
            if self._runtime_modules and func.value.__class__ is ast.Name and func.value.id in self._runtime_modules:  # type: ignore[attr-defined]
                self._eval_names.add(last)  # ``arch.Decoder(...)``: which module's is not known, as under ``eval``
            if last == "DataParallel":
                self._data_parallels += 1
            if last in _MOVES:
                self._moves += 1
                self._move_calls.append(node)
                if is_device_move(node):
                    self._device_moves += 1
                self._outside(receiver)  # ``trainer.model.cuda()``: moved here
            if grad == OFF:
                self._off_calls.add(id(func))
            if LOADING_NAMES[last]:
                self._loading_calls[id(func)] = node  # before _loading_attribute meets its ``func``
            if last == "add_argument":
                for value in option_listed(node):
                    head, _, rest = _dotted(value).partition(".")
                    target = self.bindings.get(head)
                    if rest and target and target.split(".")[0] not in _EXTERNAL:  # spelled as CallSite.callee
                        self._option_values.add(f"{target}{'' if target.endswith('.') else '.'}{rest}")
        elif shape is ast.Name:
            last = dotted = func.id  # type: ignore[attr-defined]
            receiver = ""
            if last == "DataParallel":
                self._data_parallels += 1
            if last not in self.bindings:
                self._called_names.add(last)
            if last == "getattr" and len(node.args) >= 2:
                spelled = _dotted(node.args[0])
                if spelled and spelled.partition(".")[0] in self.bindings:
                    self._getattr_modules.add(spelled)
        else:
            last = receiver = ""
            dotted = _dotted(func)
            if shape is ast.Subscript:
                if self._class_stack and hook_call_site(func):  # type: ignore[arg-type]
                    self._hook_lines.append(node.lineno)  # ``self.hooks['on_start_epoch'](state)``: engine_hooks
                if _dict_of(func.value):  # type: ignore[attr-defined]
                    # ``models.__dict__[args.arch](...)``: ``getattr(models, args.arch)`` spelled otherwise.
                    spelled = _dotted(func.value.value)  # type: ignore[attr-defined]
                    if spelled and spelled.partition(".")[0] in self.bindings:
                        self._getattr_modules.add(spelled)
            elif shape is ast.Call:
                named = evaluated_name(func)  # type: ignore[arg-type]
                if named:
                    self._eval_names.add(named)
        if last == "apply" and len(node.args) == 1 and node.args[0].__class__ is ast.Name:
            self._apply_of(node.args[0].id)  # type: ignore[attr-defined]
        if last in _SAVE_LOAD:
            self._save_loads.append(func)
            scope.calls_load = scope.calls_load or last == "load"
            if shape is ast.Attribute:
                self._checkpoints = True
        elif last == "load_state_dict":
            scope.loads_state = self._loads_state = True
        elif last == "copy_":
            scope.copies_state = True
        if last in _BACKWARD and (last != "grad" or _dotted(func).endswith("autograd.grad")):
            scope.backprops = True
            scope.backwards += 1
            scope.trace.backward(_start(node))
            self.summary.trains = self.summary.trains or loop
            if self._loops:
                self._loops[-1][0] = True
        elif last == "step" and shape is ast.Attribute:
            scope.steps = True
            if optimizer_step(node):
                self._optimizer_steps += 1
            stepped = _step_kind(node, func)  # type: ignore[arg-type]
            if stepped:
                scope.step_attrs += (stepped,)
        if shape is ast.Attribute:
            self._attr_calls.append((scope, last, grad, receiver))
            if last == "zero_grad" and receiver:
                what = cleared(receiver, scope.params)
                if what and what not in scope.clears:
                    scope.clears += (what,)
        if shape is ast.Attribute and func.value.__class__ is ast.Name:  # type: ignore[attr-defined]
            instance = scope.instances.get(func.value.id)  # type: ignore[attr-defined]
            if instance:
                self.summary.method_calls.append((f"{instance}.{last}", node.lineno))
                self._method_modes.append((scope, grad))
                self._method_sites.append((f"{instance}.{last}", node.lineno, node))
        if shape is ast.Attribute and last in ("eval", "train") and not node.args[1:]:
            if last == "eval" and not node.args:
                scope.modes.add("eval")
                self._switch(node, EVAL, receiver)
            elif last == "train" and (not node.args or _is_false(node.args[0]) is not None):
                mode = "eval" if node.args and _is_false(node.args[0]) else "train"
                scope.modes.add(mode)
                self._switch(node, mode, receiver)
            else:
                scope.trace.opaque(_start(node))
            switched = True
        else:
            switched = False
        if self._class_calls is not None:
            self._constructs(dotted)
        head, _, rest = dotted.partition(".")
        target = self.bindings.get(head) if dotted else None
        kind, callee = "", ""
        if target is not None:
            if target.split(".")[0] not in _EXTERNAL:
                sep = "" if target.endswith(".") else "."
                kind, callee = "import", (f"{target}{sep}{rest}" if rest else target)
        elif dotted and not rest and head in self.module_defs:
            kind, callee = "local", head
            scope.local_calls.add(head)
        elif receiver == "self" and scope.name:
            own_method = self_callee(scope.name, receiver, func.attr)  # type: ignore[attr-defined]
            if own_method is not None:
                scope.local_calls.add(own_method)
        elif dotted and not rest and self._has_star and head not in _BUILTINS and not _own_param(scope, head):
            # (``netD(x)`` on a parameter is a model run, not a star import's function)
            kind, callee = "star", "*" + head
        names: frozenset[str] = frozenset()
        if switched:
            self._outside(receiver)
        elif kind:
            names = handed_names(node)
            scope.trace.hand(_start(node), ("local:" + callee) if kind == "local" else callee, names)
        elif may_set_mode(last) and not (target or head).startswith("torch") and handed_names(node):
            scope.trace.opaque(_start(node))  # ``enable_dropout(model)``
            for name in handed_names(node):
                self._outside(name)
        else:
            # a model run (``model(x)``: a loop may train it) or a call we cannot read
            scope.trace.run(_start(node), node)
        if kind:
            for name in names - {dotted}:
                self._outside(name)  # ``evaluate(solver.G)``: a project function may switch it
            cell = None if kind == "local" else self._cell()
            built = () if kind == "local" else self._built(node)
            scope.sites.append((node.lineno, callee, grad, loop, kind, cell, built))  # type: ignore[arg-type]
            scope.site_calls.append(node)

    def _constructs(self, dotted: str) -> None:
        """class_needs: a call in the class being walked whose callee's last
        name is capitalised (a class it may construct)."""
        if dotted and dotted.rsplit(".", 1)[-1][:1].isupper():
            self._class_calls.add(dotted)  # type: ignore[union-attr]

    def _instance(self, name: str, value: ast.expr) -> None:
        """``solver = Solver(...)`` with ``Solver`` (or ``solver_mod.Solver``)
        imported from a module that may be the project's: ``solver``'s
        methods are that class's (``Scope.instances``)."""
        scope = self._scopes[-1]
        target = ""
        if value.__class__ is ast.Call:  # most names are bound to something else: nothing to spell
            func = value.func  # type: ignore[attr-defined]
            if func.__class__ is ast.Name:
                if func.id in self.bindings:
                    target = self.bindings[func.id]
            elif (
                func.__class__ is ast.Attribute and func.value.__class__ is ast.Name and func.value.id in self.bindings
            ):
                target = f"{self.bindings[func.value.id]}.{func.attr}"
            if target.lstrip(".").split(".")[0] in _EXTERNAL:
                target = ""
        known = scope.instances.get(name)
        scope.instances[name] = target if known is None or known == target else ""

    def _apply_of(self, name: str) -> None:
        """``aD.apply(weights_init)`` with a function another module defines:
        kept as the imports spell it (a function of this module is read by
        libcst's own call graph)."""
        target = self.bindings.get(name)
        if target is not None:
            if target.split(".")[0] not in _EXTERNAL:
                self._applied.add(target)
        elif self._has_star and name not in self.module_defs and name not in _BUILTINS:
            self._applied.add("*" + name)

    def _outside(self, dotted: str) -> None:
        """``solver.G`` switched, moved or handed over: ``G`` is in attr_switches
        (``self.G`` inside a plain class is read by the module's own analysis)."""
        head, _, rest = dotted.partition(".")
        if rest and head != "self":
            self._switched.update(rest.split("."))
        elif rest and self._in_subclass():
            self._switched.update(rest.split("."))  # a subclass may switch its base's attribute

    def _in_subclass(self) -> bool:
        return self._class_stack[-1][0] if self._class_stack else False

    def _switch(self, node: ast.Call, mode: str, receiver: str) -> None:
        trace = self._scopes[-1].trace
        if receiver:
            trace.switch(_start(node), mode, receiver)
        else:
            trace.opaque(_start(node))  # ``get_model().eval()``: cannot tell which

    def _spelling(self, func: ast.expr) -> str | None:
        """How this module names a callee after its imports (``engine.Net``,
        ``*Net`` for a star import), ``:Net`` for its own module-level name."""
        dotted = _dotted(func)
        if not dotted:
            return None
        head, _, rest = dotted.partition(".")
        target = self.bindings.get(head)
        if target is not None:
            if target.split(".")[0] in _EXTERNAL:
                return None
            sep = "" if target.endswith(".") else "."
            return f"{target}{sep}{rest}" if rest else target
        if not rest and head in self.module_defs:
            return ":" + head
        if not rest and self._has_star and head not in _BUILTINS:
            return "*" + head
        return None

    def _built(self, node: ast.Call) -> tuple[tuple[str, str], ...]:
        """The arguments of ``node`` that are a model built in place
        (``init_model(LeNetEncoder(), path)``): CallSite.built."""
        out = []
        args = [(str(i), a) for i, a in enumerate(node.args)]
        if any(isinstance(a, ast.Starred) for a in node.args):
            args = []  # the positions after a ``*args`` are unknown
        args += [(k.arg, k.value) for k in node.keywords if k.arg is not None]
        for key, value in args:
            while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _STAYS:
                value = value.func.value  # ``Net().eval()``
            if not isinstance(value, ast.Call) or _builds_elsewhere(value):
                continue
            spelling = self._spelling(value.func)
            if spelling is not None:
                out.append((key, spelling))
        return tuple(out)

    def _cell(self) -> list[bool] | None:
        return self._loops[-1] if self._loops else None

    def _off_decorator(self, dec: ast.expr) -> str | None:
        """OFF for a decorator of this module's own that turns grad off (off_decorators.py)."""
        func = dec.func if isinstance(dec, ast.Call) else dec
        if not isinstance(func, ast.Name):
            return None
        kind = self.summary.off_decorators.get(func.id)
        return OFF if kind == ("called" if isinstance(dec, ast.Call) else "bare") else None

    def _context_mode(self, expr: ast.expr) -> str | None:
        """The grad mode a ``with`` item or a decorator sets; None for other contexts."""
        call = expr if isinstance(expr, ast.Call) else None
        func = call.func if call is not None else expr
        dotted = _dotted(func)
        if not dotted:
            return None
        last = dotted.rsplit(".", 1)[-1]
        if last in _OFF_CONTEXTS:
            if last == "inference_mode" and call is not None and call.args and _is_false(call.args[0]):
                return ON
            return OFF
        if last == "enable_grad":
            return ON
        if last == "set_grad_enabled":
            if call is not None and call.args:
                flag = _is_false(call.args[0])
                return UNKNOWN if flag is None else OFF if flag else ON
            return UNKNOWN
        head = dotted.split(".")[0]
        if self.bindings.get(head, "").startswith("torch") or head == "torch":
            return None  # autocast, profiler, cuda.device: no grad mode
        lowered = last.lower()
        if any(word in lowered for word in _UNKNOWN_CONTEXT_WORDS):
            return UNKNOWN  # a helper of the project's own that may turn grad off
        return None

    # -- after the walk -----------------------------------------------------
    def _numeric(self) -> frozenset[str]:
        """The names every function or method of the module so named returns only numbers under."""
        if self._numeric_names is None:
            self._numeric_names = frozenset(
                name for name, nodes in self._fn_nodes.items() if all(returns_number(n) for n in nodes)
            )
        return self._numeric_names

    def _training_names(self) -> frozenset[str]:
        """The names of the module's functions and methods that backpropagate."""
        if self._trains is None:
            self._trains = frozenset(sc.name.rsplit(".", 1)[-1] for sc in self._done if sc.name and sc.backprops)
        return self._trains

    def _finish(self) -> None:
        s = self.summary
        local_modes: dict[str, set[str]] = {}
        for scope in self._done:
            for _line, callee, grad, _loop, kind, _cell, _built in scope.sites:
                if kind == "local":
                    local_modes.setdefault(callee, set()).add(self._resolved(scope, grad, {}))
        local_facts = {sc.name: sc for sc in self._done if sc.name and "." not in sc.name}
        entries: dict[str, str] = {}
        for scope in self._done:
            if scope.name and "." not in scope.name:
                modes = local_modes.get(scope.name, set())
                if scope.decorator:
                    entries[scope.name] = scope.decorator
                elif modes:
                    entries[scope.name] = modes.pop() if len(modes) == 1 else UNKNOWN
        hidden = _hidden_switches(local_facts)
        passes = passing(
            {sc.name: sc.data_loop for sc in self._done if sc.name},
            {sc.name: sc.local_calls for sc in self._done if sc.name and sc.local_calls},
        )
        self._chain_gpu_returns()
        gpu_functions = frozenset(self._gpu_returns)
        for fn_node, fn_scope in self._state_fns:
            fn_scope.state_params = state_params(fn_node, gpu_functions, fn_scope.copies_state)
        for scope in self._done:
            if scope.name:
                mode = "both" if len(scope.modes) > 1 else next(iter(scope.modes), "")
                events = scope.trace.events
                opaque = any(e.kind == "unknown" for e in events) or scope.name in hidden
                s.functions.append(
                    FunctionFacts(
                        scope.name,
                        scope.backprops,
                        mode,
                        scope.decorator,
                        scope.params,
                        scope.kwonly,
                        _switches(scope.trace),
                        opaque,
                        scope.steps,
                        *scope.stepped,
                        scope.sequence,
                        scope.step_attrs,
                        scope.state_params,
                        scope.name in gpu_functions,
                        scope.name in passes,
                        scope.unmapped_load,
                        scope.clears,
                    )
                )
            spelled = _spelled_calls(scope) if self._gpu_args else {}
            flow = None
            for (line, callee, grad, loop, kind, cell, built), call in zip(scope.sites, scope.site_calls):
                if kind != "local":
                    grad = self._resolved(scope, grad, entries)
                    args = self._argument_modes(scope, call, local_facts)
                    written = _dotted(call.func)
                    step = bool(cell and cell[0])
                    fed = self._gpu_state.get(id(call), ())
                    items = tuple(sorted(i for i in fed if i >= 0))
                    on_device = _spelled_args(self._gpu_args.get(id(call), ()), spelled)
                    evaluating = not scope.backprops and scope.trace.evaluating_before(_start(call))
                    final: tuple[str, ...] = ()
                    # Only in a scope that trains (a step handing its graph to a loss helper), out of loops.
                    if scope.backprops and not loop and scope.node is not None and _names_handed(call):
                        if flow is None:
                            flow = ScopeFlow(scope.node, self._numeric())
                        final = flow.final_args(call, self._training_names())
                    s.calls.append(
                        CallSite(
                            callee,
                            line,
                            grad,
                            loop,
                            scope.backprops,
                            step,
                            args,
                            written,
                            built,
                            -1 in fed,
                            on_device,
                            items,
                            evaluating,
                            plain_args(call),
                            final,
                        )
                    )
        s.gpu_method_calls = _gpu_method_calls(self._method_sites, self._gpu_state, self._attr_calls)
        s.functions.sort(key=lambda f: f.name)
        s.cpu_functions = _not_placing(self._placing)
        s.settings_functions = settings_functions(self._tree, self._parsing)
        # Only classes of the module's body: method_moves need not look for others.
        nested = self._classes_met != sum(1 for n in self._tree.body if n.__class__ is ast.ClassDef)
        s.still_methods, s.moving_methods = method_moves(self._tree, self._node_lists, nested)
        s.model_classes = _model_classes(self._tree, self.bindings)
        s.parameterless = _parameterless(self._tree, s.model_classes, self.bindings, self._node_lists)
        s.mode_entries = mode_entries(self._tree, s.model_classes, self.bindings, self._node_lists)
        s.attr_switches = sorted(self._switched)
        s.tensor_trackers = tensor_trackers(self._tree)
        s.cpu_builders, s.foreign_builders = builders(self._tree, s.cpu_classes, s.cpu_functions, self._node_lists)
        s.class_needs = class_needs(self._tree, [*s.cpu_classes, *s.cpu_built], self._calls_of)
        s.loading_uses = sorted(self._loading.union(self._loading_cpu))
        if self._loading_cpu and sets_default_device(self._tree):
            self._loading.update(self._loading_cpu)  # what it builds may start on a device
        s.loading_cpu_uses = sorted(
            f"{name}={spelled}"
            for name, found in self._loading_cpu.items()
            if name not in self._loading
            for spelled in found
        )
        s.loading_grad_uses = sorted(self._loading_grad)
        s.eval_names = sorted(self._eval_names)
        s.tables = model_tables(self._tree)
        s.factories = factories(self._tree)
        s.factory_calls = sorted(c for n, c in self._bound_calls.items() if n in self._called_names)
        s.forward_items = forward_items(self._tree, self.bindings, self.scope_nodes)
        s.methods_off, s.methods_on, s.methods_relayed = method_call_modes(
            self._attr_calls, entries, self._class_methods, _INHERIT
        )
        s.method_grads = [self._resolved(scope, grad, entries) for scope, grad in self._method_modes]
        s.version_tests = version_tests(self._tree)
        s.engine_factories = engine_factories(self._tree)
        if self._hook_lines:
            s.engine_hooks = engine_hooks(self._tree, self._hook_lines, self._stepping)
        s.applied = sorted(self._applied)
        s.cpu_module = builds_only_on_cpu(self._tree, s.cpu_classes)
        s.cpu_objects = cpu_objects(self._tree, self.bindings, s.cpu_classes)
        s.getattr_modules = sorted(self._getattr_modules)
        s.option_values = sorted(self._option_values)
        # Kept where a model may be loaded or switched to eval (a view
        # resolves each target: MEM701's CPU classes, MEM201's model classes);
        # a star import may bind any of them at module level.
        if (self._loads_state or any(f.mode in ("eval", "both") for f in s.functions)) and not s.stars:
            s.local_imports = only_local(self._local_imports, s.imports, {*s.defines, *self.module_defs})
        if self._loads_state:
            s.called_methods = called_methods(self._receiver_calls, self.bindings)
        if self._checkpoints and any(names_a_checkpoint_call(f, self.bindings) for f in self._save_loads):
            s.cpu_saved, s.other_saved, s.loaded_files, s.model_saves = checkpoint_facts(self._tree, self.bindings)
        s.calls.sort(key=lambda c: (c.line, c.callee))

    def _argument_modes(self, scope: _Scope, call: ast.Call, local_facts: dict[str, _Scope]):
        """arg_modes: the mode of each dotted-name argument of ``call`` when
        it runs. Functions of this module the model was handed to since the
        switch are judged here: one that switches a mode makes it unknown,
        one that backpropagates trained it."""
        if not scope.trace.receivers:
            return ()  # nothing switched in this scope: every mode is unknown
        out = []
        for key, name in argument_keys(call):
            mode, via = scope.trace.state(name, _start(call), _end(call))
            if mode not in (EVAL, TRAIN):
                continue
            trained, imported, known = False, [], True
            for callee in via:
                if callee == "loop":
                    trained = True
                elif callee.startswith("local:"):
                    fn = local_facts.get(callee[6:])
                    if fn is not None and fn.modes - {"train"}:
                        known = False  # it may have put the model in eval mode
                    trained = trained or (fn is not None and fn.backprops)
                else:
                    imported.append(callee)
            if known:
                out.append((key, mode, trained, tuple(sorted(set(imported)))))
        return tuple(out)

    def _resolved(self, scope: _Scope, grad: str, entries: dict[str, str]) -> str:
        """A call's mode when nothing around it inside its function sets one:
        the mode the function is entered in (its decorator, or the mode of
        every call of it in this module), grad on for a function nobody here
        calls and for the module's own body."""
        if grad != _INHERIT:
            return grad
        if scope.decorator:
            return scope.decorator
        top = scope.name.split(".")[0]
        if top != scope.name:
            return ON  # a method or nested function: its callers are not followed
        return entries.get(top, ON)


_BUILTINS = frozenset(dir(builtins))
# The node classes kept in each scope's nodes (scope_nodes): those object_types
# reads, and the other bindings tuple_returns' fresh names read.
_KEPT_IN_SCOPE = READ_IN_SCOPE | BINDING_NODES
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
# Node classes the walk enters its own way (a scope, a grad-mode block, a loop).
_ENTERED: dict[type, Callable[..., None]] = {
    ast.FunctionDef: _Walker._enter_function,
    ast.AsyncFunctionDef: _Walker._enter_function,
    ast.ClassDef: _Walker._enter_class,
    ast.Lambda: _Walker._enter_lambda,
    ast.With: _Walker._enter_with,
    ast.AsyncWith: _Walker._enter_with,
    ast.For: _Walker._enter_loop,
    ast.AsyncFor: _Walker._enter_loop,
    ast.While: _Walker._enter_loop,
    **{cls: _Walker._enter_comprehension for cls in _COMPREHENSIONS},
}


def _own_param(scope: _Scope, name: str) -> bool:
    return name in scope.params or name in scope.kwonly


def _hidden_switches(functions: dict[str, _Scope]) -> set[str]:
    """Module-level functions whose switches FunctionFacts.switches does not
    list: they hand a parameter (or ``self``) to a function of another module,
    or to one of this module that switches a mode or does so in turn."""
    switching = {
        name for name, sc in functions.items() if sc.modes or any(e.kind == "unknown" for e in sc.trace.events)
    }
    calls: dict[str, set[str]] = {}
    hidden: set[str] = set()
    for name, sc in functions.items():
        mine = set(sc.params) | set(sc.kwonly) | {"self"}
        for e in sc.trace.events:
            if e.kind != "call" or not e.callee or not any(n.split(".")[0] in mine for n in e.names):
                continue
            if e.callee.startswith("local:"):
                calls.setdefault(name, set()).add(e.callee[6:])
            else:
                hidden.add(name)
    grew = True
    while grew:  # linear in practice: a few passes over the module's call graph
        grew = False
        for name, callees in calls.items():
            if name not in hidden and callees & (switching | hidden):
                hidden.add(name)
                grew = True
    return hidden


def _switches(trace: ModeTrace) -> tuple[tuple[str, str], ...]:
    """A function's ``.eval()``/``.train()`` calls and its training loops
    (("*", "training-phase"): a loop holding a backward), in source order."""
    items = [(e.pos, e.receiver, e.kind) for e in trace.events if e.receiver]
    items += [(start, "*", "training-phase") for start, _end, trains in trace.loops if trains]
    return tuple((receiver, kind) for _pos, receiver, kind in sorted(items))


def _start(node: ast.AST) -> tuple[int, int]:
    return (node.lineno, node.col_offset)  # type: ignore[attr-defined]


def _end(node: ast.AST) -> tuple[int, int]:
    return (node.end_lineno or node.lineno, node.end_col_offset or 0)  # type: ignore[attr-defined]


def _is_false(node: ast.AST) -> bool | None:
    """True for a literal False, False for a literal True, None otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return not node.value
    return None


# Module-level statements whose bindings ``defines`` does not list.
_OPEN_STATEMENTS = (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Match)


def _literal_names(node: ast.AST | None) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
    ):
        return [e.value for e in node.elts]  # type: ignore[attr-defined]
    return None


def _is_tracker(node: ast.ClassDef) -> bool:
    """A class whose ``update``/``add`` stores Python numbers: every value it
    adds to an attribute of ``self`` passes through ``.item()``, ``float()``
    or ``int()`` (or the method converts its argument so), and no method
    keeps a tensor (``torch.`` anywhere in it makes it unknown)."""
    found = False
    for stmt in node.body:
        if not isinstance(stmt, ast.FunctionDef) or stmt.name not in _TRACKER_METHODS:
            continue
        params = {a.arg for a in stmt.args.args[1:]}
        positional = stmt.args.args[1:]
        defaults = positional[len(positional) - len(stmt.args.defaults) :] if stmt.args.defaults else []
        # ``n=1``: a count with a number for its default.
        converted = {
            a.arg
            for a, d in zip(defaults, stmt.args.defaults)
            if isinstance(d, ast.Constant) and isinstance(d.value, (int, float)) and not isinstance(d.value, bool)
        }
        stores_numbers = False
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name):
                if sub.targets[0].id in params and _is_number(sub.value, converted):
                    converted.add(sub.targets[0].id)
            if isinstance(sub, ast.AugAssign) and _self_attr(sub.target):
                if not _is_number(sub.value, converted):
                    return False
                stores_numbers = True
        found = found or stores_numbers
    return found and "torch" not in ast.dump(node)


def _is_number(expr: ast.AST, converted: set[str]) -> bool:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)):
        return True
    if isinstance(expr, ast.Name):
        return expr.id in converted
    if isinstance(expr, ast.Call):
        f = expr.func
        if isinstance(f, ast.Name) and f.id in ("float", "int"):
            return True
        if isinstance(f, ast.Attribute) and f.attr == "item" and not expr.args:
            return True
    if isinstance(expr, ast.BinOp):
        return _is_number(expr.left, converted) and _is_number(expr.right, converted)
    return False


# Methods of a module that return the module itself (``Net().cuda().eval()``).
# torch.nn.Module's own methods named for loading: a call of one on an
# imported class's instance is not followed as a project method's (cpu_receivers.py).
_MODULE_LOADERS = frozenset(
    {"load_state_dict", "_load_from_state_dict", "register_load_state_dict_post_hook"}
    | {"register_load_state_dict_pre_hook", "_register_load_state_dict_pre_hook"}
)
_RETURNS_MODULE = frozenset(
    {"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "train", "eval", "requires_grad_"}
)


def _unchained(value: ast.AST) -> ast.AST:
    """``Net(...)`` for ``Net(...).cuda().eval()``: the call under a chain of such methods."""
    while (
        value.__class__ is ast.Call
        and value.func.__class__ is ast.Attribute  # type: ignore[attr-defined]
        and value.func.attr in _RETURNS_MODULE  # type: ignore[attr-defined]
        and value.func.value.__class__ is ast.Call  # type: ignore[attr-defined]
    ):
        value = value.func.value  # type: ignore[attr-defined]
    return value


def _builds_from(value: ast.AST | None, name: str) -> bool:
    """``value`` is ``name.Cls(...)`` (possibly ``.cuda()``-chained): built from the module ``name``."""
    if value is None:
        return False
    built = _unchained(value)
    func = built.func if built.__class__ is ast.Call else None  # type: ignore[attr-defined]
    return func.__class__ is ast.Attribute and func.value.__class__ is ast.Name and func.value.id == name  # type: ignore[union-attr]


def _self_attr(target: ast.AST) -> bool:
    return isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"


# Calls that put a model on a device without ``.to(``: accelerate's and
# Lightning Fabric's ``prepare``/``setup``, DeepSpeed's ``initialize``.
_PLACES = _MOVES | {"prepare", "prepare_model", "setup", "setup_module", "initialize"}
# Calls on a model that leave it where it is (``Net().eval()``).
_STAYS = frozenset({"eval", "train", "float", "double", "requires_grad_"})
# Bases of a class that is never a model.
_PLAIN_BASES = frozenset(
    {"object", "dict", "list", "tuple", "set", "str", "int", "float", "OrderedDict", "defaultdict"}
)


def _is_plain(node: ast.ClassDef) -> bool:
    """A class built on builtins only (``class AttrDict(dict)``): not a model."""
    return all(_dotted(b).rsplit(".", 1)[-1] in _PLAIN_BASES for b in node.bases) and not node.keywords


def _arg_values(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(k.value for k in call.keywords)]


def _builds_elsewhere(call: ast.Call) -> bool:
    """A constructor call that may put what it builds on a device: a
    ``device=`` argument, ``**kwargs`` (one may be among them), a move inside."""
    if any(k.arg is None or k.arg in ("device", "device_map") for k in call.keywords):
        return True
    return any(
        n.__class__ is ast.Call and n.func.__class__ is ast.Attribute and n.func.attr in _PLACES  # type: ignore[attr-defined]
        for n in nodes(call)
    )


def _cpu_functions(tree: ast.Module) -> list[str]:
    """Module-level functions that move nothing to a device, directly or
    through another function of the module they call (the summary's walk
    reads the same in passing: _Walker._placed)."""
    local: dict[str, tuple[bool, set[str]]] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            moves, called = False, set()
            for n in ast.walk(stmt):
                if isinstance(n, ast.Call):
                    if isinstance(n.func, ast.Attribute) and n.func.attr in _PLACES:
                        moves = True
                    elif isinstance(n.func, ast.Name):
                        called.add(n.func.id)
            if stmt.name in local:
                moves = True  # defined twice: which one runs is not known
            local[stmt.name] = (moves, called)
    return _not_placing(local)


def runtime_import(value: ast.expr) -> bool:
    """``__import__(...)`` or ``importlib.import_module(...)``: a module named at run time."""
    if value.__class__ is not ast.Call:
        return False
    func = value.func  # type: ignore[attr-defined]
    if func.__class__ is ast.Name:
        return func.id in ("__import__", "import_module")
    return func.__class__ is ast.Attribute and func.attr == "import_module" and _dotted(func.value) == "importlib"


def evaluated_name(call: ast.Call) -> str:
    """``get_pose_net`` for ``eval('models.' + name + '.get_pose_net')``: the
    last part of a string ``eval`` is handed, when the string ends with a
    literal ``.identifier``; "" otherwise."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "eval" and len(call.args) == 1 and not call.keywords):
        return ""
    tail = call.args[0]
    while isinstance(tail, ast.BinOp) and isinstance(tail.op, ast.Add):
        tail = tail.right
    if not (isinstance(tail, ast.Constant) and isinstance(tail.value, str) and "." in tail.value):
        return ""
    name = tail.value.rpartition(".")[2]
    return name if name.isidentifier() else ""


def _spelled_calls(scope: _Scope) -> dict[int, str]:
    """The scope's calls of project functions, by id, as CallSite spells
    them (":name" for a function of this module)."""
    return {
        id(call): (":" + site[1]) if site[4] == "local" else site[1]
        for site, call in zip(scope.sites, scope.site_calls)
    }


def _spelled_args(
    found: tuple[tuple[str, tuple[ast.Call, ...]], ...], spelled: dict[int, str]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """CallSite.gpu_args from gpu_args.py's answer: an argument bound by a
    call of no function the index can name says nothing."""
    out = []
    for key, calls in found:
        names = tuple(spelled.get(id(c), "") for c in calls)
        if all(names):
            out.append((key, names))
    return tuple(out)


def _gpu_method_calls(
    sites: list[tuple[str, int, ast.Call]], gpu_state: dict[int, set[int]], attr_calls: list
) -> list[tuple[str, int]]:
    """The method calls on instances (``sites``) whose result a moved model
    loads (``gpu_state``), of the method names every call of which in the
    module is such a site: a call the summary cannot tie to an instance
    (``self.stopper.load_checkpoint()``, an instance of another scope) may
    load into a model on the CPU, and keeps the name's calls unclaimed."""
    if not gpu_state:
        return []
    spelled = Counter(last for _scope, last, _grad, _receiver in attr_calls)
    on_instances = Counter(m.rpartition(".")[2] for m, _line, _call in sites)
    return [
        (m, line)
        for m, line, call in sites
        if -1 in gpu_state.get(id(call), ()) and spelled[m.rpartition(".")[2]] == on_instances[m.rpartition(".")[2]]
    ]


def _not_placing(local: dict[str, tuple[bool, set[str]]]) -> list[str]:
    """The functions of ``local`` (name: whether it places something on a
    device, the names it calls) that place nothing, directly or through
    another of them."""
    moving = {name for name, (moves, _) in local.items() if moves}
    changed = True
    while changed:  # a function calling a moving one moves too
        changed = False
        for name, (_, called) in local.items():
            if name not in moving and called & moving:
                moving.add(name)
                changed = True
    return sorted(set(local) - moving)


def _sys_path_added(call: ast.Call) -> str | None:
    """The folder of ``sys.path.append("..")`` / ``sys.path.insert(0, "..")``."""
    if _dotted(call.func) not in ("sys.path.append", "sys.path.insert"):
        return None
    arg = call.args[-1] if call.args else None
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and not call.keywords:
        return arg.value
    return None


def _step_kind(call: ast.Call, func: ast.Attribute) -> tuple[str, str] | None:
    """``self.<attr>.step()`` by the attribute's name: ("o", attr) an
    optimizer, ("s", attr) a scheduler; None for anything else (an argument:
    a metric, an epoch)."""
    held = func.value
    if call.args or call.keywords or not (isinstance(held, ast.Attribute) and isinstance(held.value, ast.Name)):
        return None
    if held.value.id != "self":
        return None
    kind = guess_kind_from_name(held.attr)
    return ("o", held.attr) if kind is Kind.OPTIMIZER else ("s", held.attr) if kind is Kind.SCHEDULER else None


def _parameterless(tree: ast.Module, model_classes: list[str], bindings: dict[str, str], walk: NodeLists) -> list[str]:
    """The model classes proved to own no parameter (parameterless.py)."""
    if not model_classes:
        return []
    named = set(model_classes)
    proved: dict[str, bool] = {}
    for n in tree.body:
        if isinstance(n, ast.ClassDef) and n.name in named:  # every definition of the name
            proved[n.name] = proved.get(n.name, True) and holds_no_parameters(n, bindings, walk)
    return [name for name, ok in proved.items() if ok]


def _model_classes(tree: ast.Module, bindings: dict[str, str]) -> list[str]:
    """Module-level classes built on ``torch.nn.Module`` (directly, or on
    another such class of the module): a fresh one starts in train mode."""
    found: list[str] = []
    for stmt in tree.body:
        if not isinstance(stmt, ast.ClassDef):
            continue
        for base in stmt.bases:
            spelled = _dotted(base)
            head, _, rest = spelled.partition(".")
            target = bindings.get(head)
            qualified = (f"{target}.{rest}" if rest else target) if target else spelled
            if qualified in ("torch.nn.Module", "torch.nn.modules.module.Module") or spelled in found:
                found.append(stmt.name)
                break
    return found


def _dict_of(node: ast.AST) -> bool:
    """``X.__dict__``: the namespace of ``X`` (a module, for a lookup by name)."""
    return isinstance(node, ast.Attribute) and node.attr == "__dict__"


# Nodes with no Call or Attribute below them: _unvisited has nothing to read there.
_NO_CALL_OR_ATTRIBUTE = frozenset({ast.Name, ast.Constant})


def _signature_parts(args: ast.arguments) -> list[ast.AST | None]:
    """What of a signature _unvisited reads: each parameter's annotation and
    each default, in the order ``nodes(args)`` meets them (its stack pops the
    last field's last item first), without the ``arguments`` and ``arg``
    nodes themselves, which are neither a call nor an attribute. Every
    signature of every function comes here, most of them bare names."""
    items = [
        args.vararg,
        args.kwarg,
        *args.posonlyargs,
        *args.args,
        *args.kwonlyargs,
        *args.kw_defaults,
        *args.defaults,
    ]
    items.reverse()
    return [item.annotation if item.__class__ is ast.arg else item for item in items]  # type: ignore[union-attr]


def _names_handed(call: ast.Call) -> bool:
    """Some argument of ``call`` is a plain name."""
    return any(isinstance(a, ast.Name) for a in call.args) or any(isinstance(k.value, ast.Name) for k in call.keywords)
