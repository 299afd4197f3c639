"""MEM703 loop-invariant-device-move."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.integer_names import IntegerNames
from memlint.analysis.scope.names import dotted_name, flat_targets, mentions
from memlint.analysis.training.settings_loops import sweeps_settings
from memlint.analysis.training.training_verbs import VerbKind
from memlint.parse.traversal import visit_fast
from memlint.rule import Invalid, Rule, Safety, Valid
from memlint.vocabulary.input_readers import INPUT_READERS
from memlint.vocabulary.kinds import Kind
from memlint.vocabulary.ops import is_inplace_method
from memlint.vocabulary.tokens import names_samples

_WRAPPERS = frozenset({"enumerate", "tqdm", "iter", "zip", "list", "islice", "trange"})
_FACTORIES = frozenset(
    {"tensor", "ones", "zeros", "full", "eye", "arange", "linspace", "as_tensor", "Tensor", "FloatTensor", "LongTensor"}
)
_SHAPING = frozenset({"view", "reshape", "float", "long", "unsqueeze", "expand", "double", "half", "t"})
_BROADCASTS = frozenset({"expand", "expand_as"})  # the per-call path: a view over the constant
_SIZES = frozenset({"size", "numel", "dim"})
_PER_CALL_METHODS = frozenset({"forward", "__call__", "__init__"})
# ``metric_logger.log_every(data_loader, print_freq, header)`` (DeiT, MAE,
# VideoMAE's MetricLogger): yields its first argument's items, with timing.
_LOGGING_WRAPPERS = frozenset({"log_every"})


def _draws_from_queue(loop: cst.While) -> bool:
    """``while True: inputs, targets = queue.get()`` (kospeech's trainer,
    fed by loader threads): the first statement of every iteration takes the
    next batch from a queue, so the loop runs once per batch, trained or
    not. The receiver is named for one (``queue``, ``self.valid_queue``)."""
    body = loop.body
    first = body.body[0] if isinstance(body, cst.IndentedBlock) and body.body else None
    if not isinstance(first, cst.SimpleStatementLine) or not isinstance(first.body[0], cst.Assign):
        return False
    value = first.body[0].value
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "get"):
        return False
    receiver = (dotted_name(value.func.value) or "").rsplit(".", 1)[-1]
    return "queue" in receiver.lower()


def _param_names(fn: cst.FunctionDef) -> set[str]:
    p = fn.params
    return {x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)}


def _view_index(el: cst.SubscriptElement, names) -> bool:
    """``None``, ``:`` or a literal index: a view of the tensor indexed."""
    s = el.slice
    if isinstance(s, cst.Slice):
        return all(part is None for part in (s.lower, s.upper, s.step))
    return isinstance(s, cst.Index) and (
        (isinstance(s.value, cst.Name) and s.value.value == "None") or _literal(s.value, names)
    )


def _device_test(test: cst.BaseExpression, names) -> bool:
    """``x.is_cuda`` or ``torch.cuda.is_available()``: where tensors live,
    the same on every call."""
    if isinstance(test, cst.Attribute):
        return test.attr.value == "is_cuda"
    return isinstance(test, cst.Call) and names.call_name(test) == "torch.cuda.is_available"


def _wrapper(func: cst.BaseExpression) -> bool:
    """``enumerate``/``tqdm``... or ``logger.log_every``: iterates its first argument."""
    if isinstance(func, cst.Name):
        return func.value in _WRAPPERS
    return isinstance(func, cst.Attribute) and func.attr.value in _LOGGING_WRAPPERS


def _literal(expr: cst.BaseExpression, names, constants: frozenset[str] = frozenset()) -> bool:
    """A value fixed before the loop runs: literals, arithmetic on them, a
    comprehension over them, ``torch.float32``, and ``constants`` (module
    constants such as ``MEAN = (0.485, 0.456, 0.406)``)."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(expr, cst.UnaryOperation):
        return _literal(expr.expression, names, constants)
    if isinstance(expr, cst.BinaryOperation):
        return _literal(expr.left, names, constants) and _literal(expr.right, names, constants)
    if isinstance(expr, (cst.List, cst.Tuple)):
        return all(_literal(el.value, names, constants) for el in expr.elements)
    if isinstance(expr, (cst.ListComp, cst.GeneratorExp)) and expr.for_in.inner_for_in is None and not expr.for_in.ifs:
        comp = expr.for_in
        bound = {t.value for t in flat_targets(comp.target) if isinstance(t, cst.Name)}
        return _literal(comp.iter, names, constants) and _literal(expr.elt, names, constants | bound)
    if isinstance(expr, cst.Name):
        return expr.value in ("True", "False", "None") or expr.value in constants
    qn = names.qualified_name(expr) if isinstance(expr, cst.Attribute) else None
    return qn is not None and qn.startswith("torch.") and qn.rsplit(".", 1)[-1][:1].islower()


_CONCATENATIONS = frozenset(
    {"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack"}
)


class _ConcatenatedOnto(cst.CSTVisitor):
    """``key = torch.cat((key, ...))`` (or ``(..., key)``), except ``start``."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, key: str, start: cst.Assign, names) -> None:
        super().__init__()
        self.key = key
        self.start = start
        self.names = names
        self.found: list[cst.Assign] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        value, key = node.value, self.key
        if node is self.start or not isinstance(value, cst.Call) or self.names.call_name(value) not in _CONCATENATIONS:
            return
        parts = value.args[0].value if value.args else None
        if not isinstance(parts, (cst.List, cst.Tuple)):
            return
        if any(dotted_name(t.target) == key for t in node.targets) and any(
            dotted_name(el.value) == key for el in parts.elements
        ):
            self.found.append(node)


def _grown_in(loop: cst.For | cst.While, key: str, start: cst.Assign, names) -> bool:
    """``acc = torch.Tensor([]).cuda()`` then ``acc = torch.cat((acc, out))``:
    a per-batch seed that the loop concatenates onto, not a constant. (A
    scalar seed summed onto, ``reg = torch.tensor(0.0).to(device)`` then
    ``reg = reg + ...``, stays reported: a Python ``0.0`` does the same
    without a copy to the device.)"""
    visitor = _ConcatenatedOnto(key, start, names)
    visit_fast(loop.body, visitor)  # type: ignore[attr-defined]
    return bool(visitor.found)


def _flag(test: cst.BaseExpression, names) -> str | None:
    """The name a plain flag test reads (``use_cuda``, ``not args.cpu``,
    ``self.use_gpu``); ``""`` for ``torch.cuda.is_available()``; None for any
    other test (a comparison such as ``step == 0`` picks iterations)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
    if isinstance(test, cst.Call) and not test.args and names.call_name(test) == "torch.cuda.is_available":
        return ""
    return dotted_name(test) if isinstance(test, (cst.Name, cst.Attribute)) else None


