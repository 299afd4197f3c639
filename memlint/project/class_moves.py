"""Does a class move what it builds to a device? (MEM701's CPU-built classes)

A class whose code calls ``.to(``/``.cuda(``... may put its parameters on a
device, so a model built from it is not known to be on the CPU. One kind of
move leaves the module where it is: a tensor the method builds itself
(``torch.zeros(...)``, ``Variable(torch.zeros(...))``, a local name bound only
to such), moved and handed back or used. ``Tensor.cuda()`` returns a copy;
only ``Module.to``/``.cuda`` move in place. seq2seq's
``def initHidden(self): result = Variable(torch.zeros(...)); return result.cuda()``
is such a move, and so is a local rebound to its own move (pointnet's
``iden = Variable(torch.from_numpy(...)); iden = iden.cuda()``): the copy is
a tensor built here too.

Such a move still counts when its method may keep the copy in the module: the
method stores into ``self`` (an attribute, ``register_buffer``, ``setattr``,
a ``Parameter``), is ``__init__``, or is called as ``self.method()`` from a
method that stores into ``self``. Any other move (``self.cuda()``,
``self.fc.to(d)``, ``layer.cuda()`` over ``self.layers``, ``Net().cuda()``)
counts, as does every move outside a method (a class body, a decorator).

In a class that registers nothing by a call (no ``register_buffer``,
``setattr``, ``Parameter``...), a plain attribute is in no state dict: a
fresh tensor moved straight into one (``self.noise = torch.randn(n).cuda()``,
MUNIT's fixed sampling codes, or through a conditional) does not count, even
in ``__init__``, nor does ``self.loss = a + b`` (no constructor in the value)
make a method keep, nor ``self.targets[k] = t`` (an item of a plain dict, when
the class names no ``ParameterDict``/``ParameterList``), nor a store into an
imported module (``torch.backends.cudnn.benchmark = True``): faster-rcnn's
``Network``.

Read on Python's ``ast`` by the project summary (summary.py) and, for a class
of the module being linted, by analysis/training/state_loads.py, so both
sides judge a class alike.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping

from memlint.gate.ast_fields import nodes
from memlint.project.array_indexes import array_values, indexes_an_array
from memlint.project.forward_copies import forward_keeps_no_move, qualified
from memlint.project.single_device_moves import single_device_moves

MOVES = frozenset({"to", "cuda", "xpu", "mps", "to_empty", "ipu", "npu"})
# ``torch`` functions that return a new tensor (never a module).
FRESH_FACTORIES = frozenset(
    {"zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "randn", "rand", "randint"}
    | {"randperm", "tensor", "as_tensor", "from_numpy", "zeros_like", "ones_like", "empty_like", "full_like"}
    | {"rand_like", "randn_like", "randint_like", "Tensor", "FloatTensor", "LongTensor", "ByteTensor"}
)
# ``torch`` samplers: a new tensor of draws (FCModel's ``torch.multinomial(p, 1).cuda()``).
_SAMPLERS = frozenset({"multinomial", "bernoulli", "poisson", "normal"})
_VARIABLE = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})
# Tensor methods that return a tensor again (``torch.zeros(n).float()``).
_TENSOR_METHODS = frozenset(
    {"view", "reshape", "float", "long", "int", "double", "half", "bool", "unsqueeze", "squeeze", "expand"}
    | {"contiguous", "t", "fill_", "zero_", "normal_", "uniform_", "detach", "clone", "requires_grad_"}
    | {"repeat", "expand_as", "permute", "transpose", "flatten", "type_as"}
)
# A move of a tensor built here returns a copy, itself built here.
_COPIES = _TENSOR_METHODS | MOVES
# Calls that may keep a value in a module: any receiver, any spelling.
_KEEPS = frozenset({"register_buffer", "register_parameter", "add_module", "register_module", "setattr"})
_KEEPS_BY_NAME = frozenset({"setattr", "Parameter", "Buffer"})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def is_move(node: ast.AST) -> bool:
    return node.__class__ is ast.Call and node.func.__class__ is ast.Attribute and node.func.attr in MOVES  # type: ignore[attr-defined]


def _device_move(node: ast.AST) -> bool:
    """A move that may put something on a device: not ``.to("cpu")`` (VIBE's
    ``SMPL(...).to('cpu')`` in ``HMR.__init__`` keeps the model on the CPU)."""
    return is_move(node) and not _to_the_cpu(node)  # type: ignore[arg-type]


def _to_the_cpu(call: ast.Call) -> bool:
    """``.to("cpu")``, ``.to(device="cpu")``, ``.to(torch.device("cpu"))``."""
    if call.func.attr != "to":  # type: ignore[attr-defined]
        return False
    args = [*call.args, *(k.value for k in call.keywords if k.arg == "device")]
    if len(args) != 1 or len(call.args) + len(call.keywords) != 1:
        return False
    first = args[0]
    if isinstance(first, ast.Call) and not first.keywords and len(first.args) == 1:
        func = first.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name == "device":
            first = first.args[0]
    return isinstance(first, ast.Constant) and first.value == "cpu"


# Tensor methods that a Module lacks: what they return is a tensor, and
# moving it (``J[None].expand(n, -1, -1).to(v.device)``, VIBE's
# ``Regressor.forward``) moves a copy, never a module. (``float``, ``half``,
# ``double``, ``requires_grad_``, ``type`` are Module methods too.)
_TENSOR_ONLY = _TENSOR_METHODS - {"float", "half", "double", "requires_grad_", "type"}


def _tensor_value(expr: ast.AST) -> bool:
    """``expr`` is a call of a tensor-only method (``x[i].expand(...)``)."""
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _TENSOR_ONLY


def class_moves_to_a_device(
    cls: ast.ClassDef,
    bindings: Mapping[str, str],
    walk: Callable[[ast.AST], list[ast.AST]] | None = None,
    functions: Callable[[], frozenset[str]] | None = None,
    moves_of: Callable[[int], list[ast.Call] | None] | None = None,
) -> bool:
    """``cls`` has a move that may put the module (or a part it keeps) on a
    device; ``bindings`` maps the module's import names to qualified names.
    ``walk``: ``nodes``, or the summary's NodeLists (node_lists.py), which
    keeps each method's list for parameterless.py to read again.
    ``functions``: the module's functions returning a tensor
    (forward_copies.tensor_functions), asked only by a ``forward`` that moves.
    ``moves_of``: the id of a method -> the calls of ``MOVES`` in it (nested
    code, decorators and signature included), as the summary's walk met
    them; None (or a method it does not know): read from the method's nodes."""
    walk = walk or nodes  # looked up at the call: tests count the walks through the module's ``nodes``
    for part in (*cls.decorator_list, *cls.bases, *cls.keywords):
        if any(map(_device_move, walk(part))):
            return True
    methods: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    others: list[ast.AST] = []  # the nodes of the class's other statements
    for stmt in cls.body:
        if isinstance(stmt, _FUNCTIONS):
            methods.append(stmt)
        else:
            found = walk(stmt)
            if any(map(_device_move, found)):
                return True
            others += found
    # One walk of each method: every question below (moves, registers,
    # stores into ``self``, fresh names) reads its list of nodes, not the
    # tree again (a large class was walked three times more).
    walked = [walk(method) for method in methods]
    returning: frozenset[str] | None = None
    keeping: set[str] | None = None
    registers: bool | None = None
    for method, found in zip(methods, walked):
        met = moves_of(id(method)) if moves_of is not None else None
        if met is not None:  # most methods of a moving class move nothing: no node read
            moves: list[ast.AST] = [n for n in met if not _to_the_cpu(n)]
        else:  # _device_move, spelled out: asked of every node of every method
            moves = [
                n
                for n in found
                if n.__class__ is ast.Call
                and n.func.__class__ is ast.Attribute  # type: ignore[attr-defined]
                and n.func.attr in MOVES  # type: ignore[attr-defined]
                and not _to_the_cpu(n)  # type: ignore[arg-type]
            ]
        if moves:
            # ``if len(self.device_ids) == 1: self.module.cuda(...)``: on a GPU or
            # not by the GPUs visible, read as torch's DataParallel (single_device_moves.py).
            guarded = single_device_moves(found, walk)
            moves = [m for m in moves if id(m) not in guarded]
        if not moves:
            continue
        if registers is None:
            heads = (*cls.decorator_list, *cls.bases, *cls.keywords, *getattr(cls, "type_params", ()))
            parts = [walk(part) for part in heads]
            registers = any(map(_registers, (*parts, others, *walked)))
        if returning is None:
            returning = _tensor_methods(methods, walked, bindings)
        # ``self.m(...)`` only where the first parameter is the instance (no staticmethod).
        this = None if method.decorator_list else _self_name(method)
        calls = frozenset(f"{this}.{name}" for name in returning) if this else frozenset()
        arrays = array_values(found)
        fresh = _fresh_names(method, found, bindings, calls, arrays)
        if not registers:
            # ``self.noise = torch.randn(n).cuda()``: a plain tensor attribute,
            # in no state dict (the class registers no buffer it could be).
            moves = [m for m in moves if not _stored_plain(m, method, found, fresh, bindings, calls)]
            if not moves:
                continue
        if method.name == "forward" and forward_keeps_no_move(
            method,
            found,
            moves,
            lambda e: _fresh(e, fresh, bindings, calls) or _tensor_value(e),
            lambda f: qualified(f, bindings),
            functions,
        ):
            continue  # ``x.cuda(d)`` of its inputs: copies it keeps nowhere
        if method.name == "__init__":
            return True
        if keeping is None:
            keeping = _keeping_methods(
                methods, walked, plain=not registers, plain_items=not _parameter_containers(walked), imports=bindings
            )
        if method.name in keeping:
            return True
        # A method that keeps nothing in ``self``, moving only tensors: copies.
        if not all(
            _fresh(move.func.value, fresh, bindings, calls, arrays)  # type: ignore[attr-defined]
            or _tensor_value(move.func.value)  # type: ignore[attr-defined]
            or _tensor_call(move.func.value, functions)  # type: ignore[attr-defined]
            for move in moves
        ):
            return True
    return False


