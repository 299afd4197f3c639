"""Which checkpoint files a module writes, from what, and which it reads.

``net.cpu(); state = net.state_dict(); torch.save(state, osp.join(d,
"model_final.pth"))`` in train.py, ``net.load_state_dict(torch.load(
osp.join(d, "model_final.pth")))`` in evaluate.py: the file evaluate.py reads
holds CPU tensors, so loading it without ``map_location`` makes no GPU copy
(MEM701). The link between the two modules is the file's name, a string
literal in the path (directly, or in what a name of the same function was
bound to before).

``checkpoint_files(tree, bindings)`` -> ``(cpu, other, loaded)``: the file
names saved from a state known to be on the CPU (the proofs of
analysis/training/cpu_saves.py, on ``ast``: ``X.cpu().state_dict()``, the
last device move of ``X`` before ``X.state_dict()`` in the same function is
``.cpu()``/``.to("cpu")``, a bare ``net.cpu()`` statement included, a
``{k: v.cpu() ...}`` comprehension, a conditional expression whose both
branches are one of those, a name bound to one, a state dict whose every
entry a loop replaces by its value moved to the CPU: ``for k, v in
sd.items(): sd[k] = v.cpu()``; a name rebound, or a state given an entry
not known to be on the CPU, loses it), the names saved from
anything else, and the names ``torch.load`` reads. Read only for a module
that calls a ``save`` or ``load`` attribute (summary.py), in one walk.

``checkpoint_facts`` says it also of the saves that may hold a model's
state (all but ``optimizer.state_dict()``, a scheduler's, a scaler's, or a
dict of those and plain values), whatever their file names: "cpu" when
every one of them writes a CPU state, "other" when one may not, "" when
there is none (KAIR's models/model_base.py: "cpu", its optimizer saved from
the GPU beside; a subclass in another module loads what it writes:
family_saves.py).
"""

from __future__ import annotations

import ast
import re

from memlint.gate.ast_fields import CHILDREN, children
from memlint.gate.ast_names import ast_dotted
from memlint.vocabulary.checkpoint_files import file_name
from memlint.vocabulary.cpu_states import (
    KEEPS_DEVICE,
    RETURNS_SELF,
    STATE_WORDS,
    CpuStateFrames,
    holds_no_weights,
    plain_name,
)