def _number(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    return isinstance(expr, (cst.Integer, cst.Float))


def _fixed_test(test: cst.BaseExpression, names) -> str | None:
    """A flag (``_flag``), or an option compared with a number (``if
    args.w_chamfer > 0:``, an attribute of a name other than ``self``): the
    name it reads, which the loop must not bind for the test to pick the
    same arm on every iteration; None otherwise."""
    flag = _flag(test, names)
    if flag is not None:
        return flag
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    option = test.left
    if not (isinstance(option, cst.Attribute) and _number(test.comparisons[0].comparator)):
        return None
    key = dotted_name(option)
    if key is None or key.startswith("self."):
        return None
    return key


def _settings(test: cst.BaseExpression, names) -> list[str] | None:
    """The names a test of settings reads (``_setting``, joined by ``and``/``or``)."""
    if isinstance(test, cst.BooleanOperation):
        left, right = _settings(test.left, names), _settings(test.right, names)
        return None if left is None or right is None else left + right
    name = _setting(test, names)
    return None if name is None else [name]


def _setting(test: cst.BaseExpression, names) -> str | None:
    """A flag (``_flag``), or a dotted name compared with ``==``/``!=``/``in``
    to string literals only (``args.loss == "contrastive"``); None otherwise."""
    flag = _flag(test, names)
    if flag is not None:
        return flag
    if not (isinstance(test, cst.Comparison) and isinstance(test.left, (cst.Name, cst.Attribute))):
        return None
    for target in test.comparisons:
        strings = target.comparator
        parts = strings.elements if isinstance(strings, (cst.Tuple, cst.List, cst.Set)) else None
        if not isinstance(target.operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)):
            return None
        values = [el.value for el in parts] if parts is not None else [strings]
        if not values or not all(isinstance(v, cst.SimpleString) for v in values):
            return None
    return dotted_name(test.left)


class _Touches(cst.CSTVisitor):
    """Any reading of ``key`` other than by itself (``key.append(net)``,
    ``key[0] = net``), and ``del key[...]``: the loop may change its models."""

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if dotted_name(node.value) == self.key:
            self.found = True

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if dotted_name(node.value) == self.key:
            self.found = True


class _BindsAny(cst.CSTVisitor):
    """Assignment, ``:=`` and ``for`` targets spelled one of ``roots``."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, roots: set[str]) -> None:
        super().__init__()
        self.roots = roots
        self.found: list[cst.BaseExpression] = []

    def _target(self, target: cst.BaseExpression) -> None:
        for t in flat_targets(target):
            if dotted_name(t) in self.roots:
                self.found.append(t)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._target(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._target(node.target)


def _binds(loop: cst.For | cst.While, key: str) -> bool:
    """``key`` (or its root) is assigned in the loop or is its target."""
    if not key:
        return False
    roots = {key, key.split(".", 1)[0]} if not key.startswith("self.") else {key}
    visitor = _BindsAny(roots)
    visit_fast(loop, visitor)
    return bool(visitor.found)


class _UpperNames(cst.CSTVisitor):
    """Every name in an expression (``_upper_names`` keeps the UPPER_CASE ones)."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self) -> None:
        super().__init__()
        self.found: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.found.add(node.value)


def _upper_names(expr: cst.BaseExpression) -> set[str]:
    visitor = _UpperNames()
    visit_fast(expr, visitor)
    return {name for name in visitor.found if name.isupper()}


# Factories whose values their sizes fix (not ``FloatTensor(n, m)``'s
# uninitialised memory, a synthetic input drawn anew each iteration).
_FILLED = frozenset({"arange", "ones", "zeros", "full", "eye", "linspace"})


def _filled_factory(recv: cst.BaseExpression, names) -> bool:
    """The torch factory under ``recv``'s shaping calls is one of ``_FILLED``."""
    while isinstance(recv, cst.Call) and isinstance(recv.func, cst.Attribute) and recv.func.attr.value in _SHAPING:
        recv = recv.func.value
    qn = (names.call_name(recv) or "") if isinstance(recv, cst.Call) else ""
    return qn.startswith("torch.") and qn.rsplit(".", 1)[-1] in _FILLED


def _plain_names(expr: cst.BaseExpression) -> set[str]:
    visitor = _UpperNames()
    visit_fast(expr, visitor)
    return visitor.found


class _Mutations(cst.CSTVisitor):
    """In-place changes of ``key``: ``key.add_(...)``, ``key += ...``, ``key[i] = ...``."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, key: str | None) -> None:
        super().__init__()
        self.key = key
        self.found: list[cst.CSTNode] = []

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if isinstance(f, cst.Attribute) and dotted_name(f.value) == self.key and is_inplace_method(f.attr.value):
            self.found.append(node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if dotted_name(node.target) == self.key:
            self.found.append(node)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Subscript) and dotted_name(node.target.value) == self.key:
            self.found.append(node)


class _RunsModule(cst.CSTVisitor):
    """Calls of ``key``, and calls handed ``key``."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        key = self.key
        if dotted_name(node.func) == key or any(dotted_name(a.value) == key for a in node.args):
            self.found.append(node)


class _InputReads(cst.CSTVisitor):
    """A call of an input reader (``cv2.imread``) whose arguments name one of
    ``keys`` (the loop's variables)."""

    # A module-level class, not one per call (see _RunsModule).
    def __init__(self, names, keys: set[str]) -> None:
        super().__init__()
        self.names = names
        self.keys = keys
        self.found = False

    def visit_Call(self, node: cst.Call) -> bool:
        if self.found:
            return False
        if self.names.call_name(node) in INPUT_READERS and any(
            mentions(arg.value, key) for arg in node.args for key in self.keys
        ):
            self.found = True
            return False
        return True


class _LoadsState(cst.CSTVisitor):
    """``key.load_state_dict(...)`` (or of a part: ``key.module``)."""

    # A module-level class, not one per call (see _RunsModule).
    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "load_state_dict":
            owner = dotted_name(func.value) or ""
            if owner == self.key or owner.startswith(self.key + "."):
                self.found = True


class _Rebinds(cst.CSTVisitor):
    """Bindings of ``key`` to a new object: assignments other than ``key =
    move``, ``for`` and ``with ... as`` targets."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, key: str, move: cst.Call) -> None:
        super().__init__()
        self.key = key
        self.move = move
        self.found: list[cst.BaseExpression] = []

    def _target(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            # ``x, model = x.to(dev), model.to(dev)``: element by element.
            values = [None] * len(target.elements)
            if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(values):
                values = [el.value for el in value.elements]
            for el, v in zip(target.elements, values):
                self._target(el.value, v)
        elif dotted_name(target) == self.key:
            # ``model = model.to(device)`` keeps the object.
            if not (isinstance(value, cst.Call) and value is self.move):
                self.found.append(target)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._target(t.target, node.value)

    def visit_For(self, node: cst.For) -> None:
        self._target(node.target, None)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._target(node.asname.name, None)


class _OtherMoves(cst.CSTVisitor):
    """``key.cpu()``, ``key.to(...)``, ``key.cuda()`` other than ``move``."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, key: str, move: cst.Call) -> None:
        super().__init__()
        self.key = key
        self.move = move
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if node is not self.move and isinstance(f, cst.Attribute) and dotted_name(f.value) == self.key:
            if f.attr.value in ("cpu", "to", "cuda"):
                self.found.append(node)


