"""GateFacts: what Python's own ``ast`` tree says about a file, cheaply, so the
engine can skip libcst where no rule can fire.

The stdlib parse is about ten times cheaper than libcst's, and the engine
builds it anyway (the nesting guard). Each rule may declare ``gate``, a
*necessary* condition on these facts: when it is false the rule cannot report
anything in the file, so the rule is not run, and a file no rule is left for
is never handed to libcst. Conditions must never be heuristics: a gate may
only skip work whose result would be "no finding" (tests/test_gate.py runs
every example and corpus with the gate on and off and requires the same
findings and fixes). A rule without a ``gate`` is never skipped.

Facts are deliberately coarse and over-approximate: "an identifier occurs in
code", "a call's last name is", "a loop's iterable mentions a data word".
Identifiers inside strings and comments do not count, which is what makes
the gate sharper than the token pre-filter.
"""

from __future__ import annotations

import ast
import copy

from memlint.gate import ast_fields
from memlint.gate.ast_names import ast_callee, ast_tokens
from memlint.gate.carried import carries_state
from memlint.gate.empty_cache import empty_cache_in_loop
from memlint.gate.eval import (
    BINDERS,
    FreshCalls,
    ModelReach,
    bind_names,
    compute_builds_module,
    compute_evaluates_with_grad,
    compute_loop_may_run_without_grad,
    compute_read_for_a_loop_without_grad,
    compute_sampler_runs_a_model,
)
from memlint.gate.inplace import (
    compute_grad_on_writes,
    compute_leaf_written_with_grad,
    compute_saved_output_written_in_training,
)
from memlint.gate.loops import LoopSites, loop_sites
from memlint.gate.moves import constant_move_in_function, constant_move_in_method
from memlint.gate.project_calls import calls_project
from memlint.gate.sched_steps import object_method_in_a_loop, short_receiver, steps_in_a_loop
from memlint.gate.syntax import (
    BACKWARD,
    LEAF_MARKS,
    SAVES_OUTPUT,
    bare_names,
    decorator_grad_context,
    import_table,
    last_name,
    may_iterate_parameters,
)
from memlint.vocabulary.frameworks import LIGHTNING_NO_GRAD_HOOKS
from memlint.vocabulary.kinds import MODULE_MOVES, names_a_model_method, spells_a_class
from memlint.vocabulary.ops import (
    ALWAYS_INPLACE_FUNCTIONS,
    INPLACE_FUNCTIONS,
    OUTPUT_SAVING_MODULES,
    OUTPUT_SAVING_WHEN_INPLACE,
    PARAMETER_ATTRS,
    is_inplace_method,
)

# The very words loops.py uses to call a loop a batch loop or a function an
# evaluation, so the gate widens whenever they do.
from memlint.vocabulary.tokens import (
    DATA_TOKENS,
    EVAL_DATA_TOKENS,
    EVAL_FUNCTION_TOKENS,
    SAMPLE_FUNCTION_TOKENS,
    name_tokens,
)

# grad_mode: what turns recording off (context managers, decorators, the
# Lightning hooks run under no_grad).
_SAMPLER_WORDS = SAMPLE_FUNCTION_TOKENS | EVAL_FUNCTION_TOKENS
_TORCH_FAMILY = frozenset({"torch", "torchvision", "torchaudio", "torchtext"})
_GRAD_OFF = frozenset({"no_grad", "inference_mode", "set_grad_enabled"}) | LIGHTNING_NO_GRAD_HOOKS
_SAVING_MODULES = OUTPUT_SAVING_MODULES | OUTPUT_SAVING_WHEN_INPLACE
# activations.inplace_function_target's functions, by their last name.
_INPLACE_ALWAYS = frozenset(q.rsplit(".", 1)[-1] for q in ALWAYS_INPLACE_FUNCTIONS)
_INPLACE_WHEN_ASKED = frozenset(q.rsplit(".", 1)[-1] for q in INPLACE_FUNCTIONS)
# The callees' last names GateFacts._call reads beyond ``called``.
_CALLS_READ = (
    _INPLACE_ALWAYS
    | _INPLACE_WHEN_ASKED
    | {"Sequential", "requires_grad_", "eval", "train", "checkpoint", "checkpoint_sequential", "load"}
)
# Phases in the names of a framework's per-batch hooks.
_PHASES = frozenset({"train", "training", "validation", "val", "valid", "test", "predict", "eval", "evaluation"})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# What of ``self.x.attr`` objects.kind_of reads as evidence that a ``self.x``
# no line of the file assigns is a module: ``.parameters()`` or
# ``.named_parameters()`` (_parameters_read, _used_as_module), and
# ``.load_state_dict()`` (_restored needs it beside ``.eval()``). Any other
# ``self.x.attr`` (``self.config_class.__name__``) leaves it to the name guess.
_MODULE_EVIDENCE = frozenset({"parameters", "named_parameters", "load_state_dict"})
_LOOPS = frozenset({ast.For, ast.AsyncFor, ast.While, *_COMPREHENSIONS})

# What GateFacts._walk does with a node, by its class (0: only its children).
_CALL, _KEYWORD, _ASSIGN, _LIST = 1, 2, 3, 4
_AUG_ASSIGN, _BINDING, _FOR, _WHILE, _COMPREHENSION, _FUNCTION, _CLASS, _IMPORT, _EXPR, _BINDER = range(5, 15)
_CODES: dict[type, int] = {
    ast.Expr: _EXPR,
    ast.Call: _CALL,
    ast.keyword: _KEYWORD,
    ast.Assign: _ASSIGN,
    ast.AugAssign: _AUG_ASSIGN,
    ast.AnnAssign: _BINDING,
    ast.NamedExpr: _BINDING,
    ast.For: _FOR,
    ast.AsyncFor: _FOR,
    ast.While: _WHILE,
    **dict.fromkeys(_COMPREHENSIONS, _COMPREHENSION),
    ast.FunctionDef: _FUNCTION,
    ast.AsyncFunctionDef: _FUNCTION,
    ast.ClassDef: _CLASS,
    ast.Import: _IMPORT,
    ast.ImportFrom: _IMPORT,
    **dict.fromkeys(BINDERS, _BINDER),
}


class _Walk(dict):  # type: ignore[type-arg]
    """Node class -> (code, the function pushing its children: ast_fields.PUSHERS).
    Anything else met (None, or a scalar read through a class whose signature
    gate/ast_fields.py could not read) has no children."""

    def __missing__(self, key: type) -> tuple[int, None]:
        return (0, None)


_WALK = _Walk({cls: (_CODES.get(cls, 0), ast_fields.PUSHERS[cls]) for cls in ast_fields.CHILDREN})
_WALK[list] = (_LIST, None)


