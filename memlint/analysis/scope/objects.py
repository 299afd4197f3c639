"""What kind of PyTorch object a name holds: module, optimizer, scaler, ...

API (through ``facts.objects``):

- ``kind_of(expr_or_name, scope_node=None) -> Kind | None`` — what ``model``,
  ``self.opt``, ``criterion`` or ``optim.Adam(...)`` is. ``scope_node`` is any
  node inside the function the name is read in (a ``FunctionDef`` or the
  ``Module`` stands for its own body); for a node argument it defaults to the
  node itself. None means "cannot tell".
- ``is_model_call(call)``, ``is_loss_call(call)`` — calls that produce
  tensors with autograd history.
- ``built_in_train_mode(name, scope_node)`` — built here, so in train mode;
  ``mode_dependent(name, scope_node)`` — has dropout/batch norm (True),
  provably none (False), or unknown (None).
- ``loss_reduction_none(call)`` — the loss object was built with
  ``reduction="none"``.
- ``is_backward_call(call)``, ``is_optimizer_step(call)``,
  ``is_zero_grad(call)``, ``is_scaler_step(call)`` — the training verbs.
- ``mode_call(call) -> "train" | "eval" | "unknown" | None`` — ``m.train()``,
  ``m.eval()``, ``m.train(False)``, ``m.train(flag)`` on a module.

Evidence, strongest first:

1. Definitions in scope: ``nn.Linear(...)``, ``optim.Adam(...)``, a class of
   this file that subclasses ``nn.Module``, ``torch.amp.GradScaler()``,
   ``DataLoader(...)``, ``from_pretrained``, ``timm.create_model``,
   ``model.to(device)``, ``copy.deepcopy(model)``, ``accelerator.prepare``,
   functions of this file that return one of these, parameter annotations.
   Any class called ``...Loss`` (torch, segmentation_models_pytorch, kornia)
   builds a loss.
2. Use: ``X.parameters()`` handed to an optimizer makes ``X`` a module.
3. Names, only for names with no definition in the file (function parameters,
   attributes set elsewhere): ``model``, ``netD``, ``optimizer``,
   ``opt_g``, ``scaler``, ``scheduler``, ``criterion``, ``train_loader``...

A name whose definitions disagree, or whose only definitions are calls we do
not know, is None: precision first.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable

import libcst as cst
from libcst.metadata import MetadataWrapper

from memlint.analysis.scope.bindings import parameters_owners, unwrap_pass_through
from memlint.analysis.scope.callgraph import CallGraph, Scope, bound_params
from memlint.analysis.scope.class_trees import ClassTrees
from memlint.analysis.scope.literal_items import literal_items
from memlint.analysis.scope.names import ImportTable, dotted_name, is_lightning_module
from memlint.analysis.scope.namespace_attrs import namespace_key, namespace_kind
from memlint.analysis.scope.valueless import returns_no_value
from memlint.parse.traversal import visit_fast
from memlint.project.parameterless import holds_no_parameters
from memlint.project.tuple_returns import class_forward_items
from memlint.vocabulary.kinds import (
    MODULE_MOVES,
    SCALER_NAMES,
    Kind,
    constructor_kind,
    epoch_scheduler,
    guess_kind_from_name,
    names_a_model_method,
    parameterless_layer,
    spells_a_class,
)
from memlint.vocabulary.tokens import EVAL_FUNCTION_TOKENS, name_tokens

# Methods that return the module itself, so ``model = model.to(dev)`` keeps its kind.
# Calls that hand back the module where it is moved, mode unchanged; and
# what loads weights into it: neither switches its mode (_factory_fresh).
_MOVES_ONLY = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "requires_grad_", "to_empty"})


def _keeps_train_mode(call: cst.Call) -> bool:
    """A self-returning method that leaves a module in train mode: not
    ``.eval()``, and ``.train()`` only with no argument or a literal ``True``."""
    method = call.func.attr.value  # type: ignore[attr-defined]
    if method == "eval":
        return False
    if method != "train" or not call.args:
        return True
    arg = call.args[0].value
    return len(call.args) == 1 and isinstance(arg, cst.Name) and arg.value == "True"


# Wrappers whose call returns what the wrapped model's forward returns.
_MODEL_WRAPPERS = frozenset(
    {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.DistributedDataParallel"}
)
_LOADS = frozenset({"load_state_dict", "parameters", "named_parameters", "state_dict"})
_SELF_RETURNING = frozenset(
    {"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "train", "eval", "requires_grad_", "to_empty"}
)
# Factories named for what they return: nanoGPT's ``model.configure_optimizers(...)``,
# timm's ``create_optimizer_v2(...)``, ``build_optimizer(cfg)``.
_OPTIMIZER_FACTORY = re.compile(r"(configure|create|build|make|get|init|setup)_optimizers?(_v\d+)?")
# A callee named for building or fetching something (``build_model()``,
# ``get_net(cfg)``, ``load_model(path)``) returns a module; it is no forward
# pass, whatever the name guess says of ``*_model``.
# A function named for what it does to a model (``get_model(...)``,
# ``flatten_model(self.model)``, fastai's) builds, fetches or walks one: no forward.
_FACTORY_CALLEE = re.compile(
    r"^(build|get|create|make|load|init|setup|construct|flatten|unwrap|freeze|unfreeze|prepare|save|print"
    r"|count|summari[sz]e|wrap|convert|export|copy|clone|fuse|quantize|prune|reset|register|compile)_"
)
_F_LOSS = re.compile(
    r"^torch\.nn\.functional\.(\w*_loss|cross_entropy|binary_cross_entropy(_with_logits)?|kl_div|nll_loss)$"
)


Expr = cst.BaseExpression | str


def _class_built(call: cst.Call) -> bool:
    """``S(...)``, ``S(...).cuda()``: a constructor spelled as a class, moved
    or not (what the gate's ``calls_a_model_method`` reads on ``ast``)."""
    func = call.func
    while isinstance(func, cst.Attribute) and func.attr.value in MODULE_MOVES and isinstance(func.value, cst.Call):
        func = func.value.func
    name = dotted_name(func)
    return name is not None and spells_a_class(name)


class ObjectTable(cst.CSTVisitor):
    def __init__(
        self,
        wrapper: MetadataWrapper,
        names: ImportTable,
        calls: CallGraph,
        schedulers: frozenset[str] = frozenset(),
        project_classes: frozenset[str] = frozenset(),
        parameterless: frozenset[str] = frozenset(),
        typed: Callable[[str, str], tuple[str, ...] | None] | None = None,
        trainer_classes: frozenset[str] = frozenset(),
        forward_methods: frozenset[str] = frozenset(),
        forward_items: dict[str, tuple[int, frozenset[int]]] | None = None,
        forward_names: frozenset[str] = frozenset(),
        object_evals: frozenset[tuple[str, str]] = frozenset(),
        method_evals: frozenset[tuple[str, str, str]] = frozenset(),
        class_trees: ClassTrees | None = None,
        mode_classes: frozenset[str] = frozenset(),
    ) -> None:
        super().__init__()
        # This module's classes as ``ast`` reads them (class_trees.py).
        self._class_trees = class_trees or ClassTrees(wrapper.module, calls.classes, None)
        # (scope, receiver, method) of calls of a method named for evaluation
        # that only switches the models a plain project object holds to eval
        # (ProjectView.method_evals): ``model.setup_to_test(path)``.
        self._method_evals = method_evals
        # (scope, receiver) of ``.eval()`` calls on plain project objects whose
        # ``eval()`` switches the models they hold (ProjectView.object_evals).
        self._object_evals = object_evals
        # Methods no project class defines whose name marks a forward
        # (ProjectView.forward_names): a forward only on a receiver switched
        # to eval before the call in its function (``self.__S__.forward_lip(x)``).
        self._forward_names = forward_names
        # Classes of other project modules whose ``forward`` returns a tuple
        # with elements that carry no history (ProjectView.forward_items).
        self._forward_items = forward_items or {}
        self._local_items: dict[str, tuple[int, frozenset[int]] | None] = {}
        # Methods every project class defining them runs a layer in
        # (ProjectView.forward_methods): ``model.extract_feature(x)`` on a module is a forward.
        self._forward_methods = forward_methods
        # Local names of classes of other project modules whose ``__call__``
        # trains (ProjectView.trainer_classes).
        self._trainer_classes = trainer_classes
        self._module = wrapper.module
        # Of those, the ones proved to own no parameter
        # (ProjectView.parameterless_classes); this module's own are proved here.
        self._parameterless = parameterless
        self._local_parameterless: dict[str, bool] = {}
        # ProjectView.types_of: what the project's call sites and factories
        # say a name of a scope holds (``g_scheduler = build_lr_scheduler(...)``).
        self._typed = typed
        self.names = names
        self.calls = calls
        # Local names of torch scheduler subclasses of other project modules
        # (ProjectView.scheduler_classes): a call of one builds a scheduler.
        self._schedulers = schedulers
        # Local names of ``nn.Module`` subclasses of other project modules
        # (ProjectView.model_classes): ``Tacotron(...)`` builds a module.
        self._project_classes = project_classes
        # Of those, the ones holding a layer that reads the mode
        # (ProjectView.mode_classes, project/mode_layers.py): pytorch-vqvae's
        # ``VectorQuantizedVAE(...)`` counts as built in train mode where no
        # other hint says the name is a model (melgan's ``Generator`` does not).
        self._mode_classes = mode_classes
        self.parents = calls.parents
        # (scope, name) -> value expressions bound to it; a ``None`` entry is
        # a binding we cannot evaluate (for-loop target, ``with ... as``).
        self._defs: dict[tuple[object, str], list[object]] = defaultdict(list)
        self._holders: dict[str, list[object]] | None = None  # sole_holder_kind's index, read on first need
        # ``args.optimizer = optimizer``: (scope, value) per spelling, for a
        # function reading the attribute of a namespace it is handed (namespace_attrs.py).
        self._namespace_stores: dict[str, list[tuple[object, object]]] = defaultdict(list)
        self._params: dict[tuple[Scope, str], cst.Param] = {}
        self._module_classes: dict[str, Kind] = {}
        self._stack: list[Scope] = [wrapper.module]
        self._class_stack: list[cst.ClassDef] = []
        self._memo: dict[tuple[object, str], Kind | None] = {}
        self._busy: set[tuple[object, str]] = set()
        self._return_memo: dict[cst.FunctionDef, Kind | None] = {}
        self._returns: dict[cst.FunctionDef, list[cst.BaseExpression]] = defaultdict(list)
        self._used_as_module: set[tuple[object, str]] = set()
        # Read through ``.parameters()`` somewhere: a module unless the name
        # is also a loop target or similar (``for m in (accuracy,)``).
        self._parameters_read: set[tuple[object, str]] = set()
        self._pending_param_uses: list[tuple[cst.Call, Scope]] = []
        # ``model.load_state_dict(...)`` then ``model.eval()`` on one name: a
        # module restored for evaluation, whatever built it (``Model(envs)``
        # with ``Model`` a parameter, a factory of another module).
        self._pending_restores: list[tuple[cst.Call, Scope, str]] = []
        self._restored: dict[tuple[object, str], set[str]] = defaultdict(set)
        self._model_memo: dict[cst.Call, bool] = {}
        self._valueless_memo: dict[cst.FunctionDef, bool] = {}
        self._class_modes: dict[str, bool | None] = {}  # _ModeDependence's answer per class
        self._loss_memo: dict[cst.Call, bool] = {}
        self._factory_memo: dict[cst.FunctionDef, bool] = {}
        visit_fast(wrapper.module, self)
        self._classify_classes()
        for call, scope in self._pending_param_uses:
            self._mark_parameters_owners(call, scope)
        for call, scope, verb in self._pending_restores:
            key = self._key_for_read(call.func.value, scope)  # type: ignore[attr-defined]
            if key is not None:
                self._restored[key].add(verb)

    # == collection =========================================================
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._class_stack.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._class_stack.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._stack.append(node)
        params = node.params
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            self._params[(node, p.name.value)] = p
        for p in (params.star_arg, params.star_kwarg):
            if isinstance(p, cst.Param):
                self._defs[(node, p.name.value)].append(None)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._stack.pop()

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def _key(self, target: cst.BaseExpression) -> tuple[object, str] | None:
        if isinstance(target, cst.Name):
            if len(self._stack) == 1 and self._class_stack:
                return None  # class attribute, not a variable functions can see
            return (self._stack[-1], target.value)
        if (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == "self"
            and self._class_stack
        ):
            return (self._class_stack[-1], "self." + target.attr.value)
        return None

    def _bind(self, target: cst.BaseExpression, value: object) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            elements = [el.value for el in target.elements]
            values = _tuple_items(value, len(elements))
            for i, el in enumerate(elements):
                self._bind(el, values[i] if values else ("item", value, i))
            return
        if isinstance(target, cst.StarredElement):
            self._bind(target.value, None)
            return
        key = self._key(target)
        if key is not None:
            self._defs[key].append(value)
        elif isinstance(target, cst.Attribute):
            spelled = namespace_key(target)
            if spelled is not None:
                self._namespace_stores[spelled].append((self._stack[-1], value))

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._bind(t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node.value if node.value is not None else ("annotation", node.annotation))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, None)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, ("element", node.iter) if isinstance(node.target, cst.Name) else None)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        # ``[r(x) for r in self.rho]``: only a single name is bound (to what
        # it iterates); tuple targets stay unknown as before.
        if isinstance(node.target, cst.Name):
            self._bind(node.target, ("element", node.iter))

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name, None)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, node.value)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None and isinstance(self._stack[-1], cst.FunctionDef):
            self._returns[self._stack[-1]].append(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in ("parameters", "named_parameters")
            and not any(a.keyword is None for a in node.args)
        ):
            # ``clip_grad_norm_(model.parameters(), 1.0)``, ``for p in model.parameters()``
            self._pending_param_uses.append((node, self._stack[-1]))
        elif self._constructor_kind(node) is Kind.OPTIMIZER:
            self._pending_param_uses.append((node, self._stack[-1]))
        elif isinstance(func, cst.Attribute) and dotted_name(func.value) not in (None, "self"):
            verb = func.attr.value  # ``self``: a trainer or agent class may define both methods
            if (verb == "eval" and not node.args) or (verb == "load_state_dict" and node.args):
                self._pending_restores.append((node, self._stack[-1], verb))

    def _mark_parameters_owners(self, call: cst.Call, scope: Scope) -> None:
        """``optim.SGD(model.parameters())`` or any ``model.parameters()``:
        ``model`` is a module."""
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("parameters", "named_parameters"):
            owners, evidence = [call.func.value], self._parameters_read
        elif self._constructor_kind(call) is Kind.OPTIMIZER:
            owners, evidence = parameters_owners(call), self._used_as_module
        else:
            return
        for owner in owners:
            key = self._key_for_read(owner, scope)
            if key is not None:
                evidence.add(key)

    def _classify_classes(self) -> None:
        """Classes of this file that are modules, losses or optimizers."""
        pending = {name: defs for name, defs in self.calls.classes.items()}
        changed = True
        while changed:
            changed = False
            for name, defs in pending.items():
                if name in self._module_classes:
                    continue
                for cls in defs:
                    kind = self._class_kind(cls)
                    if kind is not None:
                        self._module_classes[name] = kind
                        changed = True
                        break

    def _class_kind(self, cls: cst.ClassDef) -> Kind | None:
        for base in cls.bases:
            qn = self.names.qualified_name(base.value) or ""
            local = dotted_name(base.value) or ""
            if local in self._module_classes:
                kind = self._module_classes[local]
            elif qn.startswith("torch.optim") and qn.rsplit(".", 1)[-1] in ("Optimizer",):
                kind = Kind.OPTIMIZER
            elif qn.startswith("torch.optim.lr_scheduler"):
                kind = Kind.SCHEDULER
            elif qn.startswith("torch.nn.modules.loss") or qn in ("torch.nn._Loss", "torch.nn.modules.loss._Loss"):
                kind = Kind.LOSS
            elif qn.startswith("torch.nn.") or qn.startswith("pytorch_lightning.") or qn.startswith("lightning."):
                kind = Kind.MODULE
            elif qn.startswith("transformers.") and qn.endswith(("PreTrainedModel", "Model")):
                kind = Kind.MODULE
            else:
                continue
            if kind is Kind.MODULE and re.search(r"(Loss|Criterion)$", cls.name.value):
                return Kind.LOSS
            return kind
        return None

    # == scope helpers =====================================================
    def scope_of(self, node: cst.CSTNode) -> Scope:
        """The function (or module) a node is evaluated in; a function or
        module given as ``node`` is its own scope."""
        # Exact class tests: isinstance() on libcst's ABCs is slow on a miss.
        kind = node.__class__
        if kind is cst.FunctionDef or kind is cst.Module:
            return node  # type: ignore[return-value]
        if kind is cst.Call:
            known = self.calls.scope_of_call(node)  # type: ignore[arg-type]
            if known is not None:
                return known
        cur: cst.CSTNode | None = node
        while cur is not None:
            if cur.__class__ is cst.FunctionDef and cur is not node:
                return cur  # type: ignore[return-value]
            if cur.__class__ is cst.Module:
                return cur  # type: ignore[return-value]
            cur = self.parents.get(cur)
        return self.calls.module

    def _class_for_scope(self, scope: Scope) -> cst.ClassDef | None:
        if isinstance(scope, cst.FunctionDef):
            method = self.calls.method_owner(scope)
            if method is not None:
                return self.calls.class_of.get(method)
        return None

    def _key_for_read(self, expr: cst.BaseExpression, scope: Scope) -> tuple[object, str] | None:
        """The definition key a read of ``expr`` in ``scope`` refers to."""
        if isinstance(expr, cst.Name):
            name = expr.value
            cur: Scope = scope
            while True:
                if (
                    (cur, name) in self._defs
                    or (cur, name) in self._params
                    or (cur, name) in self._used_as_module
                    or (cur, name) in self._parameters_read
                ):
                    return (cur, name)
                if isinstance(cur, cst.Module):
                    return None
                cur = self.calls.owner.get(cur, self.calls.module)  # type: ignore[arg-type]
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = self._class_for_scope(scope)
            if cls is not None:
                return (cls, "self." + expr.attr.value)
        return None

    # == queries ===========================================================
    def kind_of(self, expr: Expr, scope_node: cst.CSTNode | None = None) -> Kind | None:
        """What kind of object ``expr`` (a node, or a name/dotted string)
        evaluates to, read inside the function containing ``scope_node``."""
        if isinstance(expr, str):
            try:
                expr = cst.parse_expression(expr)
            except Exception:
                return None
            scope = self.scope_of(scope_node) if scope_node is not None else self.calls.module
        else:
            scope = self.scope_of(scope_node if scope_node is not None else expr)
        return self._eval(expr, scope)

    def bound_methods(self, name: cst.Name) -> list[cst.Attribute] | None:
        """``encode(x)`` where every binding of ``encode`` in its own scope is
        a method of an object (``encode = trainer.gen_a.encode if a2b else
        trainer.gen_b.encode``): every arm's attribute; None otherwise (a
        parameter, a name of an enclosing scope, any other value)."""
        scope = self.scope_of(name)
        key = self._key_for_read(name, scope)
        if key is None or key[0] is not scope or key in self._params:
            return None
        arms: list[cst.Attribute] = []
        for value in self._defs.get(key, ()):
            todo = [value]
            while todo:
                v = todo.pop()
                if isinstance(v, cst.IfExp):
                    todo += [v.orelse, v.body]  # the body's arm first
                elif isinstance(v, cst.Attribute) and isinstance(v.value, (cst.Name, cst.Attribute)):
                    arms.append(v)
                else:
                    return None
        return arms or None

    def sole_holder_kind(self, expr: cst.BaseExpression) -> Kind | None:
        """``model.scheduler`` on an object no analysis types (a parameter
        ``model``): the kind of ``self.scheduler`` in the one class of this
        module that sets that attribute (SR-GNN's ``SessionGraph`` builds
        its own ``StepLR``), when its every assignment there has that kind;
        None when no class or several set it, or ``expr`` is ``self.<attr>``."""
        if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)) or expr.value.value == "self":
            return None
        holders = self._attribute_holders()
        owners = holders.get("self." + expr.attr.value, ())
        return self._kind_of_key((owners[0], "self." + expr.attr.value)) if len(owners) == 1 else None

    def _attribute_holders(self) -> dict[str, list[object]]:
        """``self.<attr>`` -> the classes of this module that assign it (read once)."""
        if self._holders is None:
            self._holders = {}
            for owner, name in self._defs:
                if isinstance(owner, cst.ClassDef) and name.startswith("self."):
                    self._holders.setdefault(name, []).append(owner)
        return self._holders

    def self_kind(self, node: cst.CSTNode) -> Kind | None:
        """What ``self`` is in the method around ``node``: the kind of its
        class (``Kind.MODULE`` for an ``nn.Module`` subclass), or None."""
        cls = self._class_for_scope(self.scope_of(node))
        return self._module_classes.get(cls.name.value) if cls is not None else None

    def _eval(self, expr: cst.BaseExpression, scope: Scope) -> Kind | None:
        if isinstance(expr, (cst.Name, cst.Attribute)):
            key = self._key_for_read(expr, scope)
            if key is not None:
                return self._kind_of_key(key)
            if isinstance(expr, cst.Name) and expr.value in self.names.bindings:
                qn = self.names.bindings[expr.value]
                return Kind.LOSS if _F_LOSS.match(qn) else None
            if isinstance(expr, cst.Attribute):
                qn = self.names.qualified_name(expr)
                if qn is not None:
                    return Kind.LOSS if _F_LOSS.match(qn) else None
                if isinstance(expr.value, cst.Name) and expr.value.value == "self":
                    # An attribute set outside this file (a framework base class).
                    return guess_kind_from_name(expr.attr.value)
                if isinstance(expr.value, cst.Name) and (scope, expr.value.value) in self._params:
                    # ``args.optimizer`` of a namespace its caller filled (namespace_attrs.py).
                    stored = namespace_kind(
                        self._namespace_stores.get(f"{expr.value.value}.{expr.attr.value}", []),
                        scope,
                        lambda value, owner: self._value_kind(value, owner),  # type: ignore[arg-type]
                    )
                    if stored is not None:
                        return stored
                # ``model.module`` (DataParallel) and ``self.model.backbone``.
                if expr.attr.value == "module" and self._eval(expr.value, scope) is Kind.MODULE:
                    return Kind.MODULE
                # A part of a model named for one (``self.net.decoder``): a
                # submodule, as a name so spelled is guessed to be.
                if (
                    guess_kind_from_name(expr.attr.value) is Kind.MODULE
                    and self._eval(expr.value, scope) is Kind.MODULE
                ):
                    return Kind.MODULE
                return None
            if isinstance(expr, cst.Name) and expr.value == "self":
                # ``self(x)`` inside a LightningModule / nn.Module method.
                cls = self._class_for_scope(scope)
                return self._module_classes.get(cls.name.value) if cls is not None else None
            if isinstance(expr, cst.Name):
                return guess_kind_from_name(expr.value) if expr.value not in _BUILTINS else None
            return None
        if isinstance(expr, cst.Call):
            return self._call_kind(expr, scope)
        return None

    def _kind_of_key(self, key: tuple[object, str]) -> Kind | None:
        if key in self._memo:
            return self._memo[key]
        if key in self._busy:
            return None
        self._busy.add(key)
        try:
            kind = self._compute_key(key)
        finally:
            self._busy.discard(key)
        self._memo[key] = kind
        return kind

    def _compute_key(self, key: tuple[object, str]) -> Kind | None:
        owner, name = key
        kinds: set[Kind] = set()
        unknown = False
        param = self._params.get(key) if isinstance(owner, cst.FunctionDef) else None
        if param is not None and self._given_plain_instance(param, owner):  # type: ignore[arg-type]
            return None  # the name may say optimizer, a caller passes its own plain object: not known
        if param is not None:
            kind = self._param_kind(param, owner)  # type: ignore[arg-type]
            if kind is not None:
                kinds.add(kind)
        scope = owner if not isinstance(owner, cst.ClassDef) else None
        for value in self._defs.get(key, ()):
            kind = self._value_kind(value, scope)
            if kind is None:
                unknown = True
            else:
                kinds.add(kind)
        if key in self._used_as_module or len(self._restored.get(key, ())) == 2 or self._moved_and_switched(key):
            kinds.add(Kind.MODULE)
            unknown = unknown and not self._moved_and_switched(key)
        elif key in self._parameters_read and all(v is not None for v in self._defs.get(key, ())):
            kinds.add(Kind.MODULE)
        if len(kinds) == 1:
            return next(iter(kinds))
        if unknown and not kinds and self._typed is not None:
            return self._project_kind(owner, name)
        if kinds or unknown:
            return None
        if param is not None or isinstance(owner, cst.ClassDef):
            guessed = guess_kind_from_name(name.rsplit(".", 1)[-1])
            if guessed is None and param is not None and self._typed is not None:
                return self._caller_scheduler(owner, name)
            return guessed
        return None

    def _caller_scheduler(self, owner: object, name: str) -> Kind | None:
        """A parameter no name convention types (``tg_lr_scheduler``) that
        every caller in the project hands an epoch-based torch scheduler
        (``MultiStepLR``; ProjectView.types_of, project/typed_objects.py):
        a scheduler. Only schedulers: a per-batch one (``OneCycleLR``), a
        plateau one, or any caller the project cannot type stays unknown."""
        if self._project_kind(owner, name) is not Kind.SCHEDULER:
            return None
        scope = self._scope_name(owner)
        types = self._typed(scope, name) if self._typed is not None else None
        return Kind.SCHEDULER if types and all(epoch_scheduler(t) for t in types) else None

    def _moved_and_switched(self, key: tuple[object, str]) -> bool:
        """``self.__S__ = S(...).cuda()`` and ``self.__S__.eval()``: every
        binding builds a class (from an import the project does not hold)
        and moves it to a device, and the name is switched to eval: only a
        module is both."""
        if "eval" not in self._restored.get(key, ()):
            return False
        values = self._defs.get(key, ())
        return bool(values) and all(
            isinstance(v, cst.Call)
            and isinstance(v.func, cst.Attribute)
            and v.func.attr.value in ("cuda", "to")
            and isinstance(v.func.value, cst.Call)
            and _class_built(v)
            and not self._class_imported(v)
            for v in values
        )

    def _class_imported(self, call: cst.Call) -> bool:
        """The class ``call`` builds is bound by an explicit import (``from
        pkg.net import Config``): the project or the package answers what it
        is, and a plain class moved and switched stays unknown; only a name
        no import of the module binds (a star import the project does not
        hold) is judged by the switch."""
        func = call.func
        while isinstance(func, cst.Attribute) and func.attr.value in MODULE_MOVES and isinstance(func.value, cst.Call):
            func = func.value.func
        name = dotted_name(func)
        return name is not None and name.split(".", 1)[0] in self.names.bindings

    def _project_kind(self, owner: object, name: str) -> Kind | None:
        """The kind every type the project gives ``name`` in ``owner`` builds
        (installed classes only: ``torch.optim.lr_scheduler.StepLR``), or None."""
        if isinstance(owner, cst.ClassDef):
            return self._project_attr_kind(owner, name)
        types = self._typed(self._scope_name(owner), name) if self._typed is not None else None
        kinds = {constructor_kind(t) for t in types or ()}
        return kinds.pop() if len(kinds) == 1 else None

    def _project_attr_kind(self, cls: cst.ClassDef, name: str) -> Kind | None:
        """``self.scheduler`` of ``cls``, every assignment of it a call the
        file cannot type (``utility.make_scheduler(args, opt)``): the kind
        the project gives it in the methods of the class (one kind in all
        of them; project/typed_objects.py reads the factory's returns)."""
        assert self._typed is not None
        kinds: set[Kind | None] = set()
        for stmt in cls.body.body:
            if isinstance(stmt, cst.FunctionDef):
                types = self._typed(f"{cls.name.value}.{stmt.name.value}", name)
                kinds.update(constructor_kind(t) for t in types or ())
        return kinds.pop() if len(kinds) == 1 else None

    def _param_kind(self, param: cst.Param, fn: cst.FunctionDef) -> Kind | None:
        if param.annotation is not None:
            qn = self.names.qualified_name(param.annotation.annotation) or ""
            kind = _annotation_kind(qn)
            if kind is not None:
                return kind
        if param.name.value == "self" and fn.params.params and fn.params.params[0] is param:
            return self._self_kind(fn)
        if param.name.value in ("self", "cls"):
            return None
        return guess_kind_from_name(param.name.value)

    def _given_plain_instance(self, param: cst.Param, fn: cst.FunctionDef) -> bool:
        """A call of ``fn`` in this module passes ``param`` a name bound to an
        instance of a class of this module built on no base but ``object``
        (MixMatch's ``ema_optimizer = WeightEMA(model, ema_model)`` handed to
        ``train(..., ema_optimizer)``): whatever the parameter's name says,
        that object is no torch optimizer, scheduler or model."""
        for call in self.calls.call_sites.get(fn, ()):
            for arg, name in bound_params(call, fn):
                if name != param.name.value or not isinstance(arg.value, cst.Name):
                    continue
                key = self._key_for_read(arg.value, self.scope_of(call))
                if key is None:
                    continue
                for value in self._defs.get(key, ()):
                    if isinstance(value, cst.Call) and self._plain_local_class(value.func):
                        return True
        return False

    def _plain_local_class(self, func: cst.BaseExpression) -> bool:
        """``func`` names the one class of this module so called, whose bases
        are none or ``object`` alone."""
        if not isinstance(func, cst.Name):
            return False
        classes = self.calls.classes.get(func.value, [])
        if len(classes) != 1:
            return False
        bases = classes[0].bases
        return all(isinstance(b.value, cst.Name) and b.value.value == "object" for b in bases)

    def _self_kind(self, fn: cst.FunctionDef) -> Kind | None:
        """``self`` in a plain method of an ``nn.Module`` subclass of this file
        is a module (``self.eval()``, ``self.forward(x)``); Lightning modules
        and static/class methods are left alone."""
        cls = self._class_for_scope(fn)
        if cls is None or self._module_classes.get(cls.name.value) is not Kind.MODULE:
            return None
        if any(dotted_name(d.decorator) in ("staticmethod", "classmethod") for d in fn.decorators):
            return None
        if is_lightning_module(cls, self.names):
            return None
        return Kind.MODULE

    def _value_kind(self, value: object, scope: Scope | None) -> Kind | None:
        if value is None:
            return None
        if isinstance(value, tuple):
            if value[0] == "annotation":
                return _annotation_kind(self.names.qualified_name(value[1].annotation) or "")
            if value[0] == "item":
                return self._item_kind(value[1], value[2], scope)
            if value[0] == "element":
                return self._element_kind(value[1], scope)
            return None
        assert isinstance(value, cst.BaseExpression)
        if scope is None:
            # ``self.x = value`` : evaluate the value in the method it is written in.
            scope = self.scope_of(value)
        return self._eval(value, scope)

    def _element_kind(self, iterable: cst.BaseExpression, scope: Scope | None) -> Kind | None:
        """``for block in self.blocks`` over ``nn.ModuleList([...])`` or
        ``nn.Sequential(...)``: each element is a module. Other iterables
        (a ``ModuleDict`` yields its keys) stay unknown."""
        if not isinstance(iterable, (cst.Name, cst.Attribute)):
            return None
        scope = scope if scope is not None else self.scope_of(iterable)
        key = self._key_for_read(iterable, scope)
        values = self._defs.get(key, []) if key is not None else []
        if not values or not all(
            isinstance(v, cst.Call) and (self.names.call_name(v) or "") in _MODULE_SEQUENCES for v in values
        ):
            return None
        return Kind.MODULE

    def _item_kind(self, value: object, index: int, scope: Scope | None) -> Kind | None:
        """``model, opt = accelerator.prepare(model, opt)`` and friends."""
        if not isinstance(value, cst.Call):
            return None
        scope = scope if scope is not None else self.scope_of(value)
        func = dotted_name(value.func) or ""
        if func.rsplit(".", 1)[-1] in ("prepare", "initialize") and index < len(value.args):
            return self._eval(value.args[index].value, scope)
        target = self.calls.resolve(value)
        return self._returned_item_kind(target, index) if target is not None else None

    def _returned_item_kind(self, fn: cst.FunctionDef, index: int) -> Kind | None:
        """``netG, netD = self.load_network()``: the kind of the ``index``-th
        element of every tuple ``fn`` returns (each ``return netG, netD``
        the same length), when all of them agree."""
        returns = self._returns.get(fn, ())
        kinds = set()
        for value in returns:
            if not isinstance(value, (cst.Tuple, cst.List)) or index >= len(value.elements):
                return None
            if any(isinstance(el, cst.StarredElement) for el in value.elements):
                return None
            kinds.add(self._eval(value.elements[index].value, fn))
        return kinds.pop() if len(kinds) == 1 else None

    def _call_kind(self, call: cst.Call, scope: Scope) -> Kind | None:
        kind = self._constructor_kind(call)
        if kind is not None:
            return kind
        func = call.func
        qn = self.names.call_name(call) or ""
        if qn in ("copy.deepcopy", "torch.compile") and call.args:
            return self._eval(call.args[0].value, scope)
        if isinstance(func, cst.Attribute) and func.attr.value in _SELF_RETURNING:
            inner = self._eval(func.value, scope)
            return inner if inner is Kind.MODULE or inner is Kind.LOSS else None
        target = self.calls.resolve(call)
        if target is not None:
            return self._return_kind(target)
        last = (dotted_name(func) or "").rsplit(".", 1)[-1]
        if _OPTIMIZER_FACTORY.fullmatch(last):
            return Kind.OPTIMIZER
        return None

    def _return_kind(self, fn: cst.FunctionDef) -> Kind | None:
        if fn in self._return_memo:
            return self._return_memo[fn]
        self._return_memo[fn] = None  # recursion guard
        kinds = {self._eval(v, fn) for v in self._returns.get(fn, ())}
        result = next(iter(kinds)) if len(kinds) == 1 else None
        self._return_memo[fn] = result
        return result

    def _constructor_kind(self, call: cst.Call) -> Kind | None:
        """Kind of object a call creates, from the callee alone."""
        func = call.func
        if isinstance(func, cst.Name) and func.value in self._module_classes:
            return self._module_classes[func.value]
        if self._schedulers and dotted_name(func) in self._schedulers:
            return Kind.SCHEDULER
        if self._project_classes and dotted_name(func) in self._project_classes:
            return Kind.MODULE
        qn = self.names.call_name(call)
        if qn is None:
            return None
        return constructor_kind(qn)

    # -- call classification ----------------------------------------------
    def is_model_call(self, call: cst.Call) -> bool:
        """``model(x)``, ``self.net(x)``, ``model.forward(x)`` on a module."""
        found = self._model_memo.get(call)
        if found is None:
            found = self._model_memo[call] = self._is_model_call(call)
        return found

    def _is_model_call(self, call: cst.Call) -> bool:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("forward", "__call__"):
            func = func.value
        elif isinstance(func, cst.Attribute) and func.attr.value in self._forward_names:
            receiver = dotted_name(func.value)
            return receiver is not None and self._switched_before(receiver, call) and self._entry_readable(call)
        elif isinstance(func, cst.Attribute) and func.attr.value in self._forward_methods:
            receiver = dotted_name(func.value)
            if receiver is None:
                return False
            if self.kind_of(func.value, call) is not Kind.MODULE:
                # ``self.__S__.eval()`` then ``self.__S__.forward_lip(x)``, the
                # class from an import the project does not hold: the switch
                # says the receiver is a module.
                return self._switched_before(receiver, call) and self._entry_readable(call)
            if names_a_model_method(receiver, func.attr.value):
                return True
            return (self._built_module(func.value, call) or self._switched_before(receiver, call)) and (
                self._entry_readable(call)
            )
        if not isinstance(func, (cst.Name, cst.Attribute)):
            return False
        if func is call.func and _last(func) == "data_parallel" and self._parallel_forward(call):
            return True
        if func is call.func and _FACTORY_CALLEE.match(_last(func)):
            return False
        if func is call.func and isinstance(func, cst.Name) and self.calls.resolve(call) is not None:
            # ``eval_model(...)``, a function of this module: the name guess
            # says nothing; its body (a loop's callees) decides whether it runs a model.
            return False
        if func is call.func and isinstance(func, cst.Attribute) and self._valueless_method(call):
            return False  # ``self.save_model(name)``: a method of this class that returns nothing is no forward
        return self.kind_of(func, call) is Kind.MODULE

    def _parallel_forward(self, call: cst.Call) -> bool:
        """``nn.parallel.data_parallel(netG, inputs, gpus)``: torch's
        functional data parallelism runs the forward of the module it is
        handed first, as ``netG(*inputs)`` would."""
        if self.names.call_name(call) != "torch.nn.parallel.data_parallel" or not call.args:
            return False
        first = call.args[0]
        return first.keyword is None and not first.star and self.kind_of(first.value, call) is Kind.MODULE

    def _valueless_method(self, call: cst.Call) -> bool:
        """``self.m(...)`` calls a method of its class (in this module) that
        returns no value (scope/valueless.py)."""
        fn = self.calls.resolve(call)
        if fn is None:
            return False
        found = self._valueless_memo.get(fn)
        if found is None:
            found = self._valueless_memo[fn] = returns_no_value(fn)
        return found

    def _runs_a_named_forward(self, receiver: cst.BaseExpression, call: cst.Call) -> bool:
        """``call``'s function also calls, on ``receiver``, a method the
        project knows as a forward (ProjectView.forward_methods)."""
        if not self._forward_methods and not self._forward_names:
            return False
        spelled = dotted_name(receiver)
        if spelled is None or spelled == "self":
            return False
        for other in self.calls.calls_in.get(self.scope_of(call), ()):
            func = other.func if isinstance(other, cst.Call) else None
            if (
                isinstance(func, cst.Attribute)
                and (func.attr.value in self._forward_methods or func.attr.value in self._forward_names)
                and dotted_name(func.value) == spelled
            ):
                return True
        return False

    def _evals_held(self, receiver: cst.BaseExpression, call: cst.Call) -> bool:
        """``model.eval()`` where the project types ``model`` to plain
        classes whose ``eval()`` switches the models they hold
        (ProjectView.object_evals, project/wrapper_evals.py)."""
        if not self._object_evals:
            return False
        spelled = dotted_name(receiver)
        owner = self.scope_of(call)
        if isinstance(owner, cst.FunctionDef):
            cls = self.calls.class_of.get(owner)
            scope = f"{cls.name.value}.{owner.name.value}" if cls is not None else owner.name.value
        else:
            scope = ""
        return spelled is not None and (scope, spelled) in self._object_evals

    def _evals_by_method(self, func: cst.Attribute, call: cst.Call) -> bool:
        """``model.setup_to_test(path)`` (ProjectView.method_evals,
        project/method_evals.py)."""
        spelled = dotted_name(func.value)
        return spelled is not None and (self._scope_name(call), spelled, func.attr.value) in self._method_evals

    def _scope_name(self, node: cst.CSTNode) -> str:
        """``Class.method``, ``function`` or "" (the module) of ``node``'s
        scope (a function or the module is its own), as the project names scopes."""
        owner = self.scope_of(node)
        if isinstance(owner, cst.FunctionDef):
            cls = self.calls.class_of.get(owner)
            return f"{cls.name.value}.{owner.name.value}" if cls is not None else owner.name.value
        return ""

    def _switched_before(self, receiver: str, call: cst.Call) -> bool:
        """``receiver.eval()`` runs earlier in ``call``'s own function, as a
        statement of that function's body (not in a branch the call may
        not follow): only a module is switched so."""
        scope = self.scope_of(call)
        if (
            receiver == "self"
            or not isinstance(scope, cst.FunctionDef)
            or not isinstance(scope.body, cst.IndentedBlock)
        ):
            return False  # ``self.eval()`` then ``self.m(x)``: the object's own methods are not asked
        at = self.calls.pos(call)
        for stmt in scope.body.body:
            if self.calls.pos(stmt) >= at:
                return False
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                value = small.value if isinstance(small, cst.Expr) else None
                if (
                    isinstance(value, cst.Call)
                    and isinstance(value.func, cst.Attribute)
                    and value.func.attr.value == "eval"
                    and not value.args
                    and dotted_name(value.func.value) == receiver
                ):
                    return True
        return False

    def _built_module(self, receiver: cst.BaseExpression, call: cst.Call) -> bool:
        """``self.__S__.forward_lip(x)`` whatever the receiver's name says:
        every binding of it builds a module (``self.__S__ = S(...).cuda()``
        in the class's ``__init__``, ``S`` an ``nn.Module`` class of the
        project). A parameter or an attribute with no binding here is not
        proved by its kind alone (that may be the name's guess)."""
        key = self._key_for_read(receiver, self.scope_of(call))
        if key is None or key in self._params:
            return False
        values = self._defs.get(key, [])
        scope = key[0] if not isinstance(key[0], cst.ClassDef) else None
        return bool(values) and all(
            isinstance(v, cst.Call) and _class_built(v) and self._value_kind(v, scope) is Kind.MODULE for v in values
        )

    def _entry_readable(self, call: cst.Call) -> bool:
        """The grad mode ``call``'s function is entered in can be read: not
        a method, or one named for evaluation. Other modules call a method
        through instances, and the project reads the mode of those calls for
        names of evaluation only (project/method_modes.py): MUNIT's
        ``sample()``, wrapped in ``no_grad`` by train.py, is not judged."""
        scope = self.scope_of(call)
        if not isinstance(scope, cst.FunctionDef) or self.calls.class_of.get(scope) is None:
            return True
        # A method its own module calls (``self._extract_vectors(loader)``) is
        # entered in the mode of those calls, which the analysis reads.
        return bool(name_tokens(scope.name.value) & EVAL_FUNCTION_TOKENS) or bool(self.calls.call_sites.get(scope))

    def parameterless_module(self, func: cst.BaseExpression, call: cst.Call) -> bool:
        """``fft(x)`` where every binding of ``fft`` builds (``.cuda()``,
        ``.to(d)`` kept) a class proved to own no parameter: melgan's
        ``Audio2Mel``, buffers and functional ops only (project/parameterless.py),
        of this module or another project module, or a torch layer that owns
        none (``nn.ReplicationPad2d(...)``, vocabulary.kinds.parameterless_layer).
        Its output has the history of its inputs, no more."""
        key = self._key_for_read(func, self.scope_of(call))
        values = self._defs.get(key, []) if key else []
        if not values:
            return False
        for v in values:
            ctor = unwrap_pass_through(v) if isinstance(v, cst.BaseExpression) else None
            name = dotted_name(ctor.func) if ctor is not None else None
            if name is None:
                return False
            if parameterless_layer(self.names.call_name(ctor) or ""):  # type: ignore[arg-type]
                continue
            if not (name in self._parameterless or self._proved_parameterless(name)):
                return False
        return True

    def tuple_items(self, func: cst.BaseExpression, call: cst.Call) -> tuple[int, frozenset[int]] | None:
        """``loss, parts = model(x, y)`` where every binding of ``model``
        builds (``.cuda()`` kept, ``DataParallel(model)`` of itself too) one
        class whose ``forward`` returns a tuple (JDE's
        ``Darknet``): (length, the positions that never carry history,
        project/tuple_returns.py). None when any binding says otherwise."""
        if not self._forward_items and not self.calls.classes:
            return None
        if isinstance(func, cst.Attribute) and func.attr.value == "forward":
            func = func.value  # ``crit.forward(x, y)``: the same forward (ECAPA's ``self.speaker_loss.forward``)
        key = self._key_for_read(func, self.scope_of(call))
        values = self._defs.get(key, []) if key else []
        found = None
        for v in values:
            ctor = unwrap_pass_through(v) if isinstance(v, cst.BaseExpression) else None
            while ctor is not None and self.names.call_name(ctor) in _MODEL_WRAPPERS and ctor.args:
                inner = ctor.args[0].value
                if self._key_for_read(inner, self.scope_of(ctor)) == key:
                    break  # ``model = DataParallel(model)``: the same model's forward
                ctor = unwrap_pass_through(inner)  # ``DataParallel(Net()).cuda()``
            else:
                if ctor is None:
                    return None
                name = dotted_name(ctor.func)
                items = self._class_items(name) if name else None
                if items is None or found not in (None, items):
                    return None
                found = items
        return found

    def _class_items(self, name: str) -> tuple[int, frozenset[int]] | None:
        if name in self._forward_items:
            return self._forward_items[name]
        if name not in self._local_items:
            defs = self.calls.classes.get(name, [])
            found = None
            if len(defs) == 1:
                cls = self._class_trees.of(defs[0])
                items = class_forward_items(cls, self.names.bindings) if cls is not None else None
                found = (items[0], frozenset(items[1])) if items is not None else None
            self._local_items[name] = found
        return self._local_items[name]

    def _proved_parameterless(self, name: str) -> bool:
        """Every class of this module called ``name`` owns no parameter."""
        found = self._local_parameterless.get(name)
        if found is None:
            found = self._local_parameterless[name] = bool(self.calls.classes.get(name)) and all(
                self._holds_no_parameters(cls) for cls in self.calls.classes[name]
            )
        return found

    def _holds_no_parameters(self, cls: cst.ClassDef) -> bool:
        found = self._class_trees.of(cls)
        return found is not None and holds_no_parameters(found, self.names.bindings)

    def is_loss_call(self, call: cst.Call) -> bool:
        """``criterion(out, y)``, ``F.cross_entropy(out, y)``, ``nn.MSELoss()(a, b)``."""
        found = self._loss_memo.get(call)
        if found is None:
            found = self._loss_memo[call] = self._is_loss_call(call)
        return found

    def _is_loss_call(self, call: cst.Call) -> bool:
        qn = self.names.call_name(call)
        if qn is not None and _F_LOSS.match(qn):
            return True
        func = call.func
        if isinstance(func, cst.Call):
            return self._constructor_kind(func) is Kind.LOSS
        if isinstance(func, (cst.Name, cst.Attribute)):
            return self.kind_of(func, call) is Kind.LOSS
        return False

    def built_in_train_mode(self, spelled: str, scope_node: cst.CSTNode, classes: frozenset[str] = frozenset()) -> bool:
        """Every definition of ``spelled`` in scope builds a fresh module
        (``Net()``, ``nn.Sequential(...)``, ``torchvision.models.resnet18()``,
        ``timm.create_model``), possibly moved with ``.to(device)``: it starts
        in train mode. ``from_pretrained`` and ``torch.load`` do not count.
        ``classes``: local names of module classes of other project modules
        (ProjectView.model_classes)."""
        try:
            expr = cst.parse_expression(spelled)
        except Exception:
            return False
        scope = scope_node if isinstance(scope_node, (cst.FunctionDef, cst.Module)) else self.scope_of(scope_node)
        key = self._key_for_read(expr, scope)
        values = self._defs.get(key, []) if key else []
        return bool(values) and all(self._fresh(v, spelled, 0, classes) for v in values)

    def _fresh(self, value: object, spelled: str, depth: int, classes: frozenset[str] = frozenset()) -> bool:
        if not isinstance(value, cst.Call) or depth > 4:
            return False
        func = value.func
        if isinstance(func, cst.Attribute) and func.attr.value in _SELF_RETURNING:
            if not _keeps_train_mode(value):
                return False  # ``Net(cfg).eval()``: built, then switched to eval mode
            inner = func.value
            return dotted_name(inner) == spelled or self._fresh(inner, spelled, depth + 1, classes)
        if isinstance(func, cst.Name) and self._module_classes.get(func.value) is Kind.MODULE:
            return True
        if dotted_name(func) in (classes or self._mode_classes):
            return True
        if isinstance(func, cst.Name):
            fn = self.calls.resolve(value)
            if fn is not None and fn not in self.calls.class_of:
                return self._factory_fresh(fn, depth, classes)
        qn = self.names.call_name(value) or ""
        if qn.endswith(".from_pretrained") or qn.startswith("torch.hub") or qn.endswith(".load"):
            return False
        return constructor_kind(qn) is Kind.MODULE if qn else False

    def fresh_factory(self, fn: cst.FunctionDef) -> bool:
        """``fn`` returns a fresh model in train mode (_factory_fresh): its own
        switches of that model are on a path a GPU machine never takes."""
        if fn not in self._factory_memo:
            self._factory_memo[fn] = False  # a recursion is no factory
            self._factory_memo[fn] = self._factory_fresh(fn, 0, frozenset())
        return self._factory_memo[fn]

    def _factory_fresh(self, fn: cst.FunctionDef, depth: int, classes: frozenset[str]) -> bool:
        """``model = get_model(path)`` with ``get_model`` a function of this
        module whose every return hands back a model it built fresh
        (``Net()``, a project model class) and never switched nor handed to
        another call (``model.load_state_dict(state)`` and moves aside):
        in train mode. Returns after ``if torch.cuda.is_available(): return
        model.cuda()`` run only on a machine without a GPU and are not read
        (robot-surgery's ``get_model`` calls ``model.eval()`` only there)."""
        returns = self._returns.get(fn)
        if not returns:
            return False
        classes = classes or self._project_classes
        cut = _gpu_return_guard(fn, self.names)
        for value in returns:
            if cut is not None and self.calls.pos(value) >= self.calls.end(cut.body):
                continue  # its ``else`` or after it: a CPU-only machine's path
            inner = value
            while (
                isinstance(inner, cst.Call)
                and isinstance(inner.func, cst.Attribute)
                and inner.func.attr.value in _MOVES_ONLY
            ):
                inner = inner.func.value
            if isinstance(inner, cst.Call):
                if not self._fresh(inner, "", depth + 1, classes):
                    return False
                continue
            if not isinstance(inner, cst.Name):
                return False
            values = self._defs.get((fn, inner.value), [])
            if not values or not all(self._fresh(v, inner.value, depth + 1, classes) for v in values):
                return False
            if self._touched_before(fn, inner.value, value):
                return False
        return True

    def _touched_before(self, fn: cst.FunctionDef, name: str, before: cst.CSTNode) -> bool:
        """A call in ``fn`` before ``before`` that may switch ``name``'s mode:
        a method of it other than loading and moves (``model.eval()``,
        ``model.apply(f)``), or any call handed it (``enable_dropout(model)``)."""
        end = self.calls.pos(before)
        for call in self.calls.calls_in.get(fn, ()):
            if self.calls.pos(call) >= end:
                continue
            func = call.func
            if isinstance(func, cst.Attribute) and dotted_name(func.value) == name:
                if func.attr.value not in _MOVES_ONLY and func.attr.value not in _LOADS:
                    return True
            if any(dotted_name(a.value) == name for a in call.args):
                return True
        return False

    def mode_dependent(self, spelled: str, scope_node: cst.CSTNode) -> bool | None:
        """Whether ``.train()``/``.eval()`` changes what the module computes:
        True when it holds dropout or batch norm (or reads ``self.training``),
        False when every part of it is known and none does, None when some
        part comes from outside (a pretrained backbone, a parameter)."""
        try:
            expr = cst.parse_expression(spelled)
        except Exception:
            return None
        scope = scope_node if isinstance(scope_node, (cst.FunctionDef, cst.Module)) else self.scope_of(scope_node)
        key = self._key_for_read(expr, scope)
        values = self._defs.get(key, []) if key else []
        if not values:
            return None
        if len(values) > 1 and scope is self.calls.module:
            values = self.in_effect(values, scope_node)
        results = {self._value_mode_dependent(v, spelled, 0) for v in values}
        if True in results:
            return True
        return False if results == {False} else None

    def in_effect(self, defs: list, node: cst.CSTNode) -> list:
        """Of several definitions, the one in effect at ``node`` when the
        script runs top to bottom: every definition is itself a statement of
        the module's body (a notebook cell's ``model = Classifier()``, a
        ``class Classifier`` redefined in a later cell, none inside a loop or
        branch) and ``node`` runs in the module's body too (not in a function,
        which may be called later): the last definition above ``node``.
        Otherwise all of them."""
        top = self._module_statement(node)
        if top is None:
            return defs
        starts = []
        for d in defs:
            statement = self._direct_statement(d) if isinstance(d, cst.CSTNode) else None
            if statement is None:
                return defs
            starts.append(self.calls.pos(statement))
        at = self.calls.pos(top)
        before = [d for d, start in zip(defs, starts) if start < at]
        return before[-1:] if before else defs

    def _module_statement(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The statement of the module's body that holds ``node``, or None
        inside a function, lambda or class body."""
        cur: cst.CSTNode | None = node
        while cur is not None:
            parent = self.parents.get(cur)
            if isinstance(parent, cst.Module):
                return cur
            if cur is not node and isinstance(cur, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return None
            cur = parent
        return None

    def _direct_statement(self, definition: cst.CSTNode) -> cst.CSTNode | None:
        """``definition`` (a class, or the value of an assignment) is a
        statement of the module's body itself, not nested in any block."""
        if isinstance(definition, cst.ClassDef):
            return definition if isinstance(self.parents.get(definition), cst.Module) else None
        small = self.parents.get(definition)
        line = self.parents.get(small) if isinstance(small, (cst.Assign, cst.AnnAssign)) else None
        return (
            line
            if isinstance(line, cst.SimpleStatementLine) and isinstance(self.parents.get(line), cst.Module)
            else None
        )

    def _value_mode_dependent(self, value: object, spelled: str, depth: int) -> bool | None:
        if not isinstance(value, cst.Call) or depth > 4:
            return None
        func = value.func
        if isinstance(func, cst.Attribute) and func.attr.value in _SELF_RETURNING:
            if dotted_name(func.value) == spelled:
                return False  # ``model = model.to(device)`` adds nothing
            return self._value_mode_dependent(func.value, spelled, depth + 1)
        return _ModeDependence(self).of_call(value)

    def class_mode_dependence(self, name: str) -> bool | None:
        """Whether ``.eval()`` changes what a module of the class ``name``
        (defined in this module) computes: True (dropout, batch norm, running
        statistics, ``self.training``), False (provably none, through its
        submodules, its bases of this file and the helpers that build its
        layers), None (a part we cannot follow). A fact per class, so that
        the project stage can carry it to the modules that import the class."""
        return _ModeDependence(self).of_class(name, 0)

    def loss_reduction_none(self, call: cst.Call) -> bool:
        """The loss object called here was built with ``reduction="none"``
        (or a reduction we cannot read), so its result is not one number."""
        func = call.func
        ctor: cst.BaseExpression | None = func if isinstance(func, cst.Call) else None
        if ctor is None and isinstance(func, (cst.Name, cst.Attribute)):
            key = self._key_for_read(func, self.scope_of(call))
            values = [v for v in self._defs.get(key, ()) if isinstance(v, cst.Call)] if key else []
            ctor = values[0] if len(values) == 1 else None
        if not isinstance(ctor, cst.Call):
            return False
        for arg in ctor.args:
            if arg.keyword is not None and arg.keyword.value in ("reduction", "reduce", "size_average"):
                if arg.keyword.value != "reduction":
                    return True
                value = arg.value
                return not (isinstance(value, cst.SimpleString) and value.evaluated_value in ("mean", "sum"))
        return False

    def is_backward_call(self, call: cst.Call) -> bool:
        """``x.backward()``, ``scaler.scale(l).backward()``, ``torch.autograd.backward(l)``,
        ``accelerator.backward(l)``, ``self.manual_backward(l)``."""
        func = call.func
        qn = self.names.call_name(call)
        if qn in ("torch.autograd.backward", "torch.autograd.grad"):
            return True
        if isinstance(func, cst.Attribute):
            attr = func.attr.value
            if attr == "manual_backward":
                return True
            if attr == "backward":
                # ``accelerator.backward(loss)`` takes the loss; ``loss.backward()`` does not.
                return True
        return False

    def trains_through_call(self, call: cst.Call) -> cst.FunctionDef | bool:
        """``compute_loss(x, y)`` on a name every binding of which is an
        instance of one class with a ``__call__``: True for a class of
        another project module whose ``__call__`` backpropagates or steps,
        that ``__call__`` for a class of this module (its caller asks what
        it does); False otherwise."""
        func = call.func
        if not isinstance(func, cst.Name):
            return False
        key = self._key_for_read(func, self.scope_of(call))
        values = self._defs.get(key, []) if key is not None else []
        if not values or key in self._params:  # type: ignore[comparison-overlap]
            return False
        spelled = {dotted_name(v.func) if isinstance(v, cst.Call) else None for v in values}
        if len(spelled) != 1 or None in spelled:
            return False
        cls = spelled.pop()
        if cls in self._trainer_classes:
            return True
        defs = self.calls.classes.get(cls or "", [])
        method = self.calls.find_method(defs[0], "__call__") if len(defs) == 1 else None
        return method if method is not None else False

    def is_optimizer_step(self, call: cst.Call) -> bool:
        """``opt.step()`` on an optimizer, or ``scaler.step(opt)``."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "step"):
            return False
        kind = self.kind_of(func.value, call)
        if kind is Kind.OPTIMIZER:
            return True
        return kind is Kind.SCALER and bool(call.args)

    def is_scaler_step(self, call: cst.Call) -> bool:
        func = call.func
        return (
            isinstance(func, cst.Attribute)
            and func.attr.value == "step"
            and self.kind_of(func.value, call) is Kind.SCALER
        )

    def is_zero_grad(self, call: cst.Call) -> bool:
        func = call.func
        return isinstance(func, cst.Attribute) and func.attr.value == "zero_grad"

    def _each_a_module(self, expr: cst.BaseExpression, call: cst.Call) -> bool:
        """``x`` in ``[x.eval() for x in (embedding_net, cls_head)]``: every
        element of the display it iterates is a module."""
        items = literal_items(expr, self.parents) if isinstance(expr, cst.Name) else None
        return bool(items) and all(self.kind_of(item, call) is Kind.MODULE for item in items or ())

    def mode_call(self, call: cst.Call) -> str | None:
        """ "train"/"eval" for ``m.train()``/``m.eval()``/``m.train(False)`` on a
        module, "unknown" for ``m.train(flag)``, None for anything else."""
        func = call.func
        if isinstance(func, cst.Attribute) and self._method_evals and func.attr.value not in ("train", "eval"):
            return "eval" if self._evals_by_method(func, call) else None
        if not isinstance(func, cst.Attribute) or func.attr.value not in ("train", "eval"):
            return None
        if func.attr.value == "eval" and call.args:
            return None
        if self.kind_of(func.value, call) is not Kind.MODULE and not self._each_a_module(func.value, call):
            # ``self._network.eval()`` then ``self._network.extract_vector(x)``:
            # what is switched and run through a named forward is a module.
            if func.attr.value != "eval":
                return None
            return (
                "eval" if self._runs_a_named_forward(func.value, call) or self._evals_held(func.value, call) else None
            )
        if func.attr.value == "eval":
            return "eval"
        if not call.args:
            return "train"
        arg = call.args[0].value
        if isinstance(arg, cst.Name) and arg.value in ("True", "False"):
            return "train" if arg.value == "True" else "eval"
        return "unknown"


def _gpu_return_guard(fn: cst.FunctionDef, names: ImportTable) -> cst.If | None:
    """A statement of ``fn``'s body ``if torch.cuda.is_available(): ... return
    ...``: its ``else`` and what follows it run only where no GPU is."""
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else ()
    for stmt in body:
        if not isinstance(stmt, cst.If) or isinstance(stmt.orelse, cst.If):
            continue  # an ``elif``: another condition
        test = stmt.test
        if not (isinstance(test, cst.Call) and not test.args and names.call_name(test) == "torch.cuda.is_available"):
            continue
        last = stmt.body.body[-1] if isinstance(stmt.body, cst.IndentedBlock) and stmt.body.body else None
        if (
            isinstance(last, cst.SimpleStatementLine)
            and last.body
            and isinstance(last.body[-1], cst.Return)
            and last.body[-1].value is not None
        ):
            return stmt
    return None


_MODULE_SEQUENCES = frozenset(
    {
        "torch.nn.ModuleList",
        "torch.nn.Sequential",
        "torch.nn.modules.container.ModuleList",
        "torch.nn.modules.container.Sequential",
    }
)


def _annotation_kind(qn: str) -> Kind | None:
    last = qn.rsplit(".", 1)[-1]
    if qn.startswith("torch.nn") and last == "Module":
        return Kind.MODULE
    if qn.startswith("torch.optim") and last == "Optimizer":
        return Kind.OPTIMIZER
    if last in ("_LRScheduler", "LRScheduler", "LambdaLR") and qn.startswith("torch.optim"):
        return Kind.SCHEDULER
    if qn in SCALER_NAMES:
        return Kind.SCALER
    if last == "DataLoader":
        return Kind.LOADER
    if last.endswith("Loss") and last[:1].isupper():
        return Kind.LOSS  # torch.nn, segmentation_models_pytorch, kornia, timm...
    return None


def _tuple_items(value: object, n: int) -> list[object] | None:
    if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == n:
        if not any(isinstance(el, cst.StarredElement) for el in value.elements):
            return [el.value for el in value.elements]
    return None


_BUILTINS = frozenset({"self", "cls", "super", "print", "len", "range", "None", "True", "False"})


# Layers whose output differs between train and eval mode.
_MODE_DEPENDENT_LAYERS = re.compile(
    r"^torch\.nn\.(\w*Dropout\w*|\w*BatchNorm\w*|RReLU|Transformer\w*)$"
    r"|^torch\.nn\.functional\.(\w*dropout\w*|batch_norm|rrelu)$"
)
# Layers whose ``dropout`` argument (keyword, or the positional index given)
# switches with the mode when it is not zero.
_DROPOUT_ARGUMENT = {"LSTM": 5, "GRU": 5, "RNN": 6, "MultiheadAttention": 2}
# Instance norm is mode-dependent only with ``track_running_stats=True``
# (the fourth positional parameter).
_INSTANCE_NORMS = frozenset({"InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"})


class _ModeDependence:
    """Does a module built by this call change what it computes with the mode
    (dropout, batch norm, running statistics, a read of ``self.training``)?
    True, False when every part is known and none does, None when a part
    comes from outside. The answer per class of this module is kept in the
    table (``ObjectTable.class_mode_dependence``); built per question, so the
    table holds no reference back to it (no cycle)."""

    def __init__(self, table: ObjectTable) -> None:
        self.table = table
        self._classes = table._class_modes

    def of_call(self, call: cst.Call, depth: int = 0) -> bool | None:
        if depth > 6:
            return None
        func = call.func
        if isinstance(func, cst.Name) and func.value in self.table.calls.classes:
            defs = self.table.calls.classes[func.value]
            chosen = self.table.in_effect(defs, call) if len(defs) > 1 else defs
            found = self.of_class(func.value, depth, chosen[0] if len(chosen) == 1 else None)
            if found is None and len(chosen) == 1:
                return self._of_instance(call, chosen[0], depth)
            return found
        helper = self.table.calls.resolve(call)
        if helper is not None:
            return self._of_helper(call, helper, depth)
        qn = self.table.names.call_name(call)
        if qn is None:
            return None
        if _MODE_DEPENDENT_LAYERS.match(qn):
            return True
        last = qn.rsplit(".", 1)[-1]
        if qn.startswith("torch.nn.") and last in _DROPOUT_ARGUMENT:
            return _nonzero_argument(call, "dropout", _DROPOUT_ARGUMENT[last], zero="0")
        if qn.startswith("torch.nn.") and last in _INSTANCE_NORMS:
            return _nonzero_argument(call, "track_running_stats", 3, zero="False")
        if qn.startswith("torch.nn.") and last in ("Sequential", "ModuleList", "ModuleDict"):
            return self._all([a.value for a in call.args], depth)
        if qn.startswith("torch.nn.") and constructor_kind(qn) is Kind.MODULE:
            return False  # Linear, Conv2d, ReLU, LayerNorm...
        return None  # torchvision, timm, transformers: assume the worst

    def _of_instance(self, call: cst.Call, cls: cst.ClassDef, depth: int) -> bool | None:
        """``TemporalShift(nn.Sequential(), n_segment=8)``: a class of this
        module (no base of this file) that is unknown only because its
        ``__init__`` keeps what it is handed (``self.net = net``): judged with
        this call's arguments (or the defaults) in those parameters' place."""
        if any(dotted_name(b.value) in self.table.calls.classes for b in cls.bases):
            return None
        init = self.table.calls.find_method(cls, "__init__")
        if init is None or isinstance(init.params.star_arg, cst.Param) or init.params.star_kwarg is not None:
            return None
        params = [*init.params.posonly_params, *init.params.params][1:]
        named = {p.name.value: p for p in (*params, *init.params.kwonly_params)}
        given: dict[str, cst.BaseExpression] = {}
        for i, arg in enumerate(call.args):
            if arg.star or (arg.keyword is None and i >= len(params)):
                return None
            given[arg.keyword.value if arg.keyword is not None else params[i].name.value] = arg.value
        whole, own = _ClassModeParts(self.table.names), _ClassModeParts(self.table.names)
        visit_fast(cls.body, whole)
        visit_fast(init.body, own)
        if whole.reads_training:
            return True
        kept = {id(part) for part in own.parts if isinstance(part, cst.Name) and part.value in named}
        if not kept or own.rebound & {n for n in named}:
            return None  # nothing handed in is kept, or a parameter is rebound before it is
        parts: list[cst.BaseExpression] = []
        for part in whole.parts:
            if id(part) not in kept:
                parts.append(part)
                continue
            value = given.get(part.value) or named[part.value].default  # type: ignore[attr-defined]
            if value is None:
                return None
            parts.append(value)
        return self._all(parts, depth)

    def _of_helper(self, call: cst.Call, fn: cst.FunctionDef, depth: int) -> bool | None:
        """``layer_init(nn.Linear(4, 64))``: a function of this module that
        returns the layer it is given (after initialising its weights), or
        builds one: judged by what it returns. A helper that sets attributes
        on its argument (it may add a layer) is not followed."""
        returns = self.table._returns.get(fn, [])
        if not returns:
            return None
        params = dict((param, arg.value) for arg, param in bound_params(call, fn))
        parts: list[cst.BaseExpression] = []
        for value in returns:
            if isinstance(value, cst.Name) and value.value in params:
                if _sets_attributes_on(fn, value.value):
                    return None
                parts.append(params[value.value])
            elif isinstance(value, cst.Call):
                parts.append(value)
            else:
                return None
        return self._all(parts, depth)

    def _all(self, exprs: list[cst.BaseExpression], depth: int) -> bool | None:
        results: set[bool | None] = set()
        stack = list(exprs)
        while stack:
            e = stack.pop()
            if isinstance(e, cst.Call):
                results.add(self.of_call(e, depth + 1))
            elif isinstance(e, (cst.List, cst.Tuple)):
                stack.extend(el.value for el in e.elements)
            elif isinstance(e, cst.Dict):
                stack.extend(el.value for el in e.elements if isinstance(el, cst.DictElement))
            elif isinstance(e, (cst.Integer, cst.Float, cst.SimpleString, cst.FormattedString, cst.Comparison)):
                continue
            elif isinstance(e, (cst.Name, cst.Attribute)):
                # ``self.hidden_size = hidden_size`` is no layer; ``self.backbone = backbone`` may be.
                if self.table.kind_of(e) in (Kind.MODULE, None) and guess_kind_from_name(_last(e)) is Kind.MODULE:
                    results.add(None)
            elif isinstance(e, cst.BinaryOperation):
                continue
            else:
                results.add(None)
        if True in results:
            return True
        return None if None in results else False

    def of_class(self, name: str, depth: int, cls: cst.ClassDef | None = None) -> bool | None:
        """``cls``: the one of several definitions of ``name`` in effect
        (``in_effect``); without it, a name defined more than once is unknown."""
        defs = self.table.calls.classes.get(name, [])
        if cls is None:
            if len(defs) != 1:
                return None
            cls = defs[0]
        memo = name if len(defs) == 1 else f"{name}@{self.table.calls.pos(cls)[0]}"
        if memo in self._classes:
            return self._classes[memo]
        self._classes[memo] = None  # recursion guard
        if self.table._module_classes.get(name) is not Kind.MODULE:
            return None
        local_bases = [b for b in (dotted_name(b.value) for b in cls.bases) if b in self.table.calls.classes]
        visitor = _ClassModeParts(self.table.names)
        visit_fast(cls.body, visitor)
        if visitor.reads_training:
            result: bool | None = True
        else:
            # A base class of this file adds its own layers: ``class Critic(MLP)``.
            own = self._all(visitor.parts, depth)
            inherited = {self.of_class(b, depth + 1) for b in local_bases}
            results = {own, *inherited}
            result = True if True in results else None if None in results else False
        self._classes[memo] = result
        return result


def _nonzero_argument(call: cst.Call, keyword: str, position: int, zero: str) -> bool | None:
    """The argument is absent (False), a literal ``zero`` (False), anything
    else (True for a literal, None for a value we cannot read)."""
    value: cst.BaseExpression | None = None
    for i, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value == keyword:
            value = arg.value
        elif arg.keyword is None and arg.star:
            return None
        elif arg.keyword is None and i == position:
            value = arg.value
    if value is None:
        return False
    if isinstance(value, (cst.Integer, cst.Float)):
        return float(value.value) != 0.0
    if isinstance(value, cst.Name) and value.value in ("True", "False"):
        return value.value != zero
    return True if zero == "0" and not isinstance(value, (cst.Name, cst.Attribute)) else None


def _sets_attributes_on(fn: cst.FunctionDef, name: str) -> bool:
    finder = _AttributeWrites(name)
    visit_fast(fn.body, finder)
    return finder.found


class _AttributeWrites(cst.CSTVisitor):
    """``layer.extra = ...``, ``setattr(layer, ...)``, ``layer.add_module(...)``."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.found = False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        target = node.target
        if isinstance(target, cst.Attribute) and dotted_name(target.value) == self.name:
            self.found = True

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name) and func.value == "setattr":
            self.found = True
        elif isinstance(func, cst.Attribute) and func.attr.value in ("add_module", "register_module"):
            self.found = self.found or dotted_name(func.value) == self.name


class _ClassModeParts(cst.CSTVisitor):
    """In a class body: the values assigned to ``self.x`` and what reads the
    training mode (``self.training``, a dropout or batch-norm layer)."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, names: ImportTable) -> None:
        super().__init__()
        self.names = names
        self.parts: list[cst.BaseExpression] = []
        self.reads_training: list[cst.CSTNode] = []
        self.rebound: set[str] = set()  # plain names assigned (a parameter rebound: _of_instance)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Attribute) and dotted_name(t.target.value) == "self":
                self.parts.append(node.value)
            elif isinstance(t.target, cst.Name):
                self.rebound.add(t.target.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.rebound.add(node.target.value)

    def visit_Call(self, node: cst.Call) -> None:
        qn = self.names.call_name(node) or ""
        if _MODE_DEPENDENT_LAYERS.match(qn):
            self.reads_training.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "training" and dotted_name(node.value) == "self":
            self.reads_training.append(node)


def _last(e: cst.BaseExpression) -> str:
    return e.attr.value if isinstance(e, cst.Attribute) else e.value if isinstance(e, cst.Name) else ""
