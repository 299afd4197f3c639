"""A model built, loaded, then moved by the same scope: on the CPU at the load.

``net = LinearEmbedding(base); net.load_state_dict(torch.load(p)); net =
net.cuda()`` (or ``model = nn.DataParallel(model).cuda()``): the scope moves
the model to a device itself, unconditionally, after the load, and nothing
between its construction and the load moves it. The later move says where
the model is at the load, even when its constructor is opaque to the
analysis (a factory, a class around an argparse-chosen backbone, a builder
named by ``eval``): a constructor handed a device, one containing a move,
or a project function known to return a model it moved, says otherwise and
keeps the load reported.

Read on the scope's own statements, once per load into a plain name: the
statement holding the load, the binding before it, the move after it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from memlint.analysis.scope.names import binds_name, dotted_name
from memlint.parse.traversal import OwnCodeVisitor, OwnScopeVisitor

_DEVICE_KEYWORDS = frozenset({"device", "device_map"})
_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def is_move(call: cst.Call) -> bool:
    """``x.cuda(...)``, or ``x.to(...)`` with an argument that is no dtype."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return False
    if func.attr.value == "cuda":
        return True
    if func.attr.value != "to" or not call.args:
        return False
    first = call.args[0]
    if first.keyword is not None:
        return first.keyword.value == "device"
    text = dotted_name(first.value) or ""
    return not (text.endswith("dtype") or text.startswith("torch.") and not text.startswith("torch.device"))


class _Reading(OwnScopeVisitor):
    """What a statement does to ``name``: moves it (or a part of it), binds it
    (and whether every binding is a plain rebuild with no move nor device),
    or hands it to a call given a device; nested scopes are not read."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.moves_it = False  # ``name.cuda()``, ``name.module.to(dev)``
        self.any_move = False  # any move at all, whatever it moves
        self.device_arg = False  # a call given ``device=``
        self.binds = False
        self.bad_binding = False  # bound by a ``for``, ``with``, augmented or unpacking target
        self.values: list[cst.BaseExpression] = []  # what plain assignments bind it to

    def visit_Call(self, node: cst.Call) -> None:
        if is_move(node):
            self.any_move = True
            assert isinstance(node.func, cst.Attribute)
            if _mentions(node.func.value, self.name):
                self.moves_it = True
        if any(a.keyword is not None and a.keyword.value in _DEVICE_KEYWORDS for a in node.args):
            self.device_arg = True

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if binds_name(target.target, self.name):
                self.binds = True
                self.values.append(node.value)
                if not isinstance(target.target, cst.Name):
                    self.bad_binding = True

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if binds_name(node.target, self.name):
            self.binds = self.bad_binding = True

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if binds_name(node.target, self.name):
            self.binds = self.bad_binding = True

    def visit_For(self, node: cst.For) -> None:
        if binds_name(node.target, self.name):
            self.binds = self.bad_binding = True

    def visit_AsName(self, node: cst.AsName) -> None:
        if binds_name(node.name, self.name):
            self.binds = self.bad_binding = True

    def visit_Global(self, node: cst.Global) -> None:
        if any(n.name.value == self.name for n in node.names):
            self.binds = self.bad_binding = True


# Methods of a model that leave it where it is, and calls that only look at it.
_STAYS = frozenset({"eval", "train", "float", "double", "requires_grad_", "load_state_dict", "state_dict"})
_LOOKS = frozenset({"print", "repr", "str", "len", "type", "id", "isinstance", "hasattr", "getattr"})
# ``logger.info(model)``: a logger's methods only format what they are handed.
_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception", "log"})
_WRAPPERS = frozenset({"DataParallel", "nn.DataParallel", "torch.nn.DataParallel"})


def _logs(func: cst.BaseExpression) -> bool:
    """``logger.info``, ``self.logger.debug``, ``logging.warning``."""
    if not isinstance(func, cst.Attribute) or func.attr.value not in _LOG_METHODS:
        return False
    receiver = (dotted_name(func.value) or "").rsplit(".", 1)[-1].lower()
    return receiver.startswith("log")


def _wrapped_in_place(call: cst.Call) -> bool:
    """``nn.DataParallel(model)`` with no ``device_ids``/``output_device``: it
    moves the model only when one GPU is visible, a device that depends on
    the machine (the later move names it)."""
    return (dotted_name(call.func) or "") in _WRAPPERS and len(call.args) == 1 and call.args[0].keyword is None


class _HandedOn(OwnCodeVisitor):
    """``name`` handed to code that may move it or keep it: an argument of a
    call other than a look (``print(model)``) or one that stays (``stays``:
    a function that moves nothing, ``get_model_summary(model, x)``), a
    method of its own other than one that keeps it in place, or an alias."""

    def __init__(self, name: str, stays: Callable[[cst.Call], bool]) -> None:
        self.name = name
        self.stays = stays
        self.handed = False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == self.name:
            if func.attr.value not in _STAYS:
                self.handed = True
        if any(_mentions(a.value, self.name) and not _is_part(a.value) for a in node.args):
            looks = isinstance(func, cst.Name) and func.value in _LOOKS or _logs(func) or _wrapped_in_place(node)
            if not (looks or self.stays(node)):
                self.handed = True

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, (cst.Name, cst.Attribute)) and _mentions(node.value, self.name):
            self.handed = True  # an alias, or a part kept elsewhere
        for target in node.targets:
            if isinstance(target.target, (cst.Attribute, cst.Subscript)) and _mentions(target.target, self.name):
                self.handed = True  # ``model.fc = head``: a part that may be anywhere


def _is_part(expr: cst.BaseExpression) -> bool:
    """``model.output_size``: a value read from the model, not the model."""
    return isinstance(expr, cst.Attribute) and not expr.attr.value.startswith("_") and expr.attr.value != "module"


def _handed(stmt: cst.CSTNode, name: str, stays: Callable[[cst.Call], bool]) -> bool:
    found = _HandedOn(name, stays)
    stmt.visit(found)
    return found.handed


def _mentions(expr: cst.BaseExpression, name: str) -> bool:
    """``expr`` is ``name`` or a part of it (``name.module``, ``name[0]``)."""
    root = expr
    while isinstance(root, (cst.Attribute, cst.Subscript)):
        root = root.value
    return isinstance(root, cst.Name) and root.value == name


def _read(stmt: cst.CSTNode, name: str) -> _Reading:
    reading = _Reading(name)
    stmt.visit(reading)
    return reading


def _assigned(stmt: cst.BaseStatement, name: str) -> cst.BaseExpression | None:
    """The value of ``name = value``, a statement of its own."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    assign = stmt.body[0]
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return None
    target = assign.targets[0].target
    return assign.value if isinstance(target, cst.Name) and target.value == name else None