class LoopInvariantDeviceMove(Rule):
    """
    ## What it does
    Flags `model.to(device)` / `model.cuda()` (or a criterion) inside the batch
    loop, and constant tensors built and moved to the GPU on every batch
    (`torch.tensor([0.485, 0.456, 0.406]).cuda()`).

    ## Why it matters
    The model does not move between batches: after the first iteration the
    call walks every parameter and buffer only to find them already there,
    on every step. A constant tensor is created on the host and copied to the
    device on every step, a synchronising host-to-device transfer that also
    churns the caching allocator. Move once, before the loop.

    ## Example
    ```python
    for x, y in loader:
        model.to(device)
        mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1).cuda()
        loss = criterion(model((x.cuda() - mean)), y.cuda())
    ```

    ## Use instead
    ```python
    model.to(device)
    mean = torch.tensor([0.485, 0.456, 0.406], device=device).view(1, 3, 1, 1)
    for x, y in loader:
        loss = criterion(model((x.to(device) - mean)), y.to(device))
    ```

    ## Fix safety
    No fix: hoisting code out of a loop is for the author to do. Per-batch
    data moves (`x.to(device)`) are required and never flagged; neither are
    loops over models, folds, experiments (the module is rebound or is the
    loop variable) or checkpoints (the loop loads a state dict into it), moves under a condition that picks iterations
    (`if step == 0:`; a flag the loop never changes, `if use_cuda:`, or an
    option compared with a number, `if args.w_chamfer > 0:` (not `self.<attr>`,
    which a method may change), does not pick any, and a move in its `else` arm never runs beside the
    move in its body: that is no back-and-forth), loops
    that move the module back and forth on purpose (CPU offloading), nor a
    tensor the loop then fills in place or concatenates onto
    (`acc = torch.cat((acc, out))`: a per-batch buffer or seed, not a constant).

    ## Details
    Across modules, also a constant built and moved in the `forward` of a class
    that another module of the project builds where it trains (a loss called
    once per batch), or in the `__init__` of a class another module builds
    inside its training loop, or in a module-level function another module calls
    in each iteration of its training loop (`torch.eye(d)` moved by a
    regularizer, `d` a size of its argument past the batch dimension). Also a
    loop over the same models inside the batch loop (`for net in nets:
    net.to(device); net(x)`, `nets` bound outside the batch loop and left alone
    there, under flags or settings compared with strings at most): each batch
    moves them again. A loop over files that reads its input from the file it
    names (`cv2.imread(name)`, `Image.open(path)`, `np.load(f)`) and calls the
    model is a data loop too: the model moves again for every file (not when
    the move's device is the loop's own variable). A loop over a literal list
    of settings (`tols = [1e-1, 1e-2]` then `for tol in tols:`, or `for lr in
    (0.1, 0.01):`) is one iteration per experiment of a sweep, not per batch:
    silent.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.to
    - https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html
    """

    code = "MEM703"
    name = "loop-invariant-device-move"
    message = "loop-invariant device move inside the batch loop: move once, before the loop"
    fix_safety = Safety.NONE
    project_facts = (
        "Which classes of this module other modules of the project run once per batch: a class built by a "
        "module whose loop backpropagates (its `forward` runs once per batch) or built inside such a loop "
        "(its `__init__` runs once per batch). A constant built and moved there is reported, and the message "
        'names the module that builds the object ("train.py:65 builds the object where it trains"). '
        "Which module-level functions of this module other modules call inside the iteration of a loop that "
        "backpropagates: a constant such a function builds and moves (under `if x.is_cuda:` at most) is reported, "
        'naming the call ("train.py:112 calls it once per batch").'
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in ("to", "cuda"):
            return
        loop = self._enclosing_loop(node)
        if loop is None:
            self._per_call(node)
            return
        recv = func.value
        kind = self.facts.objects.kind_of(recv, node)
        if kind is None and self._called_in(loop, recv):
            kind = Kind.MODULE  # moved and called (``model = torch.load(f)["model"]``): no tensor is callable
        if not self._per_batch(loop) and not (
            kind is Kind.MODULE and (self._per_sample(loop, recv) or self._per_file(loop, recv, node))
        ):
            outer = self._same_models_per_batch(loop, recv, node)
            if outer is not None:
                self.report(node, message=f"`{outer}`'s models are moved to the device on every batch: {self.message}")
            return
        if kind in (Kind.MODULE, Kind.LOSS):
            key = dotted_name(recv)
            if key is None or self._rebound_in(loop, key, node) or self._moved_elsewhere(loop, key, node):
                return
            if self._loaded_in(loop, key):
                return  # a loop over checkpoints: each iteration loads other weights into the model
            self.report(node, message=f"`{key}` is moved to the device on every batch: {self.message}")
        elif self._constant_tensor(recv, loop) and not self._mutated_in(loop, node):
            self.report(
                node, message=f"a constant tensor is built and copied to the device on every batch: {self.message}"
            )

    def _mutated_in(self, loop: cst.For | cst.While, move: cst.Call) -> bool:
        """``counts = torch.zeros(n).cuda()`` then ``counts.index_add_(...)``:
        a fresh buffer each batch, not a constant. The move may sit under
        shaping calls (``new_p = torch.eye(4).cuda().unsqueeze(0)`` then
        ``new_p[:, :3, :3] = rot``): the name still holds the buffer built here."""
        value: cst.CSTNode = move
        stmt = self.parent(move)
        while isinstance(stmt, cst.Attribute) and stmt.attr.value in _SHAPING:
            call = self.parent(stmt)
            if not (isinstance(call, cst.Call) and call.func is stmt):
                return False
            value, stmt = call, self.parent(call)
        if not (isinstance(stmt, cst.Assign) and stmt.value is value):
            return False
        if len(stmt.targets) != 1:
            return False
        key = dotted_name(stmt.targets[0].target)
        visitor = _Mutations(key)
        if key is not None:
            visit_fast(loop.body, visitor)  # type: ignore[attr-defined]
        return bool(visitor.found) or (key is not None and _grown_in(loop, key, stmt, self.facts.names))

    def _enclosing_loop(self, node: cst.CSTNode) -> cst.For | cst.While | None:
        """The innermost loop whose body holds ``node`` unconditionally, or
        under a flag the loop never changes (``if use_cuda:``): then the move
        runs on every iteration or on none."""
        child = node
        cur = self.parent(node)
        flags: list[cst.BaseExpression] = []
        while cur is not None and not isinstance(cur, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)):
            if (
                isinstance(cur, cst.If)
                and (child is cur.body or child is cur.orelse)
                and _fixed_test(cur.test, self.facts.names) is not None
            ):
                flags.append(cur.test)  # either arm of a flag the loop never changes: every iteration or none
            elif isinstance(cur, (cst.If, cst.Try, cst.ExceptHandler)) and child is not getattr(cur, "test", None):
                return None
            if isinstance(cur, (cst.For, cst.While)):
                if child is not cur.body:
                    return None
                if any(_binds(cur, _fixed_test(test, self.facts.names) or "") for test in flags):
                    return None
                return cur
            if isinstance(cur, (cst.ListComp, cst.GeneratorExp, cst.DictComp, cst.SetComp)):
                return None
            child, cur = cur, self.parent(cur)
        return None

    def _per_batch(self, loop: cst.For | cst.While) -> bool:
        scope = self.facts.objects.scope_of(loop)
        if sweeps_settings(loop, lambda name: self.facts.bindings.values(name, scope)):
            return False  # one iteration per setting of an experiment sweep (``for tol in tols:``), not per batch
        if isinstance(loop, cst.For):
            it = loop.iter
            while isinstance(it, cst.Call) and _wrapper(it.func) and it.args:
                it = it.args[0].value
            if self.facts.objects.kind_of(it, loop) is Kind.LOADER:
                return True
        iteration = self.facts.verbs.in_iteration(loop)
        if any(v.kind in (VerbKind.BACKWARD, VerbKind.STEP) for v in iteration):
            return True
        if isinstance(loop, cst.While) and _draws_from_queue(loop):
            return True
        info = self.facts.loops.info(loop)
        return info is not None and info.role == "eval"  # an evaluation loop over batches

    def _same_models_per_batch(self, loop: cst.For | cst.While, recv: cst.BaseExpression, move: cst.Call) -> str | None:
        """``for net in nets: net.to(device); out = net(x)`` inside the batch
        loop, ``nets`` bound outside it and left alone there: every batch
        moves the same models again (NIID-Bench's MOON). The name of the
        models' iterable, or None. The model loop must call the module, and
        neither move it elsewhere (offloading) nor load into it."""
        key = dotted_name(recv)
        if not (isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) and loop.target.value == key):
            return None
        models = dotted_name(loop.iter) if isinstance(loop.iter, (cst.Name, cst.Attribute)) else None
        if models is None or not self._called_in(loop, recv):
            return None
        if self._moved_elsewhere(loop, key, move) or self._loaded_in(loop, key):
            return None
        rebinds = _Rebinds(key, move)
        visit_fast(loop.body, rebinds)  # type: ignore[attr-defined]
        if rebinds.found:
            return None
        outer = self._config_enclosing_loop(loop)
        if outer is None or not self._per_batch(outer) or _binds(outer, models):
            return None
        touched = _Touches(models)
        visit_fast(outer.body, touched)  # type: ignore[attr-defined]
        return None if touched.found else models

    def _config_enclosing_loop(self, node: cst.CSTNode) -> cst.For | cst.While | None:
        """The loop whose body holds ``node`` unconditionally or in an arm of
        tests the loop never changes: a plain flag, or a setting compared
        with a string (``elif args.loss == "contrastive":``, a mode, not an
        iteration)."""
        child = node
        cur = self.parent(node)
        tests: list[str] = []
        while cur is not None and not isinstance(cur, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)):
            if isinstance(cur, cst.If) and child is not cur.test:
                names = _settings(cur.test, self.facts.names)
                if names is None:
                    return None
                tests.extend(names)
            elif isinstance(cur, cst.Else):
                pass
            elif isinstance(cur, (cst.Try, cst.ExceptHandler, cst.ListComp, cst.GeneratorExp, cst.DictComp)):
                return None
            if isinstance(cur, (cst.For, cst.While)):
                if child is not cur.body or any(_binds(cur, name) for name in tests):
                    return None
                return cur
            child, cur = cur, self.parent(cur)
        return None

    def _per_sample(self, loop: cst.For | cst.While, module: cst.BaseExpression) -> bool:
        """``for i, ann in enumerate(images): ... do_detect(model, img)``: a
        loop over images or samples that runs the module (called, or handed
        to a helper) on each."""
        info = self.facts.loops.info(loop)
        key = dotted_name(module)
        if info is None or key is None or not names_samples(info.data_tokens):
            return False
        visitor = _RunsModule(key)
        visit_fast(loop.body, visitor)  # type: ignore[attr-defined]
        return bool(visitor.found)

    def _per_file(self, loop: cst.For | cst.While, module: cst.BaseExpression, move: cst.Call) -> bool:
        """``for imname in filelist: im = cv2.imread(imname) ... out =
        model(x)``: a loop that reads an input from the file its variable
        names (vocabulary/input_readers.py) and calls the module is a data
        loop over files. A move to a device the loop variable names (a loop
        over devices) is no repeat."""
        if not isinstance(loop, cst.For) or not self._called_in(loop, module):
            return False
        bound = _names(loop.target)
        if not bound or any(mentions(arg, key) for arg in move.args for key in bound):
            return False
        readers = _InputReads(self.facts.names, bound)
        visit_fast(loop.body, readers)
        return readers.found

    def _called_in(self, loop: cst.For | cst.While, recv: cst.BaseExpression) -> bool:
        """The loop calls ``recv`` itself (``out = model(x)``), not only hands it on."""
        key = dotted_name(recv)
        if key is None:
            return False
        visitor = _RunsModule(key)
        visit_fast(loop.body, visitor)  # type: ignore[attr-defined]
        return any(dotted_name(c.func) == key for c in visitor.found)

    def _rebound_in(self, loop: cst.CSTNode, key: str, move: cst.Call) -> bool:
        """``key`` gets a new object in the loop (or is the loop variable)."""
        if isinstance(loop, cst.For) and key in _names(loop.target):
            return True
        visitor = _Rebinds(key, move)
        visit_fast(loop.body, visitor)  # type: ignore[attr-defined]
        return any(not self._other_arm(found, move, loop) for found in visitor.found)

    def _other_arm(self, node: cst.CSTNode, move: cst.Call, loop: cst.CSTNode) -> bool:
        """``node`` is in the ``else`` of the flag test that holds ``move``
        (``if use_cuda: model = model.cuda() else: model = model.cpu()``):
        the flag does not change in the loop (``_enclosing_loop``), so every
        iteration takes the same arm; the other never runs beside the move."""
        cur = self.parent(move)
        while cur is not None and cur is not loop:
            if isinstance(cur, cst.If) and cur.orelse is not None and _flag(cur.test, self.facts.names) is not None:
                inner = self.parent(node)
                while inner is not None and inner is not cur:
                    if inner is cur.orelse:
                        return True
                    inner = self.parent(inner)
            cur = self.parent(cur)
        return False

    def _loaded_in(self, loop: cst.CSTNode, key: str) -> bool:
        """The loop loads a state into ``key`` (``for step in steps:
        model.load_state_dict(torch.load(ckpt(step)))``, BTS's
        bts_eval.py): its iterations are checkpoints, not batches."""
        visitor = _LoadsState(key)
        visit_fast(loop.body, visitor)  # type: ignore[attr-defined]
        return visitor.found

    def _moved_elsewhere(self, loop: cst.CSTNode, key: str, move: cst.Call) -> bool:
        """Other device moves of the same module in the loop: offloading."""
        visitor = _OtherMoves(key, move)
        visit_fast(loop.body, visitor)  # type: ignore[attr-defined]
        return any(not self._other_arm(found, move, loop) for found in visitor.found)

    def _constant_tensor(self, recv: cst.BaseExpression, loop: cst.For | cst.While | None = None) -> bool:
        names = self.facts.names
        constants = self._constants_in(recv)
        if loop is not None and _filled_factory(recv, names):
            constants |= self._sizes_in(recv, loop)
        while isinstance(recv, cst.Call) and isinstance(recv.func, cst.Attribute) and recv.func.attr.value in _SHAPING:
            if not all(_literal(a.value, names, constants) for a in recv.args):
                return False
            recv = recv.func.value
        if not isinstance(recv, cst.Call):
            return False
        qn = names.call_name(recv) or ""
        head, _, last = qn.rpartition(".")
        if head != "torch" or last not in _FACTORIES or not recv.args:
            return False
        return all(
            _literal(a.value, names, constants) for a in recv.args if a.keyword is None or a.keyword.value != "device"
        )

    def _sizes_in(self, expr: cst.BaseExpression, loop: cst.For | cst.While) -> frozenset[str]:
        """The names in ``expr`` its function binds only to integers
        (integer_names.py: nerf-pytorch's ``H = int(H)`` before the loop)
        that ``loop`` never rebinds: one value on every iteration."""
        scope = self.facts.objects.scope_of(expr)
        if not isinstance(scope, (cst.FunctionDef, cst.Module)):
            return frozenset()
        if getattr(self, "_integers", None) is None:
            self._integers = IntegerNames()
        return frozenset(
            name for name in _plain_names(expr) if self._integers.holds_integer(scope, name) and not _binds(loop, name)
        )

    def _constants_in(self, expr: cst.BaseExpression) -> frozenset[str]:
        """The UPPER_CASE names in ``expr`` assigned once, in its function or
        at module level, to a literal (``MEAN = (0.485, 0.456, 0.406)``), or
        imported and never assigned here."""
        scope = self.facts.objects.scope_of(expr)
        bindings = self.facts.bindings
        found = set()
        imported = self.facts.names.bindings
        for name in _upper_names(expr):
            values = bindings.values(name, scope)
            if not values and name in imported:
                found.add(name)  # ``from timm.data import IMAGENET_DEFAULT_MEAN``
            elif len(values) == 1 and values[0] is not None and _literal(values[0], self.facts.names):
                found.add(name)
        return frozenset(found)

    # -- a method another module runs once per batch (the project) ----------
    def _per_call(self, move: cst.Call) -> None:
        """``MultiBoxLoss.forward`` builds ``torch.LongTensor(range(n))`` and
        moves it on every call, and ``train.py`` builds the loss where it
        trains: a copy to the device per batch. Or ``__init__`` moves a
        literal kernel and another module builds the object inside its
        training loop. Only unconditional moves in the method's own body."""
        project = self.facts.project
        if project is None or not (project.called_per_batch or project.built_per_batch or project.functions_per_batch):
            return
        method = self._method_of(move)
        if method is None:
            self._per_call_function(move, project.functions_per_batch)
            return
        fn, cls = method
        per_batch = project.built_per_batch if fn.name.value == "__init__" else project.called_per_batch
        where = next((w for c, w in per_batch if c == cls.name.value), None)
        if where is None:
            return
        recv = move.func.value  # type: ignore[attr-defined]
        if not self._invariant_tensor(recv, fn, cls):
            return
        name = f"{cls.name.value}.{fn.name.value}"
        if fn.name.value == "__init__":
            why = (
                f"`{name}` builds a constant tensor and copies it to the device, and {where} builds"
                f" a `{cls.name.value}` on every batch: build the object once, before the loop"
            )
        else:
            why = (
                f"`{name}` builds a constant tensor and copies it to the device on every call, once per batch"
                f" ({where} builds the object where it trains): build it once, as a buffer in `__init__`"
            )
        self.report(move, message=why)

    def _per_call_function(self, move: cst.Call, per_batch: tuple[tuple[str, str], ...]) -> None:
        """``feature_transform_regularizer(trans)`` builds ``torch.eye(d)``
        and moves it, and another module calls it once per batch: a copy
        to the device per batch. The size may come from an argument's
        shape past its first (batch) dimension: the values stay the same."""
        fn = self._function_of(move)
        if fn is None:
            return
        where = next((w for f, w in per_batch if f == fn.name.value), None)
        recv = self._moved_value(move, fn)
        if where is None or recv is None or not self._invariant_tensor(recv, fn, None) or self._grown(move, fn):
            return
        self.report(
            move,
            message=(
                f"`{fn.name.value}` builds a constant tensor and copies it to the device on every call, and {where}"
                " calls it once per batch: build it once (or with `device=`), outside the per-batch call"
            ),
        )

    def _grown(self, move: cst.Call, fn: cst.FunctionDef) -> bool:
        """``preds = torch.Tensor([]).to(device)`` then ``preds = torch.cat((preds, out))``:
        the name the move is bound to takes another value in the function (a
        buffer or a seed, not a constant; for ``I = I.cuda()``, the value it moves)."""
        stmt = self.parent(move)
        if not (
            isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0].target, cst.Name)
        ):
            return False
        name = stmt.targets[0].target.value
        recv = move.func.value  # type: ignore[attr-defined]
        moved = recv.value if isinstance(recv, cst.Name) else None
        values = self.facts.bindings.values_in(name, fn)
        return len(values) > (2 if moved == name else 1)

    def _function_of(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The module-level function whose own body runs ``node`` on every
        call: through statements, ``with`` blocks and ``if``s that test only
        where tensors live (``if x.is_cuda:``), never through a loop, a
        ``try`` or another test."""
        prev, cur = node, self.parent(node)
        while cur is not None and not isinstance(cur, cst.FunctionDef):
            if isinstance(cur, cst.If) and not (_device_test(cur.test, self.facts.names) and cur.orelse is None):
                return None
            if isinstance(cur, (cst.IfExp, cst.For, cst.While, cst.Try, cst.Lambda, cst.ClassDef)):
                return None
            if isinstance(cur, (cst.ListComp, cst.GeneratorExp, cst.DictComp, cst.SetComp, cst.BooleanOperation)):
                return None
            prev, cur = cur, self.parent(cur)
        # A default value or a decorator runs once, when the ``def`` does.
        if cur is None or prev is not cur.body or not isinstance(self.parent(cur), cst.Module):
            return None
        return cur

    def _moved_value(self, move: cst.Call, fn: cst.FunctionDef) -> cst.BaseExpression | None:
        """What ``move`` moves: its receiver, or for a name (``I = I.cuda()``)
        the one other value the function binds it to."""
        recv = move.func.value  # type: ignore[attr-defined]
        if not isinstance(recv, cst.Name):
            return recv
        values = [v for v in self.facts.bindings.values_in(recv.value, fn) if v is not move]
        if len(values) != 1 or values[0] is None or recv.value in _param_names(fn):
            return None
        return values[0]

    def _method_of(self, node: cst.CSTNode) -> tuple[cst.FunctionDef, cst.ClassDef] | None:
        """The ``forward``/``__call__``/``__init__`` of a module-level class
        whose own body runs ``node`` on every call: through statements and
        ``with`` blocks only (an ``if``, a loop or a ``try`` may pick calls:
        ``if self.cache is None:``)."""
        prev, cur = node, self.parent(node)
        while cur is not None and not isinstance(cur, cst.FunctionDef):
            if isinstance(cur, (cst.If, cst.IfExp, cst.For, cst.While, cst.Try, cst.Lambda, cst.ClassDef)):
                return None
            if isinstance(cur, (cst.ListComp, cst.GeneratorExp, cst.DictComp, cst.SetComp, cst.BooleanOperation)):
                return None
            prev, cur = cur, self.parent(cur)
        # A default value or a decorator runs once, when the ``def`` does.
        if cur is None or prev is not cur.body or cur.name.value not in _PER_CALL_METHODS:
            return None
        block = self.parent(cur)
        cls = self.parent(block) if block is not None else None
        if not isinstance(cls, cst.ClassDef) or not isinstance(self.parent(cls), cst.Module):
            return None
        return cur, cls

    def _invariant_tensor(self, recv: cst.BaseExpression, fn: cst.FunctionDef, cls: cst.ClassDef) -> bool:
        """A ``torch`` factory over values fixed across calls, through shaping
        and broadcasting methods (``.unsqueeze(0).expand_as(x)``: the data is
        the constant, only its view follows the batch)."""
        names = self.facts.names
        while True:
            if isinstance(recv, cst.Subscript) and all(_view_index(el, names) for el in recv.slice):
                recv = recv.value  # ``torch.eye(d)[None, :, :]``: a view of the constant
                continue
            if not (isinstance(recv, cst.Call) and isinstance(recv.func, cst.Attribute)):
                break
            attr = recv.func.attr.value
            if attr in _BROADCASTS:
                pass
            elif attr not in _SHAPING or not all(self._fixed(a.value, fn, 0) for a in recv.args):
                break
            recv = recv.func.value
        if not isinstance(recv, cst.Call):
            return False
        head, _, last = (names.call_name(recv) or "").rpartition(".")
        if head != "torch" or last not in _FACTORIES or not recv.args:
            return False
        return all(self._fixed(a.value, fn, 0) for a in recv.args if a.keyword is None or a.keyword.value != "device")

    def _fixed(self, expr: cst.BaseExpression, fn: cst.FunctionDef, depth: int) -> bool:
        """The same value on every call of ``fn``: literals and module
        constants; in a ``forward``, also attributes only ``__init__`` sets
        (``self.priors``, ``self.priors.size(0)``, ``len(self.priors)``),
        ``range`` of such, and local names bound once to such."""
        names = self.facts.names
        if depth > 4:
            return False
        if _literal(expr, names, self._constants_in(expr)):
            return True
        if fn.name.value == "__init__":
            return False  # its parameters differ between constructions
        nxt = depth + 1
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in ("range", "len"):
            return bool(expr.args) and all(self._fixed(a.value, fn, nxt) for a in expr.args)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _SIZES:
            if self._argument_dim(expr, fn):
                return True
            return self._init_attribute(expr.func.value) and all(_literal(a.value, names) for a in expr.args)
        if isinstance(expr, cst.Subscript) and self._argument_dim(expr, fn):
            return True
        if isinstance(expr, cst.Attribute) and expr.attr.value == "shape":
            return self._init_attribute(expr.value)
        if isinstance(expr, cst.Subscript):
            return self._fixed(expr.value, fn, nxt) and all(
                isinstance(el.slice, cst.Index) and _literal(el.slice.value, names) for el in expr.slice
            )
        if isinstance(expr, cst.BinaryOperation):
            return self._fixed(expr.left, fn, nxt) and self._fixed(expr.right, fn, nxt)
        if isinstance(expr, cst.Name):
            values = self.facts.bindings.values_in(expr.value, fn)
            return len(values) == 1 and values[0] is not None and self._fixed(values[0], fn, nxt)
        return self._init_attribute(expr)

    def _argument_dim(self, expr: cst.BaseExpression, fn: cst.FunctionDef) -> bool:
        """In a module-level function, a parameter's size past its first
        (batch) dimension: ``x.size(1)``, ``x.size()[1]``, ``x.shape[1]``,
        the parameter never rebound. The first dimension follows the batch."""
        if not isinstance(self.parent(fn), cst.Module):
            return False
        if isinstance(expr, cst.Call):  # ``x.size(1)``
            owner, dims = expr.func.value, [a.value for a in expr.args]  # type: ignore[attr-defined]
            if expr.func.attr.value != "size":  # type: ignore[attr-defined]
                return False
        elif isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            base, dims = expr.value, [expr.slice[0].slice.value]
            if isinstance(base, cst.Attribute) and base.attr.value == "shape":
                owner = base.value
            elif (
                isinstance(base, cst.Call)
                and not base.args
                and isinstance(base.func, cst.Attribute)
                and base.func.attr.value == "size"
            ):
                owner = base.func.value
            else:
                return False
        else:
            return False
        if len(dims) != 1 or not isinstance(dims[0], cst.Integer) or dims[0].evaluated_value == 0:
            return False
        if not isinstance(owner, cst.Name) or owner.value not in _param_names(fn):
            return False
        return not self.facts.bindings.values_in(owner.value, fn)

    def _init_attribute(self, expr: cst.BaseExpression) -> bool:
        """``self.x`` assigned in this module only by ``__init__`` methods."""
        key = dotted_name(expr)
        if key is None or not key.startswith("self.") or key.count(".") != 1:
            return False
        values = self.facts.bindings.values(key)
        if not values:
            return False
        inits = [v for f in self._inits() for v in self.facts.bindings.values_in(key, f)]
        return len(inits) == len(values)

    def _inits(self) -> list[cst.FunctionDef]:
        found = self.__dict__.get("_init_methods")
        if found is None:
            found = [
                stmt
                for cls in self.context.module.body
                if isinstance(cls, cst.ClassDef)
                for stmt in cls.body.body
                if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__"
            ]
            self.__dict__["_init_methods"] = found
        return found

    valid = [
        Valid(
            """\
import torch
def train(model, loader, optimizer, criterion, args):
    for x, y in loader:
        out = model(x.cuda())
        if args.cls_par > 0:
            loss = criterion(out, y.cuda())
        else:
            loss = torch.tensor(0.0).cuda()
        if args.ent:
            loss += -(out.softmax(1) * out.log_softmax(1)).sum(1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
class Trainer:
    def fit(self, loader, optimizer):
        for x, y in loader:
            out = self.model(x.cuda())
            if self.iteration > 100:
                reg = self.regularizer(out)
            else:
                reg = torch.tensor(0.0).cuda()
            loss = out.mean() + reg
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            self.advance()
def train_state(model, loader, optimizer, state):
    for x, y in loader:
        out = model(x.cuda())
        if state.step > 100:
            reg = out.abs().mean()
        else:
            reg = torch.tensor(0.0).cuda()
        loss = out.mean() + reg
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        state.step += 1
""",
            "the constant of the else arm is then added to in place (a seed, not a constant); a test on `self.iteration` (a method may change it) or on an option the loop itself advances (`state.step += 1`) picks iterations",
        ),
        Valid(
            """\
import torch
def sweep(model, device, density):
    model.eval()
    errors = []
    tols = [1e-1, 1e-2, 1e-3]
    with torch.no_grad():
        for tol in tols:
            model.tol = tol
            xx = torch.linspace(-15, 15, 1000).view(-1, 1).to(device)
            errors.append(float(density(xx, model).sum()))
        for scale in (0.5, 2.0):
            grid = torch.arange(0, 10).float().to(device)
            errors.append(float(model(grid * scale).sum()))
    return errors
""",
            "loops over a literal list of settings (an experiment sweep): the constant is rebuilt per setting, "
            "not per batch",
        ),
        Valid(
            """\
import torch
def serve(model_queue, x, device):
    while True:
        model = model_queue.get()
        if model is None:
            break
        model.to(device)
        print(model(x.to(device)))
""",
            "a loop over models taken from a queue: each iteration moves another model",
        ),
        Valid(
            """\
import torch
def regularizer(trans):
    eye = torch.eye(trans.size(1))[None]
    if trans.is_cuda:
        eye = eye.cuda()
    return (trans - eye).norm()
""",
            "a function no module of the project is known to call once per batch",
        ),
        Valid(
            """\
import torch
def train(net, previous_nets, loader, optimizer, criterion, args, device):
    for previous_net in previous_nets:
        previous_net.to(device)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        out = net(x)
        loss = criterion(out, y)
        nets = [previous_nets[-1], net]
        for previous_net in nets:
            previous_net.to(device)
            loss = loss + previous_net(x).mean()
        loss.backward()
        optimizer.step()
""",
            "the models' list is built afresh in each batch: a loop over models, not a re-move of the same ones",
        ),
        Valid(
            """\
import torch
def train(net, previous_nets, loader, optimizer, criterion, args, device):
    for previous_net in previous_nets:
        previous_net.to(device)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        out = net(x)
        loss = criterion(out, y)
        for previous_net in previous_nets:
            previous_net.to(device)
            loss = loss + previous_net(x).mean()
            previous_net.to("cpu")
        loss.backward()
        optimizer.step()
""",
            "each model is moved back to the CPU after its use: offloading, not an invariant move",
        ),
        Valid(
            """\
import torch
def train(net, previous_nets, loader, optimizer, criterion, args, device):
    for previous_net in previous_nets:
        previous_net.to(device)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        out = net(x)
        loss = criterion(out, y)
        if optimizer.state_dict()["state"] and len(previous_nets) > 1:
            for previous_net in previous_nets:
                previous_net.to(device)
                loss = loss + previous_net(x).mean()
        loss.backward()
        optimizer.step()
""",
            "a test that may pick batches (not a flag, nor a setting compared with a string)",
        ),
        Valid(
            """\
import torch
def train(net, previous_nets, loader, optimizer, criterion, args, device):
    for previous_net in previous_nets:
        previous_net.to(device)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        out = net(x)
        loss = criterion(out, y)
        for previous_net in previous_nets:
            previous_net.to(device)
            loss = loss + previous_net(x).mean()
        previous_nets.append(net)
        loss.backward()
        optimizer.step()
""",
            "the batch loop adds models to the list: the next batch's loop moves a new one",
        ),
        Valid(
            """\
import torch
for path in checkpoint_files:
    model = torch.load(path)["model"]
    for image_name in image_list:
        model = model.cuda()
        model(read(image_name).cuda())
        model = model.cpu()
for image_name in image_list:
    net = nets[image_name]
    net.cuda()
    net(read(image_name))
for image_name in image_list:
    x = read(image_name).cuda()
    show(x)
""",
            "a module moved back and forth on purpose (offloading), a module bound anew per image, an input moved",
        ),
        Valid(
            """\
import torch
def evaluate_checkpoints(model, steps, loader, path):
    for step in steps:
        checkpoint = torch.load(path + str(step), map_location="cpu")
        model.load_state_dict(checkpoint["model"])
        model.eval()
        model.cuda()
        with torch.no_grad():
            for x in loader:
                model(x.cuda())
""",
            "a loop over checkpoints: each iteration loads other weights into the model before moving it",
        ),
        Valid(
            """\
import torch
def compare(models, metric_logger, device, x):
    for name, model in metric_logger.log_every(models, 1, "Models"):
        model.to(device)
        scale = torch.tensor([0.5, 2.0]).to(device)
        print(name, model(x.to(device) * scale))
""",
            "a logger's `log_every` over a list of models, not a loader: a loop over models, not batches",
        ),
        Valid(
            """\
import torch
def test(model, images, loader):
    offload = False
    for i, image in enumerate(images):
        if offload:
            model.cuda()
        offload = i % 10 == 0
        show(model, image)
    for x, y in loader:
        if torch.cuda.is_available() and x.is_cuda:
            model.cuda()
        out = model(x)
    for path in paths:
        model.cuda()
        export(model, path)
""",
            "a flag the loop changes; a test that depends on the batch; a loop over paths, not samples",
        ),
        Valid(
            """\
import torch
for batch, (images, masks) in enumerate(val_loader):
    stacked = torch.Tensor([]).cuda()
    for index in range(images.size(1)):
        with torch.no_grad():
            out = model(images[:, index].cuda())
            stacked = torch.cat((stacked, out.argmax(1).float()))
    save_prediction(stacked, batch)
""",
            "a per-batch accumulator seed, grown in the loop: moving it once would carry it across batches",
        ),
        Valid(
            """\
import torch
import torch.nn.functional as F
for x, y in loader:
    counts = torch.zeros(10).cuda()
    counts.index_add_(0, y.cuda(), torch.ones(len(y), device="cuda"))
    loss = F.cross_entropy(model(x.cuda()), y.cuda(), weight=counts.sum() / counts.clamp(min=1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            "a buffer filled in place each batch is not a constant",
        ),
        Valid(
            """\
import torch
for x, rot in loader:
    pose = torch.eye(4).float().cuda().unsqueeze(0)
    pose[:, :3, :3] = rot.cuda()
    out = model(x.cuda(), pose)
    loss = out.mean()
    loss.backward()
    optimizer.step()
""",
            "moved, then reshaped, then written in place: a per-batch buffer under a view, not a constant",
        ),
        Valid(
            """\
import torch
SCALE = compute_scale()
MEAN = (0.5, 0.5, 0.5)
MEAN = load_mean()
for x, y in loader:
    s = torch.tensor(SCALE).cuda()
    m = torch.tensor(MEAN).cuda()
    loss = criterion(model((x.cuda() - m) / s), y.cuda())
    loss.backward()
    optimizer.step()
""",
            "names that are not constants fixed by a literal",
        ),
        Valid(
            """\
for x, y in train_loader:
    x, y = x.to(device), y.to(device)
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
""",
            "per-batch data moves are required",
        ),
        Valid(
            """\
for name, model in models.items():
    model.to(device)
    evaluate(model, val_loader)
""",
            "a loop over models",
        ),
        Valid(
            """\
import torch.nn as nn
for fold, (train_idx, val_idx) in enumerate(kfold.split(dataset)):
    model = Net()
    model.to(device)
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
""",
            "a loop over folds: the model is rebuilt each time",
        ),
        Valid(
            """\
for step, (x, y) in enumerate(train_loader):
    if step == 0:
        model.cuda()
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()
""",
            "moved once, under a condition",
        ),
        Valid(
            """\
for x, y in loader:
    teacher.to("cuda")
    with torch.no_grad():
        t = teacher(x)
    teacher.to("cpu")
    loss = criterion(student(x), t)
    loss.backward()
    optimizer.step()
""",
            "offloading: moved back and forth on purpose",
        ),
        Valid(
            """\
import torch
for x, y in loader:
    labels = torch.ones(x.size(0)).cuda()
    loss = criterion(model(x), labels)
    loss.backward()
    optimizer.step()
""",
            "tensor shape depends on the batch",
        ),
        Valid(
            """\
import cv2
import torch
import torch.nn as nn

model = nn.Conv2d(3, 3, 3)
for dev in ["cuda:0", "cuda:1"]:
    im = cv2.imread(dev + ".png")
    model.to(dev)
    with torch.no_grad():
        print(model(torch.from_numpy(im).float().to(dev)))
""",
            "a loop that reads a file per iteration but moves the model to the device it iterates: no repeat",
        ),
        Valid(
            """\
import cv2
import torch
import torch.nn as nn

model = nn.Conv2d(3, 3, 3)
for name in filelist:
    x = torch.from_numpy(cv2.imread(name)).float()
    model.to("cuda")
    with torch.no_grad():
        print(model(x.cuda()))
    model.to("cpu")
""",
            "a loop over files that moves the model back to the CPU after each one: offloading on purpose",
        ),
        Valid(
            """\
import torch


def main(model, loader, optimizer, size, cached):
    H, W = None, None
    H, W = size
    H, W = int(H), int(W)
    for images in loader:
        H = images.shape[2]
        if cached:
            coords = None
        else:
            coords = torch.stack(torch.meshgrid(torch.arange(H).to("cuda"), torch.arange(W)), -1)
        loss = model(images, coords).sum()
        loss.backward()
        optimizer.step()
""",
            "a size name the loop rebinds (`H = images.shape[2]`): a new size each batch",
        ),
        Valid(
            """\
import torch


def main(model, loader, optimizer, size, cached):
    H, W = None, None
    H, W = size
    for images in loader:
        if cached:
            coords = None
        else:
            coords = torch.stack(torch.meshgrid(torch.arange(H).to("cuda"), torch.arange(W)), -1)
        loss = model(images, coords).sum()
        loss.backward()
        optimizer.step()
""",
            "a size name only unpacked (`H, W = size`), never shown to be an integer: it may be a tensor the loop changes",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch
def train(model, loader, optimizer, criterion, args):
    for x, y in loader:
        x = x.cuda()
        out = model(x)
        if args.w_aux > 0:
            aux = model.aux_loss(out)
        else:
            aux = torch.Tensor([0]).to(x.device)
        loss = criterion(out, y.cuda()) + args.w_aux * aux
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
            None,
        ),
        Invalid(
            """\
import torch


def main(model, loader, optimizer, size, cached):
    H, W = None, None
    H, W = size
    H, W = int(H), int(W)
    for images in loader:
        if cached:
            coords = None
        else:
            coords = torch.stack(torch.meshgrid(torch.arange(H).to("cuda"), torch.arange(W)), -1)
        loss = model(images, coords).sum()
        loss.backward()
        optimizer.step()
""",
            None,
        ),
        Invalid(
            """\
import torch
import torch.nn as nn
class Trainer:
    def validate(self, model: nn.Module, queue):
        model.eval()
        while True:
            inputs, targets = queue.get()
            if inputs.shape[0] == 0:
                break
            inputs = inputs.to(self.device)
            model.to(self.device)
            y_hats = model.recognize(inputs)
            self.metric(targets, y_hats)
""",
            None,
        ),
        Invalid(
            """\
import torch
def train(net, previous_nets, loader, optimizer, criterion, args, device):
    for previous_net in previous_nets:
        previous_net.to(device)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        out = net(x)
        loss = criterion(out, y)
        if args.loss == "l2norm":
            loss = loss + out.norm()
        elif args.loss == "contrastive":
            for previous_net in previous_nets:
                previous_net.to(device)
                loss = loss + (previous_net(x) - out).pow(2).mean()
        loss.backward()
        optimizer.step()
""",
            None,
        ),
        Invalid(
            """\
import torch
model = torch.load(opt.model)["model"]
for image_name in image_list:
    im_input = torch.from_numpy(read(image_name)).float()
    if cuda:
        model = model.cuda()
        im_input = im_input.cuda()
    else:
        model = model.cpu()
    out = model(im_input)
""",
            None,
        ),
        Invalid(
            """\
import torch
def evaluate(model, loader, path):
    model.load_state_dict(torch.load(path, map_location="cpu"))
    model.eval()
    with torch.no_grad():
        for x in loader:
            model.cuda()
            model(x.cuda())
""",
            None,
        ),
        Invalid(
            """\
import torch
def train_one_epoch(model, data_loader, metric_logger, device):
    for step, batch in enumerate(metric_logger.log_every(data_loader, 10, "Epoch")):
        videos = batch.to(device, non_blocking=True)
        with torch.no_grad():
            mean = torch.as_tensor([0.485, 0.456, 0.406]).to(device)[None, :, None]
            target = videos * 2 - mean
        loss = (model(videos) - target).pow(2).mean()
""",
            count=1,
        ),
        Invalid(
            """\
import torch
for inputs, targets in train_loader:
    reg = torch.tensor(0.0).to(device)
    for p in model.parameters():
        reg = reg + p.pow(2).sum()
    loss = criterion(model(inputs.to(device)), targets.to(device)) + 1e-5 * reg
    loss.backward()
""",
        ),
        Invalid(
            """\
import torch
from tool.torch_utils import do_detect
def test(model, images, use_cuda):
    boxes_json = []
    for i, image_annotation in enumerate(images):
        img = Image.open(image_annotation["file_name"]).convert("RGB")
        if use_cuda:
            model.cuda()
        boxes = do_detect(model, img, 0.0, 80, 0.4, use_cuda)
        boxes_json.append(boxes)
    return boxes_json
""",
        ),
        Invalid(
            """\
import torch
for x, y in loader:
    mean = torch.tensor([0.485, 0.456, 0.406]).cuda()
    mean = mean.view(1, 3, 1, 1)
    loss = criterion(model(x.cuda() - mean), y.cuda())
    loss.backward()
""",
        ),
        Invalid(
            """\
import torch
from timm.data import IMAGENET_DEFAULT_MEAN
for x, y in loader:
    mean = torch.tensor([m * 255 for m in IMAGENET_DEFAULT_MEAN]).view(1, 3, 1, 1).cuda()
    loss = criterion(model(x.cuda().float() - mean), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        ),
        Invalid(
            """\
import torch
MEAN = (0.485, 0.456, 0.406)
for x, y in loader:
    mean = torch.tensor([m * 255 for m in MEAN]).view(1, 3, 1, 1).cuda()
    loss = criterion(model(x.cuda() - mean), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        ),
        Invalid(
            """\
for i, (images, labels) in enumerate(train_loader):
    model.to(device)
    images, labels = images.to(device), labels.to(device)
    loss = criterion(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        ),
        Invalid(
            """\
import torch
from torch.utils.data import DataLoader
loader = DataLoader(dataset, batch_size=32)
for batch in loader:
    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1).cuda()
    out = model((batch.cuda() - mean))
""",
        ),
        Invalid(
            """\
def validate(model, val_loader, criterion):
    for x, y in val_loader:
        model = model.cuda()
        criterion.cuda()
        total += criterion(model(x.cuda()), y.cuda()).item()
""",
            count=2,
        ),
        Invalid(
            """\
import cv2
import torch
import torch.nn as nn

model = nn.Conv2d(3, 3, 3)
device = torch.device("cuda")
for imname in filelist:
    x = torch.from_numpy(cv2.imread(imname)).float()
    if cuda:
        model = model.to(device)
        x = x.to(device)
    with torch.no_grad():
        out = model(x)
""",
        ),
    ]


def _names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        out: set[str] = set()
        for el in target.elements:
            out |= _names(el.value)
        return out
    key = dotted_name(target)
    return {key} if key else set()
