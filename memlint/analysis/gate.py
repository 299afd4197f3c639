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

from memlint.analysis.activations import (
    ALWAYS_INPLACE_FUNCTIONS,
    INPLACE_FUNCTIONS,
    OUTPUT_SAVING_FUNCTIONS,
    OUTPUT_SAVING_FUNCTIONS_WHEN_INPLACE,
    OUTPUT_SAVING_METHODS,
    OUTPUT_SAVING_MODULES,
    OUTPUT_SAVING_WHEN_INPLACE,
    is_inplace_method,
)
from memlint.analysis.ast_names import ast_callee, ast_dotted, ast_tokens
from memlint.analysis.gate_carried import carries_state
from memlint.analysis.gate_empty_cache import empty_cache_in_loop
from memlint.analysis.gate_loops import LoopSites, eval_argument, eval_mode_call, loop_sites
from memlint.analysis.grad_mode import LIGHTNING_NO_GRAD_HOOKS

# The very words loops.py uses to call a loop a batch loop or a function an
# evaluation, so the gate widens whenever they do.
from memlint.analysis.loops import DATA_TOKENS, EVAL_DATA_TOKENS, EVAL_FUNCTION_TOKENS, name_tokens
from memlint.analysis.module_params import PARAMETER_ATTRS
from memlint.analysis.objects import Kind, constructor_kind, guess_kind_from_name
from memlint.parse import ast_fields

_BACKWARD = frozenset({"backward", "manual_backward"})
# grad_mode: what turns recording off (context managers, decorators, the
# Lightning hooks run under no_grad).
_GRAD_OFF = frozenset({"no_grad", "inference_mode", "set_grad_enabled"}) | LIGHTNING_NO_GRAD_HOOKS
_SAVING_MODULES = OUTPUT_SAVING_MODULES | OUTPUT_SAVING_WHEN_INPLACE
# Ops whose output autograd saves (MEM402), by their last name.
_SAVES_OUTPUT = frozenset(
    {q.rsplit(".", 1)[-1] for q in OUTPUT_SAVING_FUNCTIONS | OUTPUT_SAVING_FUNCTIONS_WHEN_INPLACE}
    | OUTPUT_SAVING_METHODS
    | OUTPUT_SAVING_MODULES
    | OUTPUT_SAVING_WHEN_INPLACE
)
# activations.inplace_function_target's functions, by their last name.
_INPLACE_ALWAYS = frozenset(q.rsplit(".", 1)[-1] for q in ALWAYS_INPLACE_FUNCTIONS)
_INPLACE_WHEN_ASKED = frozenset(q.rsplit(".", 1)[-1] for q in INPLACE_FUNCTIONS)
# Calls that make a leaf requiring grad, by their last name (MEM401).
_LEAF_MARKS = frozenset(
    {
        "parameters",
        "named_parameters",
        "requires_grad",
        "requires_grad_",
        "Parameter",
        "UninitializedParameter",
        "ParameterList",
        "ParameterDict",
    }
)
# The callees' last names GateFacts._call reads beyond ``called``.
_CALLS_READ = (
    _INPLACE_ALWAYS
    | _INPLACE_WHEN_ASKED
    | {"Sequential", "requires_grad_", "eval", "train", "checkpoint", "checkpoint_sequential", "load"}
)
# Phases in the names of a framework's per-batch hooks.
_PHASES = frozenset({"train", "training", "validation", "val", "valid", "test", "predict", "eval", "evaluation"})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_LOOPS = frozenset({ast.For, ast.AsyncFor, ast.While, *_COMPREHENSIONS})

# What GateFacts._walk does with a node, by its class (0: only its children).
_CALL, _KEYWORD, _ASSIGN, _LIST = 1, 2, 3, 4
_AUG_ASSIGN, _BINDING, _FOR, _WHILE, _COMPREHENSION, _FUNCTION, _CLASS, _IMPORT = range(5, 13)
_CODES: dict[type, int] = {
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
}


class _Walk(dict):  # type: ignore[type-arg]
    """Node class -> (code, single child fields, list child fields). Anything
    else met (None, or a scalar read through a class whose signature
    parse/ast_fields.py could not read) has no children."""

    def __missing__(self, key: type) -> tuple[int, tuple[str, ...], tuple[str, ...]]:
        return (0, (), ())


_WALK = _Walk({cls: (_CODES.get(cls, 0), ch.singles, ch.lists) for cls, ch in ast_fields.CHILDREN.items()})
_WALK[list] = (_LIST, (), ())


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
        self.checkpoint_without_reentrant = False  # a ``checkpoint``/``checkpoint_sequential`` call MEM602 may flag
        self.state_dict_snapshot = False  # ``x = m.state_dict()`` (or its ``.copy()``, or in a dict display)
        # A ``load`` call MEM701 may flag (its ``_is_load_without_map_location``):
        # ``load(...)`` or ``torch.load(...)`` (names.call_name is ``torch.load``
        # only for these two spellings), no ``map_location=``, fewer than two
        # positional arguments, no ``*``/``**``.
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
        self._aliases: dict[str, str] = {}
        self._tree = tree  # for the facts computed only when a rule asks (saved_output_written_in_place)
        # What the walk keeps for builds_module, computed only when MEM202 asks.
        self._calls: list[ast.Call] = []
        self._assigns: list[ast.Assign] = []
        self._bindings: list[tuple[ast.AST, ast.AST]] = []  # ``: T =`` and ``:=``
        self._imports: list[ast.Import | ast.ImportFrom] = []
        self._classes: set[str] = set()
        self._class_nodes: list[ast.ClassDef] = []  # for _module_classes (MEM202)
        self._self_rebound = False  # ``self`` assigned somewhere (a function rebinds it)
        self._functions: list[ast.AST] = []  # every def, for _builds_module's scopes (MEM202)
        self._builds_module: bool | None = None
        self._saved_in_place: bool | None = None
        self._grad_on_writes: GateFacts | None = None
        self._leaf_written: bool | None = None
        self._on_nodes: set[int] = set()  # grad_on_writes: the writes it counts, by id
        # The scopes (a def's id, 0 for the module) whose loops may run without
        # grad holding a model call; None: any (modes set by statements).
        self._off_loop_scopes: set[int] | None = None
        self._loop_without_grad: bool | None = None
        self._built_for_off_loop: bool | None = None
        self._evaluates_with_grad: bool | None = None
        self._model_reach: _ModelReach | None = None  # MEM201's and MEM202's reading of model calls
        self._best_snapshot: bool | None = None
        self._empty_cache_in_loop: bool | None = None
        self._carries_state: bool | None = None
        self._names_loader: bool | None = None
        self._loop_sites: LoopSites | None = None
        self._walk(tree)

    # -- what the rules ask ------------------------------------------------
    @property
    def backward(self) -> bool:
        """A backward may run (objects.is_backward_call, ``torch.autograd.grad`` included)."""
        return bool(self.called & _BACKWARD) or ("grad" in self.called and "autograd" in self.idents)

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
        ``training_step``, ``on_validation_epoch_end``...)."""
        for name in self.def_names:
            tokens = name_tokens(name)
            if tokens & _PHASES and tokens & {"step", "epoch", "batch"}:
                return True
        return False

    @property
    def batch_evidence(self) -> bool:
        """What loops.LoopInfo.is_batch_loop needs at least one of (training
        verbs, evidence of evaluation, an iterable named for data, a loader
        built here), or a per-batch framework hook."""
        return (
            self.trains
            or self.eval_call
            or self.eval_function_loops
            or bool(self.iter_tokens & DATA_TOKENS)
            or "DataLoader" in self.idents
            or self.step_hooks
        )

    @property
    def across_iterations(self) -> bool:
        """Code that runs once per batch may exist: a loop with batch
        evidence, or a per-batch framework hook."""
        return self.batch_evidence and (self.loops or self.step_hooks)

    @property
    def loop_sites(self) -> LoopSites:
        """What the loop rules need, tied to the loops around it (see
        analysis/gate_loops.py): MEM101's accumulation and MEM102's store a
        batch loop may carry, MEM703's move in a loop that may run per batch,
        MEM201's evidence of evaluation. Computed on first use."""
        if self._loop_sites is None:
            self._loop_sites = loop_sites(self)
        return self._loop_sites

    @property
    def builds_module(self) -> bool:
        """A variable may be bound to a module built here, in train mode
        (objects.built_in_train_mode: ``m = Net()``, ``nn.Sequential(...)``,
        ``torchvision.models.resnet18().to(dev)``, ``timm.create_model``).
        Computed on first use: only MEM202 asks, and only when the cheaper
        conditions hold."""
        if self._builds_module is None:
            self._builds_module = _builds_module(self, None)
        return self._builds_module

    @property
    def saved_output_written_in_place(self) -> bool:
        """MEM402's operator case may fire: in some function scope (the
        module's too), a name is written in place while the rule's
        ``_Scope.saved`` may still hold it, inside the block of the statement
        that saved it, and that scope is training code. See
        _saved_output_written_in_training. Computed on first use."""
        if not self.output_names & self.inplace_names:
            return False
        if self._saved_in_place is None:
            try:
                self._saved_in_place = _saved_output_written_in_training(self)
            except RecursionError:  # nesting deeper than this walk goes: stay wide
                self._saved_in_place = True
        return self._saved_in_place

    @property
    def leaf_written_with_grad(self) -> bool:
        """MEM401's name case may fire: a name is written in place where the
        rule's ``_leaf`` may take it for a leaf and grad may be on. See
        _leaf_written_with_grad. Computed on first use."""
        if not self.inplace_names & self.leaf_names:
            return False
        if self._leaf_written is None:
            try:
                self._leaf_written = _leaf_written_with_grad(self)
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
            self._grad_on_writes = _grad_on_writes(self)
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
            scopes = _loop_may_run_without_grad(self, collect=not self.train_call)
            self._loop_without_grad = scopes is None or bool(scopes)
            self._off_loop_scopes = scopes
        return self._loop_without_grad

    @property
    def module_built_for_a_loop_without_grad(self) -> bool:
        """builds_module, counting only the bindings objects.built_in_train_mode
        may read for MEM202: loops.mode_before ends in ``_default_mode`` at the
        scope of a loop that may run without grad (loop_may_run_without_grad)
        or at one of its callers', and reads the definitions of a receiver
        local to that scope, keyed by it (objects._key_for_read: a bare name
        is keyed by its innermost def, the module's outside any). See
        _read_for_a_loop_without_grad. Computed on first use (MEM202)."""
        if self._built_for_off_loop is None:
            self._built_for_off_loop = (
                self.builds_module
                and self.loop_may_run_without_grad
                and _builds_module(self, _read_for_a_loop_without_grad(self))
            )
        return self._built_for_off_loop

    @property
    def evaluates_with_grad(self) -> bool:
        """MEM201 may report: the file trains, switches a model to eval or
        passes ``volatile=`` (what its other paths need), or some loop or
        comprehension has evidence of evaluation, may run with grad on, and
        holds a call that may run a model or a function of this file (see
        _evaluates_with_grad). Computed on first use (MEM201)."""
        if self._evaluates_with_grad is None:
            self._evaluates_with_grad = _evaluates_with_grad(self)
        return self._evaluates_with_grad

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
        qualified = _import_table(self)
        modes = [_decorator_context(d, qualified, self._aliases, heads) for d in decorators]
        return "off" in modes and "on" not in modes

    # -- the walk ------------------------------------------------------------
    def _walk(self, tree: ast.AST) -> None:
        """One pass over the nodes that may hold code. Each node's class
        gives, in one dict lookup (_WALK), what the walk does with it and
        which of its fields hold children (parse/ast_fields.py: contexts,
        operators and aliases are never visited): the gate runs on every
        file past the pre-filter, and testing every field of every node cost
        as much as Python's parse. Calls and assignments are read after the
        walk, once every import alias is known."""
        idents, keywords = self.idents, self.keywords
        aliases = self._aliases
        calls, assigns, bindings = self._calls, self._assigns, self._bindings
        functions = self._functions
        add_ident, add_call = idents.add, calls.append
        table, Name, Attribute, Load = _WALK, ast.Name, ast.Attribute, ast.Load
        stack = [tree]
        push, extend, pop = stack.append, stack.extend, stack.pop
        while stack:
            node = pop()
            kind = type(node)
            if kind is Name:
                add_ident(node.id)  # type: ignore[attr-defined]
                if node.id == "self" and type(node.ctx) is not Load:  # type: ignore[attr-defined]
                    self._self_rebound = True
                continue  # a name's only child is its context
            if kind is Attribute:  # a fifth of the nodes visited: read here whole
                add_ident(node.attr)  # type: ignore[attr-defined]
                value = node.value  # type: ignore[attr-defined]
                if type(value) is Name:  # ``self.x``: an attribute's object is read, never bound
                    add_ident(value.id)  # type: ignore[attr-defined]
                else:
                    push(value)
                continue
            code, singles, lists = table[kind]
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
            for field in singles:
                push(getattr(node, field))
            for field in lists:
                extend(getattr(node, field))
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
        if code == _AUG_ASSIGN:
            self._written_in_place(node.target)  # type: ignore[attr-defined]
        elif code == _BINDING:
            if node.value is not None:  # type: ignore[attr-defined]
                bindings.append((node.target, node.value))  # type: ignore[attr-defined]
        elif code == _FOR:
            self.loops = True
            self._iter_tokens(node.iter)  # type: ignore[attr-defined]
            if _may_iterate_parameters(node.iter):  # type: ignore[attr-defined]
                self.leaf_names |= _bare_names(node.target)  # type: ignore[attr-defined]
        elif code == _WHILE:
            self.loops = True
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
                self.inplace_names |= _bare_names(func.value)  # ``n.add_(...)``
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
            self.inplace_names |= _bare_names(call.args[0])  # ``torch.relu_(n)``, ``F.relu(n, inplace=True)``
        if last == "Sequential" and not self.inplace_after_saver:
            elements = _sequential_elements(call)
            self.inplace_after_saver = any(
                _last_name(prev, aliases) in _SAVING_MODULES and _may_run_inplace(cur)
                for prev, cur in zip(elements, elements[1:])
            )
        if last == "requires_grad_" and kind is ast.Attribute:
            self.leaf_names |= _bare_names(func.value)  # type: ignore[attr-defined]
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
            and len(call.args) < 2
            and "map_location" not in names
            and None not in names
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
                self.leaf_names |= _bare_names(target.value)  # type: ignore[attr-defined]  # ``n.requires_grad = True``
        value = node.value
        kind = type(value)
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
        saves = last in _SAVES_OUTPUT
        # ``n = nn.Parameter(...)``, ``n = torch.zeros(..., requires_grad=True)``, ``n = t.requires_grad_()``
        leaf = last in _LEAF_MARKS or any(kw.arg == "requires_grad" for kw in value.keywords)  # type: ignore[attr-defined]
        if saves or leaf:
            names = {n for t in targets for n in _bare_names(t)}
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