class GateFacts:
    """One walk over an ``ast.Module``; see the module docstring."""

    def __init__(self, tree: ast.AST) -> None:
        self.idents: set[str] = set()  # names, attributes, import parts, def/class names, keywords
        self.called: set[str] = set()  # last name of each callee; an import alias counts as what it imports
        self.keywords: set[str] = set()  # keyword argument names of calls
        self.def_names: set[str] = set()
        # A loop or comprehension inside a function named for evaluation
        # (loops._eval_evidence, comprehension_is_eval: evidence of evaluation).
        self.eval_function_loops = False
        self.iter_tokens: set[str] = set()  # name_tokens of loop and comprehension iterables
        self.loops = False  # a for/while loop
        self.comprehensions = False
        # A comprehension whose own iterables name evaluation data
        # (loops.comprehension_is_eval's evidence, MEM201).
        self.eval_comprehension = False
        self.eval_call = False  # ``m.eval()`` / ``m.train(False)``: objects.mode_call's "eval"
        self.train_call = False  # ``m.train()`` / ``m.train(True)``: objects.mode_call's "train"
        # ``nn.Sequential(..., nn.Sigmoid(), nn.ReLU(inplace=True), ...)``: an in-place
        # module right after one that saves its output (MEM402's Sequential case).
        self.inplace_after_saver = False
        self._sequential_lists: set[str] = set()  # names unpacked into a ``Sequential`` call
        self.checkpoint_without_reentrant = False  # a ``checkpoint``/``checkpoint_sequential`` call MEM602 may flag
        self.state_dict_snapshot = False  # ``x = m.state_dict()`` (or its ``.copy()``, or in a dict display)
        # A ``load`` call MEM701 may flag (its ``_is_load_without_map_location``):
        # ``load(...)`` or ``torch.load(...)`` (names.call_name is ``torch.load``
        # only for these two spellings), no ``map_location`` (by keyword or as
        # the second positional argument) but one that may be ``None`` on the
        # CUDA path (a name, ``None``, a conditional: gpu_none_locations.py),
        # no ``*``, no ``**`` but of a bare name.
        self.load_without_map_location = False
        # Bare names written in place (``n += ...``, ``n[i] = ...``, ``n.add_(...)``,
        # ``f(n, inplace=True)``, ``torch.relu_(n)``): the only targets MEM401/MEM402 check.
        self.inplace_names: set[str] = set()
        self.output_names: set[str] = set()  # ``n = <op that saves its output>(...)`` (MEM402)
        # Names a leaf requiring grad may be bound to (MEM401): assigned a
        # parameter or a tensor made with ``requires_grad``, marked with
        # ``requires_grad``, or a loop variable (over parameters, or a list of them).
        self.leaf_names: set[str] = set()
        # A layer's ``.weight``/``.bias`` (or a slice of it) written in place (MEM401,
        # analysis/module_params.py).
        self.inplace_parameter_attr = False
        # Expression statements: the attribute of a bare ``x.attr`` (MEM305) and
        # the callee's last name of a bare call, as written (MEM204; bare_calls
        # resolves import aliases).
        self.bare_attributes: set[str] = set()
        self._bare_callees: set[str] = set()
        # Bare ``a.m()``/``a.b.m()`` statements (no argument, ``m`` not ``step``):
        # the only calls MEM802 may read as a project method stepping schedulers.
        self._bare_method_calls: list[ast.Call] = []
        self._aliases: dict[str, str] = {}
        self._tree = tree  # for the facts computed only when a rule asks (saved_output_written_in_place)
        # What the walk keeps for builds_module, computed only when MEM202 asks.
        self._calls: list[ast.Call] = []
        self._loop_nodes: list[ast.AST] = []  # every for/while (loop_calls_project reads their lines)
        self._assigns: list[ast.Assign] = []
        self._list_aug_assigns: list[ast.AugAssign] = []  # ``xs += [v]`` (gate/method_stores.py)
        self._method_store: bool | None = None  # method_stores.stores_a_method_result, once per file
        self._bindings: list[tuple[ast.AST, ast.AST]] = []  # ``: T =`` and ``:=``
        self._imports: list[ast.Import | ast.ImportFrom] = []
        self._classes: set[str] = set()
        self._class_nodes: list[ast.ClassDef] = []  # for _module_classes (MEM202)
        self._self_rebound = False  # ``self`` assigned somewhere (a function rebinds it)
        # What ModelReach reads of the file (eval.ModelReach.of), gathered by
        # the walk instead of a walk of its own: names bound other than by
        # def, class or import, names read as ``name.attr``, and the ``x`` of
        # a ``self.x`` assigned or read as ``self.x.parameters`` (_MODULE_EVIDENCE).
        self._rebound: set[str] = set()
        self._bases: set[str] = set()
        self._self_bound: set[str] = set()
        self._functions: list[ast.AST] = []  # every def, for compute_builds_module's scopes (MEM202)
        # The project's model classes as this file spells them, once its view is
        # known (given_project_classes); None: any project import may name one.
        self.project_classes: frozenset[str] | None = None
        self._builds_module: bool | None = None
        self._saved_in_place: bool | None = None
        self._grad_on_writes: GateFacts | None = None
        self._leaf_written: bool | None = None
        self._on_nodes: set[int] = set()  # grad_on_writes: the writes it counts, by id
        # The scopes (a def's id, 0 for the module) whose loops may run without
        # grad holding a model call; None: any (modes set by statements).
        self._off_loop_scopes: set[int] | None = None
        self._off_loop_scopes_read = False  # _off_loop_scopes holds the collected scopes (off_loop_scopes)
        self._loop_without_grad: bool | None = None
        self._sampler: bool | None = None
        self._built_for_off_loop: bool | None = None
        self._evaluates_with_grad: bool | None = None
        self._asks_an_object: bool | None = None  # asks_an_object_to_evaluate
        self._step_hooks: bool | None = None
        self._batch_evidence: bool | None = None
        self._model_method: bool | None = None  # calls_a_model_method
        self._model_reach: ModelReach | None = None  # MEM201's and MEM202's reading of model calls
        self._best_snapshot: bool | None = None
        self._empty_cache_in_loop: bool | None = None
        self._steps_in_a_loop: bool | None = None
        self._object_method_in_a_loop: bool | None = None
        self._carries_state: bool | None = None
        self._names_loader: bool | None = None
        self._loop_sites: LoopSites | None = None
        self._constant_move: bool | None = None
        self._walk(tree)

    # -- what the rules ask ------------------------------------------------
    @property
    def bare_calls(self) -> set[str]:
        """Last names of the callees of calls written as statements of their
        own; an import alias counts as what it imports (MEM204)."""
        aliases = self._aliases
        return {aliases.get(name, name) for name in self._bare_callees}

    @property
    def backward(self) -> bool:
        """A backward may run (objects.is_backward_call, ``torch.autograd.grad`` included)."""
        return bool(self.called & BACKWARD) or ("grad" in self.called and "autograd" in self.idents)

    @property
    def trains(self) -> bool:
        """A backward or a step (of an optimizer, scheduler or scaler) is called."""
        return self.backward or "step" in self.called

    @property
    def grad_off(self) -> bool:
        """Somewhere recording may be off: a no_grad-like context or
        decorator, a Lightning evaluation hook, the forward of a custom
        ``autograd.Function``, a transformers ``Pipeline``."""
        return bool(self.idents & _GRAD_OFF) or any(i.endswith(("Function", "Pipeline")) for i in self.idents)

    @property
    def step_hooks(self) -> bool:
        """A method a framework calls once per batch or epoch (Lightning's
        ``training_step``, ``on_validation_epoch_end``...). Read once: the
        cards ask it about twice per file (batch_evidence, MEM201)."""
        if self._step_hooks is None:
            self._step_hooks = any(
                tokens & _PHASES and tokens & {"step", "epoch", "batch"} for tokens in map(name_tokens, self.def_names)
            )
        return self._step_hooks

    @property
    def batch_evidence(self) -> bool:
        """What loops.LoopInfo.is_batch_loop needs at least one of (training
        verbs, evidence of evaluation, an iterable named for data, a loader
        built here), or a per-batch framework hook. Read once: five cards
        ask it, some twice (across_iterations)."""
        if self._batch_evidence is None:
            self._batch_evidence = bool(
                self.trains
                or self.eval_call
                or self.eval_function_loops
                or self.iter_tokens & DATA_TOKENS
                or "DataLoader" in self.idents
                or self.step_hooks
            )
        return self._batch_evidence

    @property
    def queue_gets(self) -> bool:
        """A ``.get(`` call and a name spelling ``queue``: what MEM703's
        ``while True: x = queue.get()`` batch loop needs."""
        return "get" in self.called and any("queue" in i.lower() for i in self.idents)

    @property
    def across_iterations(self) -> bool:
        """Code that runs once per batch may exist: a loop with batch
        evidence, or a per-batch framework hook."""
        return self.batch_evidence and (self.loops or self.step_hooks)

    @property
    def constant_move_in_method(self) -> bool:
        """A ``.to(``/``.cuda(`` of a ``torch`` factory call in a ``forward``,
        ``__call__`` or ``__init__`` (MEM703's per-call path, gate/moves.py)."""
        if self._constant_move is None:
            self._constant_move = constant_move_in_method(self)
        return self._constant_move

    @property
    def constant_move_in_function(self) -> bool:
        """A ``.to(``/``.cuda(`` of a ``torch`` factory's value in a
        module-level function (MEM703's per-call path for functions, gate/moves.py)."""
        return constant_move_in_function(self._tree, self._aliases)

    @property
    def loop_sites(self) -> LoopSites:
        """What the loop rules need, tied to the loops around it (see
        analysis/gate_loops.py): MEM101's accumulation and MEM102's store a
        batch loop may carry, MEM703's move in a loop that may run per batch,
        MEM201's evidence of evaluation. Computed on first use."""
        if self._loop_sites is None:
            self._loop_sites = loop_sites(self)
        return self._loop_sites

    def given_project_classes(self, classes: frozenset[str]) -> GateFacts:
        """These facts with the project's model classes known (project_classes):
        a copy sharing the walk, with the answers that read them unasked."""
        other = copy.copy(self)
        other.project_classes = classes
        other._builds_module = None
        other._built_for_off_loop = None
        return other

    @property
    def builds_module(self) -> bool:
        """A variable may be bound to a module built here, in train mode
        (objects.built_in_train_mode: ``m = Net()``, ``nn.Sequential(...)``,
        ``torchvision.models.resnet18().to(dev)``, ``timm.create_model``).
        Computed on first use: only MEM202 asks, and only when the cheaper
        conditions hold."""
        if self._builds_module is None:
            self._builds_module = compute_builds_module(self, None)
        return self._builds_module

    @property
    def saved_output_written_in_place(self) -> bool:
        """MEM402's operator case may fire: in some function scope (the
        module's too), a name is written in place while the rule's
        ``_Scope.saved`` may still hold it, inside the block of the statement
        that saved it, and that scope is training code. See
        compute_saved_output_written_in_training. Computed on first use."""
        if not self.output_names & self.inplace_names:
            return False
        if self._saved_in_place is None:
            try:
                self._saved_in_place = compute_saved_output_written_in_training(self)
            except RecursionError:  # nesting deeper than this walk goes: stay wide
                self._saved_in_place = True
        return self._saved_in_place

    @property
    def leaf_written_with_grad(self) -> bool:
        """MEM401's name case may fire: a name is written in place where the
        rule's ``_leaf`` may take it for a leaf and grad may be on. See
        compute_leaf_written_with_grad. Computed on first use."""
        if not self.inplace_names & self.leaf_names:
            return False
        if self._leaf_written is None:
            try:
                self._leaf_written = compute_leaf_written_with_grad(self)
            except RecursionError:  # nesting deeper than this walk goes: stay wide
                self._leaf_written = True
        return self._leaf_written

    @property
    def grad_on_writes(self) -> GateFacts:
        """The in-place facts (``inplace_names``, ``inplace_parameter_attr``)
        of the writes autograd may record: all of them but those that
        grad_mode.mode_at surely finds off (inside ``with torch.no_grad():``
        or ``torch.inference_mode()`` with nothing in between that may turn
        it back on, or in a function decorated with them). MEM401 reports
        only where the mode is ENABLED. Computed on first use."""
        if self._grad_on_writes is None:
            self._grad_on_writes = compute_grad_on_writes(self)
        return self._grad_on_writes

    @property
    def loop_may_run_without_grad(self) -> bool:
        """A ``for``/``while`` loop that grad_mode.mode_at may find DISABLED,
        at the loop or at calls inside it: lexically inside a ``with`` that may
        turn grad off, around one, or in a function whose entry may be off
        (decorated, a framework hook, or called from such a place, followed
        through the file by name). Computed on first use (MEM202)."""
        if self._loop_without_grad is None:
            # The scopes are collected only where a fresh module may decide (no ``.train()``).
            collect = not self.train_call
            scopes = compute_loop_may_run_without_grad(self, collect=collect)
            self._loop_without_grad = scopes is None or bool(scopes)
            if collect:
                self._off_loop_scopes, self._off_loop_scopes_read = scopes, True
        return self._loop_without_grad

    def off_loop_scopes(self) -> set[int] | None:
        """compute_loop_may_run_without_grad's collected scopes (None: any),
        computed once: MEM202's gate reads them for helpers, plain classes
        and the modules built for such a loop, after loop_may_run_without_grad
        (which collects them too where no ``.train()`` call stops it early)."""
        if not self._off_loop_scopes_read:
            self._off_loop_scopes = compute_loop_may_run_without_grad(self, collect=True)
            self._off_loop_scopes_read = True
        return self._off_loop_scopes

    @property
    def project_imports(self) -> bool:
        """An import that may name a module of the project (anything but
        torch and its family): a function called through it may switch a
        model's mode or train it (loops.external_callee), read from the
        project's summaries."""
        for imp in self._imports:
            if isinstance(imp, ast.ImportFrom):
                if imp.level or (imp.module or "").split(".")[0] not in _TORCH_FAMILY:
                    return True
            elif any(alias.name.split(".")[0] not in _TORCH_FAMILY for alias in imp.names):
                return True
        return False

    def loop_calls_project(self, with_args: bool) -> bool:
        """A loop calls a function an import that may name a project module
        brings (project_calls.calls_project): MEM203 reads the switches
        and training of such functions only. Computed per ask (MEM203, after
        its cheaper conditions)."""
        return calls_project(self, with_args, in_loops=True)

    def calls_project(self, with_args: bool) -> bool:
        """A call anywhere of such a function (MEM301/MEM303: a step written
        in another module, read at the call, may clear the gradients)."""
        return calls_project(self, with_args, in_loops=False)

    @property
    def sampler_def(self) -> bool:
        """A function named for evaluation or sampling (``validate``,
        ``sample_images``) that may run a model: MEM202 reads one with no
        loop whose forwards all run without grad (a GAN's sampler). Computed
        on first use."""
        if not any(name_tokens(n) & _SAMPLER_WORDS for n in self.def_names):
            return False
        if self._sampler is None:
            self._sampler = compute_sampler_runs_a_model(self, _SAMPLER_WORDS)
        return self._sampler

    @property
    def helper_loop_without_grad(self) -> bool:
        """A module-level function with parameters holds a loop that may run
        without grad (loop_may_run_without_grad's scopes): MEM202 may judge
        the model it is handed by its callers in other modules
        (loops.external_modes). Computed on first use (MEM202)."""
        if not self.loop_may_run_without_grad:
            return False
        scopes = self.off_loop_scopes()
        if scopes is None:
            return True
        return any(
            id(stmt) in scopes
            for stmt in getattr(self._tree, "body", ())
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
            and (stmt.args.posonlyargs or stmt.args.args or stmt.args.kwonlyargs)
        )

    @property
    def plain_class_loop_without_grad(self) -> bool:
        """A method of a plain class (no base but ``object``) holds a loop
        that may run without grad, and a method of the class binds
        ``self.<attr>`` to a call that may build a module (objects._fresh,
        gate/eval.py FreshCalls; a project class only while the view's classes
        are unknown): MEM202 may read the attribute as a model the class
        builds fresh and never switches (loops._attribute_mode, StarGAN's
        ``Solver.test``). Computed on first use (MEM202)."""
        if not self.loop_may_run_without_grad:
            return False
        scopes = self.off_loop_scopes()
        fresh: FreshCalls | None = None  # built for the first ``self.x = call`` met
        for cls in self._class_nodes:
            if cls.keywords or any(not (type(b) is ast.Name and b.id == "object") for b in cls.bases):
                continue
            methods = [s for s in cls.body if type(s) is ast.FunctionDef or type(s) is ast.AsyncFunctionDef]
            if scopes is not None and not any(id(m) in scopes for m in methods):
                continue
            for m in methods:
                for n in ast.walk(m):
                    if (
                        type(n) is ast.Assign
                        and type(n.value) is ast.Call
                        and any(
                            type(t) is ast.Attribute and type(t.value) is ast.Name and t.value.id == "self"
                            for t in n.targets
                        )
                        # objects.built_in_train_mode: a call that may build a module (gate/eval.py FreshCalls)
                        and (fresh := fresh or FreshCalls(self)).may_build(n.value)
                    ):
                        return True
        return False

    @property
    def module_built_for_a_loop_without_grad(self) -> bool:
        """builds_module, counting only the bindings objects.built_in_train_mode
        may read for MEM202: loops.mode_before ends in ``_default_mode`` at the
        scope of a loop that may run without grad (loop_may_run_without_grad)
        or at one of its callers', and reads the definitions of a receiver
        local to that scope, keyed by it (objects._key_for_read: a bare name
        is keyed by its innermost def, the module's outside any). See
        compute_read_for_a_loop_without_grad. Computed on first use (MEM202)."""
        if self._built_for_off_loop is None:
            self._built_for_off_loop = (
                self.builds_module
                and self.loop_may_run_without_grad
                and compute_builds_module(self, compute_read_for_a_loop_without_grad(self))
            )
        return self._built_for_off_loop

    @property
    def evaluates_with_grad(self) -> bool:
        """MEM201 may report: the file trains, switches a model to eval or
        passes ``volatile=`` (what its other paths need), or some loop or
        comprehension has evidence of evaluation, may run with grad on, and
        holds a call that may run a model or a function of this file (see
        compute_evaluates_with_grad). Computed on first use (MEM201)."""
        if self._evaluates_with_grad is None:
            self._evaluates_with_grad = compute_evaluates_with_grad(self)
        return self._evaluates_with_grad

    @property
    def asks_an_object_to_evaluate(self) -> bool:
        """MEM201's evidence for a loop through a project object
        (``_object_forward``), besides a function named for evaluation: a
        method named for it called on a name or ``self.<attr>`` that no
        import binds (``model.inference(x)``), or a keyword named for it set
        to ``True`` (``agent.select_action(s, evaluate=True)``). One pass
        over the calls, on first use, and only where some callee's last name
        or some keyword is named for evaluation (``called`` holds the ``m``
        of every ``x.m(...)``, ``keywords`` every keyword's name): the
        distinct names are a few hundred where the calls are thousands."""
        if self._asks_an_object is None:
            self._asks_an_object = _names_evaluation(self.called) or _names_evaluation(self.keywords)
            if self._asks_an_object:
                self._asks_an_object = self._call_asks_an_object()
        return self._asks_an_object

    def _call_asks_an_object(self) -> bool:
        """asks_an_object_to_evaluate's pass over the calls (the property
        skips it where no name could match; tests compare the two)."""
        for call in self._calls:
            func = call.func
            if type(func) is ast.Attribute and name_tokens(func.attr) & EVAL_FUNCTION_TOKENS:
                head = func.value
                if type(head) is ast.Attribute:
                    head = head.value  # type: ignore[attr-defined]
                elif type(head) is ast.Name and head.id == "self":  # type: ignore[attr-defined]
                    continue  # ``self.generate(...)``: the object itself is never a typed receiver
                if type(head) is ast.Name and head.id not in self._aliases:  # type: ignore[attr-defined]
                    return True
            if any(
                k.arg is not None
                and name_tokens(k.arg) & EVAL_FUNCTION_TOKENS
                and type(k.value) is ast.Constant
                and k.value.value is True
                for k in call.keywords
            ):
                return True
        return False

    @property
    def calls_a_model_method(self) -> bool:
        """MEM201's path through a named method of a model
        (``self.model.extract_feature(x)``, ProjectView.forward_methods): a
        call of a method other than nn.Module's API on a receiver named for
        a model (vocabulary.kinds.names_a_model_method). One pass, on first use."""
        if self._model_method is None:
            self._model_method = False
            bound: set[str] | None = None
            switched: set[str] | None = None
            for call in self._calls:
                func = call.func
                if type(func) is ast.Attribute:
                    value = func.value  # type: ignore[attr-defined]
                    kind = type(value)
                    receiver = value.attr if kind is ast.Attribute else value.id if kind is ast.Name else ""
                    if not receiver:
                        continue
                    if names_a_model_method(receiver, func.attr):  # type: ignore[attr-defined]
                        self._model_method = True
                        break
                    # ``self.__S__.forward_lip(x)``: a receiver bound here may build a module
                    # (ObjectTable._built_module), whatever its name says.
                    if bound is None:
                        bound = _bound_names(self._assigns, self._bindings)
                    if receiver in bound and names_a_model_method("model", func.attr):  # type: ignore[attr-defined]
                        self._model_method = True
                        break
                    # ``self._network.eval()`` then ``self._network.extract_vector(x)``:
                    # a receiver switched to eval (project/typed_objects.model_methods).
                    if switched is None:
                        switched = _eval_receivers(self._calls)
                    if receiver in switched and names_a_model_method("model", func.attr):  # type: ignore[attr-defined]
                        self._model_method = True
                        break
        return self._model_method

    @property
    def carries_state(self) -> bool:
        """MEM104 may report: a loop that may train feeds a call a name that
        only assignments at or after the call rebind in the loop
        (analysis/gate_carried.py). Computed on first use."""
        if not (self.loops and self.trains):
            return False
        if self._carries_state is None:
            self._carries_state = carries_state(self)
        return self._carries_state

    @property
    def empty_cache_in_loop(self) -> bool:
        """MEM702 may report: an ``empty_cache()`` statement in a loop of its
        own function, under no ``if`` body, ``except`` or ``finally`` there
        (analysis/gate_empty_cache.py). Computed on first use."""
        if "empty_cache" not in self.called or not self.loops:
            return False
        if self._empty_cache_in_loop is None:
            self._empty_cache_in_loop = empty_cache_in_loop(self._tree, self._aliases)  # type: ignore[arg-type]
        return self._empty_cache_in_loop

    @property
    def steps_in_a_loop(self) -> bool:
        """MEM802's scheduler step may exist: a ``.step()`` call with no
        argument in a loop (gate/sched_steps.py). Computed on first use."""
        if self._steps_in_a_loop is None:
            self._steps_in_a_loop = "step" in self.called and steps_in_a_loop(self)
        return self._steps_in_a_loop

    @property
    def object_method_in_a_loop(self) -> bool:
        """MEM802's project path may report: a bare ``trainer.m()`` with no
        argument in a loop, or in a function where a statement follows it
        (gate/sched_steps.py). Computed on first use."""
        if self._object_method_in_a_loop is None:
            self._object_method_in_a_loop = bool(self._bare_method_calls) and object_method_in_a_loop(self)
        return self._object_method_in_a_loop

    @property
    def best_snapshot(self) -> bool:
        """A ``state_dict()`` snapshot MEM801 may call kept as the best
        weights: bound to a name that says ``best``, or taken under an ``if``
        that may select (its ``_selected``: an ``if`` between the assignment
        and the loop or function around it whose test ``_selects``: an
        ordering comparison, or a name saying ``best``/``improv``). Computed
        on first use."""
        if self._best_snapshot is None:
            self._best_snapshot = self.state_dict_snapshot and _best_snapshot(self._tree)
        return self._best_snapshot

    @property
    def names_loader(self) -> bool:
        """A name that may hold a data loader (objects' LOADER kind): one
        that says ``loader`` or ends in ``dl``, in any case. Read once, on
        the identifiers joined by newlines (which no identifier holds): one
        search instead of two per identifier, asked by MEM703's gate and
        gate_loops in half the files."""
        if self._names_loader is None:
            joined = "\n".join(self.idents).lower() + "\n"
            self._names_loader = "loader" in joined or "dl\n" in joined
        return self._names_loader

    def decorated_off(self, decorators: list[ast.expr], heads: set[str]) -> bool:
        """grad_mode.decorator_mode surely finds these decorators DISABLED
        (``@torch.no_grad()``, ``@torch.inference_mode()``) and none may turn
        grad on, provided the names in ``heads`` (filled here: what each "off"
        was read through) are never rebound in the file (names.ImportTable
        drops such an import). For gate_seeds (MEM101/MEM102)."""
        qualified = import_table(self)
        modes = [decorator_grad_context(d, qualified, self._aliases, heads) for d in decorators]
        return "off" in modes and "on" not in modes

    # -- the walk ------------------------------------------------------------
    def _walk(self, tree: ast.AST) -> None:
        """One pass over the nodes that may hold code. Each node's class
        gives, in one dict lookup (_WALK), what the walk does with it and
        which of its fields hold children (gate/ast_fields.py: contexts,
        operators and aliases are never visited): the gate runs on every
        file past the pre-filter, and testing every field of every node cost
        as much as Python's parse. Calls and assignments are read after the
        walk, once every import alias is known."""
        idents, keywords = self.idents, self.keywords
        aliases = self._aliases
        calls, assigns, bindings = self._calls, self._assigns, self._bindings
        functions = self._functions
        add_ident, add_call = idents.add, calls.append
        add_rebound, add_base, add_self_bound = self._rebound.add, self._bases.add, self._self_bound.add
        table, Name, Attribute, Load = _WALK, ast.Name, ast.Attribute, ast.Load
        stack = [tree]
        push, extend, pop = stack.append, stack.extend, stack.pop
        while stack:
            node = pop()
            kind = type(node)
            if kind is Name:
                add_ident(node.id)  # type: ignore[attr-defined]
                if type(node.ctx) is not Load:  # type: ignore[attr-defined]
                    add_rebound(node.id)  # type: ignore[attr-defined]
                    if node.id == "self":  # type: ignore[attr-defined]
                        self._self_rebound = True
                continue  # a name's only child is its context
            if kind is Attribute:  # a fifth of the nodes visited: read here whole
                add_ident(node.attr)  # type: ignore[attr-defined]
                value = node.value  # type: ignore[attr-defined]
                if type(value) is Name:  # ``self.x``: an attribute's object is read, never bound
                    add_ident(value.id)  # type: ignore[attr-defined]
                    add_base(value.id)  # type: ignore[attr-defined]
                    if value.id == "self" and type(node.ctx) is not Load:  # type: ignore[attr-defined]
                        add_self_bound(node.attr)  # type: ignore[attr-defined]
                else:
                    if (
                        type(value) is Attribute
                        and node.attr in _MODULE_EVIDENCE  # type: ignore[attr-defined]
                        and type(value.value) is Name  # type: ignore[attr-defined]
                        and value.value.id == "self"  # type: ignore[attr-defined]
                    ):
                        add_self_bound(value.attr)  # type: ignore[attr-defined]  # ``self.x.parameters()``
                    push(value)
                continue
            code, pusher = table[kind]
            if code:
                if code == _CALL:
                    add_call(node)  # type: ignore[arg-type]
                    func = node.func  # type: ignore[attr-defined]
                    if type(func) is Name:  # a callee is read, never bound
                        add_ident(func.id)
                    else:
                        push(func)
                    extend(node.args)  # type: ignore[attr-defined]
                    extend(node.keywords)  # type: ignore[attr-defined]
                    continue
                if code == _KEYWORD:
                    if node.arg is not None:  # type: ignore[attr-defined]
                        keywords.add(node.arg)  # type: ignore[attr-defined]
                    push(node.value)  # type: ignore[attr-defined]
                    continue
                if code == _ASSIGN:
                    assigns.append(node)  # type: ignore[arg-type]
                elif code == _LIST:  # a field of a class whose signature was not read
                    extend(node)  # type: ignore[arg-type]
                    continue
                else:
                    self._visit(code, node, bindings, functions, aliases)
            if pusher is not None:
                pusher(node, push, extend)
        idents |= keywords
        for call in calls:
            self._call(call, aliases)
        for assign in assigns:
            self._assign(assign, aliases)
        self.eval_function_loops = any(
            name_tokens(fn.name) & EVAL_FUNCTION_TOKENS  # type: ignore[attr-defined]
            and any(type(n) in _LOOPS for n in ast_fields.nodes(fn))
            for fn in functions
        )

    def _visit(
        self,
        code: int,
        node: ast.AST,
        bindings: list[tuple[ast.AST, ast.AST]],
        functions: list[ast.AST],
        aliases: dict[str, str],
    ) -> None:
        """What _walk does with the nodes rarer than names, attributes, calls,
        keywords and assignments."""
        if code == _EXPR:
            value = node.value  # type: ignore[attr-defined]
            kind = type(value)
            if kind is ast.Attribute:
                self.bare_attributes.add(value.attr)
            elif kind is ast.Call:
                func = value.func
                if type(func) is ast.Name:
                    self._bare_callees.add(func.id)
                elif type(func) is ast.Attribute:
                    self._bare_callees.add(func.attr)
                    if not value.args and not value.keywords and func.attr != "step" and short_receiver(func.value):
                        self._bare_method_calls.append(value)
        elif code == _AUG_ASSIGN:
            self._written_in_place(node.target)  # type: ignore[attr-defined]
            if type(node.value) in (ast.List, ast.Tuple):  # type: ignore[attr-defined]
                self._list_aug_assigns.append(node)  # type: ignore[arg-type]
        elif code == _BINDING:
            if node.value is not None:  # type: ignore[attr-defined]
                bindings.append((node.target, node.value))  # type: ignore[attr-defined]
        elif code == _FOR:
            self.loops = True
            self._loop_nodes.append(node)
            self._iter_tokens(node.iter)  # type: ignore[attr-defined]
            if may_iterate_parameters(node.iter):  # type: ignore[attr-defined]
                self.leaf_names |= bare_names(node.target)  # type: ignore[attr-defined]
        elif code == _WHILE:
            self.loops = True
            self._loop_nodes.append(node)
            self._iter_tokens(node.test)  # type: ignore[attr-defined]
        elif code == _COMPREHENSION:
            self.comprehensions = True
            before = self.iter_tokens
            self.iter_tokens = set()
            for gen in node.generators:  # type: ignore[attr-defined]
                self._iter_tokens(gen.iter)
            if self.iter_tokens & EVAL_DATA_TOKENS:
                self.eval_comprehension = True
            self.iter_tokens = before | self.iter_tokens
        elif code == _FUNCTION:
            self.idents.add(node.name)  # type: ignore[attr-defined]
            self.def_names.add(node.name)  # type: ignore[attr-defined]
            functions.append(node)
        elif code == _CLASS:
            self.idents.add(node.name)  # type: ignore[attr-defined]
            self._classes.add(node.name)  # type: ignore[attr-defined]
            self._class_nodes.append(node)  # type: ignore[arg-type]
        elif code == _BINDER:
            bind_names(node, type(node), self._rebound)
        elif code == _IMPORT:
            self._imports.append(node)  # type: ignore[arg-type]
            idents = self.idents
            if type(node) is ast.ImportFrom and node.module:  # type: ignore[attr-defined]
                idents.update(node.module.split("."))  # type: ignore[attr-defined]
            for alias in node.names:  # type: ignore[attr-defined]
                parts = alias.name.split(".")
                idents.update(parts)
                if alias.asname:
                    idents.add(alias.asname)
                    aliases[alias.asname] = parts[-1]

    def _call(self, call: ast.Call, aliases: dict[str, str]) -> None:
        func = call.func
        kind = type(func)
        if kind is ast.Attribute:
            last = func.attr
            if last[-1] == "_" and is_inplace_method(last):  # what MEM401/MEM402 check (``p.detach_()`` writes no data)
                self.inplace_names |= bare_names(func.value)  # ``n.add_(...)``
                self._parameter_attr_written(func.value)
        elif kind is ast.Name:
            last = aliases.get(func.id, func.id)
        else:
            return
        self.called.add(last)
        if last not in _CALLS_READ:
            return  # most calls: nothing below can hold
        names = {kw.arg for kw in call.keywords}
        if (last in _INPLACE_ALWAYS or ("inplace" in names and last in _INPLACE_WHEN_ASKED)) and call.args:
            self.inplace_names |= bare_names(call.args[0])  # ``torch.relu_(n)``, ``F.relu(n, inplace=True)``
        if last == "Sequential" and not self.inplace_after_saver:
            elements = _sequential_elements(call)
            self.inplace_after_saver = _saver_then_inplace(elements, aliases)
            # ``nn.Sequential(*layers)``: the list literal bound to ``layers`` (_assign).
            self._sequential_lists.update(
                a.value.id for a in call.args if type(a) is ast.Starred and type(a.value) is ast.Name
            )  # type: ignore[attr-defined]
        if last == "requires_grad_" and kind is ast.Attribute:
            self.leaf_names |= bare_names(func.value)  # type: ignore[attr-defined]
        if last == "eval" and not call.args and not call.keywords:
            self.eval_call = True
        elif last == "train" and (call.args or call.keywords):
            # objects.mode_call reads libcst's first argument, keyword or not: ``m.train(mode=False)``
            first = call.args[0] if call.args else call.keywords[0].value
            if type(first) is ast.Constant and first.value is False:
                self.eval_call = True
        if last == "train" and (
            not call.args
            and not call.keywords
            or any(type(a) is ast.Constant and a.value is True for a in (*call.args, *(k.value for k in call.keywords)))
        ):
            self.train_call = True  # ``m.train(self.training)`` is "unknown" to mode_call, never "train"
        if last in ("checkpoint", "checkpoint_sequential") and "use_reentrant" not in names and None not in names:
            self.checkpoint_without_reentrant = True
        if (
            last == "load"
            and (kind is ast.Name or _torch_module(func.value, aliases))  # type: ignore[attr-defined]
            and _may_map_nothing(call)
            # ``**kwargs`` of a local dict display may lack it (analysis/training/load_kwargs.py)
            and all(type(kw.value) is ast.Name for kw in call.keywords if kw.arg is None)
            and not any(type(a) is ast.Starred for a in call.args)
        ):
            self.load_without_map_location = True

    def _assign(self, node: ast.Assign, aliases: dict[str, str]) -> None:
        targets = node.targets
        for target in targets:
            kind = type(target)
            if kind is ast.Subscript:
                self._written_in_place(target)
            elif kind is ast.Attribute and target.attr == "requires_grad":  # type: ignore[attr-defined]
                self.leaf_names |= bare_names(target.value)  # type: ignore[attr-defined]  # ``n.requires_grad = True``
        value = node.value
        kind = type(value)
        if kind is ast.List and not self.inplace_after_saver and self._sequential_lists:
            if any(type(t) is ast.Name and t.id in self._sequential_lists for t in targets):  # type: ignore[attr-defined]
                self.inplace_after_saver = _saver_then_inplace(value.elts, aliases)  # type: ignore[attr-defined]
        if kind is ast.Dict:
            if len(targets) == 1 and any(_state_dict_call(p) for p in value.values if p is not None):  # type: ignore[attr-defined]
                self.state_dict_snapshot = True
            return
        if kind is not ast.Call:
            return
        if len(targets) == 1 and _state_dict_call(value):
            self.state_dict_snapshot = True
        func = value.func  # type: ignore[attr-defined]
        last = ast_callee(func, aliases)
        saves = last in SAVES_OUTPUT
        # ``n = nn.Parameter(...)``, ``n = torch.zeros(..., requires_grad=True)``, ``n = t.requires_grad_()``
        leaf = last in LEAF_MARKS or any(kw.arg == "requires_grad" for kw in value.keywords)  # type: ignore[attr-defined]
        if saves or leaf:
            names = {n for t in targets for n in bare_names(t)}
            if saves:
                self.output_names |= names
            if leaf:
                self.leaf_names |= names

    def _written_in_place(self, target: ast.AST) -> None:
        if type(target) is ast.Subscript:
            target = target.value  # type: ignore[attr-defined]
        if type(target) is ast.Name:
            self.inplace_names.add(target.id)  # type: ignore[attr-defined]
        self._parameter_attr_written(target)

    def _parameter_attr_written(self, target: ast.AST) -> None:
        while type(target) is ast.Subscript:
            target = target.value  # type: ignore[attr-defined]
        if type(target) is ast.Attribute and target.attr in PARAMETER_ATTRS:  # type: ignore[attr-defined]
            self.inplace_parameter_attr = True

    def _iter_tokens(self, expr: ast.AST) -> None:
        self.iter_tokens |= ast_tokens(expr)[0]