def _tensor_call(expr: ast.AST, functions: Callable[[], frozenset[str]] | None) -> bool:
    """``subsequent_mask(n)``: a call of a module function every ``return`` of
    which is a tensor (forward_copies.tensor_functions); its move is a copy's."""
    if functions is None or not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name)):
        return False
    return expr.func.id in functions()


def _registers(found: list[ast.AST]) -> bool:
    """Some node of ``found`` registers a buffer, a parameter or a module by
    a call (``register_buffer``, ``setattr``, ``Parameter``): a plain
    attribute store in the class may then be one of those."""
    for node in found:
        if node.__class__ is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if last in _KEEPS or last in _KEEPS_BY_NAME:
                return True
    return False


def _self_attr(target: ast.AST, this: str | None) -> bool:
    """``self.name``: a plain attribute of the instance."""
    return isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == this


def _stored_plain(
    move: ast.AST,
    method: ast.FunctionDef | ast.AsyncFunctionDef,
    found: list[ast.AST],
    fresh: set[str],
    bindings: Mapping[str, str],
    calls: frozenset[str] = frozenset(),
) -> bool:
    """``move`` moves a tensor built here and is, through tensor methods and
    ``Variable``, the whole value of ``self.name = ...``."""
    if not _fresh(move.func.value, fresh, bindings, calls):  # type: ignore[attr-defined]
        return False
    this = _self_name(method)
    for node in found:
        if node.__class__ is ast.Assign and len(node.targets) == 1 and _self_attr(node.targets[0], this):  # type: ignore[attr-defined]
            if _whole_value(node.value, move, bindings):  # type: ignore[attr-defined]
                return True
    return False