# The nodes that own a statement list (a body, an ``else``, a handler's).
_BLOCK_OWNERS = (
    ast.Module,
    ast.ClassDef,
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.ExceptHandler,
    ast.match_case,
    *((ast.TryStar,) if hasattr(ast, "TryStar") else ()),
)
_BLOCK_OWNER_KINDS = frozenset(_BLOCK_OWNERS)


def _saved_output_written_in_training(facts: GateFacts) -> bool:
    """See GateFacts.saved_output_written_in_place. Each condition mirrors
    rules/mem402_in_place_on_saved_output.py:

    - ``_Scope.saved``, one per FunctionDef (decorators and defaults
      included; lambdas and class bodies belong to the enclosing one), is
      filled by ``leave_Assign`` when a Name target is given a saving call
      and emptied of a name when a later ``leave_Assign`` gives that Name
      target anything else, when an ``AnnAssign`` with a value binds it, or
      when ``_rebind`` drops every name of a ``for`` target or of an
      assignment's tuple, list or starred target (``w, idx = torch.topk(w,
      k)``). The writes are checked at ``visit_Call``/``visit_AugAssign``/
      ``visit_Assign``, before the statement's own binding. This walk
      replays those events in the order libcst visits them (statements in
      source order); where it cannot tell (a binding the rule then drops for
      ``_needs_grad``) the name stays saved.
    - ``_check``: the write must lie inside the block of the saving
      statement (``self.parent(line)``). Here the block is the compound
      statement that owns the statement's list, which holds libcst's
      IndentedBlock and, for a one-line body, the whole statement.
    - ``_in_training_code``: the scope serves ``forward``
      (loops.serves_forward: a method named ``forward``, or a function some
      call here reaches by its name, with a ``forward`` defined somewhere),
      or a backward verb (training_verbs: a call named ``backward`` or
      ``manual_backward``) lies in the scope; ``_backpropagated_later``
      needs the same verb outside ``forward``. A scope that names
      ``backward`` anywhere counts.
    - ``grad_mode.mode_at(node)`` must be ENABLED at the write: a scope with
      a hit is walked again counting only the writes grad_on_writes keeps."""
    aliases = facts._aliases
    # serves_forward follows resolved call sites (a bare name, ``self.x``,
    # ``cls.x``) up to a ``forward``: the function's own name must be called.
    called = facts.called | set(aliases)
    has_forward = "forward" in facts.def_names
    scratch = GateFacts(ast.Module(body=[], type_ignores=[]))

    def written(node: ast.AST) -> set[str]:
        scratch.inplace_names = set()
        kind = type(node)
        if kind is ast.Call:
            scratch._call(node, aliases)  # type: ignore[arg-type]
        elif kind is ast.AugAssign:
            scratch._written_in_place(node.target)  # type: ignore[attr-defined]
        elif kind is ast.Assign:
            for t in node.targets:  # type: ignore[attr-defined]
                if type(t) is ast.Subscript:
                    scratch._written_in_place(t)
        return scratch.inplace_names

    children, owner_kinds = ast_fields.children, _BLOCK_OWNER_KINDS

    def scope_hit(root: ast.AST, functions: list[ast.AST], on: set[int] | None) -> bool:
        """A write on a name still saved, inside the saving block, in the
        scope ``root`` (among the writes ``on`` holds, when given); nested
        functions are their own scopes, gathered into ``functions`` (all of
        them only when the answer is False: the walk stops at a hit)."""
        saved: dict[str, int] = {}  # name -> id of the block owner of the saving statement
        owners: list[int] = []
        hit = False

        def walk(node: ast.AST) -> None:
            nonlocal hit
            kind = type(node)
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                functions.append(node)
                return  # a scope of its own
            owns = kind in owner_kinds
            if owns:
                owners.append(id(node))
            if kind is ast.For or kind is ast.AsyncFor:
                for name in _bare_names(node.target):  # type: ignore[attr-defined]
                    saved.pop(name, None)  # visit_For's _rebind
            if (
                saved
                and (kind is ast.Call or kind is ast.AugAssign or kind is ast.Assign)
                and (on is None or id(node) in on)
            ):
                for name in written(node):
                    owner = saved.get(name)
                    if owner is not None and owner in owners:
                        hit = True
            # In iter_child_nodes' order (libcst's), contexts and operators left out.
            for child in children(node):
                if hit:
                    return
                walk(child)
            if kind is ast.Assign:  # leave_Assign
                value = node.value  # type: ignore[attr-defined]
                saves = type(value) is ast.Call and ast_callee(value.func, aliases) in _SAVES_OUTPUT
                for t in node.targets:  # type: ignore[attr-defined]
                    if type(t) is ast.Name:
                        if saves:
                            saved[t.id] = owners[-1]
                        else:
                            saved.pop(t.id, None)
                    else:  # ``w, idx = torch.topk(w, k)``: _rebind drops every name of the target
                        for name in _bare_names(t):
                            saved.pop(name, None)
            elif kind is ast.AnnAssign and node.value is not None and type(node.target) is ast.Name:  # type: ignore[attr-defined]
                saved.pop(node.target.id, None)  # type: ignore[attr-defined]
            if owns:
                owners.pop()

        # walk calls itself through its closure cell: a reference cycle that
        # only the cyclic collector would free. Emptying the cell on the way
        # out breaks it.
        try:
            if type(root) is ast.Module:
                walk(root)
            else:
                owners.append(id(root))  # the function's own body
                for child in children(root):
                    if not hit:
                        walk(child)
            return hit
        finally:
            walk = None  # type: ignore[assignment]

    todo: list[ast.AST] = [facts._tree]
    on_writes: GateFacts | None = None
    while todo:
        root = todo.pop()
        functions: list[ast.AST] = []
        if scope_hit(root, functions, None):
            if _training_scope(root, called, has_forward, aliases):
                # _check's ``mode_at(node) is not ENABLED``: ask again among
                # the writes grad may be on at (grad_on_writes; every write
                # when that is the file's own facts).
                if on_writes is None:
                    on_writes = facts.grad_on_writes
                if on_writes is facts or scope_hit(root, [], on_writes._on_nodes):
                    return True
            functions = _direct_functions(root)  # the walk stopped at the hit
        todo.extend(functions)
    return False


