"""In-place writes into a module's own parameters.

``model.emb.weight.copy_(glove)``, ``self.layers[i].weight[:, :] = w``,
``model.bert.encoder.layer[k].output.dense.weight[:, pos] -= v``: the
``.weight``/``.bias`` of a layer are ``nn.Parameter`` leaves that require
grad, and writing into them (or into a slice, a view of the leaf) while
autograd records raises ``RuntimeError: a leaf Variable that requires grad
is being used in an in-place operation``.

- ``spelling(expr)`` -- ``"self.layers.weight"`` for ``self.layers[i].weight``:
  the attribute path with subscripts left out, or None.
- ``ParameterWrites(facts).written_parameter(target, at)`` -- ``target``
  (what an in-place op at ``at`` writes, subscripts included) is the
  ``.weight``/``.bias`` of a module that ``facts.objects`` proves:
  a prefix of the path is a module built here (``nn.Linear(...)``,
  ``from_pretrained``, a class of this file, handed to an optimizer, an
  ``nn.ModuleList`` indexed) or ``self`` of an ``nn.Module`` subclass with at
  least one attribute in between (``self.weight`` itself may be a buffer).

Silent (False) when the path goes through ``.data``/``.grad``, a call
(``.detach()``) or a loss object (``nn.CrossEntropyLoss(weight=w)`` keeps
its weight as a buffer); when the proving name is only a function parameter
(the argument is not known); and when the file freezes anything on the path
anywhere: ``requires_grad_(...)``/``.requires_grad = ...`` on it or on a
prefix, ``freeze(model)``-like helpers, the patterns of analysis/frozen.py.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.autograd.history import param_names
from memlint.parse.traversal import visit_fast
from memlint.vocabulary.kinds import Kind
from memlint.vocabulary.ops import PARAMETER_ATTRS
from memlint.vocabulary.tokens import name_tokens

_NOT_A_MODULE = frozenset({"data", "grad", "shape", "T", "mT"})
_LOSS_TOKENS = frozenset({"loss", "losses", "criterion", "criterions", "crit"})
_FREEZE_TOKENS = frozenset({"freeze", "frozen", "unfreeze", "requires", "grad"})


def spelling(expr: cst.BaseExpression) -> str | None:
    """The attribute path of ``expr`` with subscripts dropped."""
    parts: list[str] = []
    while True:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Attribute):
            parts.append(expr.attr.value)
            expr = expr.value
        elif isinstance(expr, cst.Name):
            parts.append(expr.value)
            return ".".join(reversed(parts))
        else:
            return None


class _Freezing(cst.CSTVisitor):
    """Spellings of everything the file touches ``requires_grad`` on, or
    hands to a freezing helper."""

    def __init__(self) -> None:
        self.touched: set[str] = set()

    def _add(self, expr: cst.BaseExpression) -> None:
        s = spelling(expr)
        if s is not None:
            self.touched.add(s)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_":
            self._add(func.value)
            return
        last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if name_tokens(last) & _FREEZE_TOKENS:
            for arg in node.args:
                self._add(arg.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad":
                self._add(t.target.value)


class ParameterWrites:
    def __init__(self, facts) -> None:
        self.facts = facts
        self._touched: frozenset[str] | None = None

    def _frozen_spellings(self) -> frozenset[str]:
        if self._touched is None:
            visitor = _Freezing()
            visit_fast(self.facts.module, visitor)
            self._touched = frozenset(visitor.touched | self.facts.frozen.ever_frozen())
        return self._touched

    def _maybe_frozen(self, path: str) -> bool:
        """Something on ``path`` has its ``requires_grad`` touched somewhere in
        the file, under whatever spelling (``self.emb.weight.requires_grad =
        False`` in the class, ``model.emb.weight.copy_(...)`` in the script)."""
        parts = path.split(".")
        inner = set(parts[1:-1])
        for touched in self._frozen_spellings():
            t = touched.split(".")
            if parts[: len(t)] == t:
                return True
            if len(t) > 1 and t[-1] in PARAMETER_ATTRS:
                if t[-2:] == parts[-2:]:  # ``emb.weight``, spelled from another root
                    return True
            elif len(t) > 1 and t[-1] in inner:  # ``self.emb`` frozen, ``model.emb.weight`` written
                return True
        return False

    def written_parameter(self, target: cst.BaseExpression, at: cst.CSTNode) -> bool:
        while isinstance(target, cst.Subscript):
            target = target.value
        if not (isinstance(target, cst.Attribute) and target.attr.value in PARAMETER_ATTRS):
            return False
        chain: list[cst.BaseExpression] = []  # the owner and its prefixes, innermost first
        cur: cst.BaseExpression = target.value
        while True:
            chain.append(cur)
            if isinstance(cur, cst.Attribute):
                if cur.attr.value in _NOT_A_MODULE or name_tokens(cur.attr.value) & _LOSS_TOKENS:
                    return False
                cur = cur.value
            elif isinstance(cur, cst.Subscript):
                cur = cur.value
            elif isinstance(cur, cst.Name):
                break
            else:
                return False  # ``.detach()``, a call's result: not the parameter itself
        if not self._proven_module(chain, at):
            return False
        path = spelling(target)
        return path is not None and not self._maybe_frozen(path)

    def _proven_module(self, chain: list[cst.BaseExpression], at: cst.CSTNode) -> bool:
        objects = self.facts.objects
        for prefix in chain:
            if isinstance(prefix, cst.Name) and prefix.value == "self":
                break  # self's own attributes may be buffers: the rule below decides
            kind = objects.kind_of(prefix, at)
            if kind is None:
                continue
            if kind is not Kind.MODULE:
                return False
            if isinstance(prefix, cst.Name) and self._is_parameter(prefix.value, at):
                return False  # only the name says it is a module
            return True
        root = chain[-1]
        return (
            isinstance(root, cst.Name)
            and root.value == "self"
            and len(chain) >= 2
            and objects.self_kind(at) is Kind.MODULE
        )

    def _is_parameter(self, name: str, at: cst.CSTNode) -> bool:
        """``name`` is a parameter of the function around ``at`` and is not
        rebound there from a constructor (``model = TreeModel(...)`` speaks
        for itself)."""
        fn = self.facts.objects.scope_of(at)
        return (
            isinstance(fn, cst.FunctionDef)
            and name in param_names(fn)
            and not self.facts.bindings.constructors(name, fn)
        )