def _whole_value(value: ast.AST, move: ast.AST, bindings: Mapping[str, str]) -> bool:
    """``move`` is ``value`` through tensor methods, ``Variable`` and either
    arm of a conditional (``t.to(d) if t is not None else None``)."""
    while value is not move:
        if isinstance(value, ast.IfExp):
            return _whole_value(value.body, move, bindings) or _whole_value(value.orelse, move, bindings)
        if not isinstance(value, ast.Call):
            return False
        func = value.func
        if isinstance(func, ast.Attribute) and func.attr in _TENSOR_METHODS:
            value = func.value
        elif qualified(func, bindings) in _VARIABLE and len(value.args) == 1 and not value.keywords:
            value = value.args[0]
        else:
            return False
    return True


def _parameter_containers(walked: list[list[ast.AST]]) -> bool:
    """A method names ``ParameterDict``/``ParameterList``...: an item stored
    into an attribute may become a parameter."""
    name_, attribute_ = ast.Name, ast.Attribute
    for found in walked:
        for node in found:
            kind = node.__class__
            if kind is name_:
                if node.id.startswith("Parameter"):  # type: ignore[attr-defined]
                    return True
            elif kind is attribute_ and node.attr.startswith("Parameter"):  # type: ignore[attr-defined]
                return True
    return False