def _leaf_written_with_grad(facts: GateFacts) -> bool:
    """See GateFacts.leaf_written_with_grad. Each condition mirrors
    rules/mem401_in_place_on_leaf_requiring_grad.py, whose ``_check`` takes a
    bare name (``n += ...``, ``n[i] = ...``, ``n.add_(...)``) for a leaf when:

    - ``_parameter_loop``: a ``for`` around the write binds it over
      parameters or a bare name (here any such ``for`` around it, in any
      function: _may_iterate_parameters);
    - ``_leaves[-1]``: the function's own bindings say so at that point, in
      the order the rule visits them (``visit_Assign`` binds before the
      value's calls are checked): a Name target given a value that may
      create a leaf (leaves.creates_leaf: what GateFacts._assign counts), a
      ``n.requires_grad = True`` or a ``n.requires_grad_()`` statement set it;
      any other value, ``requires_grad =`` or ``requires_grad_(...)`` drop it;
    - ``leaves.module_leaf``: in a function whose ``_leaves`` never heard of
      the name, a binding outside it creates a leaf (here: some Assign,
      annotated assignment or ``:=`` anywhere in the file may).

    and ``mode_at`` may find grad ENABLED there: the write is one
    grad_on_writes counts."""
    on_writes = facts.grad_on_writes
    # grad_on_writes answers the file's own facts where it cannot follow the
    # mode: then every write may run with grad on.
    every = on_writes is facts
    on = on_writes._on_nodes
    if not on and not every:
        return False
    aliases = facts._aliases
    # ``for p in params`` binds leaves only over a list leaves.leaf_list
    # proves: every value of ``params`` a display of leaves, each made by
    # leaves.creates_leaf (``x.requires_grad_()``, ``nn.Parameter(...)``, a
    # torch factory with ``requires_grad=True``), directly, through a
    # function's returns or the lists callers pass. No such call: no list
    # (``requires_grad_(False)``, ``Parameter(..., requires_grad=False)``
    # make none: _creates_leaf).
    leaf_lists = (bool(facts.called & {"requires_grad_", "Parameter"}) or "requires_grad" in facts.keywords) and any(
        _creates_leaf(call, aliases) for call in facts._calls
    )
    outer: set[str] = set()  # names some binding may give a leaf (module_leaf's values)
    # Every ``=``, ``: T =`` and ``:=`` with a value, as the main walk kept them.
    bindings = [(t, node.value) for node in facts._assigns for t in node.targets]
    for target, value in bindings + facts._bindings:
        if type(value) is ast.Call and _creates_leaf(value, aliases):  # type: ignore[arg-type]
            outer |= _bare_names(target)
    loops: list[set[str]] = []
    scopes: list[dict[str, bool]] = [{}]
    in_function: list[bool] = [False]
    # Names a Name target of the function already bound: local there, so not
    # module_leaf's (loops.local_names also counts later bindings: fewer here).
    local: list[set[str]] = [set()]

    # In iter_child_nodes' order (the rule's), contexts and operators left out.
    children = ast_fields.children

    def leaf(name: str) -> bool:
        if any(name in names for names in loops):
            return True
        own = scopes[-1]
        if own.get(name):
            return True
        return in_function[-1] and name not in own and name not in local[-1] and name in outer

    def target_name(target: ast.AST) -> str | None:
        if type(target) is ast.Subscript:
            target = target.value  # type: ignore[attr-defined]
        return target.id if type(target) is ast.Name else None  # type: ignore[attr-defined]

    def walk(node: ast.AST) -> bool:
        kind = type(node)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            scopes.append({})
            in_function.append(True)
            local.append(set())
            try:
                for child in children(node):
                    if walk(child):
                        return True
                return False
            finally:
                scopes.pop()
                in_function.pop()
                local.pop()
        own = scopes[-1]
        if kind is ast.Assign:
            for t in node.targets:  # type: ignore[attr-defined]
                tk = type(t)
                if tk is ast.Subscript:
                    name = target_name(t)
                    if name is not None and leaf(name) and (every or id(node) in on):
                        return True
                elif tk is ast.Name:
                    local[-1].add(t.id)  # type: ignore[attr-defined]
                    value = node.value  # type: ignore[attr-defined]
                    if type(value) is ast.Call and _creates_leaf(value, aliases):
                        own[t.id] = True  # type: ignore[attr-defined]
                    else:
                        own.pop(t.id, None)  # type: ignore[attr-defined]
                elif tk is ast.Attribute and t.attr == "requires_grad" and type(t.value) is ast.Name:  # type: ignore[attr-defined]
                    value = node.value  # type: ignore[attr-defined]
                    if type(value) is ast.Constant and value.value is True:  # type: ignore[attr-defined]
                        own[t.value.id] = True  # type: ignore[attr-defined]
                    else:
                        own.pop(t.value.id, None)  # type: ignore[attr-defined]
        elif kind is ast.AugAssign:
            name = target_name(node.target)  # type: ignore[attr-defined]
            if name is not None and leaf(name) and (every or id(node) in on):
                return True
        elif kind is ast.Expr and type(node.value) is ast.Call:  # type: ignore[attr-defined]
            call = node.value  # type: ignore[attr-defined]
            func = call.func
            if type(func) is ast.Attribute and func.attr == "requires_grad_" and type(func.value) is ast.Name:
                args = call.args
                if not args or (type(args[0]) is ast.Constant and args[0].value is True):
                    own[func.value.id] = True  # set when the rule visits the call, below: same order
                else:
                    own.pop(func.value.id, None)
        elif kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            if type(func) is ast.Attribute and func.attr != "requires_grad_" and is_inplace_method(func.attr):
                if type(func.value) is ast.Name and leaf(func.value.id) and (every or id(node) in on):
                    return True
        pushed = kind in (ast.For, ast.AsyncFor) and _may_iterate_parameters(node.iter, leaf_lists)  # type: ignore[attr-defined]
        if pushed:
            loops.append(_bare_names(node.target))  # type: ignore[attr-defined]
        try:
            for child in children(node):
                if walk(child):
                    return True
            return False
        finally:
            if pushed:
                loops.pop()

    # walk calls itself through its closure cell: a reference cycle that only
    # the cyclic collector would free. Emptying the cell on the way out breaks it.
    try:
        return walk(facts._tree)
    finally:
        walk = None  # type: ignore[assignment]


def _creates_leaf(value: ast.Call, aliases: dict[str, str]) -> bool:
    """What GateFacts._assign counts as a leaf (a superset of
    leaves.creates_leaf), less what creates_leaf surely refuses: a literal
    ``requires_grad=False`` (``nn.Parameter``, the factories) or
    ``requires_grad_(False)``."""
    for kw in value.keywords:
        if kw.arg == "requires_grad" and type(kw.value) is ast.Constant and kw.value.value is False:  # type: ignore[attr-defined]
            return False
    last = ast_callee(value.func, aliases)
    if last == "requires_grad_" and value.args:
        first = value.args[0]
        return not (type(first) is ast.Constant and first.value is False)  # type: ignore[attr-defined]
    return last in _LEAF_MARKS or any(kw.arg == "requires_grad" for kw in value.keywords)


def _direct_functions(root: ast.AST) -> list[ast.AST]:
    """The functions defined in ``root``'s scope (not inside them)."""
    out = []
    stack = ast_fields.children(root)
    children = ast_fields.children
    while stack:
        node = stack.pop()
        if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef):
            out.append(node)
        else:
            stack += children(node)
    return out


def _training_scope(root: ast.AST, called: set[str], has_forward: bool, aliases: dict[str, str]) -> bool:
    """MEM402's ``_in_training_code`` may hold for the scope ``root``."""
    if type(root) is not ast.Module:
        name = root.name  # type: ignore[attr-defined]
        if name == "forward" or (has_forward and name in called):
            return True
    stack = ast_fields.children(root)
    children = ast_fields.children
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            continue
        if kind is ast.Attribute and node.attr in _BACKWARD:  # type: ignore[attr-defined]
            return True
        if kind is ast.Name and aliases.get(node.id, node.id) in _BACKWARD:  # type: ignore[attr-defined,operator]
            return True
        stack += children(node)
    return False


# grad_mode.context_mode: what a ``with`` item or decorator may turn grad on
# with (``inference_mode(False)`` too), and what surely turns it off.
_GRAD_ON = frozenset({"enable_grad", "set_grad_enabled"})
_GRAD_OFF_CONTEXTS = frozenset({"no_grad", "inference_mode"})