_SELECTION_BOUNDS = (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef)
_ORDERING = (ast.Lt, ast.Gt, ast.LtE, ast.GtE)


def _selects(test: ast.AST) -> bool:
    """MEM801's ``_selects``, wider: an ordering comparison in the test, or
    a name, attribute, keyword or parameter there that says ``best`` or
    ``improv`` (libcst's visit_Name sees all four)."""
    for node in ast.walk(test):
        kind = type(node)
        if kind is ast.Compare:
            if any(type(op) in _ORDERING for op in node.ops):  # type: ignore[attr-defined]
                return True
            continue
        if kind is ast.Name:
            name = node.id  # type: ignore[attr-defined]
        elif kind is ast.Attribute:
            name = node.attr  # type: ignore[attr-defined]
        elif kind is ast.keyword or kind is ast.arg:
            name = node.arg or ""  # type: ignore[attr-defined]
        else:
            continue
        lowered = name.lower()
        if "best" in lowered or "improv" in lowered:
            return True
    return False


def _best_snapshot(tree: ast.AST) -> bool:
    """See GateFacts.best_snapshot."""
    AST = ast.AST
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    push, pop = stack.append, stack.pop
    while stack:
        node, in_if = pop()
        kind = type(node)
        if kind is ast.Assign and len(node.targets) == 1:  # type: ignore[attr-defined]
            value = node.value  # type: ignore[attr-defined]
            parts = value.values if type(value) is ast.Dict else [value]
            if any(_state_dict_call(p) for p in parts if p is not None):
                target = node.targets[0]  # type: ignore[attr-defined]
                name = target.id if type(target) is ast.Name else getattr(target, "attr", "_")
                if in_if or "best" in name.lower():
                    return True
        elif kind is ast.If:
            in_if = in_if or _selects(node.test)  # type: ignore[attr-defined]
        elif kind in _SELECTION_BOUNDS:
            in_if = False
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, AST):
                        push((item, in_if))
            elif isinstance(value, AST):
                push((value, in_if))
    return False


