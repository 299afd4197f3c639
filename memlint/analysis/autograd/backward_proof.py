"""Values proven to carry autograd history by a backward call through them.

``loss.backward()`` (also ``scaler.scale(loss).backward()``,
``accelerator.backward(loss)``, ``torch.autograd.backward(loss)``) raises
unless ``loss`` carries history, so the call proves it whatever produced the
value: a model built by a factory in another module, ``criterion.forward``,
``model.training_step(batch)``, a helper imported from another file. The
history walk (history.py) otherwise looks for the proof in the producer and
answers "cannot tell" for all of these.

API (through ``facts.history``, which consults it):

- ``operand(call)`` -> ``(key, scalar)`` for a backward call whose operand is
  a name or attribute (``loss``, ``self.loss``); ``scalar``: no gradient
  argument was given, so the value is a single number (a reduced loss).
- A LightningModule's ``training_step`` (automatic optimization) counts as
  a backward on what it returns (``loss`` or ``{"loss": loss}``).
- ``output["loss"].backward()`` proves ``output``: a container (dict, list)
  holding an entry with history, never a single number.
- ``proven(target)`` -> ``scalar`` or None: ``target`` is the name (or
  attribute) node an assignment binds, and that binding is the one every later
  backward call on that name in the same function reads: no other binding of
  the name (in a branch, a loop, a ``for`` target) can come in between. Only
  such straight-line bindings are trusted; anything else stays unproven.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from memlint.analysis.scope.names import dotted_name, flat_targets, is_lightning_module, mentions
from memlint.analysis.scope.tensor_attrs import TENSOR_ATTRS
from memlint.analysis.training.training_verbs import VerbKind
from memlint.parse.traversal import OwnCodeVisitor, visit_fast

_GRADIENT_KEYWORDS = ("gradient", "grad_tensors", "gradients")


class BackwardProof:
    def __init__(self, verbs, calls, names) -> None:
        self._operands: dict[cst.Call, tuple[str, bool]] = {}
        self._proven: dict[cst.CSTNode, bool] = {}
        self._parents = calls.parents
        self._foreign: dict[tuple[cst.CSTNode, str], bool] = {}
        for ret, loss in _lightning_returns(calls, names):
            key = dotted_name(loss)
            target = self._reaching_binding(ret, key) if key is not None else None
            if target is not None:
                self._proven[target] = True  # Lightning backpropagates a single number
        for verb in verbs.verbs:
            if verb.kind is not VerbKind.BACKWARD or not isinstance(verb.call, cst.Call) or verb.loss is None:
                continue
            loss = _unscaled(verb.loss)
            key = dotted_name(loss)
            entry_of = entry_container(loss)
            if key is None and entry_of is not None:
                # ``output["loss"].backward()``: ``output`` holds an entry with
                # history (a dict or list of losses), itself no single number.
                key = entry_of
            if key is None or key == "self":
                continue
            if entry_of is None and self._not_a_tensor(verb.call, key):
                continue  # ``loss.reset()`` nearby: an object with its own ``backward``
            scalar = entry_of is None and _implicit_gradient(
                verb.call, any(a.value is verb.loss for a in verb.call.args)
            )
            self._operands[verb.call] = (key, scalar)
            target = self._reaching_binding(verb.call, key)
            if target is not None:
                self._proven[target] = self._proven.get(target, True) and scalar

    # == queries ===========================================================
    def operand(self, call: cst.Call) -> tuple[str, bool] | None:
        return self._operands.get(call)

    def proven(self, target: cst.CSTNode) -> bool | None:
        return self._proven.get(target)

    def _not_a_tensor(self, call: cst.Call, key: str) -> bool:
        """In the function holding ``call``, ``key`` receives a method no
        tensor has (``loss.eval_batch(...)``, ``loss.get_loss()``): it names an
        object whose ``backward`` proves nothing about what it returns."""
        scope: cst.CSTNode | None = call
        while scope is not None and not isinstance(scope, (cst.FunctionDef, cst.Module)):
            scope = self._parents.get(scope)
        if scope is None:
            return False
        memo = (scope, key)  # one walk per function and name, however many backwards
        if memo not in self._foreign:
            finder = _ForeignMethod(key)
            visit_fast(scope, finder)
            self._foreign[memo] = finder.found
        return self._foreign[memo]

    # == the binding a backward reads =======================================
    def _reaching_binding(self, call: cst.Call, key: str) -> cst.CSTNode | None:
        """The target node of the one assignment to ``key`` that reaches
        ``call``, found by walking back through the statements that run
        before it; None when another binding may come in between."""
        cur: cst.CSTNode = call
        while True:
            parent = self._parents.get(cur)
            if parent is None or isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return None  # a parameter, a global: nothing to prove
            if isinstance(parent, (cst.For, cst.While)) and cur is parent.body:
                # A binding anywhere in the loop may run between this one and
                # the backward of a later iteration.
                if _binds(parent.body, key) or (isinstance(parent, cst.For) and _binds(parent.target, key)):
                    return None
            if isinstance(parent, (cst.Module, cst.IndentedBlock, cst.SimpleStatementSuite, cst.SimpleStatementLine)):
                found = _in_block(parent.body, cur, key)
                if found is _BLOCKED:
                    return None
                if found is not None:
                    return found
            cur = parent


class _ForeignMethod(cst.CSTVisitor):
    """Finds ``key.m(...)`` with an ``m`` no tensor has."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.found = False

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value not in TENSOR_ATTRS
            and dotted_name(func.value) == self.key
        ):
            self.found = True
        return not self.found