def _grad_on_writes(facts: GateFacts) -> GateFacts:
    """See GateFacts.grad_on_writes. The walk keeps, per node, whether grad is
    surely off there; a write where it is not feeds a fresh GateFacts. Where
    the mode may come from somewhere this walk does not follow (a bare
    ``set_grad_enabled`` statement, ``stack.enter_context``), every write
    counts."""
    if _mode_set_by_statements(facts):
        return facts
    qualified = _import_table(facts)
    aliases = facts._aliases
    out = GateFacts(ast.Module(body=[], type_ignores=[]))
    heads: set[str] = set()  # the names each "off" was read through
    autograd_methods = _autograd_function_methods(facts, qualified, heads)
    rebound: set[str] = set()  # names.ImportTable drops an import rebound anywhere
    # The writes grad may be on at, each with the function whose entry mode
    # decides it (None: set inside its function, or at module level).
    writes: list[tuple[ast.AST, ast.AST | None]] = []
    off_called: set[str] = set()  # ``f`` of a bare ``f(...)`` call where grad is surely off
    Name, Load, table = ast.Name, ast.Load, ast_fields.CHILDREN
    # (node, surely off, the function whose entry mode holds there)
    stack: list[tuple[ast.AST, bool, ast.AST | None]] = [(facts._tree, False, None)]
    push, pop = stack.append, stack.pop
    while stack:
        node, off, entry = pop()
        kind = type(node)
        if kind is Name:
            if type(node.ctx) is not Load:  # type: ignore[attr-defined]
                rebound.add(node.id)  # type: ignore[attr-defined]
            continue
        if kind is ast.arg:
            rebound.add(node.arg)  # type: ignore[attr-defined]
        elif kind is ast.ExceptHandler and node.name:  # type: ignore[attr-defined]
            rebound.add(node.name)  # type: ignore[attr-defined]
        if kind is ast.With or kind is ast.AsyncWith:
            items = [item.context_expr for item in node.items]  # type: ignore[attr-defined]
            for item in node.items:  # type: ignore[attr-defined]
                push((item, off, entry))
            modes = [_context(item, qualified, aliases, heads) for item in items]
            inner = False if "on" in modes else True if "off" in modes else off
            # grad_mode._local: a ``with`` may set the mode (a helper's too),
            # so the function's entry no longer decides below it.
            for stmt in node.body:  # type: ignore[attr-defined]
                push((stmt, inner, None))
            continue
        body_entry = entry
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            # grad_mode.entry_mode: a decorator's mode, else the call sites'
            # (see _entered_without_grad).
            decorators = node.decorator_list  # type: ignore[attr-defined]
            modes = [_context(d, qualified, aliases, heads) for d in decorators]
            off = "off" in modes and "on" not in modes
            if id(node) in autograd_methods and not any(_may_set_mode(d, aliases) for d in decorators):
                off = True  # grad_mode's _AUTOGRAD_FUNCTION_METHODS: DISABLED or UNKNOWN, never ENABLED
            body_entry = None if decorators else node
        elif off:
            if kind is ast.Call and type(node.func) is Name:  # type: ignore[attr-defined]
                off_called.add(node.func.id)  # type: ignore[attr-defined]
        elif kind is ast.Call or kind is ast.Assign or kind is ast.AugAssign:
            writes.append((node, entry))
        # Contexts, operators and aliases say nothing here (parse/ast_fields).
        children = table.get(kind)
        if children is None:
            if kind is list:  # a field of a class whose signature was not read
                stack.extend((item, off, entry) for item in node)  # type: ignore[attr-defined]
            continue  # None, or a scalar
        for field in children.singles:
            value = getattr(node, field)
            if value is not None:
                push((value, off, entry))
        for field in children.lists:
            inside = body_entry if field == "body" else entry
            for item in getattr(node, field):
                if item is not None:
                    push((item, off, inside))
    if heads & (rebound | facts.def_names | facts._classes):
        return facts  # ``torch`` rebound somewhere: context_mode may not resolve it
    entered_off = _entered_without_grad(facts, off_called)
    for node, entry in writes:
        if entry is not None and id(entry) in entered_off:
            continue
        out._on_nodes.add(id(node))
        kind = type(node)
        if kind is ast.Call:
            out._call(node, aliases)  # type: ignore[arg-type]
        elif kind is ast.Assign:
            out._assign(node, aliases)  # type: ignore[arg-type]
        else:
            out._written_in_place(node.target)  # type: ignore[attr-defined]
    return out


# grad_mode._AUTOGRAD_FUNCTION_METHODS: run DISABLED (forward, setup_context)
# or UNKNOWN (backward, jvp, vjp), never ENABLED, unless a decorator sets the mode.
_AUTOGRAD_METHODS = frozenset({"forward", "setup_context", "backward", "jvp", "vjp"})


def _autograd_function_methods(facts: GateFacts, qualified: dict[str, set[str]], heads: set[str]) -> set[int]:
    """The ids of the defs grad_mode takes for a custom autograd Function's
    methods: named as in _AUTOGRAD_METHODS, right in the body of a class with
    a base the imports make ``torch.autograd.<...>Function``
    (``_is_autograd_function``). The head each base was read through goes to
    ``heads``: a rebinding anywhere makes names.ImportTable drop it."""
    found: set[int] = set()
    for cls in facts._class_nodes:
        if not any(_autograd_function_base(b, qualified, heads) for b in cls.bases):
            continue
        for stmt in cls.body:
            if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef) and stmt.name in _AUTOGRAD_METHODS:  # type: ignore[attr-defined]
                found.add(id(stmt))
    return found


def _autograd_function_base(base: ast.AST, qualified: dict[str, set[str]], heads: set[str]) -> bool:
    dotted = ast_dotted(base)
    if dotted is None:
        return False
    head, _, rest = dotted.partition(".")
    bound = qualified.get(head)
    if bound is None or len(bound) != 1:
        return False  # not imported, or ambiguous (names.ImportTable drops it)
    (q,) = bound
    q = f"{q}.{rest}" if rest else q
    if q.startswith("torch.autograd.") and q.endswith("Function"):
        heads.add(head)
        return True
    return False


def _may_set_mode(decorator: ast.AST, aliases: dict[str, str]) -> bool:
    """grad_mode.context_mode may find a mode in this decorator: a callee
    named as a grad-mode context (decorators' modes come before the
    autograd Function's)."""
    func = decorator.func if type(decorator) is ast.Call else decorator  # type: ignore[attr-defined]
    return ast_callee(func, aliases) in (_GRAD_ON | _GRAD_OFF_CONTEXTS)


def _mode_set_by_statements(facts: GateFacts) -> bool:
    """A mode may be set by a statement, not a ``with`` (grad_mode's
    ``_bare``: a torch callee whose name ends in ``set_grad_enabled``,
    ``torch._C._set_grad_enabled`` too; ``_entered_table``:
    ``stack.enter_context(...)``): the walks here do not follow those."""
    return "enter_context" in facts.called or any(c.endswith("set_grad_enabled") for c in facts.called)


def _entered_without_grad(facts: GateFacts, off_called: set[str]) -> set[int]:
    """The ids of the defs grad_mode.entry_mode can never find ENABLED:
    entry_mode joins the modes of the calls callgraph resolves to a def (an
    escape adds ENABLED), so one call surely DISABLED makes it DISABLED or
    UNKNOWN. Only calls whose resolution is sure count: a bare ``f(...)``
    where the file holds one def named ``f``, at module level (callgraph's
    ``_visible`` from any scope finds it and nothing else), undecorated (a
    decorator's mode would come first)."""
    if not off_called:
        return set()
    count: dict[str, int] = {}
    for fn in facts._functions:
        name = fn.name  # type: ignore[attr-defined]
        count[name] = count.get(name, 0) + 1
    found: set[int] = set()
    for stmt in _module_level_statements(facts._tree):
        kind = type(stmt)
        if (kind is ast.FunctionDef or kind is ast.AsyncFunctionDef) and not stmt.decorator_list:  # type: ignore[attr-defined]
            name = stmt.name  # type: ignore[attr-defined]
            if name in off_called and count.get(name) == 1:
                found.add(id(stmt))
    return found


def _module_level_statements(tree: ast.AST) -> list[ast.AST]:
    """The statements of the module's own scope: its body, and the blocks of
    its ``if``/``try``/``with``/loops (no def or class body)."""
    out: list[ast.AST] = []
    stack = list(tree.body)  # type: ignore[attr-defined]
    while stack:
        stmt = stack.pop()
        out.append(stmt)
        kind = type(stmt)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.ClassDef:
            continue
        for field in ast_fields.STATEMENT_BLOCKS:
            block = getattr(stmt, field, None)
            if block:
                stack.extend(block)  # a handler or a case: its body is walked next
    return out


# Functions grad_mode.entry_mode may find off whatever calls them: Lightning's
# evaluation hooks, a transformers Pipeline's ``_forward``, an
# autograd.Function's ``forward``/``setup_context``.
_OFF_ON_ENTRY = LIGHTNING_NO_GRAD_HOOKS | {"_forward"}
_AUTOGRAD_FUNCTION_OFF = frozenset({"forward", "setup_context"})
_MAY_TURN_OFF = _GRAD_OFF_CONTEXTS | {"set_grad_enabled"}


class _Function:
    """What _loop_may_run_without_grad keeps of a function."""

    __slots__ = ("name", "key", "loops", "statements", "calls", "off_on_entry")

    def __init__(self, name: str, key: int = 0) -> None:
        self.name = name
        self.key = key  # the id of its def, 0 for the module's own statements
        self.loops: list[ast.AST] = []  # its loops (not its nested functions')
        self.statements: list[ast.AST] = []  # its statements (not its nested functions'), itself first
        self.calls: set[str] | None = None  # last names of what it calls, read on first need
        self.off_on_entry = False  # decorated so, or a framework's hook: this function, not its namesakes