def _keeping_methods(
    methods: list[ast.FunctionDef | ast.AsyncFunctionDef],
    walked: list[list[ast.AST]],
    plain: bool = False,
    plain_items: bool = False,
    imports: Mapping[str, str] | None = None,
) -> set[str]:
    """The methods that store into ``self``, and those they call as ``self.m()``
    (again). ``plain``: the class registers nothing, so ``self.loss = a + b``
    (a plain attribute, no constructor in the value) keeps nothing in its state."""
    keeping: set[str] = set()
    calls: dict[str, set[str]] = {}
    for m, found in zip(methods, walked):
        stores, calls[m.name] = _stores_and_self_calls(m, found, plain, plain_items, imports or {})
        if stores:
            keeping.add(m.name)
    todo = list(keeping)
    while todo:
        for called in calls.get(todo.pop(), ()):
            if called not in keeping:
                keeping.add(called)
                todo.append(called)
    return keeping


def _self_name(method: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    positional = (*method.args.posonlyargs, *method.args.args)
    return positional[0].arg if positional else None


def _root(node: ast.AST) -> ast.AST:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node


def _stores_and_self_calls(
    method: ast.FunctionDef | ast.AsyncFunctionDef,
    found: list[ast.AST],
    plain: bool,
    plain_items: bool = False,
    imports: Mapping[str, str] | None = None,
) -> tuple[bool, set[str]]:
    """Whether the method stores into ``self``, and the methods it calls as
    ``self.m()``: one pass over its nodes for both (``found``, in
    ``ast_fields.nodes``' order: an ``Assign`` comes before its target)."""
    this = _self_name(method)
    stores = False
    calls: set[str] = set()
    harmless: set[int] = set()
    # Runs on every node of the methods of every moving class: the classes
    # tested by identity, calls (the most of the nodes read) first.
    call_, assign_, attribute_, subscript_, name_ = ast.Call, ast.Assign, ast.Attribute, ast.Subscript, ast.Name
    for node in found:
        kind = node.__class__
        if plain and kind is assign_ and len(node.targets) == 1:  # type: ignore[attr-defined]
            target = node.targets[0]  # type: ignore[attr-defined]
            # ``self.h = a + b``, and ``self.d[k] = t`` into a plain dict or
            # list (faster-rcnn's ``self._anchor_targets[k] = labels``) when
            # the class names no ``ParameterDict``/``ParameterList``, which
            # would make ``t`` a parameter.
            item = isinstance(target, ast.Subscript) and _self_attr(target.value, this) and plain_items
            if (_self_attr(target, this) or item) and not any(map(_constructs, nodes(node))):
                harmless.add(id(target))
        if harmless and id(node) in harmless:
            continue
        if kind is call_:
            func = node.func  # type: ignore[attr-defined]
            callee = func.__class__
            if callee is attribute_:
                last = func.attr
                if last in _KEEPS or last in _KEEPS_BY_NAME:
                    stores = True
                if func.value.__class__ is name_ and func.value.id == this:
                    calls.add(last)
            elif callee is name_ and func.id in _KEEPS_BY_NAME:
                stores = True
        elif stores:
            continue
        elif kind is attribute_:
            if node.ctx.__class__ in _STORE_OR_DEL and not _imported_root(node, imports or {}, found):  # type: ignore[attr-defined]
                stores = True  # ``self.h = ...``, or through an alias (``m = self.fc; m.w = ...``)
        elif kind is subscript_:
            if node.ctx.__class__ in _STORE_OR_DEL:  # type: ignore[attr-defined]
                root = _root(node)
                if not isinstance(root, ast.Name) or root.id == this:
                    stores = True
        elif kind is name_ and node.id == this and node.ctx.__class__ is ast.Store:  # type: ignore[attr-defined]
            stores = True  # ``self`` rebound: what it names is not known
    return stores, calls


_STORE_OR_DEL = frozenset({ast.Store, ast.Del})


def _imported_root(target: ast.AST, imports: Mapping[str, str], found: list[ast.AST]) -> bool:
    """``torch.backends.cudnn.benchmark = True``: a store into an imported
    module (a name the method never binds), no alias of ``self``."""
    root = _root(target)
    if not (isinstance(root, ast.Name) and root.id in imports):
        return False
    return not any(isinstance(n, ast.Name) and n.id == root.id and isinstance(n.ctx, ast.Store) for n in found)


def _constructs(node: ast.AST) -> bool:
    """A call that may build a module or a parameter: a capitalised callee
    (``nn.Linear``, ``Parameter``) or a ``from_pretrained``."""
    if node.__class__ is not ast.Call:
        return False
    func = node.func  # type: ignore[attr-defined]
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return last[:1].isupper() or last == "from_pretrained" or not last


def _fresh_names(
    method: ast.FunctionDef | ast.AsyncFunctionDef,
    found: list[ast.AST],
    bindings: Mapping[str, str],
    calls: frozenset[str] = frozenset(),
    arrays: frozenset[str] = frozenset(),
) -> set[str]:
    """Local names every binding of which (in any form) is ``name = <fresh tensor>``
    (or a part of a value the method indexes as an array, ``arrays``)."""
    stores: dict[str, int] = {}
    values: dict[str, list[ast.expr]] = {}
    declared: set[str] = set()
    # Runs on every node of every moving method: the classes tested by identity.
    name_, assign_, store_ = ast.Name, ast.Assign, ast.Store
    for node in found:
        kind = node.__class__
        if kind is name_:
            if node.ctx.__class__ is store_:  # type: ignore[attr-defined]
                stores[node.id] = stores.get(node.id, 0) + 1  # type: ignore[attr-defined]
        elif kind is assign_:
            if len(node.targets) == 1 and node.targets[0].__class__ is name_:  # type: ignore[attr-defined]
                values.setdefault(node.targets[0].id, []).append(node.value)  # type: ignore[attr-defined]
        elif kind is ast.Global or kind is ast.Nonlocal:
            declared.update(node.names)  # type: ignore[attr-defined]
    args = method.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a}
    fresh = {n for n, v in values.items() if len(v) == stores.get(n, 0) and n not in params and n not in declared}
    changed = True
    while changed:  # a name bound from another fresh name (``h = result.float()``)
        changed = False
        for name in list(fresh):
            if not all(_fresh(v, fresh, bindings, calls, arrays) for v in values[name]):
                fresh.discard(name)
                changed = True
    return fresh


