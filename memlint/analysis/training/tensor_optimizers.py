"""An optimizer over tensors made here, not over any module's parameters.

DeepSDF's ``reconstruct`` fits a latent code to a trained decoder:
``latent = torch.ones(1, n).normal_().cuda(); latent.requires_grad = True;
optimizer = torch.optim.Adam([latent])``. Its steps change no module, so a
``decoder.eval()`` in that loop does not leave a model training in eval mode
(MEM203): freezing dropout and batch norm is the point.

``steps_no_module(name, scope)``: every binding of ``name`` in ``scope`` is a
``torch.optim`` class called on a list or tuple whose elements are each a
tensor built here by a torch factory (``torch.zeros(...)``, ``torch.normal``,
``nn.Parameter(torch.randn(...))``), possibly through method calls on it
(``.normal_()``, ``.cuda()``), directly or through a name every binding of
which is one. A parameter, an attribute, a list built elsewhere or a
``{"params": ...}`` group may hold a module's weights: not this.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.autograd.leaves import LEAF_FACTORIES, PARAMETER_CLASSES


class TensorOptimizers:
    def __init__(self, facts) -> None:
        self.facts = facts

    def steps_no_module(self, name: str, scope: cst.CSTNode) -> bool:
        values = self.facts.bindings.values_in(name, scope)
        return bool(values) and all(v is not None and self._over_fresh(v, scope) for v in values)

    def _over_fresh(self, value: cst.BaseExpression, scope: cst.CSTNode) -> bool:
        if not isinstance(value, cst.Call) or not value.args:
            return False
        if not (self.facts.names.call_name(value) or "").startswith("torch.optim."):
            return False
        first = value.args[0]
        if first.keyword is not None and first.keyword.value != "params":
            return False
        group = first.value
        if not isinstance(group, (cst.List, cst.Tuple)) or not group.elements:
            return False
        return all(
            not isinstance(el, cst.StarredElement) and self._fresh_tensor(el.value, scope, True)
            for el in group.elements
        )

    def _fresh_tensor(self, expr: cst.BaseExpression, scope: cst.CSTNode, follow: bool) -> bool:
        if isinstance(expr, cst.Name) and follow:
            values = self.facts.bindings.values_in(expr.value, scope)
            return bool(values) and all(v is not None and self._fresh_tensor(v, scope, False) for v in values)
        # ``torch.ones(1, n).normal_(std=s).cuda()``: down the receivers to the call that made it.
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            qn = self.facts.names.call_name(expr)
            if qn is not None:
                break
            expr = expr.func.value
        if not isinstance(expr, cst.Call):
            return False
        qn = self.facts.names.call_name(expr) or ""
        if qn in PARAMETER_CLASSES:
            return bool(expr.args) and self._fresh_tensor(expr.args[0].value, scope, False)
        head, _, last = qn.rpartition(".")
        return head == "torch" and last in LEAF_FACTORIES