def _loop_may_run_without_grad(facts: GateFacts, collect: bool) -> set[int] | None:
    """See GateFacts.loop_may_run_without_grad: the scopes (a def's id, 0 for
    the module) where loops.mode_before may end for a loop that may run
    without grad, holding a model call; None where any may (modes set by
    statements). With ``collect`` every such loop's scope and the callers of
    its function by name (mode_before goes to the call sites callgraph
    resolves, ``f()``, ``self.f()``, ``cls.f()``, every def of the name),
    transitively; else only whether one exists (a set of one scope, or none).

    Over-approximates grad_mode: a ``with`` item may turn grad off when its
    last name is a grad context, when it is a bare name (bound elsewhere) or
    a call of a function of this file (a context manager of the project's
    own); a function may start with grad off when it is decorated so, is a
    framework hook, or a call of its name runs where grad may be off.

    Walks statements only (most nodes of a file are expressions): loops,
    ``with`` blocks and functions are statements. Calls are read from the
    expressions of a statement only where grad may be off there, and a
    function's calls only when the search for functions entered with grad
    off reaches it.

    MEM202's ``_check`` needs ``info.model_calls`` (objects.is_model_call
    in the loop's span) and ``_grad_off``: the loop DISABLED, or every model
    call of it; so a loop counts only when it holds a call _ModelReach says
    may be a model call, and a ``with`` that may turn grad off inside a loop
    only when it holds one (a model call DISABLED in a loop that is not
    lies under such a ``with``)."""
    if _mode_set_by_statements(facts):
        return None  # modes set by statements, not followed here
    aliases, defs = facts._aliases, facts.def_names
    found: set[int] = set()
    seeds: set[str] = set()  # names called where grad may be off
    for call in facts._calls:
        func = call.func
        if type(func) is ast.Call and _last_name(func, aliases) in _MAY_TURN_OFF:
            # ``predict = torch.inference_mode()(_predict)``
            seeds.update(a.id for a in call.args if type(a) is ast.Name)
    functions: list[_Function] = []
    autograd_methods: set[int] = set()  # an autograd.Function's forward/setup_context
    top = _Function("")
    stack: list[tuple[ast.AST, bool, bool, _Function]] = [
        (stmt, False, False, top)
        for stmt in getattr(facts._tree, "body", ())  # type: ignore[attr-defined]
    ]
    push, pop = stack.append, stack.pop
    while stack:
        node, off, in_loop, fn = pop()
        kind = type(node)
        if kind is ast.For or kind is ast.AsyncFor or kind is ast.While:
            if off and fn.key not in found and _calls_model(facts, node):
                found.add(fn.key)
                if not collect:
                    return found
            in_loop = True
            fn.loops.append(node)
        elif kind is ast.With or kind is ast.AsyncWith:
            if any(_may_turn_off(i.context_expr, aliases, defs) for i in node.items):  # type: ignore[attr-defined]
                # ``for x in loader: with torch.no_grad(): model(x)``
                if in_loop and fn.key not in found and _calls_model(facts, node):
                    found.add(fn.key)
                    if not collect:
                        return found
                fn.statements.append(node)
                if off:
                    seeds |= _names_called(node, aliases)  # its items
                for stmt in node.body:  # type: ignore[attr-defined]
                    push((stmt, True, in_loop, fn))
                continue
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            # grad_mode stops at a function: its body starts in its entry mode
            # (its decorators and defaults are read as its own).
            name = node.name  # type: ignore[attr-defined]
            fn = _Function(name, id(node))
            functions.append(fn)
            fn.off_on_entry = (
                name in _OFF_ON_ENTRY
                or id(node) in autograd_methods
                or any(_may_turn_off(d, aliases, None) for d in node.decorator_list)  # type: ignore[attr-defined]
            )
            off = False
        elif kind is ast.ClassDef:
            if any((ast_dotted(b) or "").endswith("Function") for b in node.bases):  # type: ignore[attr-defined]
                autograd_methods.update(
                    id(n)
                    for n in ast_fields.nodes(node)
                    if type(n) in (ast.FunctionDef, ast.AsyncFunctionDef) and n.name in _AUTOGRAD_FUNCTION_OFF  # type: ignore[attr-defined]
                )
        fn.statements.append(node)
        if off:
            seeds |= _names_called(node, aliases)
        for field in _STATEMENT_BLOCKS:
            block = getattr(node, field, None)
            if block:
                for stmt in block:
                    push((stmt, off, in_loop, fn))
    if any(f.loops for f in functions):
        # grad_mode.entry_mode: off when every call site is; calls followed by
        # the name written (callgraph resolves ``f()`` and ``self.f()`` by name).
        maybe_off = set(seeds)
        grew = True
        while grew:
            grew = False
            for f in functions:
                if f.off_on_entry or f.name in maybe_off:
                    new = (_calls_of(f, aliases) & defs) - maybe_off
                    if new:
                        maybe_off |= new
                        grew = True
        for f in functions:
            if (
                f.key not in found
                and (f.off_on_entry or f.name in maybe_off)
                and any(_calls_model(facts, loop) for loop in f.loops)
            ):
                found.add(f.key)
                if not collect:
                    return found
    if not collect or not found:
        return found
    # mode_before's callers, by the name written, transitively
    names = {f.name for f in functions if f.key in found}
    grew = True
    while grew:
        grew = False
        for f in (top, *functions):
            if f.key not in found and _calls_of(f, aliases) & names:
                found.add(f.key)
                if f is not top:
                    names.add(f.name)
                grew = True
    return found


def _calls_of(f: _Function, aliases: dict[str, str]) -> set[str]:
    """The names ``f``'s own statements call with (_names_called), read once."""
    if f.calls is None:
        f.calls = set()
        for stmt in f.statements:
            f.calls |= _names_called(stmt, aliases)
    return f.calls


def _read_for_a_loop_without_grad(facts: GateFacts) -> set[int] | None:
    """GateFacts.module_built_for_a_loop_without_grad's scopes: where
    loops.mode_before may end for a loop that may run without grad (None:
    anywhere)."""
    if facts.train_call:  # loop_may_run_without_grad stopped at the first scope
        return _loop_may_run_without_grad(facts, collect=True)
    return facts._off_loop_scopes


_STATEMENT_BLOCKS = ast_fields.STATEMENT_BLOCKS


def _names_called(stmt: ast.AST, aliases: dict[str, str]) -> set[str]:
    """The names the calls in ``stmt``'s own expressions (not its blocks)
    are written with: the callee's last name and a bare name (callgraph
    resolves ``f()`` and ``self.f()`` by them)."""
    names: set[str] = set()
    for node in ast_fields.expression_nodes(stmt):
        if type(node) is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            last = ast_callee(func, aliases)
            if last is not None:
                names.add(last)
            if type(func) is ast.Name:
                names.add(func.id)
    return names


def _may_turn_off(expr: ast.AST, aliases: dict[str, str], defs: set[str] | None) -> bool:
    """A ``with`` item (``defs``: the file's function names) or a decorator
    (``defs`` None: grad_mode reads decorators by context_mode alone) that
    grad_mode may find DISABLED (see _loop_may_run_without_grad)."""
    call = expr if type(expr) is ast.Call else None
    func = call.func if call is not None else expr  # type: ignore[attr-defined]
    if type(func) is ast.Name:
        if call is None and defs is not None:
            return True  # ``with ctx:`` after ``ctx = torch.no_grad()``
        last = aliases.get(func.id, func.id)
    elif type(func) is ast.Attribute:
        last = func.attr
    else:
        return False
    return last in _MAY_TURN_OFF or (call is not None and defs is not None and last in defs)


# -- MEM201: an evaluation that may run with grad on --------------------------

# objects._BUILTINS: names kind_of never guesses a kind for.
_NO_GUESS = frozenset({"self", "cls", "super", "print", "len", "range", "None", "True", "False"})
_EVAL_SITES = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.GeneratorExp)  # what MEM201 visits


class _EvalSite:
    """A loop, comprehension or scope MEM201 may report (see _evaluates_with_grad)."""

    __slots__ = ("off", "via", "loop", "mode_scope", "callees", "self_attrs", "cls_attrs", "calls_self")

    def __init__(self, off: bool, via: str | None, loop: bool, mode_scope: int | None = None) -> None:
        self.off = off  # grad surely off or set around it (mode_at not ENABLED, or local_mode set)
        # Its only evidence: its iterable names a parameter of the function ``via``,
        # which a call of that name must fill with evaluation data (gate_loops.eval_argument).
        self.via = via
        # A loop (loops.LoopInfo.calls_model follows the functions it calls),
        # not a comprehension (comprehension_is_eval reads its own model calls only).
        self.loop = loop
        # Its only evidence: an eval-mode call in the scope keyed so (the id of
        # its innermost def, 0 for the module): loops' ``mode_calls`` of that scope.
        self.mode_scope = mode_scope
        self.callees: set[str] = set()  # bare names it calls
        self.self_attrs: set[str] = set()  # ``x`` of a ``self.x(...)`` it calls
        self.cls_attrs: set[str] = set()  # ``x`` of a ``cls.x(...)``
        self.calls_self = False  # ``x.module(...)``, ``x.forward(...)``

    def sure(self) -> bool:
        """Its evidence holds whatever the rest of the file says, and grad may be on."""
        return not self.off and self.via is None and self.mode_scope is None