def _to_cpu(call: ast.Call) -> bool | None:
    """True for a move to the CPU, False for a move elsewhere, None for no move."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    if func.attr == "cpu":
        return True
    if func.attr == "cuda":
        return False
    if func.attr == "to" and call.args:
        first = call.args[0]
        if isinstance(first, ast.Call) and ast_dotted(first.func) in ("torch.device", "device") and first.args:
            first = first.args[0]
        return isinstance(first, ast.Constant) and first.value == "cpu"
    return None


def _module_receiver(expr: ast.expr) -> str | None:
    """``model`` for ``model``, ``model.eval()``, ``model.train(False).float()``."""
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in RETURNS_SELF:
        expr = expr.func.value
    return ast_dotted(expr)


def _ends_on_cpu(expr: ast.expr) -> bool:
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        if _to_cpu(expr) is True:
            return True
        if expr.func.attr not in KEEPS_DEVICE:
            return False
        expr = expr.func.value
    return False


class _Files(ast.NodeVisitor):
    def __init__(self, bindings: dict[str, str]) -> None:
        self.bindings = bindings
        self.frames = CpuStateFrames()
        self.paths: list[dict[str, set[str]]] = [{}]  # per function (and the module): file names each name was bound to
        self.cpu: set[str] = set()
        self.other: set[str] = set()
        self.loaded: set[str] = set()
        self.model_saves = 0  # saves that may hold a model's state
        self.model_unproven = 0

    # ``ast.NodeVisitor``'s walk, its dispatch and children read from tables
    # made once (a ``getattr`` of the method's name and ``ast.iter_fields``
    # per node cost most of a whole module's walk): the same order, and the
    # same depth of calls per level of the tree (a RecursionError where
    # ``NodeVisitor`` met one). Contexts, operators and aliases, which no
    # method here visits and which hold nothing below, are not entered.
    def visit(self, node: ast.AST) -> None:
        method = _VISITS.get(node.__class__)
        if method is None:
            self.generic_visit(node)
        else:
            method(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        for child in children(node):
            self.visit(child)

    def _function(self, node: ast.AST) -> None:
        self.frames.enter()
        self.paths.append({})
        self.generic_visit(node)
        self.frames.leave()
        self.paths.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)  # the value's calls first: ``net.cpu()`` in it is known
        cpu = self._cpu_state(node.value)
        files = self._files(node.value)
        for target in node.targets:
            key = ast_dotted(target)
            if key is None:
                self._entry_set(target, node.value)
                continue
            self._rebound(key, node.value)
            self.frames.set_cpu_state(key, cpu)
            self.paths[-1][key] = files

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.generic_visit(node)
        key = ast_dotted(node.target)
        if key is not None and node.value is not None:
            self._rebound(key, node.value)
            self.frames.set_cpu_state(key, self._cpu_state(node.value))

    def visit_For(self, node: ast.For) -> None:
        key = ast_dotted(node.target)
        if key is not None:
            self._rebound(key, None)
            self.frames.set_cpu_state(key, False)
        self.generic_visit(node)
        state = per_key_cpu_loop(node)
        if state is not None:
            self.frames.set_cpu_state(state, True)

    def _rebound(self, key: str, value: ast.expr | None) -> None:
        moved = _to_cpu(value) if isinstance(value, ast.Call) else None
        same = moved is None and value is not None and _module_receiver(value) == key
        self.frames.rebound(key, moved, same)

    def _entry_set(self, target: ast.expr, value: ast.expr) -> None:
        """``sd[k] = v``: ``sd`` stays a CPU state only if ``v`` is on the CPU."""
        if not isinstance(target, ast.Subscript):
            return
        key = ast_dotted(target.value)
        if (
            key is not None
            and self.frames.is_cpu_state(key)
            and not (_ends_on_cpu(value) or self._cpu_state(value) or _plain_value(value))
        ):
            self.frames.set_cpu_state(key, False)

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)  # inner calls first: ``torch.save(net.cpu().state_dict(), p)``
        name = self._qualified(node.func)
        if name == "torch.save" and node.args:
            cpu = self._cpu_state(node.args[0])
            if not _no_model_state(node.args[0]):
                self.model_saves += 1
                self.model_unproven += not cpu
            if len(node.args) >= 2:
                (self.cpu if cpu else self.other).update(self._files(node.args[1]))
            return
        if name == "torch.load" and node.args:
            self.loaded.update(self._files(node.args[0]))
            return
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("update", "setdefault", "__setitem__"):
            key = ast_dotted(func.value)  # ``sd.update(other)``: entries not known to be on the CPU
            if key is not None:
                self.frames.set_cpu_state(key, False)
        moved = _to_cpu(node)
        if moved is not None:
            key = _module_receiver(node.func.value)  # type: ignore[attr-defined]
            if key is not None:
                self.frames.moved(key, moved)

    def _qualified(self, func: ast.expr) -> str | None:
        return _qualified(func, self.bindings)

    def _files(self, expr: ast.expr) -> set[str]:
        found: set[str] = set()
        todo: list[ast.AST] = [expr]
        while todo:
            sub = todo.pop()
            template = _template(sub)
            if template is not None:
                # ``"{}_{}.pkl".format(name, task)``, ``f"{name}_0.pkl"``: a
                # pattern of names (``*_*.pkl``), not the literal pieces.
                named = file_name(template)
                if named:
                    found.add(named)
                if isinstance(sub, ast.Call):
                    todo.extend(sub.args)  # a name the template is filled with may hold a whole path
                continue
            todo.extend(children(sub))
            if isinstance(sub, ast.Constant):
                named = file_name(sub.value)
                if named:
                    found.add(named)
            elif isinstance(sub, (ast.Name, ast.Attribute)):
                key = ast_dotted(sub)
                if key is not None:
                    found |= self.paths[-1].get(key, set())
        return found

    def _cpu_state(self, value: ast.expr) -> bool:
        if isinstance(value, ast.IfExp):
            return self._cpu_state(value.body) and self._cpu_state(value.orelse)
        if isinstance(value, ast.Dict):
            return self._cpu_entries(value)
        if isinstance(value, ast.DictComp):
            return _ends_on_cpu(value.value)
        name = ast_dotted(value)
        if name is not None:
            return self.frames.is_cpu_state(name)
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
            return False
        if value.func.attr != "state_dict" or value.args or value.keywords:
            return False
        receiver = value.func.value
        cur: ast.expr = receiver
        while isinstance(cur, (ast.Call, ast.Attribute)):
            if isinstance(cur, ast.Call):
                if _to_cpu(cur) is True:
                    return True
                cur = cur.func
            else:
                cur = cur.value
        key = _module_receiver(receiver)
        return key is not None and self.frames.last_move_to_cpu(key)

    def _cpu_entries(self, value: ast.Dict) -> bool:
        """``{"tasks": self._cur_task, "model_state_dict": net.state_dict()}``
        after ``net.cpu()``: at least one state on the CPU, and every other
        value a constant or a plain name (no call, no name that says it
        holds a model, state or tensor)."""
        if None in value.keys or not value.values:
            return False  # ``{**other}``: unknown entries
        states = 0
        for entry in value.values:
            if self._cpu_state(entry):
                states += 1
            elif not _plain_value(entry):
                return False
        return states > 0


# Node class -> the method _Files.visit runs for it (none: its children's walk):
# its own ``visit_<class>`` methods, as ``NodeVisitor.visit`` finds them.
_VISITS = {cls: method for cls in CHILDREN if (method := vars(_Files).get(f"visit_{cls.__name__}")) is not None}


def per_key_cpu_loop(node: ast.For) -> str | None:
    """``sd`` for ``for k, v in sd.items(): ... sd[k] = v.cpu() ...``: the
    body replaces, on every pass (a statement of its own, no ``break`` or
    ``continue`` anywhere in it), each entry by its value on the CPU."""
    target, it = node.target, node.iter
    if not (isinstance(target, ast.Tuple) and len(target.elts) == 2 and not node.orelse):
        return None
    if not all(isinstance(e, ast.Name) for e in target.elts):
        return None
    key, value = (e.id for e in target.elts)  # type: ignore[attr-defined]
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "items"):
        return None
    state = ast_dotted(it.func.value)
    if state is None or it.args or it.keywords:
        return None
    if any(isinstance(sub, (ast.Break, ast.Continue)) for stmt in node.body for sub in ast.walk(stmt)):
        return None
    for stmt in node.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        sub = stmt.targets[0]
        if (
            isinstance(sub, ast.Subscript)
            and ast_dotted(sub.value) == state
            and isinstance(sub.slice, ast.Name)
            and sub.slice.id == key
            and _ends_on_cpu(stmt.value)
            and _innermost(stmt.value) == value
        ):
            return state
    return None


def _innermost(expr: ast.expr) -> str | None:
    """``v`` for ``v.detach().cpu()``."""
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        expr = expr.func.value
    return expr.id if isinstance(expr, ast.Name) else None


# Here ``optim`` names a state too: a dict of a model's CPU state and plain
# values (``_cpu_entries``, which cpu_saves.py does not prove) holds no ``optim_state``.
_STATE_WORDS = (*STATE_WORDS, "optim")


def _plain_value(value: ast.expr) -> bool:
    """A constant, or a name whose last part names no model, state or tensor (``self._cur_task``, ``test_acc``)."""
    if isinstance(value, ast.Constant):
        return True
    name = ast_dotted(value)
    return name is not None and plain_name(name, _STATE_WORDS)


def _no_model_state(value: ast.expr) -> bool:
    """``optimizer.state_dict()`` (``self.optimizer_G``, ``scheduler``,
    ``scaler``: named so), or a dict of those beside plain values: a
    checkpoint only an optimizer (scheduler, scaler) loads."""
    if isinstance(value, ast.Dict):
        if None in value.keys or not value.values:
            return False
        states = [_no_model_state(v) for v in value.values]
        return any(states) and all(s or _plain_value(v) for s, v in zip(states, value.values))
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return False
    if value.func.attr != "state_dict" or value.args or value.keywords:
        return False
    owner = ast_dotted(value.func.value)
    return owner is not None and holds_no_weights(owner)


def _template(node: ast.AST) -> str | None:
    """The name pattern a formatted string spells, each field a ``*``:
    ``"{}_{}.pkl".format(a, b)`` and ``f"{a}_{b}.pkl"`` give ``*_*.pkl``."""
    if isinstance(node, ast.JoinedStr):
        parts = []
        for piece in node.values:
            if isinstance(piece, ast.Constant) and isinstance(piece.value, str):
                parts.append(piece.value.replace("*", ""))
            else:
                parts.append("*")
        return "".join(parts)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
    ):
        return re.sub(r"\{[^{}]*\}", "*", node.func.value.value.replace("*", ""))
    return None


def _qualified(func: ast.expr, bindings: dict[str, str]) -> str | None:
    spelled = ast_dotted(func)
    if spelled is None:
        return None
    head, dot, rest = spelled.partition(".")
    bound = bindings.get(head)
    return (bound + dot + rest) if bound else spelled


# The calls whose files checkpoint_files keeps: without one, all three lists are empty.
CHECKPOINT_CALLS = frozenset({"torch.save", "torch.load"})


def names_a_checkpoint_call(func: ast.expr, bindings: dict[str, str]) -> bool:
    """``func`` (a callee whose last name is ``save`` or ``load``) is
    ``torch.save``/``torch.load`` once ``bindings`` (the module's imports, as
    checkpoint_files gets them) qualify it: the summary reads the whole
    module again (checkpoint_files) only when some callee is."""
    return _qualified(func, bindings) in CHECKPOINT_CALLS


def checkpoint_facts(tree: ast.Module, bindings: dict[str, str]) -> tuple[list[str], list[str], list[str], str]:
    """``checkpoint_files``' three lists, and what the saves that may hold a
    model's state write: "cpu", "other" or "" (none)."""
    visitor = _Files(bindings)
    visitor.visit(tree)
    models = "" if not visitor.model_saves else "other" if visitor.model_unproven else "cpu"
    return sorted(visitor.cpu), sorted(visitor.other), sorted(visitor.loaded), models


def checkpoint_files(tree: ast.Module, bindings: dict[str, str]) -> tuple[list[str], list[str], list[str]]:
    return checkpoint_facts(tree, bindings)[:3]