def _fresh(
    expr: ast.AST,
    fresh: set[str],
    bindings: Mapping[str, str],
    calls: frozenset[str] = frozenset(),
    arrays: frozenset[str] = frozenset(),
) -> bool:
    """``expr`` is a tensor built here: a factory or a sampler of ``torch``,
    ``Variable`` of one, a tensor method on one, ``x.numpy()``, a call of one
    of ``calls`` (``self.m(...)``, a method of the class every ``return`` of
    which is such a tensor), or an item of a value the method indexes as an
    array (``arrays``: array_indexes.py)."""
    if isinstance(expr, ast.Name):
        return expr.id in fresh
    if indexes_an_array(expr, arrays):
        return True
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    if isinstance(func, ast.Attribute) and func.attr in _COPIES and _fresh(func.value, fresh, bindings, calls, arrays):
        return True
    if isinstance(func, ast.Attribute) and func.attr == "numpy" and not expr.args and not expr.keywords:
        return True  # ``out.data.cpu().numpy()``: an array of a copy, no part of a module
    if calls and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        if f"{func.value.id}.{func.attr}" in calls:
            return True
    name = qualified(func, bindings)
    if name in _VARIABLE:
        return len(expr.args) == 1 and not expr.keywords and _fresh(expr.args[0], fresh, bindings, calls, arrays)
    head, _, last = name.rpartition(".")
    return head == "torch" and (last in FRESH_FACTORIES or last in _SAMPLERS)