def _evaluates_with_grad(facts: GateFacts) -> bool:
    """See GateFacts.evaluates_with_grad. Without training or ``volatile=``,
    MEM201 reports only a loop (``_check``, role "eval", or
    ``_callers_evaluate``), a comprehension (``comprehension_is_eval``), a
    function (``visit_FunctionDef``) or a statement of a scope
    (``visit_Module``) with evidence of evaluation: its function named for
    evaluation, its iterable naming evaluation data or
    (``_iterates_eval_argument``) a parameter of its function; or an
    eval-mode call (objects.mode_call "eval") in its own scope (loops'
    ``mode_calls`` of the innermost def, the module's outside any:
    ``_eval_evidence``'s and comprehension_is_eval's last mode call,
    visit_FunctionDef's and visit_Module's ``mode_calls``); or, for
    ``_callers_evaluate`` (whose ``mode_before`` follows callers and
    callees), a loop of a function called in this file whose iterable names
    data (LoopInfo.is_batch_loop without a role) in a file with an
    eval-mode call. A function or a scope's statement is read as a site
    that spans its own scope (a nested def is a scope of its own).

    It needs grad_mode.mode_at ENABLED with no local_mode there, so nothing
    in its own function surely sets a mode around it (``with
    torch.no_grad():``) and no decorator turns its function off
    (``@torch.no_grad()`` on transformers' ``generate``; entry_mode, for
    visit_FunctionDef). And it needs a call that may build a graph in its
    span (``_builds_graph``, ``comprehension_is_eval``'s and the scopes'
    model calls): a callee objects.kind_of may find a module, or, in a loop,
    callgraph may resolve to a function of this file. That is
    ``self.x(...)``, ``cls.x(...)``, ``x.module(...)``, ``x.forward(...)``,
    or a bare name that is bound in this file, read as ``name.attr``
    (``_parameters_read``, ``_used_as_module``), or named like a model
    (guess_kind_from_name). ``isinstance``, ``len``, ``ValueError``,
    ``x.items()`` never are; nor is a name bound only by a ``def``, a
    ``class`` or an import, a ``self.x`` never assigned nor read as
    ``self.x.attr`` and not named like a model, or a ``cls.x`` (see
    _ModelReach): a loop's call of one counts when the function of the file
    it may resolve to may run a model in turn (loops.LoopInfo.calls_model),
    a comprehension's or a scope's never."""
    if "volatile" in facts.keywords:
        return True
    if facts.trains and _trains_under_a_flag_passed_false(facts):
        return True
    modes = facts.eval_call  # some eval-mode call: sites whose evidence is one in their scope
    qualified = _import_table(facts)
    aliases = facts._aliases
    called = facts.called | facts._aliases.keys() if modes else set()  # callgraph's call_sites, by name, wide
    heads: set[str] = set()  # the names each "off" was read through
    rebound: set[str] = set()  # for _ModelReach, read as _ModelReach.of reads them
    bases: set[str] = set()
    self_bound: set[str] = set()
    sites: list[_EvalSite] = []
    eval_scopes: set[int] = set()  # the scopes holding an eval-mode call (see _EvalSite.mode_scope)
    methods: set[int] = set()  # functions right in a class body: ``self`` is never bound by an argument
    AST, Name, Attribute, Call, Load = ast.AST, ast.Name, ast.Attribute, ast.Call, ast.Load
    table = ast_fields.CHILDREN
    # (node, its function's name, its parameters, grad surely set here, the sites around it, its scope)
    top: tuple[_EvalSite, ...] = ()
    if modes:  # visit_Module's statements of the module's own body
        sites.append(_EvalSite(False, None, False, 0))
        top = (sites[-1],)
    stack: list[tuple[ast.AST, str, frozenset, bool, tuple[_EvalSite, ...], int]] = [
        (facts._tree, "", frozenset(), False, top, 0)
    ]
    push, pop = stack.append, stack.pop
    while stack:
        node, fn_name, params, off, open_sites, scope = pop()
        kind = type(node)
        if kind is Name:
            if type(node.ctx) is not Load:  # type: ignore[attr-defined]
                rebound.add(node.id)  # type: ignore[attr-defined]
            continue
        if kind is Attribute:
            _attribute_binding(node, bases, self_bound)
        elif kind is Call:
            func = node.func  # type: ignore[attr-defined]
            if modes and eval_mode_call(node, aliases):  # type: ignore[arg-type]
                eval_scopes.add(scope)
            if open_sites:
                if type(func) is Name:
                    for site in open_sites:
                        site.callees.add(func.id)
                elif type(func) is Attribute:
                    if func.attr in ("forward", "module"):
                        if any(site.sure() for site in open_sites):
                            return True  # a site may build a graph whatever the imports say
                        for site in open_sites:
                            site.calls_self = True
                    elif type(func.value) is Name and func.value.id in ("self", "cls"):
                        if (
                            func.value.id == "self"
                            and guess_kind_from_name(func.attr) is Kind.MODULE
                            and any(site.sure() for site in open_sites)
                        ):
                            return True  # ``self.model(x)``: a model call whatever the file binds
                        for site in open_sites:
                            (site.self_attrs if func.value.id == "self" else site.cls_attrs).add(func.attr)
        elif kind in _EVAL_SITES:
            if kind is ast.While:
                tokens, idents = ast_tokens(node.test)  # type: ignore[attr-defined]
            elif kind is ast.For or kind is ast.AsyncFor:
                tokens, idents = ast_tokens(node.iter)  # type: ignore[attr-defined]
            else:
                tokens, idents = set(), set()
                for gen in node.generators:  # type: ignore[attr-defined]
                    more, _ = ast_tokens(gen.iter)
                    tokens |= more
            loop = kind is ast.For or kind is ast.AsyncFor or kind is ast.While
            if name_tokens(fn_name) & EVAL_FUNCTION_TOKENS or tokens & EVAL_DATA_TOKENS:
                site = _EvalSite(off, None, loop)
            elif modes and loop and scope and tokens & DATA_TOKENS and fn_name in called:
                site = _EvalSite(off, None, loop)  # _callers_evaluate
            elif idents & params:
                site = _EvalSite(off, fn_name, loop)
                if modes:  # or the eval role from an eval-mode call in its scope
                    sites.append(_EvalSite(off, None, loop, scope))
                    open_sites = (*open_sites, sites[-1])
            elif modes:
                site = _EvalSite(off, None, loop, scope)
            else:
                site = None
            if site is not None:
                sites.append(site)
                open_sites = (*open_sites, site)
        elif kind is ast.With or kind is ast.AsyncWith:
            modes_set = [_context(i.context_expr, qualified, aliases, heads) for i in node.items]  # type: ignore[attr-defined]
            for item in node.items:  # type: ignore[attr-defined]
                push((item, fn_name, params, off, open_sites, scope))
            inner = off or "off" in modes_set  # a mode set around the body: local_mode is not None
            for stmt in node.body:  # type: ignore[attr-defined]
                push((stmt, fn_name, params, inner, open_sites, scope))
            continue
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            # grad_mode stops at a function: its decorators, defaults and body
            # run in its entry mode, which a decorator sets first.
            decorators = [_decorator_context(d, qualified, aliases, heads) for d in node.decorator_list]  # type: ignore[attr-defined]
            off = "off" in decorators and "on" not in decorators
            fn_name = node.name  # type: ignore[attr-defined]
            scope = id(node)
            args = node.args  # type: ignore[attr-defined]
            positional = [a.arg for a in (*args.posonlyargs, *args.args)]
            names = {*positional, *(a.arg for a in args.kwonlyargs)}
            names.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
            if id(node) in methods and positional and positional[0] in ("self", "cls"):
                names.discard(positional[0])  # callgraph resolves a method only as ``self.m(...)``
            params = frozenset(names)
            if modes:  # visit_FunctionDef, and visit_Module's statements of its body
                # The model calls of a scope are its own (loops' scope facts),
                # a nested def's are not the enclosing scope's.
                open_sites = (*(s for s in open_sites if s.mode_scope is None), _EvalSite(off, None, False, scope))
                sites.append(open_sites[-1])
        elif kind is ast.ClassDef:
            methods.update(id(s) for s in node.body if type(s) in (ast.FunctionDef, ast.AsyncFunctionDef))  # type: ignore[attr-defined]
        elif kind in _BINDERS:
            _bind_names(node, kind, rebound)
        children = table.get(kind)
        if children is None or children.generic:  # a class whose signature was not read
            for field in node._fields:
                value = getattr(node, field, None)
                if type(value) is list:
                    for item in value:
                        if isinstance(item, AST):
                            push((item, fn_name, params, off, open_sites, scope))
                elif isinstance(value, AST):
                    push((value, fn_name, params, off, open_sites, scope))
            continue
        for field in children.singles:
            value = getattr(node, field)
            if value is not None:
                push((value, fn_name, params, off, open_sites, scope))
        for field in children.lists:
            for item in getattr(node, field):
                if item is not None:  # a Dict's keys may hold None
                    push((item, fn_name, params, off, open_sites, scope))
    if not sites:
        return False
    if facts._model_reach is None:
        facts._model_reach = _ModelReach(facts, rebound, bases, self_bound)
    reach = facts._model_reach
    # else context_mode may not resolve ``torch``
    trusted_off = not heads & (reach.rebound | facts.def_names | facts._classes)
    eval_arguments: dict[str, bool] = {}
    calls_by_name: dict[str, list[ast.Call]] = {}
    for site in sites:
        if site.off and trusted_off:
            continue
        if site.mode_scope is not None and site.mode_scope not in eval_scopes:
            continue
        if not site.calls_self and not reach.site_may_run_model(site):
            continue
        if site.via is None:
            return True
        if site.via not in eval_arguments:
            eval_arguments[site.via] = eval_argument(facts, site.via, calls_by_name)
        if eval_arguments[site.via]:
            return True
    return False


def _calls_model(facts: GateFacts, root: ast.AST) -> bool:
    """objects._is_model_call may hold for a call in ``root`` (MEM202's
    ``info.model_calls``: no call followed into a function): ``.forward``
    stripped, a callee _ModelReach may find MODULE. The file's bindings are
    walked only for a call the names alone do not decide."""
    pending: list[tuple[bool, str]] = []  # (a ``self.x``, its name)
    for node in ast_fields.nodes(root):
        if type(node) is not ast.Call:
            continue
        func = node.func  # type: ignore[attr-defined]
        if type(func) is ast.Attribute and func.attr == "forward":
            func = func.value
        if type(func) is ast.Name:
            if func.id not in _NO_GUESS and guess_kind_from_name(func.id) is Kind.MODULE:
                return True
            pending.append((False, func.id))
        elif type(func) is ast.Attribute:
            if func.attr == "module":
                return True  # ``model.module``: its object may be a module
            value = func.value
            if type(value) is ast.Name and value.id == "self":
                if facts._self_rebound or guess_kind_from_name(func.attr) is Kind.MODULE:
                    return True
                pending.append((True, func.attr))
    if not pending:
        return False
    reach = _ModelReach.of(facts)
    return any(reach.self_attr_may_be_model(n) if is_self else reach.name_may_be_model(n) for is_self, n in pending)


def _attribute_binding(node: ast.AST, bases: set[str], self_bound: set[str]) -> None:
    """``name.attr`` read (objects' ``_parameters_read``), ``self.x``
    assigned or read as ``self.x.attr`` (see _ModelReach)."""
    value = node.value  # type: ignore[attr-defined]
    if type(value) is ast.Name:
        bases.add(value.id)
        if value.id == "self" and type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
            self_bound.add(node.attr)  # type: ignore[attr-defined]
    elif type(value) is ast.Attribute and type(value.value) is ast.Name and value.value.id == "self":  # type: ignore[attr-defined]
        self_bound.add(value.attr)  # type: ignore[attr-defined]  # ``self.x.parameters()``


# The nodes other than a stored ``ast.Name`` that bind a name.
_BINDERS = frozenset(
    {ast.arg, ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.Global, ast.Nonlocal, ast.MatchMapping}
)


def _bind_names(node: ast.AST, kind: type, rebound: set[str]) -> None:
    if kind is ast.arg:
        rebound.add(node.arg)  # type: ignore[attr-defined]
    elif kind is ast.Global or kind is ast.Nonlocal:
        rebound.update(node.names)  # type: ignore[attr-defined]
    else:
        name = node.rest if kind is ast.MatchMapping else node.name  # type: ignore[attr-defined]
        if name:
            rebound.add(name)


