"""What one checked module may ask of the rest of its project (``ProjectView``).

Small, plain data: it travels to worker processes, and its digest is part of
the module's cache key, so the module is linted again exactly when a fact it
may read from another module changed (a caller wrapped in ``no_grad``, a
name a star import brings).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from memlint.project.summary import FunctionFacts


@dataclass(frozen=True)
class Caller:
    """A call of one of this module's functions from another module."""

    path: str  # the calling file, relative to the project root
    line: int
    grad: str  # "on", "off" or "unknown" around the call
    in_loop: bool
    backward: bool  # the calling scope backpropagates
    # The training mode of the models the call hands over, per parameter key
    # ("0", "1"... or the keyword): "eval", "train-trained" (switched to
    # train and trained since) or "train-fresh"; a key absent is unknown.
    modes: tuple[tuple[str, str], ...] = ()
    # The parameters ("0" by position, else the keyword) it passes a model
    # built right there from a class that moves nothing: on the CPU.
    cpu_args: tuple[str, ...] = ()
    # The call's result is loaded into a model the caller moved to a device
    # (CallSite.gpu_state): a load the function returns makes a GPU copy (MEM701).
    gpu_state: bool = False
    # The parameters it passes a model the caller put on a device (CallSite.gpu_args,
    # its builders each returning a model it moved): a load drawn into one doubles it (MEM701).
    gpu_args: tuple[str, ...] = ()
    # Every parameter key it passes, where one of its arguments is a model
    # wrapped in ``DataParallel`` and never moved ("*": not all known;
    # empty: not recorded): a parameter it leaves out takes its default.
    passed: tuple[str, ...] = ()
    # The elements of the tuple the function returns that the caller unpacks
    # and loads into a model on a device (CallSite.gpu_items).
    gpu_items: tuple[int, ...] = ()
    # The calling scope evaluates (CallSite.eval_scope): it switched a model
    # to eval before the call and does not backpropagate.
    eval_scope: bool = False
    # The parameters it passes a literal or a settings value (CallSite.plain):
    # no graph of the caller's reaches the function through them (MEM103).
    plain: tuple[str, ...] = ()
    # The parameters it passes a local name whose graph dies in the calling
    # scope after the call (CallSite.final): nothing there backpropagates again.
    final: tuple[str, ...] = ()

    def omits(self, index: int, name: str) -> bool:
        """The call passes nothing for the parameter at ``index`` named ``name``."""
        return (
            bool(self.passed) and "*" not in self.passed and str(index) not in self.passed and name not in self.passed
        )

    def mode_of(self, position: int | None, keyword: str) -> str:
        """The mode of the model handed to the parameter at ``position``
        (None: keyword-only) named ``keyword``; "unknown" when not known."""
        for key, mode in self.modes:
            if key == keyword or (position is not None and key == str(position)):
                return mode
        return "unknown"

    def passes_plain(self, index: int, name: str) -> bool:
        """The call passes a literal or a settings value to the parameter at ``index`` named ``name``."""
        return str(index) in self.plain or name in self.plain

    def passes_final(self, index: int, name: str) -> bool:
        """The call passes the parameter at ``index`` named ``name`` a graph that dies after it."""
        return str(index) in self.final or name in self.final

    def passes_cpu_model(self, index: int, name: str) -> bool:
        return str(index) in self.cpu_args or name in self.cpu_args

    def passes_gpu_model(self, index: int, name: str) -> bool:
        return str(index) in self.gpu_args or name in self.gpu_args

    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class ProjectView:
    root: str
    path: str  # this module, relative to the root
    # Names a star import brings from a project module, and what they name
    # (``("torch", "torch")``, ``("F", "torch.nn.functional")``).
    star_bindings: tuple[tuple[str, str], ...] = ()
    # Every name this module's star imports may bring, when each is a project
    # module whose names the summaries list all (star_names.py); None otherwise.
    star_names: tuple[str, ...] | None = None
    # Module-level functions of this module called from other modules.
    callers: tuple[tuple[str, tuple[Caller, ...]], ...] = ()
    # Local names of loss-tracker classes defined in other project modules.
    trackers: tuple[str, ...] = ()
    # Local names of classes defined in other project modules whose code moves
    # nothing to a device: a model built from one starts on the CPU.
    cpu_classes: tuple[str, ...] = ()
    # Names a function-local import binds to such a class (summary.local_imports):
    # trusted where the module binds the name no other way (the ImportTable's).
    local_cpu_classes: tuple[str, ...] = ()
    # Local names (``Net``, ``models.Net``) of classes of other project modules
    # built on builtins only (``class AttrDict(dict)``): never a model.
    plain_classes: tuple[str, ...] = ()
    # Local names of functions of other project modules that move nothing to
    # a device: a model handed to one stays on the CPU.
    cpu_functions: tuple[str, ...] = ()
    # Local names of functions of other project modules whose every return is
    # an argparse namespace (``args = add_args(parser)``): never a model.
    settings_functions: tuple[str, ...] = ()
    # Method names this module calls that every class of the project defining
    # them defines so that it moves nothing (method_moves.py): a model on the
    # CPU stays there through a call of one (MEM701).
    cpu_methods: tuple[str, ...] = ()
    # Classes of this module that other project modules run once per batch,
    # with where (``("MultiBoxLoss", "train.py:65")``): ``called_per_batch``,
    # built by a module whose loop backpropagates (its ``forward`` runs per
    # batch); ``built_per_batch``, built inside a loop of a scope that
    # backpropagates (its ``__init__`` runs per batch).
    called_per_batch: tuple[tuple[str, str], ...] = ()
    built_per_batch: tuple[tuple[str, str], ...] = ()
    # Module-level functions of this module another module calls inside the
    # iteration of a loop that backpropagates (CallSite.step), with where
    # (``("feature_transform_regularizer", "train.py:112")``): their body
    # runs once per batch (MEM703).
    functions_per_batch: tuple[tuple[str, str], ...] = ()

    # Functions of other project modules this module calls that switch a
    # model's mode or step an optimizer, by the name the call writes
    # (``evaluate``, ``engine.evaluate``): loops.mode_events reads their
    # switches as it reads those of a function of this module.
    callees: tuple[tuple[str, FunctionFacts], ...] = ()
    # Callees as written here, named for gradients (``cam(...)``), that are
    # functions of other modules computing only on arrays (array_helpers.py):
    # their name is no evidence of a need for gradients (MEM201).
    array_helpers: tuple[str, ...] = ()
    # Local names of ``nn.Module`` subclasses of other project modules
    # (``Generator``, ``model.Generator``): a fresh one is in train mode.
    model_classes: tuple[str, ...] = ()
    # Of those, the ones proved to own no parameter (``Audio2Mel``: buffers
    # and functional ops, project/parameterless.py): a call of one records no
    # graph the input did not have (MEM201).
    parameterless_classes: tuple[str, ...] = ()
    # Of those, the ones holding a layer that reads the mode (BatchNorm,
    # Dropout..., project/mode_layers.py): evaluating a fresh one without
    # ``eval()`` changes its output (MEM202).
    mode_classes: tuple[str, ...] = ()
    # Attributes of this module's plain classes (``self.G`` of ``Solver``)
    # whose mode another module may switch (``solver.G.eval()``).
    switched_attrs: tuple[str, ...] = ()
    # Tracker classes of other project modules that keep the tensor they are
    # given (summary.tensor_trackers), by local name: (``AverageMeter`` or
    # ``utils.AverageMeter``, method, index of the kept parameter, its name,
    # the attribute it is kept in, where: ``utils.py:14``).
    tensor_trackers: tuple[tuple[str, str, int, str, str, str], ...] = ()
    # Methods of this module that load weights (``load_pretrained_model``)
    # whose name another project module uses (``net.load_pretrained_model()``):
    # not every call of them is in this module (MEM701).
    loading_elsewhere: tuple[str, ...] = ()
    # Of those, the ones every other module calls only on a model it has just
    # built on the CPU and not moved since (summary.loading_cpu_uses,
    # cpu_receivers.py): ``model.from_pretrained(path)`` before ``model.to(device)``.
    loading_cpu_elsewhere: tuple[str, ...] = ()
    # Of those, the ones another module uses otherwise than called under
    # ``no_grad`` (MEM401: a weight loader's in-place copies need no_grad).
    loading_grad_elsewhere: tuple[str, ...] = ()
    # Functions this module calls through ``eval`` of a string
    # (summary.eval_names) that every project module defining one defines
    # as a builder on the CPU (MEM701).
    eval_builders: tuple[str, ...] = ()
    # Tables of another module this one imports whose every value is a
    # class or builder that moves nothing (``model_dict[name](...)``, model_tables.py).
    cpu_tables: tuple[str, ...] = ()
    # Modules handed to ``getattr`` here (as written) whose every class is
    # built on the CPU (summary.cpu_module): ``getattr(p2ch14.model, name)()``.
    cpu_modules: tuple[str, ...] = ()
    # Functions of other project modules this module calls for a class
    # (summary.factory_calls) whose every candidate is a class or builder
    # that moves nothing, by local name: ``Model = load_model(name)`` (class_factories.py).
    cpu_factories: tuple[str, ...] = ()
    # Module-level models of other project modules built on the CPU and
    # named nowhere else there (summary.cpu_objects), as this module spells
    # them: ``net.vgg`` after ``import net``, ``vgg`` after ``from net import vgg``.
    cpu_objects: tuple[str, ...] = ()
    # Checkpoint file names this module loads that the project writes, and
    # writes only from a state on the CPU (checkpoint_files.py, MEM701).
    cpu_saved_files: tuple[str, ...] = ()
    # Imported project classes this module's classes subclass whose family
    # saves every model state from the CPU, as the imports name them
    # (``models.model_plain.ModelPlain``; family_saves.py, MEM701).
    cpu_saving_bases: tuple[str, ...] = ()
    # Functions of other project modules this module calls that only step
    # the optimizers they are handed (summary FunctionFacts.stepped), by the
    # name the call writes: (``utils.optimizer_step``, the parameters it
    # steps, its positional parameters, where it steps: ``utils.py:3``).
    step_helpers: tuple[tuple[str, tuple[str, ...], tuple[str, ...], str], ...] = ()
    # Functions of other project modules this module calls whose training
    # verbs run in a known order once per call (summary FunctionFacts.sequence),
    # by the name the call writes: (``utils.train_step``, the verbs, its
    # positional parameters, its file ``utils.py``). MEM301/MEM303 read them at the call.
    step_sequences: tuple[tuple[str, tuple[tuple[str, str, int], ...], tuple[str, ...], str], ...] = ()
    # Classes of this module that other modules build, each time as an
    # instance whose every use ends the graphs it hands over (summary
    # closed_instances), and no module subclasses: (class, where they are
    # built). MEM103 reads a method's callers there.
    closed_classes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # Methods of this module's classes that other modules call on an
    # instance (``solver = Solver(...); solver.test()``): ("Solver.test",
    # ("main.py:49",)).
    method_callers: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # Of those, the calls made with grad on ("engine = trainer(...)" then
    # ``engine.eval(x, y)`` in a loop of train.py): MEM201's message names them.
    method_callers_on: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # Those of them whose result the caller loads into a model it moved to a
    # device (summary gpu_method_calls): ("EarlyStopping.load_checkpoint",
    # ("train_new.py:150",)). A method returning a ``torch.load`` without
    # ``map_location`` called only so doubles the weights on the GPU (MEM701).
    gpu_method_callers: tuple[tuple[str, tuple[str, ...]], ...] = ()

    # Types from call sites (typed_objects.py): ``<receiver>.<method>(...)``
    # in a scope ("" for the module, ``eval_policy``, ``Trainer.train_epoch``)
    # whose receiver's every possible class runs a model forward with grad
    # on in that method: (scope, receiver, method, "TD3.select_action runs
    # the actor with autograd on, TD3.py:101").
    object_forwards: tuple[tuple[str, str, str, str], ...] = ()
    # Of them, the calls (scope, receiver, method) whose every class runs a
    # model it keeps in eval mode (held_models.py: pysot's
    # ``tracker.track(img)``): an inference step, evidence of evaluation.
    object_held: tuple[tuple[str, str, str], ...] = ()
    # No file of the project spells a way of turning grad off
    # (grad_off_anywhere.py); asked only of a module with a function that
    # switches a model to eval. Every call of its functions runs with grad on.
    grad_never_off: bool = False
    # With ``object_forwards``, the calls (scope, receiver, method) whose
    # receiver's class may backpropagate or step in that method
    # (plain_forwards.py): ``model.optimize_parameters()``, a loop that trains.
    object_trains: tuple[tuple[str, str, str], ...] = ()
    # ``<receiver>.forward(...)`` calls whose receiver's every project class
    # decorates ``forward`` with ``no_grad``/``inference_mode`` (off_forwards.py):
    # (scope, receiver). Such a call builds no graph, whatever the caller's mode.
    off_forwards: tuple[tuple[str, str], ...] = ()
    # Receivers and names (scope, name) whose every project class's
    # ``forward`` turns grad off for some of its work (off_forwards.py
    # partly_off_receivers): a call of one may build no graph (MEM201).
    partly_off: tuple[tuple[str, str], ...] = ()
    # Receivers and names (scope, name) that may be a model whose ``forward``
    # needs autograd (grad_forwards.py: IDR's renderer runs ``autograd.grad``
    # for its normals): a call of one is a need for grad, not a waste (MEM201).
    # Asked only of a module that spells ``.eval()``.
    grad_forwards: tuple[tuple[str, str], ...] = ()
    # Of them, those whose every class's ``forward`` returns in eval mode only
    # what it computed with grad off (eval_forwards.py): a call after
    # ``.eval()`` returns no history (history.py, MEM101/MEM102).
    eval_off: tuple[tuple[str, str], ...] = ()
    # Of ``object_forwards``, the calls whose method returns that forward's
    # result on some of its parameters (forward_returns.py): (scope,
    # receiver, method, ((position or -1, parameter), ...)). The call's value
    # carries history when an argument passed there does (history.py).
    object_returns: tuple[tuple[str, str, str, tuple[tuple[int, str], ...]], ...] = ()
    # The calls (scope, receiver, method, tuple length or 0, places) whose
    # method, in every class the project gives the receiver, returns the
    # loss it backpropagated at those places (backward_returns.py: GraphSAINT's
    # ``model.train_step(...)``): history, whatever the call is handed.
    object_backwards: tuple[tuple[str, str, str, int, tuple[int, ...]], ...] = ()
    # The types of the typed receivers of a ``.step()`` call (MEM802):
    # (scope, receiver, types), an installed class by dotted name, a
    # project one as ``file.py:Class``.
    object_types: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    # Local names (``WarmupPolyLR``, ``sched.WarmupPolyLR``) of classes of
    # other project modules that subclass a torch LR scheduler and keep its
    # ``step()`` (typed_objects.torch_scheduler): torch schedulers (MEM802).
    scheduler_classes: tuple[str, ...] = ()
    # Methods of typed receivers that step what their class holds
    # (typed_objects.method_steps): (scope, receiver, method, "o"/"s" per
    # ``self.<attr>.step()`` in order). MEM802 reads ``trainer.dis_update(...)``
    # as an optimizer step.
    object_steps: tuple[tuple[str, str, str, str], ...] = ()
    # Methods of typed receivers that run a whole pass over data per call
    # (typed_objects.method_passes): (scope, receiver, method). A loop
    # calling ``agent.collect_samples(n)`` runs a rollout per iteration (MEM702).
    object_passes: tuple[tuple[str, str, str], ...] = ()
    # Local names of classes of other project modules whose ``__call__``
    # backpropagates or steps an optimizer: calling an instance trains.
    trainer_classes: tuple[str, ...] = ()
    # Methods this module calls on a receiver that run a model forward in
    # every project class defining them (typed_objects.named_forward):
    # ``self.model.extract_feature(x)`` is a forward whatever builds the model.
    forward_methods: tuple[str, ...] = ()
    # Methods this module calls on a receiver it switches to eval in the same
    # scope, that no project class defines and whose name marks a forward
    # (typed_objects.forwards_by_name): ``self.__S__.forward_lip(x)``.
    forward_names: tuple[str, ...] = ()
    # ``<receiver>.eval()`` calls (scope, receiver) on a plain project object
    # whose own ``eval()`` switches the models it holds to eval
    # (wrapper_evals.py): RIFE's ``model.eval()``, a mode switch (MEM201).
    object_evals: tuple[tuple[str, str], ...] = ()
    # ``<receiver>.<method>(...)`` calls (scope, receiver, method), the method
    # named for evaluation, on a plain project object whose classes' method
    # only switches the models it holds to eval (method_evals.py):
    # InstColorization's ``model.setup_to_test(path)``, a mode switch (MEM201).
    method_evals: tuple[tuple[str, str, str], ...] = ()
    # Classes this module builds, as written (``tsm_online.MobileNetV2``),
    # from an import no module of the project answers (unknown_classes.py):
    # whether they move themselves is not known (MEM701 claims nothing).
    unknown_classes: tuple[str, ...] = ()
    # Local names of classes of other project modules whose ``forward``
    # returns a tuple some elements of which carry no history
    # (tuple_returns.py): (``Darknet``, length, the fresh positions).
    forward_items: tuple[tuple[str, int, tuple[int, ...]], ...] = ()
    # Functions of other project modules this module imports that only
    # compare the running torch's version (version_tests.py), by local name:
    # (``is_pytorch_1_1_0_or_later``, ">=1.1.0").
    version_functions: tuple[tuple[str, str], ...] = ()
    # Decorators of other project modules this module imports that run the
    # function they wrap with grad off (off_decorators.py), by local name:
    # (``smart_inference_mode``, "called"), (``utils.no_grad_fn``, "bare").
    off_decorators: tuple[tuple[str, str], ...] = ()
    # Functions of other project modules this module imports that return an
    # ignite engine whose process function steps an optimizer
    # (engine_factories.py), by local name (``create_supervised_trainer``).
    engine_factories: tuple[str, ...] = ()
    # The hooks of engine classes of other project modules this module
    # imports, with their place in the engine's training loop
    # (engine_hooks.py), by local class name: (``Engine``, ``hooks``,
    # ``on_start_epoch``, ``epoch_start``, ``protonets/engine.py:31``).
    engine_hooks: tuple[tuple[str, str, str, str, str], ...] = ()
    # Functions of other project modules this module calls that pass a
    # parameter on to ``load_state_dict`` (summary FunctionFacts.state_params),
    # by the name the call writes: (``load_pretrained_model``, its positional
    # and keyword-only parameters, (state parameter, receiving parameter or
    # "" for a model the function moved to a device itself), its file). MEM701
    # reads a ``torch.load`` handed to one as a load into that model.
    state_loaders: tuple[tuple[str, tuple[str, ...], tuple[str, ...], tuple[tuple[str, str], ...], str], ...] = ()
    # Functions of other project modules this module calls that return a
    # model they moved to a device (FunctionFacts.gpu_return), as written
    # (``define_tsnet``): a name bound from one holds a model on a device.
    gpu_builders: tuple[str, ...] = ()
    # Functions of other project modules this module calls that return a
    # ``torch.load`` without ``map_location`` while some caller loads it into
    # a model not on a GPU (returned_loads.py), as written, with where that
    # load is: a caller loading the value into a model on a GPU is reported
    # at its call (MEM701).
    mixed_loaders: tuple[tuple[str, str], ...] = ()
    # Methods of this module's classes that other modules call, every one
    # with grad off or in a mode it cannot tell, and none named for
    # evaluation with grad on (summary methods_off / methods_on,
    # method_modes.py): a method no call of its own module reaches is then
    # entered in a mode this module cannot say (grad_mode.entry_mode).
    methods_off_elsewhere: tuple[str, ...] = ()
    # Methods of this module's classes named for evaluation that no other
    # module calls by name at all (method_modes.py): their context is not
    # known (MEM201 judges such a helper by its callers, and it has none).
    methods_uncalled_elsewhere: tuple[str, ...] = ()
    # Names this module hands to ``model.apply(...)`` that name a function of
    # another module switching no mode (applied_functions.py).
    quiet_applied: tuple[str, ...] = ()
    # Functions of other project modules this module calls that clear the
    # gradients of a parameter (FunctionFacts.clears, zeroed_grads.py), by
    # the name the call writes: (``trades_loss``, the parameters cleared,
    # its positional and keyword-only parameters). MEM304 reads the
    # optimizer handed to one as cleared.
    grad_clearers: tuple[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = ()
    # Methods of the imported project classes this module's classes
    # subclass that clear ``self.<attr>``'s gradients: (the base as this
    # module spells it, the method, the attributes). ``self.standard_loss()``
    # inherited from ``Trainer`` clears ``self.optimizer`` (MEM304).
    inherited_clears: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    # No module of the project may put anything on a GPU (cpu_projects.py):
    # its models and checkpoints are on the CPU (MEM701). Asked only of a
    # module whose text spells ``load``.
    moves_nothing: bool = False

    def grad_clearer(self, written: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None:
        for name, cleared, params, kwonly in self.grad_clearers:
            if name == written:
                return cleared, params, kwonly
        return None

    def inherited_clear(self, base: str, method: str) -> tuple[str, ...]:
        for spelled, name, attrs in self.inherited_clears:
            if spelled == base and name == method:
                return attrs
        return ()

    def state_loader(
        self, written: str
    ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[str, str], ...], str] | None:
        for name, params, kwonly, state, path in self.state_loaders:
            if name == written:
                return params, kwonly, state, path
        return None

    def method_callers_of(self, qualified: str) -> tuple[str, ...]:
        for name, sites in self.method_callers:
            if name == qualified:
                return sites
        return ()

    def method_callers_on_of(self, qualified: str) -> tuple[str, ...]:
        for name, sites in self.method_callers_on:
            if name == qualified:
                return sites
        return ()

    def gpu_method_callers_of(self, qualified: str) -> tuple[str, ...]:
        for name, sites in self.gpu_method_callers:
            if name == qualified:
                return sites
        return ()

    def step_helper(self, written: str) -> tuple[tuple[str, ...], tuple[str, ...], str] | None:
        for name, stepped, params, where in self.step_helpers:
            if name == written:
                return stepped, params, where
        return None

    def closed_class(self, name: str) -> tuple[str, ...]:
        for cls, sites in self.closed_classes:
            if cls == name:
                return sites
        return ()

    def step_sequence(self, written: str) -> tuple[tuple[tuple[str, str, int], ...], tuple[str, ...], str] | None:
        for name, sequence, params, path in self.step_sequences:
            if name == written:
                return sequence, params, path
        return None

    def forward_through(self, scope: str, receiver: str, method: str) -> str | None:
        """The callee's description when ``receiver.method(...)`` in
        ``scope`` runs a model forward with grad on (object_forwards)."""
        for s, r, m, message in self.object_forwards:
            if s == scope and r == receiver and m == method:
                return message
        return None

    def returned_params(self, scope: str, receiver: str, method: str) -> tuple[tuple[int, str], ...]:
        for s, r, m, params in self.object_returns:
            if s == scope and r == receiver and m == method:
                return params
        return ()

    def forward_off(self, scope: str, receiver: str) -> bool:
        return (scope, receiver) in self.off_forwards

    def steps_of(self, scope: str, receiver: str, method: str) -> str:
        for s, r, m, kinds in self.object_steps:
            if s == scope and r == receiver and m == method:
                return kinds
        return ""

    def runs_held_model(self, scope: str, receiver: str, method: str) -> bool:
        return (scope, receiver, method) in self.object_held

    def runs_pass(self, scope: str, receiver: str, method: str) -> bool:
        return (scope, receiver, method) in self.object_passes

    def types_of(self, scope: str, receiver: str) -> tuple[str, ...] | None:
        for s, r, types in self.object_types:
            if s == scope and r == receiver:
                return types
        return None

    def mixed_loader(self, written: str) -> str:
        """Where the unmapped load ``written`` returns is (mixed_loaders), or ""."""
        return next((where for name, where in self.mixed_loaders if name == written), "")

    def callee(self, written: str) -> FunctionFacts | None:
        for name, facts in self.callees:
            if name == written:
                return facts
        return None

    def callers_of(self, name: str) -> tuple[Caller, ...]:
        for fn, sites in self.callers:
            if fn == name:
                return sites
        return ()

    def digest(self) -> str:
        data = asdict(self)
        data.pop("root")
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()

    def empty(self) -> bool:
        return not (
            self.star_bindings
            or self.star_names is not None
            or self.callers
            or self.trackers
            or self.cpu_classes
            or self.local_cpu_classes
            or self.plain_classes
            or self.cpu_functions
            or self.settings_functions
            or self.cpu_methods
            or self.called_per_batch
            or self.built_per_batch
            or self.functions_per_batch
            or self.callees
            or self.array_helpers
            or self.model_classes
            or self.parameterless_classes
            or self.object_steps
            or self.object_passes
            or self.switched_attrs
            or self.tensor_trackers
            or self.loading_elsewhere
            or self.loading_grad_elsewhere
            or self.eval_builders
            or self.cpu_tables
            or self.cpu_modules
            or self.cpu_factories
            or self.cpu_objects
            or self.cpu_saved_files
            or self.cpu_saving_bases
            or self.step_helpers
            or self.step_sequences
            or self.closed_classes
            or self.method_callers
            or self.method_callers_on
            or self.gpu_method_callers
            or self.object_forwards
            or self.grad_never_off
            or self.off_forwards
            or self.partly_off
            or self.grad_forwards
            or self.eval_off
            or self.object_returns
            or self.object_backwards
            or self.object_types
            or self.scheduler_classes
            or self.trainer_classes
            or self.forward_methods
            or self.forward_names
            or self.unknown_classes
            or self.forward_items
            or self.version_functions
            or self.off_decorators
            or self.engine_factories
            or self.engine_hooks
            or self.state_loaders
            or self.gpu_builders
            or self.mixed_loaders
            or self.quiet_applied
            or self.grad_clearers
            or self.inherited_clears
            or self.moves_nothing
        )