# A method holding one of these (but itself) is no tensor method (_tensor_methods).
_NOT_RETURNING = frozenset({ast.Yield, ast.YieldFrom, ast.Lambda, *_FUNCTIONS})


def _tensor_methods(
    methods: list[ast.FunctionDef | ast.AsyncFunctionDef], walked: list[list[ast.AST]], bindings: Mapping[str, str]
) -> frozenset[str]:
    """Methods, defined once in the class and undecorated, every ``return``
    of which gives a tensor built there (``def get_batch(self, b): ...;
    return torch.FloatTensor(embed)``): ``batch = self.get_batch(s);
    batch = batch.cuda()`` moves a copy of a fresh tensor, no part of the
    module. No ``yield``, no nested function (its returns are not the method's)."""
    counts: dict[str, int] = {}
    for method in methods:
        counts[method.name] = counts.get(method.name, 0) + 1
    found: set[str] = set()
    for method, nodes_of in zip(methods, walked):
        if counts[method.name] != 1 or method.decorator_list or isinstance(method, ast.AsyncFunctionDef):
            continue
        returns: list[ast.Return] = []
        for node in nodes_of:
            kind = node.__class__
            if kind in _NOT_RETURNING and node is not method:
                break
            if kind is ast.Return:
                returns.append(node)  # type: ignore[arg-type]
        else:
            if returns:
                fresh = _fresh_names(method, nodes_of, bindings)
                if all(r.value is not None and _fresh(r.value, fresh, bindings) for r in returns):
                    found.add(method.name)
    return frozenset(found)


def class_needs(
    tree: ast.Module, cpu_classes: list[str], constructed: Mapping[int, set[str]] | None = None
) -> list[str]:
    """For each class of ``cpu_classes`` (its own code moves nothing), the
    classes its being on the CPU depends on, as the module spells them: its
    bases and the classes its methods construct (a name whose last part is
    capitalised): ``"SeqLabel=CRF,WordSequence,nn.Module"``. A submodule whose
    ``__init__`` calls ``self.lstm.cuda()`` puts the model that builds it on
    the GPU (NCRF++'s ``WordSequence``); the project stage resolves each name
    and keeps the class a CPU class only when every one of the project's is
    (index.py). ``constructed``: per class (by ``id``), the capitalised
    callees its code calls, as the summary's walk found them (the class is
    then not walked again)."""
    wanted = set(cpu_classes)
    out = []
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef) or cls.name not in wanted:
            continue
        names = {n for n in map(_spelled, cls.bases) if n}
        if constructed is not None and id(cls) in constructed:
            names |= constructed[id(cls)]
        else:
            for node in nodes(cls):
                if node.__class__ is ast.Call:
                    name = _spelled(node.func)  # type: ignore[attr-defined]
                    if name and name.rsplit(".", 1)[-1][:1].isupper():
                        names.add(name)
        names.discard(cls.name)
        if names:
            out.append(f"{cls.name}={','.join(sorted(names))}")
    return out


def _spelled(node: ast.AST) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join((node.id, *reversed(parts))) if isinstance(node, ast.Name) else ""