class _ModelReach:
    """Whether a call objects.is_model_call may find a module call, or
    callgraph may resolve to a function of this file that may run one
    (loops.calls_model: its scope's model calls, or its resolved callees'
    in turn). What objects.kind_of can find MODULE:

    - a bare ``name`` with a definition key (objects' ``_defs``/``_params``:
      assignments, parameters, loop and ``with`` targets; ``_parameters_read``
      and ``_used_as_module`` need one too): ``bound``, every name the file
      binds other than by ``def``, ``class`` or import (neither objects nor
      callgraph binds a class; an import is LOSS or nothing), with the names
      read as ``name.attr``. Else guess_kind_from_name, as for any name;
    - ``self.x``: its key ``(class, "self.x")`` is MODULE only from a
      ``self.x = ...`` of the file, a ``self.x.parameters()`` read
      (``self_bound``: any ``self.x.attr``), or the guess on ``x``; a file
      that rebinds ``self`` stays wide;
    - ``cls.x`` never (no key; a ``cls.module`` is read with ``.forward``).

    callgraph._lookup_call resolves a bare ``f(...)``, ``self.f(...)`` and
    ``cls.f(...)`` to a def named ``f``: read wide, every def of that name,
    nested defs and lambdas included, with the same test on its calls."""

    def __init__(self, facts: GateFacts, rebound: set[str], bases: set[str], self_bound: set[str]) -> None:
        # What it reads of the facts, not the facts (which hold it: a reference cycle).
        self._self_rebound: bool = facts._self_rebound
        self._def_names: set[str] = facts.def_names
        self._functions: list[ast.AST] = facts._functions
        # Names bound other than by def, class or import (names.ImportTable
        # also drops an import rebound so), names read as ``name.attr``, and
        # the ``x`` of a ``self.x`` assigned or read as ``self.x.attr``.
        self.rebound = rebound
        self._bound = rebound | bases
        self._self_bound = self_bound
        self._by_name: dict[str, list[ast.AST]] | None = None
        self._memo: dict[str, bool] = {}

    @staticmethod
    def of(facts: GateFacts) -> _ModelReach:
        """The file's, built on first use (MEM201, MEM202)."""
        if facts._model_reach is None:
            rebound: set[str] = set()
            bases: set[str] = set()
            self_bound: set[str] = set()
            Name, Attribute, Load = ast.Name, ast.Attribute, ast.Load
            for node in ast_fields.nodes(facts._tree):
                kind = type(node)
                if kind is Name:  # as _evaluates_with_grad's walk reads it
                    if type(node.ctx) is not Load:  # type: ignore[attr-defined]
                        rebound.add(node.id)  # type: ignore[attr-defined]
                elif kind is Attribute:
                    _attribute_binding(node, bases, self_bound)
                elif kind in _BINDERS:
                    _bind_names(node, kind, rebound)
            facts._model_reach = _ModelReach(facts, rebound, bases, self_bound)
        return facts._model_reach

    def name_may_be_model(self, name: str) -> bool:
        return name in self._bound or (name not in _NO_GUESS and guess_kind_from_name(name) is Kind.MODULE)

    def self_attr_may_be_model(self, attr: str) -> bool:
        return self._self_rebound or attr in self._self_bound or guess_kind_from_name(attr) is Kind.MODULE

    def site_may_run_model(self, site: _EvalSite) -> bool:
        """A call in ``site`` may build a graph: run a model, or, in a loop,
        a function of this file that may (``_builds_graph`` needs one, and
        LoopInfo's "eval" role calls_model)."""
        defined = self._def_names
        if any(self.name_may_be_model(n) for n in site.callees) or any(
            self.self_attr_may_be_model(a) for a in site.self_attrs
        ):
            return True
        if not site.loop:
            return False  # comprehension_is_eval reads the model calls in its own span only
        return any(
            n in defined and self.may_run_model(n)
            for names in (site.callees, site.self_attrs, site.cls_attrs)
            for n in names
        )

    def may_run_model(self, name: str) -> bool:
        """A def of this file named ``name`` may run a model, directly or
        through the defs it may call (loops._fn_fact "model"). The whole
        closure is read: _fn_fact's answer, memoized on a cycle in whatever
        order the rule asks, is never more than that."""
        if name in self._memo:
            return self._memo[name]
        if self._by_name is None:
            self._by_name = {}
            for fn in self._functions:
                self._by_name.setdefault(fn.name, []).append(fn)  # type: ignore[attr-defined]
        seen = {name}
        todo = [name]
        while todo:
            for fn in self._by_name.get(todo.pop(), ()):
                found, callees = self._scan(fn)
                if found or any(self._memo.get(c) for c in callees):
                    self._memo[name] = True
                    return True
                for c in callees:
                    if c not in seen and c not in self._memo:
                        seen.add(c)
                        todo.append(c)
        for n in seen:  # each one reaches no more than ``name`` does
            self._memo[n] = False
        return False

    def _scan(self, fn: ast.AST) -> tuple[bool, set[str]]:
        """Whether ``fn`` (nested defs and lambdas included) holds a call
        that may be a model call, and the defs of this file its other calls
        may resolve to."""
        defined = self._def_names
        callees: set[str] = set()
        for node in ast_fields.nodes(fn):
            if type(node) is not ast.Call:
                continue
            func = node.func  # type: ignore[attr-defined]
            if type(func) is ast.Attribute:
                attr = func.attr
                if attr in ("forward", "module"):
                    return True, callees
                value = func.value
                if type(value) is not ast.Name or value.id not in ("self", "cls"):
                    continue
                if value.id == "self" and self.self_attr_may_be_model(attr):
                    return True, callees
                name = attr
            elif type(func) is ast.Name:
                name = func.id
                if self.name_may_be_model(name):
                    return True, callees
            else:
                continue
            if name in defined:
                callees.add(name)
        return False, callees


_TRAINING_CALLS = _BACKWARD | {"step", "grad"}  # objects.is_backward_call, is_optimizer_step, autograd.grad


def _trains_under_a_flag_passed_false(facts: GateFacts) -> bool:
    """MEM201's path that needs training without an eval call or
    ``volatile=`` (_check_shared_loop): loops.training_guards needs a
    function whose own backward or step sits in the body of an ``if p:``,
    ``p`` one of its parameters, and a call that binds a literal ``False`` to
    ``p`` (callgraph.bound_params: ``p=False``, or a positional ``False``).
    Read wide: any call with such an argument, any def, nested ones too."""
    keywords: set[str] = set()
    positional = False
    for call in facts._calls:
        positional = positional or any(type(a) is ast.Constant and a.value is False for a in call.args)
        keywords.update(
            k.arg
            for k in call.keywords
            if k.arg is not None and type(k.value) is ast.Constant and k.value.value is False
        )
    if not positional and not keywords:
        return False
    aliases = facts._aliases
    for fn in facts._functions:
        params = _parameters(fn)
        flags = params if positional else params & keywords
        if not flags:
            continue
        for node in ast_fields.nodes(fn):
            if type(node) is ast.If and type(node.test) is ast.Name and node.test.id in flags:  # type: ignore[attr-defined]
                for inner in node.body:  # type: ignore[attr-defined]
                    for n in ast_fields.nodes(inner):
                        if type(n) is ast.Call and ast_callee(n.func, aliases) in _TRAINING_CALLS:  # type: ignore[attr-defined]
                            return True
    return False


def _decorator_context(
    expr: ast.AST, qualified: dict[str, set[str]], aliases: dict[str, str], heads: set[str]
) -> str | None:
    """_context for a decorator: a bare name sets a mode only when it is one
    of the grad contexts (``@no_grad`` imported from torch), unlike a bare
    ``with ctx:``, bound to anything."""
    if type(expr) is ast.Name and aliases.get(expr.id, expr.id) not in _GRAD_ON | _GRAD_OFF_CONTEXTS:  # type: ignore[attr-defined]
        return None
    return _context(expr, qualified, aliases, heads)


def _context(expr: ast.AST, qualified: dict[str, set[str]], aliases: dict[str, str], heads: set[str]) -> str | None:
    """``"off"`` when grad_mode.context_mode surely finds a ``with`` item or
    decorator DISABLED (a callee that the imports make ``torch.no_grad`` or
    ``torch.inference_mode``, called with nothing or ``True``), ``"on"`` when
    it may find it ENABLED (``enable_grad``, ``set_grad_enabled``,
    ``inference_mode(flag)``, or a name bound elsewhere), else None."""
    call = expr if type(expr) is ast.Call else None
    func = call.func if call is not None else expr  # type: ignore[attr-defined]
    if type(func) is ast.Name and call is None:
        return "on"  # ``with ctx:``: bound to anything
    last = ast_callee(func, aliases)
    if last in _GRAD_ON:
        return "on"
    if last not in _GRAD_OFF_CONTEXTS:
        return None
    args = [*call.args, *(k.value for k in call.keywords)] if call is not None else []
    if args and not (len(args) == 1 and type(args[0]) is ast.Constant and args[0].value is True):  # type: ignore[attr-defined]
        return "on"  # ``inference_mode(False)``, ``inference_mode(mode=flag)``
    dotted = ast_dotted(func)
    if dotted is None:
        return None
    head, _, rest = dotted.partition(".")
    bound = qualified.get(head)
    if bound is None or len(bound) != 1:
        return None  # not imported, or ambiguous (names.ImportTable drops it)
    (q,) = bound
    q = f"{q}.{rest}" if rest else q
    if q.startswith("torch.") and q.rsplit(".", 1)[-1] in _GRAD_OFF_CONTEXTS:
        heads.add(head)
        return "off"
    return None


def _import_table(facts: GateFacts) -> dict[str, set[str]]:
    """names.ImportTable's bindings (absolute imports only); a name imported
    twice keeps both (the table's answer depends on where it is read)."""
    imported: dict[str, set[str]] = {}
    for imp in facts._imports:
        if not isinstance(imp, ast.ImportFrom):
            for alias in imp.names:
                head = alias.name.split(".")[0]
                imported.setdefault(alias.asname or head, set()).add(alias.name if alias.asname else head)
        elif not imp.level and imp.module:
            for alias in imp.names:
                imported.setdefault(alias.asname or alias.name, set()).add(f"{imp.module}.{alias.name}")
    return imported


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


def _torch_module(expr: ast.AST, aliases: dict[str, str]) -> bool:
    """``expr`` may be the name of the ``torch`` module: ``torch``, or an
    import alias of it (``import torch as T``). names.qualified_name joins
    the import a head is bound to with the rest: ``torch.load`` only for a
    head bound to ``torch`` and one attribute, ``load``."""
    return type(expr) is ast.Name and aliases.get(expr.id, expr.id) == "torch"  # type: ignore[attr-defined]


def _last_name(expr: ast.AST, aliases: dict[str, str]) -> str | None:
    """The last name of the callee when ``expr`` is a call."""
    if type(expr) is not ast.Call:
        return None
    return ast_callee(expr.func, aliases)  # type: ignore[attr-defined]


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


def _may_run_inplace(expr: ast.AST) -> bool:
    """A module call given ``inplace=...`` or a literal ``True`` positionally (``nn.ReLU(True)``)."""
    if type(expr) is not ast.Call:
        return False
    return any(kw.arg == "inplace" for kw in expr.keywords) or any(  # type: ignore[attr-defined]
        type(a) is ast.Constant and a.value is True
        for a in expr.args  # type: ignore[attr-defined]
    )


def _may_iterate_parameters(iterable: ast.AST, bare: bool = True) -> bool:
    """A loop MEM401 may take for one over leaves (frozen.parameter_loop_targets:
    ``model.parameters()``, ``named_parameters()``, inside ``enumerate``/``zip``/
    ``list``; or, when ``bare``, a bare name, a list of leaves)."""
    if type(iterable) is ast.Name:
        return bare
    if type(iterable) is not ast.Call:
        return False
    return any(
        type(n) is ast.Call and type(n.func) is ast.Attribute and n.func.attr in ("parameters", "named_parameters")  # type: ignore[attr-defined]
        for n in ast_fields.nodes(iterable)
    )