_BLOCKED = cst.Pass()


def _in_block(body: Sequence[cst.CSTNode], cur: cst.CSTNode, key: str) -> cst.CSTNode | None:
    """The target binding ``key`` in the last statement of ``body`` before
    ``cur`` that binds it; ``_BLOCKED`` when that binding is not a plain
    assignment (augmented, conditional, in a loop); None when none does."""
    index = next((i for i, s in enumerate(body) if s is cur), None)
    if index is None:
        return None
    for stmt in reversed(body[:index]):
        smalls = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt]
        for small in reversed(smalls):
            if isinstance(small, cst.Assign):
                found = _target_of(small, key)
                if found is not None:
                    return found
            if isinstance(small, cst.AnnAssign) and small.value is not None and dotted_name(small.target) == key:
                return small.target
            if _binds(small, key):
                return _BLOCKED
    return None


def entry_container(loss: cst.BaseExpression) -> str | None:
    """``d`` for ``d["loss"]`` or ``d[0]``: one entry, picked by a constant
    key, of a container named by a name or attribute."""
    if not isinstance(loss, cst.Subscript) or len(loss.slice) != 1:
        return None
    index = loss.slice[0].slice
    if not isinstance(index, cst.Index) or not isinstance(index.value, (cst.SimpleString, cst.Integer)):
        return None
    key = dotted_name(loss.value)
    return None if key == "self" else key


def _lightning_returns(calls, names):
    """``(return statement, loss)`` of each LightningModule ``training_step``
    under automatic optimization: ``return loss`` or ``return {"loss": loss}``."""
    for fn, cls in calls.class_of.items():
        if fn.name.value != "training_step" or not is_lightning_module(cls, names):
            continue
        if mentions(cls, "self.automatic_optimization"):
            continue  # manual optimization: the returned value is not backpropagated
        visitor = _Returns(fn)
        visit_fast(fn, visitor)
        for ret in visitor.returns:
            value = ret.value
            if isinstance(value, cst.Dict):
                value = next(
                    (
                        el.value
                        for el in value.elements
                        if isinstance(el, cst.DictElement)
                        and isinstance(el.key, cst.SimpleString)
                        and el.key.evaluated_value == "loss"
                    ),
                    None,
                )
            if isinstance(value, (cst.Name, cst.Attribute)):
                yield ret, value


def _target_of(assign: cst.Assign, key: str) -> cst.CSTNode | None:
    for t in assign.targets:
        for el in flat_targets(t.target):
            if isinstance(el, (cst.Name, cst.Attribute)) and dotted_name(el) == key:
                return el
    return None


def _unscaled(loss: cst.BaseExpression) -> cst.BaseExpression:
    """``scaler.scale(loss)`` -> ``loss`` (the scale only multiplies)."""
    if (
        isinstance(loss, cst.Call)
        and isinstance(loss.func, cst.Attribute)
        and loss.func.attr.value == "scale"
        and len(loss.args) == 1
        and loss.args[0].keyword is None
    ):
        return loss.args[0].value
    return loss


def _implicit_gradient(call: cst.Call, operand_is_argument: bool) -> bool:
    """No gradient is passed, so the operand must be a single number."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if any(a.star for a in call.args):
        return False
    if any(a.keyword is not None and a.keyword.value in _GRADIENT_KEYWORDS for a in call.args):
        return False
    return len(positional) <= (1 if operand_is_argument else 0)


def _binds(node: cst.CSTNode, key: str) -> bool:
    """Whether ``node`` (re)binds ``key`` anywhere: assignment, augmented
    assignment, ``for``/``with`` target, walrus, ``del``, ``global``."""
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return node.name.value == key
    visitor = _Binds(key)
    visit_fast(node, visitor)
    return visitor.found


class _Returns(OwnCodeVisitor):
    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, fn: cst.FunctionDef) -> None:
        super().__init__()
        self.own = fn
        self.returns: list[cst.Return] = []

    def visit_Return(self, node: cst.Return) -> None:
        self.returns.append(node)


class _Binds(cst.CSTVisitor):
    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key
        self.found = False

    def hit(self, target: cst.BaseExpression) -> None:
        for el in flat_targets(target):
            if dotted_name(el) == self.key:
                self.found = True

    def on_visit(self, n: cst.CSTNode) -> bool:
        if self.found or isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        if isinstance(n, cst.AssignTarget):
            self.hit(n.target)
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign)):
            self.hit(n.target)
        elif isinstance(n, (cst.For, cst.CompFor)):
            self.hit(n.target)
        elif isinstance(n, cst.AsName):
            self.hit(n.name)  # type: ignore[arg-type]
        elif isinstance(n, cst.NamedExpr):
            self.hit(n.target)
        elif isinstance(n, cst.Del):
            self.hit(n.target)
        return True