def _constructor(value: cst.BaseExpression | None, may_move: Callable[[cst.BaseExpression], bool]) -> bool:
    """``value`` builds a model with no device and no move: a call (``Net(...)``,
    ``eval(...)(cfg)``, ``factory()``) of nothing that may move what it builds
    (``may_move``: a class whose code moves, a builder returning a moved model)."""
    if not isinstance(value, cst.Call) or may_move(value.func):
        return False
    reading = _Reading("")
    value.visit(reading)
    return not (reading.any_move or reading.device_arg)


def _built_in_branches(
    stmt: cst.BaseStatement, name: str, may_move: Callable[[cst.BaseExpression], bool]
) -> list[cst.Call] | None:
    """The constructor calls of an ``if``/``else`` each of whose branches is one
    ``name = constructor(...)`` (``model = init(cfg, extra=1)`` or ``model =
    init(cfg)``): built either way with no device and no move."""
    values: list[cst.Call] = []
    branch: cst.BaseSuite | cst.If | cst.Else | None = stmt  # type: ignore[assignment]
    while isinstance(branch, (cst.If, cst.Else)):
        body = branch.body
        if not isinstance(body, cst.IndentedBlock) or len(body.body) != 1:
            return None
        value = _assigned(body.body[0], name)
        if not (isinstance(value, cst.Call) and _constructor(value, may_move) and not _mentions_name(value, name)):
            return None
        values.append(value)
        if isinstance(branch, cst.Else):
            return values
        branch = branch.orelse
    return None  # an ``if`` with no ``else``: the model may come from before it


def _moved_names_before(
    body: Sequence[cst.BaseStatement], end: int, value: cst.Call, may_move: Callable[[cst.BaseExpression], bool]
) -> bool:
    """A name handed to ``value`` was moved by a statement before ``end``
    (``net.cuda(); model = Wrapper(net)``), or bound from a call that may
    build on a device (``args = add_args(p)`` of a builder returning a moved
    model): the new model may hold a moved part."""
    handed = [a.value.value for a in value.args if isinstance(a.value, cst.Name)]
    for name in handed:
        for stmt in body[:end]:
            bound = _assigned(stmt, name)
            if _read(stmt, name).moves_it or (isinstance(bound, cst.Call) and may_move(bound.func)):
                return True
    return False