def _names_evaluation(names: set[str]) -> bool:
    """Some name of ``names`` holds a token of EVAL_FUNCTION_TOKENS. Each
    name's answer is kept: files share most of their callee names."""
    known = _EVALUATION_NAMES
    for name in names:
        says = known.get(name)
        if says is None:
            if len(known) > 8192:  # a long-lived process (the server) sees every name it ever linted
                known.clear()
            says = known[name] = not name_tokens(name).isdisjoint(EVAL_FUNCTION_TOKENS)
        if says:
            return True
    return False


_EVALUATION_NAMES: dict[str, bool] = {}


def _torch_module(expr: ast.AST, aliases: dict[str, str]) -> bool:
    """``expr`` may be the name of the ``torch`` module: ``torch``, or an
    import alias of it (``import torch as T``). names.qualified_name joins
    the import a head is bound to with the rest: ``torch.load`` only for a
    head bound to ``torch`` and one attribute, ``load``."""
    return type(expr) is ast.Name and aliases.get(expr.id, expr.id) == "torch"  # type: ignore[attr-defined]


def _sequential_elements(call: ast.Call) -> list[ast.AST]:
    """The modules of ``nn.Sequential(a, b)`` or ``nn.Sequential(OrderedDict([("a", a), ...]))``
    (more than activations.sequential_elements accepts: a superset)."""
    args = list(call.args)
    if len(args) == 1 and type(args[0]) is ast.Call and args[0].args:  # type: ignore[attr-defined]
        items = args[0].args[0]  # type: ignore[attr-defined]
        if type(items) in (ast.List, ast.Tuple):
            pairs = [el.elts[1] for el in items.elts if type(el) in (ast.Tuple, ast.List) and len(el.elts) == 2]
            if pairs:
                return pairs
    return [a.value if type(a) is ast.Starred else a for a in args]


