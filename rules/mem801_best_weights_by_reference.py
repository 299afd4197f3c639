"""MEM801 best-weights-by-reference."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider

from memlint.analysis.scope.blocks import inside
from memlint.analysis.scope.bound_targets import bound_targets
from memlint.analysis.scope.names import dotted_name, mentions
from memlint.analysis.training.loops import jumps
from memlint.parse.traversal import visit_fast
from memlint.rule import Fix, Invalid, Rule, Safety, Valid
from memlint.vocabulary.kinds import Kind

_SAVES = frozenset({"torch.save", "save", "save_checkpoint", "safetensors.torch.save_file"})


_ORDERING = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual)


def _breaks_or_returns(stmt: cst.CSTNode) -> bool:
    return jumps(stmt, (cst.Break, cst.Return))


class _SelectionFinder(cst.CSTVisitor):
    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    found = False

    def visit_ComparisonTarget(self, node: cst.ComparisonTarget) -> None:
        if isinstance(node.operator, _ORDERING):
            self.found = True

    def visit_Name(self, node: cst.Name) -> None:
        if "best" in node.value.lower() or "improv" in node.value.lower():
            self.found = True


def _selects(test: cst.BaseExpression) -> bool:
    """A test that picks an improvement: an ordering comparison, or a name
    that says so (``is_best``, ``improved``)."""
    finder = _SelectionFinder()
    visit_fast(test, finder)
    return finder.found


def _snapshot_keys(value: cst.BaseExpression) -> frozenset[str] | None:
    """The string keys of a checkpoint dict literal (``{"epoch": e, "model":
    model.state_dict()}``) whose values call ``state_dict``; None otherwise."""
    if not isinstance(value, cst.Dict):
        return None
    keys = set()
    for el in value.elements:
        if not isinstance(el, cst.DictElement):
            return None
        if not isinstance(el.key, cst.SimpleString):
            return None
        if "state_dict" in _call_attrs(el.value):
            keys.add(el.key.evaluated_value)
    return frozenset(keys)


def _entry_key(target: cst.BaseExpression) -> str | None:
    """``"best_state"`` for ``checkpoint["best_state"]``; None otherwise."""
    if not (isinstance(target, cst.Subscript) and len(target.slice) == 1):
        return None
    index = target.slice[0].slice
    value = index.value if isinstance(index, cst.Index) else None
    key = value.evaluated_value if isinstance(value, cst.SimpleString) else None
    return key if isinstance(key, str) else None  # a bytes key names no entry of ours


def _none_test(parent: cst.CSTNode | None, read: cst.CSTNode) -> bool:
    """``read is None`` / ``read is not None``."""
    return (
        isinstance(parent, cst.Comparison)
        and parent.left is read
        and len(parent.comparisons) == 1
        and isinstance(parent.comparisons[0].operator, (cst.Is, cst.IsNot))
        and isinstance(parent.comparisons[0].comparator, cst.Name)
        and parent.comparisons[0].comparator.value == "None"
    )


def _binds_before_in_block(target: cst.Name, read: cst.CSTNode, parents) -> bool:
    """``target`` is the target of a plain assignment whose block holds ``read``."""
    assign_target = parents.get(target)
    assign = parents.get(assign_target) if isinstance(assign_target, cst.AssignTarget) else None
    line = parents.get(assign) if isinstance(assign, cst.Assign) else None
    block = parents.get(line) if line is not None else None
    return block is not None and inside(read, block, parents)


class _CallAttrs(cst.CSTVisitor):
    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self) -> None:
        super().__init__()
        self.found: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute):
            self.found.add(node.func.attr.value)


def _call_attrs(expr: cst.BaseExpression) -> set[str]:
    visitor = _CallAttrs()
    visit_fast(expr, visitor)
    return visitor.found


class _Reads(cst.CSTVisitor):
    """Reads of every name (or of every ``.attr`` on any object), by name, with
    the call they are an argument of, if any: one walk answers for all names."""

    def __init__(self, attr: bool) -> None:
        super().__init__()
        self.attr = attr
        self.found: dict[str, list[tuple[cst.CSTNode, cst.Call | None]]] = {}
        self._calls: list[cst.Call] = []
        self._targets: set[int] = set()

    def visit_Call(self, node: cst.Call) -> None:
        self._calls.append(node)

    def leave_Call(self, original_node: cst.Call) -> None:
        self._calls.pop()

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets.add(id(node.target))

    def visit_Del(self, node: cst.Del) -> None:
        # ``del best`` drops the snapshot: it restores nothing
        target = node.target
        for t in [e.value for e in target.elements] if isinstance(target, cst.Tuple) else [target]:
            self._targets.add(id(t))

    def _hit(self, node: cst.CSTNode, key: str) -> None:
        if id(node) not in self._targets:
            self.found.setdefault(key, []).append((node, self._calls[-1] if self._calls else None))

    def visit_Name(self, node: cst.Name) -> None:
        if not self.attr:
            self._hit(node, node.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self.attr:
            self._hit(node, node.attr.value)


class BestWeightsByReference(Rule):
    """
    ## What it does
    Flags `best = model.state_dict()` (or `.state_dict().copy()`, or a
    checkpoint dict holding one) kept across iterations of a training loop,
    or on an early-stopping object, and used later, typically to restore or
    save "the best" weights.

    ## Why it matters
    `state_dict()` returns references to the live parameter tensors, not a
    copy. Every later optimizer step changes the "best" weights too, so
    restoring them restores the last epoch's weights and the early stopping
    does nothing. `dict.copy()` copies only the dictionary, not the tensors.

    ## Example
    ```python
    for epoch in range(epochs):
        train_one_epoch(model)
        acc = evaluate(model)
        if acc > best_acc:
            best_acc = acc
            best_state = model.state_dict()
    model.load_state_dict(best_state)
    ```

    ## Use instead
    ```python
            best_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
    ```
    (a CPU copy: no GPU memory for the snapshot), or `copy.deepcopy(...)`.

    ## Fix safety
    Unsafe: restoring the real best weights changes the final model (that is the
    point). The fix copies every tensor to CPU, so the snapshot costs host
    memory, not GPU memory; `load_state_dict` copies it back to the model's
    device.

    ## When it stays silent
    Silent when the state dict is serialised at once
    (`torch.save(model.state_dict(), path)`), cloned, deep-copied or copied to
    CPU (also on the very next line), when it is not used after the loop, nor
    later in a loop that steps an optimizer as a restore (`load_state_dict`) or,
    named best, at all, outside the block that took it (a name
    bound anew after the loop or in the read's block, `state = {...}; torch.save(state, p)`, is read as
    the new value; reading only a checkpoint dict's other entries, such as
    `best["epoch"]`, does not count), when it is taken in `__init__`, and when
    it is taken on every iteration rather than selected (`if acc > best:`), as
    the last weights are then what is wanted.

    ## References
    - https://pytorch.org/tutorials/beginner/saving_loading_models.html#what-is-a-state-dict
    - https://pytorch.org/tutorials/beginner/transfer_learning_tutorial.html
    """

    code = "MEM801"
    name = "best-weights-by-reference"
    message = "state_dict() returns references to the live weights: later steps overwrite this snapshot"
    fix_safety = Safety.UNSAFE

    METADATA_DEPENDENCIES = (*Rule.METADATA_DEPENDENCIES, PositionProvider)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        # ``best = model.state_dict()``, or a checkpoint dict that holds one:
        # ``best = {"epoch": epoch, "model": model.state_dict()}``.
        snapshots = [node.value]
        if isinstance(node.value, cst.Dict):
            snapshots = [el.value for el in node.value.elements if isinstance(el, cst.DictElement)]
        found = [(s, self._state_dict_owner(s)) for s in snapshots]
        found = [(s, o) for s, o in found if o is not None]
        if not found:
            return
        if self._in_init(node):
            return  # taken once, when the object is built: no epoch has run yet
        target = node.targets[0].target
        entry = _entry_key(target)
        name = target.value if isinstance(target, cst.Name) else getattr(target, "attr", cst.Name(entry or "_")).value
        if "best" not in name.lower() and not self._selected(node):
            return  # a snapshot taken every time is the last weights anyway
        if all(self._fresh_each_iteration(node, owner) for _, owner in found) or self._loop_ends_after(node):
            return
        if isinstance(target, cst.Name):
            kept = not self._replaced_next(node, target.value) and self._name_kept(
                node, target.value, _snapshot_keys(node.value)
            )
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            kept = self._attribute_kept(node, target.attr.value)
        elif entry is not None and isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            kept = self._entry_kept(node, target.value.value, entry)
        else:
            return
        if not kept:
            return
        for snapshot, owner in found:
            code = self.context.module.code_for_node(owner)
            copy = cst.parse_expression(
                f'{{k: v.detach().to("cpu", copy=True) for k, v in {code}.state_dict().items()}}'
            )
            fix = Fix("Keep a CPU copy of the weights", ((snapshot, copy),), Safety.UNSAFE)
            self.report(snapshot, fix=fix)

    def _state_dict_owner(self, value: cst.BaseExpression) -> cst.BaseExpression | None:
        """``model`` for ``model.state_dict()`` / ``model.state_dict().copy()``."""
        if (
            isinstance(value, cst.Call)
            and not value.args
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "copy"
        ):
            value = value.func.value
        if not (isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Attribute)):
            return None
        if value.func.attr.value != "state_dict":
            return None
        owner = value.func.value
        if isinstance(owner, cst.Call) and self.facts.names.call_name(owner) == "copy.deepcopy":
            return None  # the state of a copy that training never touches
        if self.facts.objects.kind_of(owner, value) is not Kind.MODULE:
            return None
        return owner

    def _in_init(self, node: cst.CSTNode) -> bool:
        cur = self.parent(node)
        while cur is not None and not isinstance(cur, cst.FunctionDef):
            cur = self.parent(cur)
        return cur is not None and cur.name.value == "__init__"

    def _pos(self, node: cst.CSTNode):
        return self.get_metadata(PositionProvider, node)

    def _selected(self, assign: cst.Assign) -> bool:
        """Taken when a score improves (``if acc > best_acc:``, ``if is_best:``)
        in its loop or method; ``if update_buffers:`` selects nothing."""
        cur = self.parent(assign)
        while cur is not None and not isinstance(cur, (cst.For, cst.While, cst.FunctionDef, cst.Module)):
            if isinstance(cur, cst.If) and _selects(cur.test):
                return True
            cur = self.parent(cur)
        return False

    def _loop_ends_after(self, assign: cst.Assign) -> bool:
        """``final = model.state_dict()`` then ``break`` or ``return``: no
        step runs after the snapshot."""
        return self.facts.blocks.any_after(self.parent(assign), _breaks_or_returns)

    def _fresh_each_iteration(self, assign: cst.Assign, owner: cst.BaseExpression) -> bool:
        """``model = make_model()`` earlier in the same loop body (a sweep):
        the snapshot's model is never trained again once the next one is built."""
        if not isinstance(owner, cst.Name):
            return False
        loop = self.parent(assign)
        while loop is not None and not isinstance(loop, (cst.For, cst.While, cst.FunctionDef, cst.Module)):
            loop = self.parent(loop)
        if not isinstance(loop, (cst.For, cst.While)):
            return False
        body = getattr(loop.body, "body", ())
        start = self._pos(assign).start.line
        for line in body:
            if not isinstance(line, cst.SimpleStatementLine) or self._pos(line).start.line >= start:
                continue
            for small in line.body:
                if (
                    isinstance(small, cst.Assign)
                    and any(isinstance(t.target, cst.Name) and t.target.value == owner.value for t in small.targets)
                    and isinstance(small.value, cst.Call)
                    and not mentions(small.value, owner.value)
                ):
                    return True
        return False

    def _replaced_next(self, assign: cst.Assign, name: str) -> bool:
        """``best = model.state_dict()`` then ``best = {k: v.clone() ...}``
        on the next line: the reference is never kept."""
        located = self.facts.blocks.locate(self.parent(assign))
        if located is None or located[1] + 1 >= len(located[0]):
            return False
        following = located[0][located[1] + 1]
        return isinstance(following, cst.SimpleStatementLine) and any(
            isinstance(small, cst.Assign)
            and any(isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets)
            for small in following.body
        )

    def _name_kept(self, assign: cst.Assign, name: str, keys: frozenset[str] | None = None) -> bool:
        """Assigned in a loop and read after the loop in the same function
        (for a checkpoint dict, through one of ``keys``, the entries that hold
        the state dict: ``best["epoch"]`` keeps no weights)."""
        loop = None
        scope = None
        cur = self.parent(assign)
        while cur is not None:
            if isinstance(cur, (cst.For, cst.While)) and loop is None:
                loop = cur
            if isinstance(cur, (cst.FunctionDef, cst.Module)):
                scope = cur
                break
            cur = self.parent(cur)
        if loop is None or scope is None:
            return False
        end = self._pos(loop).end
        rebound = self._rebound_after(loop, name)
        return any(
            (end.line, end.column) < (self._pos(n).start.line, self._pos(n).start.column) < rebound
            and not self._other_entry(n, keys)
            for n, _ in self._reads(scope, False).get(name, ())
        ) or self._read_in_later_step(assign, name, loop, scope, keys)

    def _read_in_later_step(
        self, assign: cst.Assign, name: str, loop: cst.CSTNode, scope: cst.CSTNode, keys: frozenset[str] | None
    ) -> bool:
        """Read inside the loop that steps an optimizer, outside the block that
        took the snapshot (``if (step + 1) % save_steps == 0:
        model.load_state_dict(best)`` after ``if loss < best_loss: best =
        model.state_dict()``): that read also runs in iterations that did not
        take it, after steps that changed the weights it aliases. Only a
        restore (``load_state_dict``) or a snapshot named for the best counts:
        ``torch.save(snap, "model_snap.t7")`` every epoch may want the latest."""
        info = self.facts.loops.info(loop)
        if info is None or not self.facts.loops.loop_steps(info):
            return False
        parents = self.facts.calls.parents
        block = parents.get(parents.get(assign))
        if block is getattr(loop, "body", None):
            return False  # taken on every iteration: no later step runs before the next one
        first, last = self._at(loop), self._pos(loop).end
        rebinds = [
            t for t in self._bindings(scope).get(name, ()) if first <= self._at(t) and parents.get(t) is not None
        ]
        for n, call in self._reads(scope, False).get(name, ()):
            at = self._at(n)
            if not (first <= at <= (last.line, last.column)) or self._other_entry(n, keys):
                continue
            if at > self._at(assign) and inside(n, block, parents):
                continue  # in the iteration that took it, after it
            if any(self._at(t) < at and _binds_before_in_block(t, n, parents) for t in rebinds):
                continue  # ``state = {...}`` again before this save: the read sees that
            restore = isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
            if "best" in name.lower() or (restore and call.func.attr.value == "load_state_dict"):
                return True
        return False

    def _entry_kept(self, assign: cst.Assign, container: str, key: str) -> bool:
        """``checkpoint["best"] = model.state_dict()`` in a loop, ``checkpoint``
        built before the loop and read again in a later iteration (``torch.save(
        checkpoint, p)`` every epoch) or after the loop: the entry outlives the
        iteration, so later saves write the live weights under "best". A
        container built anew in the loop body is serialised at once."""
        loop = scope = None
        cur = self.parent(assign)
        while cur is not None:
            if isinstance(cur, (cst.For, cst.While)) and loop is None:
                loop = cur
            if isinstance(cur, (cst.FunctionDef, cst.Module)):
                scope = cur
                break
            cur = self.parent(cur)
        if loop is None or scope is None:
            return False
        start, end = self._pos(loop).start, self._pos(loop).end
        first, last = (start.line, start.column), (end.line, end.column)
        if any(first <= self._at(n) <= last for n in self._bindings(scope).get(container, ())):
            return False  # built anew in the loop: each iteration's entry dies with it
        if self._saved_after_in_block(assign, container):
            return False  # every save is preceded by a fresh write of the entry
        rebound = self._rebound_after(loop, container)
        keys = frozenset({key})
        return any(
            first <= self._at(n) < rebound and not self._other_entry(n, keys) and not self._entry_written(n)
            for n, _ in self._reads(scope, False).get(container, ())
        )

    def _saved_after_in_block(self, assign: cst.Assign, container: str) -> bool:
        """``checkpoint["state"] = model.state_dict()`` then, later in the same
        block, ``torch.save(checkpoint, p)``: no save of the dict can skip the
        write, so each one holds the weights of its own moment."""
        located = self.facts.blocks.locate(self.parent(assign))
        if located is None:
            return False
        body, i = located
        for stmt in body[i + 1 :]:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                call = small.value if isinstance(small, cst.Expr) else None
                if (
                    isinstance(call, cst.Call)
                    and (self.facts.names.call_name(call) in _SAVES or dotted_name(call.func) in _SAVES)
                    and any(mentions(arg.value, container) for arg in call.args)
                ):
                    return True
        return False

    def _at(self, node: cst.CSTNode) -> tuple[int, int]:
        start = self._pos(node).start
        return (start.line, start.column)

    def _entry_written(self, read: cst.CSTNode) -> bool:
        """``checkpoint[k] = ...``: a write to the container, not a read."""
        sub = self.parent(read)
        return isinstance(sub, cst.Subscript) and sub.value is read and isinstance(self.parent(sub), cst.AssignTarget)

    def _bindings(self, scope: cst.CSTNode) -> dict[str, list[cst.Name]]:
        """Where each plain name is bound in ``scope`` (``x = ...``, ``for x
        in``, ``with ... as x``), by name: walked once per scope, for all names."""
        memo = self.__dict__.setdefault("_bindings_memo", {})
        if id(scope) not in memo:
            found: dict[str, list[cst.Name]] = {}
            for target in bound_targets(scope, augmented=False):
                if isinstance(target, cst.Name):
                    found.setdefault(target.value, []).append(target)
            memo[id(scope)] = (scope, found)
        return memo[id(scope)][1]

    def _rebound_after(self, loop: cst.CSTNode, name: str) -> tuple[int, int]:
        """Where ``name`` is first bound again after ``loop``, in the block
        holding the loop (``state = {...}; torch.save(state, p)`` once more
        after the epochs): reads from there on see the new value, not the
        snapshot. A binding whose value reads ``name`` does not count."""
        located = self.facts.blocks.locate(loop)
        if located is not None:
            body, i = located
            for stmt in body[i + 1 :]:
                if isinstance(stmt, cst.SimpleStatementLine) and any(
                    isinstance(small, cst.Assign)
                    and any(isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets)
                    and not mentions(small.value, name)
                    for small in stmt.body
                ):
                    start = self._pos(stmt).start
                    return (start.line, start.column)
        return (1 << 62, 0)

    def _other_entry(self, read: cst.CSTNode, keys: frozenset[str] | None) -> bool:
        """``best_ckpt["epoch"]`` when the weights are under ``"model"``;
        ``best_ckpt is not None`` reads no weights either."""
        if _none_test(self.parent(read), read):
            return True
        if keys is None:
            return False
        sub = self.parent(read)
        if not (isinstance(sub, cst.Subscript) and sub.value is read and len(sub.slice) == 1):
            return False
        index = sub.slice[0].slice
        value = index.value if isinstance(index, cst.Index) else None
        return isinstance(value, cst.SimpleString) and value.evaluated_value not in keys

    def _reads(self, scope: cst.CSTNode, attr: bool) -> dict:
        """_Reads of ``scope``, walked once per scope, not per snapshot."""
        memo = self.__dict__.setdefault("_reads_memo", {})
        key = (id(scope), attr)
        if key not in memo:
            reads = _Reads(attr)
            visit_fast(scope, reads)
            memo[key] = (scope, reads.found)  # the scope kept alive: its id stays its own
        return memo[key][1]

    def _attribute_kept(self, assign: cst.Assign, attr: str) -> bool:
        """``self.best = ...``: kept on the object; flagged when read anywhere
        other than a save call."""
        for _node, call in self._reads(self.context.module, True).get(attr, ()):
            if call is not None and (self.facts.names.call_name(call) in _SAVES or dotted_name(call.func) in _SAVES):
                continue
            return True
        return False

    valid = [
        Valid(
            """\
import torch
def main(model, optimizer, train, validate, epochs, path):
    best_acc = 0.0
    for epoch in range(epochs):
        train(model, optimizer)
        acc = validate(model)
        if acc > best_acc:
            best_acc = acc
            state = {"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict()}
            torch.save(state, path + "_best.pth")
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    torch.save(state, path + "_last.pth")
""",
            "the checkpoint dict is saved at once; after the loop the name is bound to a new dict before it is read",
        ),
        Valid(
            """\
import torch
def fit(model, train_one_epoch, evaluate, path, epochs=10):
    best_score = 0.0
    for epoch in range(epochs):
        train_one_epoch(model)
        score = evaluate(model)
        if score > best_score:
            best_score = score
            best_weights = model.state_dict()
            print(f"best {score:.3f}")
            torch.save(best_weights, path)
    del best_weights
    model.load_state_dict(torch.load(path, map_location="cpu"))
""",
            "the snapshot is saved in the same branch and only deleted after the loop: the file holds the best weights",
        ),
        Valid(
            """\
import torch
def train_until(model, loader, val_loss, opt, target=0.05, max_epochs=100):
    final_state = None
    for epoch in range(max_epochs):
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
        if val_loss(model) < target:
            final_state = model.state_dict()
            break
    return final_state
""",
            "the snapshot is taken right before break: no step runs after it",
        ),
        Valid(
            """\
import copy
def fit(model, train_one_epoch, score_fn, epochs=10):
    best, best_state = float("-inf"), None
    for epoch in range(epochs):
        train_one_epoch(model)
        score = score_fn(model)
        if score > best:
            best = score
            best_state = copy.deepcopy(model).state_dict()
    model.load_state_dict(best_state)
""",
            "the state dict of a deep copy, which training never touches",
        ),
        Valid(
            """\
import torch
def sweep(make_model, train, evaluate, lrs=(1e-1, 1e-2)):
    best_acc, best_state = -1.0, None
    for lr in lrs:
        model = make_model().cuda()
        train(model, torch.optim.SGD(model.parameters(), lr=lr))
        acc = evaluate(model)
        if acc > best_acc:
            best_acc = acc
            best_state = model.state_dict()
    final = make_model()
    final.load_state_dict(best_state)
    return final
""",
            "a sweep builds a new model each iteration: the kept one is never trained again",
        ),
        Valid(
            """\
import torch
def fit(model, train_one_epoch, evaluate, epochs=90):
    best_acc, best_ckpt, best_state = 0.0, None, None
    for epoch in range(epochs):
        train_one_epoch(model)
        acc = evaluate(model)
        if acc > best_acc:
            best_acc = acc
            best_ckpt = {"epoch": epoch, "acc": acc, "model": model.state_dict()}
            torch.save(best_ckpt, "best.pt")
            best_state = model.state_dict()
            best_state = {k: v.detach().cpu().clone() for k, v in best_state.items()}
    if best_ckpt is not None:
        print(f"best epoch {best_ckpt['epoch']} acc {best_ckpt['acc']:.3f}")
    model.load_state_dict(best_state)
""",
            "only the checkpoint's metadata is read later; the reference is replaced by a copy at once",
        ),
        Valid(
            """\
import copy
import torch.nn as nn
class AveragedModel(nn.Module):
    def __init__(self, model, update_buffers=False):
        super().__init__()
        self.module = copy.deepcopy(model).requires_grad_(False)
        if update_buffers:
            self.avg_parameters = self.module.state_dict()
        else:
            self.avg_parameters = dict(self.module.named_parameters())
    def update(self, model):
        for k, v in model.state_dict().items():
            self.avg_parameters[k].mul_(0.9).add_(v, alpha=0.1)
""",
            "a live view taken once in __init__ on purpose; a configuration branch selects nothing",
        ),
        Valid(
            """\
import copy
for epoch in range(num_epochs):
    train(model)
    acc = evaluate(model)
    if acc > best_acc:
        best_acc = acc
        best_model_wts = copy.deepcopy(model.state_dict())
model.load_state_dict(best_model_wts)
""",
            "deep-copied",
        ),
        Valid(
            """\
import torch
for epoch in range(num_epochs):
    train(model)
    if val_loss < best:
        best = val_loss
        state = model.state_dict()
        torch.save(state, "best.pt")
""",
            "serialised at once, not used after the loop",
        ),
        Valid(
            """\
for epoch in range(num_epochs):
    train(model)
    if val_loss < best:
        best_state = {k: v.cpu().clone() for k, v in model.state_dict().items()}
model.load_state_dict(best_state)
""",
            "copied to CPU",
        ),
        Valid(
            """\
import torch
for epoch in range(num_epochs):
    train(model)
    opt_state = optimizer.state_dict()
    torch.save({"model": model.state_dict(), "optimizer": opt_state}, "last.pt")
""",
            "an optimizer's state dict, and a checkpoint saved at once",
        ),
        Valid(
            """\
import torch
class Checkpointer:
    def __call__(self, model, score):
        if score > self.best:
            self.best = score
            self.state = model.state_dict()
            torch.save(self.state, self.path)
""",
            "kept on an object but only serialised",
        ),
        Valid(
            """\
import torch
def train(model, loader, opt, val, train_one_epoch):
    best = 1e9
    for epoch in range(10):
        train_one_epoch(model, loader, opt)
        score = val(model)
        checkpoint = {"epoch": epoch}
        if score < best:
            best = score
            checkpoint["best_state"] = model.state_dict()
        torch.save(checkpoint, f"c{epoch}.pt")
""",
            "a checkpoint dict built anew every epoch: its entry is serialised at once and dies with the iteration",
        ),
        Valid(
            """\
import torch
def train(model, loader, opt, val, train_one_epoch, every=5):
    checkpoint = {"epoch": 0}
    for epoch in range(100):
        train_one_epoch(model, loader, opt)
        if epoch > 0 and epoch % every == 0:
            checkpoint["epoch"] = epoch
            checkpoint["state"] = model.state_dict()
            torch.save(checkpoint, "last.pt")
""",
            "the dict outlives the loop, but every save of it follows a fresh write of the entry in the same block",
        ),
        Valid(
            """\
def train(model, loader, opt, val, train_one_epoch):
    log = {"epoch": 0}
    best = 1e9
    for epoch in range(10):
        train_one_epoch(model, loader, opt)
        score = val(model)
        if score < best:
            best = score
            log["best_state"] = model.state_dict()
            log["epoch"] = epoch
    print(log["epoch"])
""",
            "the dict outlives the loop, but only its other entries are read",
        ),
        Valid(
            """\
def train(model, loader, epochs):
    for epoch in range(epochs):
        train_one_epoch(model, loader)
        state = model.state_dict()
    return state
""",
            "the last weights, taken every epoch: nothing is selected",
        ),
        Valid(
            """\
import torch
def train(model, loader, opt, val, steps):
    best_loss = float("inf")
    for step in range(steps):
        opt.zero_grad()
        model(next(loader)).sum().backward()
        opt.step()
        loss = val(model)
        if loss < best_loss:
            best_loss = loss
            best_state = model.state_dict()
            torch.save(best_state, "best.pt")
""",
            "saved in the block that took it, before any later step",
        ),
        Valid(
            """\
import torch
def pick(models, val):
    best_loss = float("inf")
    best_state = None
    for model in models:
        loss = val(model)
        if loss < best_loss:
            best_loss = loss
            best_state = model.state_dict()
        if best_state is not None:
            torch.save(best_state, "best.pt")
""",
            "read again in the loop, but the loop steps no optimizer: the weights it aliases do not change",
        ),
        Valid(
            """\
import torch
def train(model, loader, opt, val, epochs):
    best_loss = float("inf")
    for epoch in range(epochs):
        for x in loader:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        loss = val(model)
        if loss < best_loss:
            best_loss = loss
            snap = {"epoch": epoch, "model": model.state_dict()}
            torch.save(snap, "best_snap.pt")
        torch.save(snap, "model_snap.pt")
""",
            "saved every epoch under a name that does not say best: the latest weights may be what is wanted",
        ),
        Valid(
            """\
import torch
def train(model, loader, opt, val, epochs):
    best_acc = 0.0
    for epoch in range(epochs):
        for x in loader:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        acc = val(model)
        if acc > best_acc:
            best_acc = acc
            state = {"net": model.state_dict(), "acc": acc}
            torch.save(state, "best.pt")
        if epoch % 100 == 0:
            state = {"net": model.state_dict(), "epoch": epoch}
            torch.save(state, "ep%d.pt" % epoch)
""",
            "bound anew in the block that saves it: that save writes a fresh snapshot",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch
def train(model, loader, opt, val):
    checkpoint = {"best_state": None}
    best = 1e9
    for epoch in range(10):
        for x in loader:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        score = val(model)
        if score < best:
            best = score
            checkpoint["best_state"] = model.state_dict()
        torch.save(checkpoint, "c.pt")
""",
            """\
import torch
def train(model, loader, opt, val):
    checkpoint = {"best_state": None}
    best = 1e9
    for epoch in range(10):
        for x in loader:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        score = val(model)
        if score < best:
            best = score
            checkpoint["best_state"] = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
        torch.save(checkpoint, "c.pt")
""",
        ),
        Invalid(
            """\
import torch
for epoch in range(epochs):
    train(model)
    acc = evaluate(model)
    if acc > best_acc:
        best_acc = acc
        state = {"epoch": epoch, "model": model.state_dict()}
        torch.save(state, "best.pt")
model.load_state_dict(state["model"])
state = {"model": model.state_dict()}
torch.save(state, "last.pt")
""",
            """\
import torch
for epoch in range(epochs):
    train(model)
    acc = evaluate(model)
    if acc > best_acc:
        best_acc = acc
        state = {"epoch": epoch, "model": {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}}
        torch.save(state, "best.pt")
model.load_state_dict(state["model"])
state = {"model": model.state_dict()}
torch.save(state, "last.pt")
""",
        ),
        Invalid(
            """\
for epoch in range(num_epochs):
    train_one_epoch(model, loader, optimizer)
    val_acc = evaluate(model, val_loader)
    if val_acc > best_acc:
        best_acc = val_acc
        best_state = model.state_dict()
model.load_state_dict(best_state)
""",
            """\
for epoch in range(num_epochs):
    train_one_epoch(model, loader, optimizer)
    val_acc = evaluate(model, val_loader)
    if val_acc > best_acc:
        best_acc = val_acc
        best_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
model.load_state_dict(best_state)
""",
        ),
        Invalid(
            """\
import torch
for epoch in range(epochs):
    train(model)
    acc = evaluate(model)
    if acc > best_acc:
        best_acc = acc
        best_ckpt = {"epoch": epoch, "model": model.state_dict(), "acc": acc}
torch.save(best_ckpt, "best.pt")
""",
            """\
import torch
for epoch in range(epochs):
    train(model)
    acc = evaluate(model)
    if acc > best_acc:
        best_acc = acc
        best_ckpt = {"epoch": epoch, "model": {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}, "acc": acc}
torch.save(best_ckpt, "best.pt")
""",
        ),
        Invalid(
            """\
import numpy as np
class EarlyStopping:
    def __init__(self, patience=7):
        self.patience = patience
        self.best_score = None
        self.best_weights = None

    def __call__(self, val_loss, model):
        if self.best_score is None or val_loss < self.best_score:
            self.best_score = val_loss
            self.best_weights = model.state_dict().copy()

    def restore(self, model):
        model.load_state_dict(self.best_weights)
""",
            """\
import numpy as np
class EarlyStopping:
    def __init__(self, patience=7):
        self.patience = patience
        self.best_score = None
        self.best_weights = None

    def __call__(self, val_loss, model):
        if self.best_score is None or val_loss < self.best_score:
            self.best_score = val_loss
            self.best_weights = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}

    def restore(self, model):
        model.load_state_dict(self.best_weights)
""",
        ),
        Invalid(
            """\
import torch
def train(model, loader, opt, val, steps, every):
    best_loss = float("inf")
    best_state = None
    for step in range(steps):
        opt.zero_grad()
        model(next(loader)).sum().backward()
        opt.step()
        if (step + 1) % every == 0:
            loss = val(model)
            if loss < best_loss:
                best_loss = loss
                best_state = model.state_dict()
        if (step + 1) % (2 * every) == 0 and best_state is not None:
            torch.save(best_state, "best.pt")
""",
            """\
import torch
def train(model, loader, opt, val, steps, every):
    best_loss = float("inf")
    best_state = None
    for step in range(steps):
        opt.zero_grad()
        model(next(loader)).sum().backward()
        opt.step()
        if (step + 1) % every == 0:
            loss = val(model)
            if loss < best_loss:
                best_loss = loss
                best_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
        if (step + 1) % (2 * every) == 0 and best_state is not None:
            torch.save(best_state, "best.pt")
""",
        ),
    ]