def moved_after_load(
    body: Sequence[cst.BaseStatement],
    load_stmt: cst.BaseStatement,
    name: str,
    may_move: Callable[[cst.BaseExpression], bool],
    stays: Callable[[cst.Call], bool],
) -> bool:
    """``name``, a model the load in ``load_stmt`` (a statement of ``body``)
    loads into, was built in ``body`` by a constructor with no device and no
    move, is neither moved nor rebound otherwise than by a call with no move
    and no device (``model = network_to_half(model)``) up to the load, and a
    later statement of ``body`` moves it (``net = net.cuda()``,
    ``model = nn.DataParallel(model).cuda()``, ``net.to(device)``)."""
    index = next((i for i, stmt in enumerate(body) if stmt is load_stmt), None)
    if index is None:
        return False
    here = _read(load_stmt, name)
    if here.moves_it or here.bad_binding or _handed(load_stmt, name, stays):
        return False
    built = None
    values: list[cst.Call] = []
    for i in range(index - 1, -1, -1):
        stmt = body[i]
        value = _assigned(stmt, name)
        if isinstance(value, cst.Call) and _constructor(value, may_move) and not _mentions_name(value, name):
            built, values = i, [value]
            break
        branches = _built_in_branches(stmt, name, may_move)
        if branches:
            built, values = i, branches
            break
        reading = _read(stmt, name)
        if reading.moves_it or reading.bad_binding or _handed(stmt, name, stays):
            return False
        if reading.binds and (
            reading.any_move or reading.device_arg or not all(_rebuilt(v, name) for v in reading.values)
        ):
            return False  # rebuilt on a device, or bound to another value
    if built is None:
        return False
    if any(_moved_names_before(body, built, value, may_move) for value in values):
        return False
    for stmt in body[index + 1 :]:
        reading = _read(stmt, name)
        if _moving_rebind(_assigned(stmt, name), name) or _moved_in_place(stmt, name):
            return True
        if reading.binds:
            return False  # rebound before any move: the load's model is gone
    return False


def _rebuilt(value: cst.BaseExpression, name: str) -> bool:
    """``value`` is a call handed ``name`` (``network_to_half(model)``)."""
    return isinstance(value, cst.Call) and _mentions_name(value, name)


def _moving_rebind(value: cst.BaseExpression | None, name: str) -> bool:
    """``value`` moves what it reads of ``name``: ``net.cuda()``,
    ``nn.DataParallel(model).cuda()``, ``model.to(device)``."""
    return isinstance(value, cst.Call) and is_move(value) and _mentions_name(value, name)


def _mentions_name(value: cst.BaseExpression, name: str) -> bool:
    """``value`` reads ``name`` (``model = wrap(model)``): a rebuild, not a construction."""
    found = _NameUse(name)
    value.visit(found)
    return found.used


class _NameUse(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.used = False

    def visit_Name(self, node: cst.Name) -> None:
        self.used = self.used or node.value == self.name


def _moved_in_place(stmt: cst.BaseStatement, name: str) -> bool:
    """``name.cuda()`` / ``name.to(device)`` as a statement of its own."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    expr = stmt.body[0]
    if not isinstance(expr, cst.Expr) or not isinstance(expr.value, cst.Call):
        return False
    call = expr.value
    while isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
        if is_move(call) and isinstance(call.func.value, cst.Name) and call.func.value.value == name:
            return True
        inner = call.func.value
        if not isinstance(inner, cst.Call):
            break
        call = inner
    return False


def enclosing_blocks(
    node: cst.CSTNode, scope: cst.CSTNode, parent: Callable[[cst.CSTNode], cst.CSTNode | None]
) -> list[tuple[cst.BaseStatement, Sequence[cst.BaseStatement]]]:
    """Each statement holding ``node`` with the statements of its block, the
    innermost first, up to ``scope``'s own body: a model built, loaded and
    moved in the block of ``if __name__ == "__main__":`` runs in order there
    as in a function's body. Empty when ``node`` is in a nested scope."""
    found: list[tuple[cst.BaseStatement, Sequence[cst.BaseStatement]]] = []
    cur: cst.CSTNode | None = node
    while cur is not None and cur is not scope:
        if isinstance(cur, _NESTED):
            return []
        up = parent(cur)
        if isinstance(cur, cst.BaseStatement) and isinstance(up, (cst.IndentedBlock, cst.Module)):
            found.append((cur, up.body))
        cur = up
    return found if cur is scope else []


def scope_body(scope: cst.CSTNode) -> Sequence[cst.BaseStatement] | None:
    """The statements of a function or a module, in order."""
    if isinstance(scope, cst.Module):
        return scope.body
    if isinstance(scope, cst.FunctionDef) and isinstance(scope.body, cst.IndentedBlock):
        return scope.body.body
    return None


def statement_in(
    node: cst.CSTNode, scope: cst.CSTNode, parent: Callable[[cst.CSTNode], cst.CSTNode | None]
) -> cst.BaseStatement | None:
    """The statement of ``scope``'s own body that holds ``node``."""
    body = scope_body(scope)
    if body is None:
        return None
    members = {id(stmt) for stmt in body}
    cur: cst.CSTNode | None = node
    while cur is not None and id(cur) not in members:
        if isinstance(cur, _NESTED) and cur is not scope:
            return None
        cur = parent(cur)
    return cur if isinstance(cur, cst.BaseStatement) else None
