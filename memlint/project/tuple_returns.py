"""Which elements of the tuple a model's ``forward`` returns carry no autograd history.

JDE's ``Darknet.forward`` ends ``return sum(output),
torch.Tensor(list(self.losses.values())).cuda()``: the loss, then its parts
for logging in a tensor the legacy constructor builds fresh, with no graph
whatever it is given. ``loss, components = model(x, y)`` in the training
loop, then ``rloss[key] = (... + components[ii]) / (ui + 1)`` keeps no graph
across iterations (MEM102 must stay silent); ``loss`` still has one.

An element is fresh when it is a number, ``.item()``/``.tolist()``/
``.detach()``/``.numpy()`` of anything, or a torch constructor that records
nothing (``torch.Tensor``, ``torch.tensor``, ``torch.zeros``... without
``requires_grad``), possibly moved or cast after (``.cuda()``, ``.to(d)``,
``.float()``), or a name the forward binds only to such values
(``acc = (pred == y).float().mean().item()``, then ``return loss, acc``). The facts hold for a class when every ``return`` of its
``forward`` that is a tuple display has the same length and the element is
fresh in each; the other returns must be a single tensor ``torch.cat``/
``torch.stack`` builds (JDE's inference branches), which a caller that
unpacks the tuple does not take. Any other return: nothing is known.
Read on Python's ``ast`` (the project summary's tree, or the class's own
code for a class of the checked file).
"""

from __future__ import annotations

import ast

from memlint.gate.ast_fields import children

# The statements and nodes binding a name that _fresh_names reads beyond the
# ones object_types does (READ_IN_SCOPE): the summary's walk keeps them in
# each scope's nodes too, so a forward's own code is not walked again.
BINDING_NODES = frozenset(
    {ast.For, ast.AsyncFor, ast.NamedExpr, ast.With, ast.AsyncWith, ast.Delete, ast.ExceptHandler}
    | {ast.MatchAs, ast.MatchStar, ast.MatchMapping}
)
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_NUMBER_METHODS = frozenset({"item", "tolist", "detach", "numpy"})
_KEEPING = frozenset({"cuda", "cpu", "to", "float", "half", "double", "long", "int", "bool", "contiguous"})
_FRESH_TORCH = frozenset(
    {
        "Tensor",
        "FloatTensor",
        "DoubleTensor",
        "HalfTensor",
        "LongTensor",
        "IntTensor",
        "ByteTensor",
        "BoolTensor",
        "tensor",
        "zeros",
        "ones",
        "empty",
        "full",
        "arange",
        "eye",
    }
)
_ONE_TENSOR = frozenset({"cat", "stack"})
_NUMBER_BUILTINS = frozenset({"float", "int", "len", "round"})


def forward_items(
    tree: ast.Module, bindings: dict[str, str], scope_nodes: dict[int, list[ast.AST]] | None = None
) -> dict[str, list[int]]:
    """Module-level classes whose ``forward`` returns a tuple with fresh
    elements: class -> [length, fresh positions...]. ``scope_nodes``: the
    nodes of each function's own code the summary's walk gathered
    (summary.py), whose ``Return`` nodes are the function's own returns; a
    function missing there is walked here."""
    out = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            found = class_forward_items(stmt, bindings, scope_nodes)
            if found is not None:
                out[stmt.name] = [found[0], *found[1]]
    return out


def class_forward_items(
    cls: ast.ClassDef, bindings: dict[str, str], scope_nodes: dict[int, list[ast.AST]] | None = None
) -> tuple[int, tuple[int, ...]] | None:
    """(length, fresh positions) of the tuple ``cls.forward`` returns, or
    None when no position is known fresh. The answer does not depend on the
    order of the returns, so they may come from the summary's walk."""
    forwards = [s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "forward"]
    if len(forwards) != 1:
        return None
    own = scope_nodes.get(id(forwards[0])) if scope_nodes is not None else None
    returns = _returns(forwards[0]) if own is None else [n for n in own if isinstance(n, ast.Return)]
    size, fresh = 0, None
    # Only a tuple returning a bare name asks which names are fresh: the walk
    # it costs is skipped for every other forward.
    names: set[str] | None = None
    for ret in returns:
        value = ret.value
        if isinstance(value, ast.Tuple):
            if any(isinstance(e, ast.Starred) for e in value.elts) or size not in (0, len(value.elts)):
                return None
            size = len(value.elts)
            if names is None and any(isinstance(e, ast.Name) for e in value.elts):
                names = _fresh_names(forwards[0], bindings, own)
            here = {
                i
                for i, e in enumerate(value.elts)
                if _fresh(e, bindings) or (isinstance(e, ast.Name) and names is not None and e.id in names)
            }
            fresh = here if fresh is None else fresh & here
        elif not _one_tensor(value, bindings):
            return None
    if not fresh:
        return None
    return size, tuple(sorted(fresh))


def _returns(fn: ast.FunctionDef) -> list[ast.Return]:
    """``fn``'s own returns, not those of functions or classes nested in it."""
    out: list[ast.Return] = []
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            out.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(children(node))
    return out


