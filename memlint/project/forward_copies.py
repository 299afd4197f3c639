"""Moves in a module's ``forward`` that copy its input tensors (MEM701's CPU-built classes).

face.evoLVe's heads (``ArcFace``, ``CosFace``...) split their weight over
GPUs inside ``forward``: ``temp_x = x.cuda(d)``, ``weight =
torch.chunk(self.weight, n)[0].cuda(d)``, ``F.linear(...).cuda(d)``. Each
``.cuda()`` there is ``Tensor.cuda``, which returns a copy: no parameter of
the module moves, and a head built by its constructor is still on the CPU.
Only ``Module.to``/``.cuda`` move in place, so a move counts unless its
receiver is surely a tensor: ``forward``'s inputs (``nn.Module.__call__``
hands it data), what a ``torch`` function or ``torch.nn.functional``
returns (whatever its arguments, ``self.weight`` included), a tensor
method's or an operator's result on those, an item of one, and a local
name every binding of which is such a value. ``self.fc.cuda()``, a name
bound to ``self.fc``, or a call of anything else (a method of the class,
another project function) may be a module and still counts.

The copies must also stay out of the module: ``forward`` registers nothing
(no ``register_buffer``, ``setattr``, ``Parameter``...) and each of its
stores into ``self`` reads no name of its own and moves nothing
(SphereFace's ``self.iter += 1``, ``self.lamb = max(self.LambdaMin, ...)``);
``self.buf = x.cuda()`` could replace a registered buffer and counts.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping

from memlint.gate.ast_fields import nodes

# ``torch`` functions that return a module, a device or anything unpickled, never only tensors.
_NOT_TENSORS = frozenset({"load", "device", "compile", "jit", "hub", "nn", "Generator", "Stream", "Event"})
# Tensor methods that return a tensor (a Module has none of them, but ``to``,
# ``cuda``, ``float``... return a tensor when called on one).
_TENSOR_RESULTS = frozenset(
    {"view", "reshape", "float", "long", "int", "double", "half", "bool", "unsqueeze", "squeeze", "expand"}
    | {"contiguous", "t", "detach", "clone", "repeat", "expand_as", "permute", "transpose", "flatten"}
    | {"type_as", "to", "cuda", "cpu", "sum", "mean", "norm", "exp", "log", "sqrt", "pow", "abs", "clamp"}
    | {"chunk", "split", "narrow", "index_select", "masked_fill", "softmax", "sigmoid", "tanh", "mm", "matmul"}
)


_KEEPS = frozenset({"register_buffer", "register_parameter", "add_module", "register_module", "setattr"})
_MOVES = frozenset({"to", "cuda", "xpu", "mps", "to_empty", "ipu", "npu"})


# The moves a tensor also has (``Tensor.to``/``.cuda``/``.xpu``): a copy when
# the receiver is a tensor.
_TENSOR_COPIES = frozenset({"to", "cuda", "xpu"})


def forward_keeps_no_move(
    method: ast.FunctionDef | ast.AsyncFunctionDef,
    found: list[ast.AST],
    moves: list[ast.AST],
    copied: Callable[[ast.AST], bool],
    qualify: Callable[[ast.AST], str],
    functions: Callable[[], frozenset[str]] | None = None,
) -> bool:
    """``moves`` (the device moves of ``method``, a ``forward`` whose nodes
    are ``found``) each move a tensor, and ``forward`` keeps none of their
    copies in the module (see the module's docstring). ``copied``: the
    caller's own proof that a receiver is a fresh tensor; ``qualify`` spells
    a function as a qualified name ("" when not imported); ``functions``
    gives the module's functions that return a tensor (``tensor_functions``),
    asked only when a receiver needs them."""
    if not all(m.func.attr in _TENSOR_COPIES for m in moves):  # type: ignore[attr-defined]
        return False  # ``to_empty`` and the like exist only on modules
    tensor = _tensors(method, found, qualify, functions)
    if not all(copied(m.func.value) or tensor(m.func.value) for m in moves):  # type: ignore[attr-defined]
        return False
    this = (
        method.args.posonlyargs[0].arg
        if method.args.posonlyargs
        else method.args.args[0].arg
        if method.args.args
        else None
    )
    if this is None:
        return False
    local = {n.id for n in found if n.__class__ is ast.Name and n.ctx.__class__ is ast.Store}  # type: ignore[attr-defined]
    a = method.args
    local.update(x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x)
    local.discard(this)
    for node in found:
        if node.__class__ is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            last = func.attr if func.__class__ is ast.Attribute else func.id if func.__class__ is ast.Name else ""
            if last in _KEEPS or last in ("Parameter", "Buffer"):
                return False
        elif node.__class__ in (ast.Assign, ast.AugAssign, ast.AnnAssign):
            targets = node.targets if node.__class__ is ast.Assign else [node.target]  # type: ignore[attr-defined]
            if any(_rooted(t, this) for t in targets) and not _keeps_nothing(node.value, local):  # type: ignore[attr-defined]
                return False
    return True


def _rooted(target: ast.AST, this: str) -> bool:
    """``self.x``, ``self.x[k]``, ``self.a.b``; also inside a tuple target."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_rooted(t, this) for t in target.elts)
    if isinstance(target, ast.Starred):
        return _rooted(target.value, this)
    while isinstance(target, (ast.Attribute, ast.Subscript)):
        target = target.value
        if isinstance(target, ast.Name) and target.id == this:
            return True
    return False


def _keeps_nothing(value: ast.AST | None, local: set[str]) -> bool:
    """A stored value that can hold no copy this method made: it reads no
    local name (nor parameter) and calls no move."""
    if value is None:
        return True
    for node in ast.walk(value):
        if node.__class__ is ast.Name and node.id in local:  # type: ignore[attr-defined]
            return False
        if node.__class__ is ast.Call and node.func.__class__ is ast.Attribute and node.func.attr in _MOVES:  # type: ignore[attr-defined]
            return False
    return True


def _tensors(
    method: ast.FunctionDef | ast.AsyncFunctionDef,
    found: list[ast.AST],
    qualify: Callable[[ast.AST], str],
    functions: Callable[[], frozenset[str]] | None = None,
    inputs_are_tensors: bool = True,
) -> Callable[[ast.AST], bool]:
    """Whether a receiver in ``method`` is surely a tensor (the module's
    docstring); ``inputs_are_tensors``: a ``forward``'s parameters are."""
    args = method.args
    positional = [*args.posonlyargs, *args.args]
    inputs = {a.arg for a in (*positional[1:], *args.kwonlyargs, args.vararg, args.kwarg) if a}
    if not inputs_are_tensors:
        inputs = set()
    values: dict[str, list[ast.AST]] = {}
    stores: dict[str, int] = {}
    opaque: set[str] = set()
    for node in found:
        if node.__class__ is ast.Name and node.ctx.__class__ is ast.Store:  # type: ignore[attr-defined]
            stores[node.id] = stores.get(node.id, 0) + 1  # type: ignore[attr-defined]
        elif node.__class__ is ast.Assign and len(node.targets) == 1 and node.targets[0].__class__ is ast.Name:  # type: ignore[attr-defined]
            values.setdefault(node.targets[0].id, []).append(node.value)  # type: ignore[attr-defined]
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            opaque.update(node.names)
    # A name is a tensor when each of its bindings is a plain assignment of a
    # tensor (an input counts its own binding as one); grown to a fixed point.
    candidates = {
        n
        for n in set(values) | inputs
        if n not in opaque and len(values.get(n, ())) == stores.get(n, 0) and (n in inputs or n in values)
    }
    tensors: set[str] = set(candidates)
    # The module's tensor functions, called by a name this method never binds.
    calls = _Functions(functions, set(stores) | inputs | opaque)
    changed = True
    while changed:
        changed = False
        for name in list(tensors):
            if not all(_tensor(v, tensors, qualify, calls) for v in values.get(name, ())):
                tensors.discard(name)
                changed = True
    return lambda receiver: _tensor(receiver, tensors, qualify, calls)


class _Functions:
    """The module's tensor functions, read once when first asked."""

    def __init__(self, functions: Callable[[], frozenset[str]] | None, shadowed: set[str]) -> None:
        self._get = functions
        self._names: frozenset[str] | None = None
        self._shadowed = shadowed

    def __contains__(self, name: str) -> bool:
        if self._get is None or name in self._shadowed:
            return False
        if self._names is None:
            self._names = self._get()
        return name in self._names


def module_tensor_functions(tree: ast.Module, bindings: Mapping[str, str]) -> Callable[[], frozenset[str]]:
    """``tensor_functions`` of ``tree``'s module-level functions, computed
    when first asked (a class whose ``forward`` moves is rare)."""
    memo: list[frozenset[str]] = []

    def get() -> frozenset[str]:
        if not memo:
            functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            memo.append(tensor_functions(functions, lambda f: qualified(f, bindings)))
        return memo[0]

    return get


def qualified(func: ast.AST, bindings: Mapping[str, str]) -> str:
    """``func`` spelled as a qualified name through the module's imports; "" when not imported."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or func.id not in bindings:
        return ""
    return ".".join((bindings[func.id], *reversed(parts)))


# A tensor function holds none of these but itself.
_NOT_PLAIN = frozenset({ast.Yield, ast.YieldFrom, ast.Lambda, ast.FunctionDef, ast.ClassDef})


def tensor_functions(
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef], qualify: Callable[[ast.AST], str]
) -> frozenset[str]:
    """The module-level functions (``functions``: all of the module's, each
    name defined once) every ``return`` of which is surely a tensor whatever
    its arguments: Am_softmax's ``l2_norm(input)``, ``torch.div(input,
    torch.norm(input, 2, axis, True))``. Undecorated, no ``yield``; its own
    calls of the module's functions are not followed."""
    counts: dict[str, int] = {}
    for fn in functions:
        counts[fn.name] = counts.get(fn.name, 0) + 1
    out = set()
    for fn in functions:
        if counts[fn.name] != 1 or fn.decorator_list or isinstance(fn, ast.AsyncFunctionDef):
            continue
        found = nodes(fn)  # every node ast.walk gives that _tensors reads, in another order (it reads none by it)
        if any(n.__class__ in _NOT_PLAIN and n is not fn for n in found):
            continue
        returns = [n.value for n in found if n.__class__ is ast.Return]  # type: ignore[attr-defined]
        if not returns or any(r is None for r in returns):
            continue
        tensor = _tensors(fn, found, qualify, None, inputs_are_tensors=False)
        if all(tensor(r) for r in returns):  # type: ignore[arg-type]
            out.add(fn.name)
    return frozenset(out)


def _tensor(expr: ast.AST, tensors: set[str], qualify: Callable[[ast.AST], str], calls: _Functions) -> bool:
    kind = expr.__class__
    if kind is ast.Name:
        return expr.id in tensors  # type: ignore[attr-defined]
    if kind is ast.Subscript:
        return _tensor(expr.value, tensors, qualify, calls)  # type: ignore[attr-defined]
    if kind in (ast.BinOp, ast.UnaryOp, ast.Compare):
        return True  # arithmetic or a comparison gives a tensor or a number, never a module
    if kind is not ast.Call:
        return False
    func = expr.func  # type: ignore[attr-defined]
    if (
        func.__class__ is ast.Attribute
        and func.attr in _TENSOR_RESULTS
        and _tensor(func.value, tensors, qualify, calls)
    ):
        return True
    if func.__class__ is ast.Name and func.id in calls:
        return True
    qualified = qualify(func)
    head, _, last = qualified.rpartition(".")
    if head == "torch.nn.functional":
        return True
    return head == "torch" and last not in _NOT_TENSORS and last[:1].islower()