def _saver_then_inplace(elements: list[ast.AST], aliases: dict[str, str]) -> bool:
    """A module that saves its output, then one that may run in place."""
    return any(
        last_name(prev, aliases) in _SAVING_MODULES and _may_run_inplace(cur)
        for prev, cur in zip(elements, elements[1:])
    )


def _may_run_inplace(expr: ast.AST) -> bool:
    """A module call given ``inplace=...`` or a literal ``True`` positionally (``nn.ReLU(True)``)."""
    if type(expr) is not ast.Call:
        return False
    return any(kw.arg == "inplace" for kw in expr.keywords) or any(  # type: ignore[attr-defined]
        type(a) is ast.Constant and a.value is True
        for a in expr.args  # type: ignore[attr-defined]
    )


def _state_dict_call(value: ast.AST) -> bool:
    """``m.state_dict()`` or ``m.state_dict().copy()`` (MEM801's snapshots)."""
    if type(value) is ast.Call and not value.args and not value.keywords:  # type: ignore[attr-defined]
        func = value.func  # type: ignore[attr-defined]
        if type(func) is ast.Attribute and func.attr == "copy":
            value = func.value
    if type(value) is not ast.Call or value.args or value.keywords:  # type: ignore[attr-defined]
        return False
    func = value.func  # type: ignore[attr-defined]
    return type(func) is ast.Attribute and func.attr == "state_dict"