def _bare_names(target: ast.AST) -> set[str]:
    """The plain names a target binds (``a``, ``a, (b, c)``, ``*a``)."""
    kind = type(target)
    if kind is ast.Name:
        return {target.id}  # type: ignore[attr-defined]
    if kind in (ast.Tuple, ast.List):
        return {n for el in target.elts for n in _bare_names(el)}  # type: ignore[attr-defined]
    if kind is ast.Starred:
        return _bare_names(target.value)  # type: ignore[attr-defined]
    return set()


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


# objects._SELF_RETURNING: ``Net().to(dev)`` is still the module ``Net()`` built.
_SELF_RETURNING = frozenset(
    {"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "train", "eval", "requires_grad_", "to_empty"}
)


def _module_classes(facts: GateFacts) -> set[str]:
    """The classes of this file objects._class_kind may find modules: a base
    that is one of them, or imported from ``torch.nn`` (not a loss),
    Lightning, or a transformers ``...Model``/``PreTrainedModel``; never a
    class named for a loss (``...Loss``, ``...Criterion``). A transformers
    ``ModelOutput`` dataclass is none (relative imports are not read)."""
    imported = _import_table(facts)
    found: set[str] = set()
    grew = True
    while grew:
        grew = False
        for cls in facts._class_nodes:
            if cls.name in found or cls.name.endswith(("Loss", "Criterion")):
                continue
            for base in cls.bases:
                dotted = ast_dotted(base)
                if dotted is None:
                    continue
                head, _, rest = dotted.partition(".")
                qualified = {f"{q}.{rest}" if rest else q for q in imported.get(head, ())}
                if dotted in found or any(
                    (q.startswith("torch.nn.") and not q.startswith("torch.nn.modules.loss") and q != "torch.nn._Loss")
                    or q.startswith(("pytorch_lightning.", "lightning."))
                    or (q.startswith("transformers.") and q.endswith("Model"))
                    for q in qualified
                ):
                    found.add(cls.name)
                    grew = True
                    break
    return found


def _builds_module(facts: GateFacts, read_in: set[int] | None) -> bool:
    """Some definition objects.built_in_train_mode may call fresh: a name (or,
    where a function rebinds ``self``, a ``self.x``) bound by ``=``, ``: T =``
    or ``:=`` to a call whose callee may build a module (objects._fresh and
    constructor_kind's MODULE cases: a class of this file; an imported
    capitalised callee of torch, torchvision or timm, ``create_model``,
    anything of torchvision), under a name a model call may name; with
    ``read_in``, a bare name bound by ``=`` only where its innermost def (0:
    the module) is one of those scopes (objects._key_for_read's key for a
    local name, see _local_to).
    Reads what the walk kept (calls, bindings, imports, classes)."""
    classes = _module_classes(facts)
    bound: list[tuple[ast.AST, ast.AST]] = [(t, node.value) for node in facts._assigns for t in node.targets]
    statements = len(bound)  # the first ``statements`` pairs are ``=`` statements
    bound += facts._bindings
    if not bound:
        return False
    self_rebound = facts._self_rebound
    # What a loop's model call may name as its module (loops' receivers: the
    # callee, the object of ``m.forward(...)`` or of a method whose ``self``
    # is mapped back, an argument mapped back from a callee's parameter).
    # Read off every call of the file, so only once a binding may build a module.
    used: set[str | None] = set()
    used_read = False

    def may_be_used(spelled: str | None) -> bool:
        nonlocal used_read
        if not used_read:
            used_read = True
            for node in facts._calls:
                func = node.func
                used.add(ast_dotted(func.value) if type(func) is ast.Attribute else ast_dotted(func))
                used.update(ast_dotted(a.value if type(a) is ast.Starred else a) for a in node.args)
                used.update(ast_dotted(k.value) for k in node.keywords)
        return spelled in used

    imported = _import_table(facts)

    def may_build(value: ast.AST, target: str | None) -> bool:
        if type(value) in (ast.Tuple, ast.List):  # ``model, opt = Net(), SGD(...)``
            return any(may_build(el, None) for el in value.elts)  # type: ignore[attr-defined]
        if type(value) is not ast.Call:
            return False
        func = value.func  # type: ignore[attr-defined]
        if type(func) is ast.Attribute:
            if func.attr in _SELF_RETURNING:
                # ``model = model.to(dev)`` counts as fresh when the name's other definitions are
                inner = func.value
                if type(inner) is ast.Call:
                    return may_build(inner, target)
                return target is None or ast_dotted(inner) == target
        if type(func) is ast.Name and func.id in classes:
            return True  # a class of this file (objects._module_classes, read for a bare name only)
        dotted = ast_dotted(func)
        if dotted is None:
            return False
        head, _, rest = dotted.partition(".")
        # objects._fresh: an imported callee whose constructor_kind is MODULE
        # (``nn.CrossEntropyLoss()`` is a LOSS, ``nn.Parameter`` none), not
        # loaded (``from_pretrained``, ``torch.hub``, ``.load``).
        for qualified in imported.get(head, ()):
            qualified = f"{qualified}.{rest}" if rest else qualified
            if qualified.endswith((".from_pretrained", ".load")) or qualified.startswith("torch.hub"):
                continue
            if constructor_kind(qualified) is Kind.MODULE:
                return True
        return False

    # may_build calls itself through its closure cell: a reference cycle
    # that only the cyclic collector would free. Emptying the cell on the
    # way out breaks it.
    try:
        for i, (target, value) in enumerate(bound):
            if type(target) is ast.Attribute and not (
                self_rebound and type(target.value) is ast.Name and target.value.id == "self"  # type: ignore[attr-defined]
            ):
                continue  # objects keys only names and ``self.x``, and reads ``self.x`` only where ``self`` is not a parameter
            if type(target) is ast.Subscript:
                continue
            if type(value) in (ast.Tuple, ast.List) and type(target) in (ast.Tuple, ast.List):
                # ``model, opt = Net(), SGD(...)``: element by element
                pairs = list(zip(target.elts, value.elts))  # type: ignore[attr-defined]
            else:
                pairs = [(target, value)]
            for t, v in pairs:
                if type(t) in (ast.Tuple, ast.List, ast.Starred):
                    if may_build(v, None):
                        return True
                    continue
                spelled = ast_dotted(t)
                if (
                    may_build(v, spelled)
                    and may_be_used(spelled)
                    and (read_in is None or not _local_to(facts, t, i < statements, read_in))
                    and not (i < statements and _never_read_fresh(facts, t, may_build))
                ):
                    return True
        return False
    finally:
        may_build = None  # type: ignore[assignment]


def _innermost_function(functions: list[ast.AST], node: ast.AST) -> ast.AST | None:
    """The innermost def whose span holds ``node`` (objects' ``_stack[-1]``
    for a statement: a class body inside a def binds in the def)."""
    pos = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
    best = None
    for fn in functions:
        start = (fn.lineno, fn.col_offset)  # type: ignore[attr-defined]
        if start <= pos <= (fn.end_lineno, fn.end_col_offset) and (  # type: ignore[attr-defined]
            best is None or start > (best.lineno, best.col_offset)  # type: ignore[attr-defined]
        ):
            best = fn
    return best


def _local_to(facts: GateFacts, target: ast.AST, statement: bool, scopes: set[int]) -> bool:
    """``target`` is a bare name an ``=`` statement binds in a def (or the
    module) outside ``scopes``: objects keys it by that innermost def, and
    reads it only from there. A ``:=`` (it may sit in a decorator, keyed by
    the def it decorates) and ``: T =`` stay wide."""
    if not statement or type(target) is not ast.Name:
        return False
    fn = _innermost_function(facts._functions, target)
    return (0 if fn is None else id(fn)) not in scopes


def _parameters(fn: ast.AST) -> set[str]:
    """loops._params: every parameter of ``fn``, starred ones included."""
    a = fn.args  # type: ignore[attr-defined]
    names = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    names.update(p.arg for p in (a.vararg, a.kwarg) if p is not None)
    return names


def _never_read_fresh(facts: GateFacts, target: ast.AST, may_build) -> bool:
    """A name bound by an ``=`` statement inside a def ``f`` whose
    definitions objects.built_in_train_mode can never find all fresh. They
    are keyed ``(f, "x")`` (objects._key: the innermost def; a class body
    inside ``f`` binds in ``f``), and only loops._default_mode reads them,
    for a receiver ``x`` local to the scope it is called in and no
    parameter there (mode_before's ``_local_names(scope) - _params(scope)``):
    in ``f`` itself, or in a def nested in ``f`` -- but a name local there
    is bound there, so the read stops at that def's own key
    (objects._key_for_read). Hence:

    - ``x`` a parameter of ``f``: never read (mode_before goes to the
      callers instead: ``hidden_states = hidden_states.to(torch.float32)``);
    - another ``=`` statement of ``f`` binds the bare name ``x`` (alone or
      as an element of a tuple target) to a value that is not fresh (not
      may_build: ``x = a * b`` or ``x, i = torch.topk(a, 2)`` then
      ``x = x.to(dtype)``): built_in_train_mode needs every definition fresh.

    Only ``=`` statements are read here (a walrus may sit in a decorator or
    a lambda, keyed elsewhere or not at all); module-level names stay."""
    if type(target) is not ast.Name:
        return False
    functions = facts._functions
    fn = _innermost_function(functions, target)
    if fn is None:
        return False
    name = target.id  # type: ignore[attr-defined]
    if name in _parameters(fn):
        return True
    for node in facts._assigns:
        for t in node.targets:
            if type(t) is ast.Name:
                if t.id == name and not may_build(node.value, name) and _innermost_function(functions, t) is fn:  # type: ignore[attr-defined]
                    return True
            elif type(t) in (ast.Tuple, ast.List):
                # objects._bind: element by element where the value is a
                # tuple of the same length without a star (_tuple_items),
                # else ``("item", value, i)``, never fresh.
                elts = t.elts  # type: ignore[attr-defined]
                value = node.value
                items = value.elts if type(value) in (ast.Tuple, ast.List) else None  # type: ignore[attr-defined]
                if items is not None and (len(items) != len(elts) or any(type(v) is ast.Starred for v in items)):
                    items = None
                for k, el in enumerate(elts):
                    if (
                        type(el) is ast.Name
                        and el.id == name  # type: ignore[attr-defined]
                        and (items is None or not may_build(items[k], name))
                        and _innermost_function(functions, el) is fn
                    ):
                        return True
    return False


def enabled_by_gate(rules, facts: GateFacts):
    """The rules whose declared condition holds (a rule without one always)."""
    return [r for r in rules if r.gate is None or r.gate(facts)]