def _fresh_names(fn: ast.FunctionDef, bindings: dict[str, str], own: list[ast.AST] | None = None) -> set[str]:
    """Names ``fn`` binds only by plain assignments of fresh values
    (``acc = (pred == y).float().mean().item()`` before ``return loss,
    acc``), augmented only by fresh values (``wd = 0``, then ``wd +=
    torch.sum(d).item()`` per point): a parameter, or a name also bound another way (a loop target,
    an unpacking, ``+=``, ``with ... as``, a nested scope's ``nonlocal``),
    or one written in place (``acc.add_(loss)``, ``acc[0] = loss``), is not
    one of them. ``own``: the nodes of ``fn``'s own code the summary's walk
    kept (READ_IN_SCOPE and BINDING_NODES, with the nested scopes' own
    nodes): every node read below is one of them, and the answer does not
    depend on their order; None: ``fn`` is walked here."""
    fresh: set[str] = set()
    other: set[str] = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    other.update(a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None)
    if own is not None:
        for node in own:
            _read_binding(node, bindings, fresh, other)
        return fresh - other
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if not isinstance(node, _NESTED):
            stack.extend(children(node))
        _read_binding(node, bindings, fresh, other)
    return fresh - other


def _read_binding(node: ast.AST, bindings: dict[str, str], fresh: set[str], other: set[str]) -> None:
    """What one node of a function's own code (or a scope nested in it) says of the names it binds."""
    if isinstance(node, _NESTED):
        other.update(n for sub in ast.walk(node) if isinstance(sub, ast.Nonlocal) for n in sub.names)
        return
    func = node.func if isinstance(node, ast.Call) else None
    if isinstance(func, ast.Attribute) and func.attr.endswith("_") and isinstance(func.value, ast.Name):
        other.add(func.value.id)  # ``acc.add_(loss)``: written in place, it may take a graph
        return
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        (fresh if _fresh(node.value, bindings) else other).add(node.targets[0].id)
        return
    if _fresh_augmented(node, bindings):
        return  # ``wd += torch.sum(dis * P).item()``: a number added to a fresh start stays fresh
    if isinstance(node, ast.Assign):
        targets: list[ast.AST] = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
        targets = [node.target]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in node.items if i.optional_vars is not None]
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        other.update(node.names)
        return
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        other.update((a.asname or a.name).split(".")[0] for a in node.names)
        return
    elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
        other.add(node.name)
        return
    elif isinstance(node, ast.MatchMapping) and node.rest:
        other.add(node.rest)
        return
    elif isinstance(node, ast.Delete):
        targets = list(node.targets)
    else:
        return
    for target in targets:
        other.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))


def _plain_arg(expr: ast.expr, bindings: dict[str, str]) -> bool:
    """A constant (a tuple of them), or a value without history."""
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.Tuple):
        return all(_plain_arg(e, bindings) for e in expr.elts)
    return _fresh(expr, bindings) or _detached(expr)


def _detached(expr: ast.expr) -> bool:
    """``x.detach()`` (``.cpu()``-like calls after it kept)."""
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        if expr.func.attr == "detach":
            return True
        if expr.func.attr not in _KEEPING:
            return False
        expr = expr.func.value
    return False


def _fresh_args(call: ast.Call, bindings: dict[str, str]) -> bool:
    return all(not isinstance(a, ast.Starred) and _plain_arg(a, bindings) for a in call.args) and all(
        k.arg is not None and _plain_arg(k.value, bindings) for k in call.keywords
    )


_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


def _fresh_augmented(node: ast.AST, bindings: dict[str, str]) -> bool:
    """``name += <fresh value>`` with an arithmetic operator: it keeps a name
    that the function otherwise binds only to fresh values fresh."""
    return (
        isinstance(node, ast.AugAssign)
        and isinstance(node.target, ast.Name)
        and isinstance(node.op, _ARITHMETIC)
        and _fresh(node.value, bindings)
    )


def _torch_name(func: ast.expr, bindings: dict[str, str]) -> str | None:
    """``torch.Tensor`` -> "Tensor" (through ``import torch as t`` too)."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        if bindings.get(func.value.id, func.value.id) == "torch":
            return func.attr
    if isinstance(func, ast.Name):
        target = bindings.get(func.id, "")
        if target.startswith("torch.") and target.count(".") == 1:
            return target[6:]
    return None


def _fresh(expr: ast.expr, bindings: dict[str, str]) -> bool:
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
    if isinstance(expr, ast.Compare):
        return True  # ``pred == y``: a boolean, whatever its sides hold
    if isinstance(expr, ast.Subscript):
        return _fresh(expr.value, bindings) and _plain_arg(expr.slice, bindings)  # ``accuracy(...)[0]``
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    if isinstance(func, ast.Attribute):
        if func.attr in _NUMBER_METHODS:
            return True
        if func.attr in _KEEPING:
            return _fresh(func.value, bindings)
        if not func.attr.endswith("_") and _fresh(func.value, bindings):
            return _fresh_args(expr, bindings)  # ``(pred == y).float().mean()``
    if isinstance(func, ast.Name) and func.id in _NUMBER_BUILTINS and func.id not in bindings:
        return True
    if isinstance(func, ast.Name) and func.id[:1].islower() and not bindings.get(func.id, "").startswith("torch"):
        # ``accuracy(output.detach(), label.detach(), topk=(1,))`` (ECAPA's
        # AAMsoftmax): a function handed only values without history. Limit:
        # a module-level model called so would give its own parameters' history.
        return bool(expr.args or expr.keywords) and _fresh_args(expr, bindings)
    name = _torch_name(func, bindings)
    return name in _FRESH_TORCH and not any(k.arg == "requires_grad" for k in expr.keywords)


def _one_tensor(expr: ast.expr | None, bindings: dict[str, str]) -> bool:
    return isinstance(expr, ast.Call) and _torch_name(expr.func, bindings) in _ONE_TENSOR