# The facts of the last tree screened: the engine reads them again, once the
# file's project view is known (lint/engine.py's with_project), without a
# second walk. One slot: it keeps a single tree alive.
_LAST: tuple[ast.AST, GateFacts] | None = None


def facts_of(tree: ast.AST) -> GateFacts:
    """``GateFacts(tree)``, walked once for the same tree object."""
    global _LAST
    if _LAST is not None and _LAST[0] is tree:
        return _LAST[1]
    facts = GateFacts(tree)
    _LAST = (tree, facts)
    return facts


def forget_last() -> None:
    """Let go of the last tree screened (its file is done)."""
    global _LAST
    _LAST = None


def enabled_by_gate(rules, facts: GateFacts):
    """The rules whose declared condition holds (a rule without one always)."""
    return [r for r in rules if r.gate is None or r.gate(facts)]


def _eval_receivers(calls: list[ast.Call]) -> set[str]:
    """The last names of the receivers of ``.eval()`` calls (``_network``
    for ``self._network.eval()``): a superset of the receivers
    ObjectTable._switched_before may accept."""
    found: set[str] = set()
    for call in calls:
        func = call.func
        if type(func) is ast.Attribute and func.attr == "eval" and not call.args:  # type: ignore[attr-defined]
            value = func.value  # type: ignore[attr-defined]
            kind = type(value)
            if kind is ast.Attribute:
                found.add(value.attr)
            elif kind is ast.Name and value.id != "self":  # ``self.eval()``: not ObjectTable._switched_before's
                found.add(value.id)
    return found


def _bound_names(assigns: list[ast.Assign], bindings: list[tuple[ast.AST, ast.AST]]) -> set[str]:
    """The last names of the assignment targets given a constructor spelled
    as a class (``self.__S__ = S(...).cuda()`` gives ``__S__``; ``a, b =
    A(), B()`` pairs them): a superset of the receivers ObjectTable._built_module
    may accept, whose every binding is such a call."""
    found: set[str] = set()
    todo: list[tuple[ast.AST, ast.AST | None]] = [(t, a.value) for a in assigns for t in a.targets] + list(bindings)
    while todo:
        target, value = todo.pop()
        kind = type(target)
        if kind in (ast.Tuple, ast.List):
            elts = target.elts  # type: ignore[attr-defined]
            if type(value) in (ast.Tuple, ast.List) and len(value.elts) == len(elts):  # type: ignore[union-attr]
                todo += zip(elts, value.elts)  # type: ignore[union-attr]
        elif kind in (ast.Name, ast.Attribute) and _class_built(value):
            found.add(target.id if kind is ast.Name else target.attr)  # type: ignore[attr-defined]
    return found


def _class_built(value: ast.AST | None) -> bool:
    """``S(...)`` or ``S(...).cuda()``: a call of a name spelled as a class."""
    if type(value) is not ast.Call:
        return False
    func = value.func  # type: ignore[attr-defined]
    while type(func) is ast.Attribute and func.attr in MODULE_MOVES and type(func.value) is ast.Call:  # type: ignore[attr-defined]
        func = func.value.func  # type: ignore[attr-defined]
    kind = type(func)
    return spells_a_class(func.attr if kind is ast.Attribute else func.id if kind is ast.Name else "")  # type: ignore[attr-defined]


def _may_map_nothing(call: ast.Call) -> bool:
    """``call`` has no ``map_location``, or one that may be ``None`` on the
    CUDA path (analysis/training/gpu_none_locations.py): ``None``, a name or
    a conditional."""
    given = next((k.value for k in call.keywords if k.arg == "map_location"), None)
    if given is None and len(call.args) >= 2:
        given = call.args[1]
    if given is None:
        return True
    kind = type(given)
    return kind is ast.Name or kind is ast.IfExp or (kind is ast.Constant and given.value is None)  # type: ignore[attr-defined]
