"""Activations, in-place flags and which ops autograd saves the output of.

Facts checked against torch (2.x) by running each pair forward and backward:
``sigmoid``, ``tanh``, ``exp``, ``exp2``, ``expm1``, ``sqrt``, ``rsqrt``,
``reciprocal``, ``relu``, ``softmax``, ``log_softmax``, ``softmin`` save
their output, so an in-place op on it breaks the backward; so do the
in-place forms of ``relu``, ``elu``, ``leaky_relu``, ``selu``, ``celu``,
``rrelu``. ``Linear``/``Conv``/``BatchNorm``/``LayerNorm``, ``gelu``,
``silu``, ``elu`` (not in place), ``hardtanh``/``relu6``, ``softplus`` save
their input: an in-place op on their output is harmless.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.scope.names import ImportTable
from memlint.parse.traversal import visit_fast
from memlint.vocabulary.ops import (
    ALWAYS_INPLACE_FUNCTIONS,
    INPLACE_FUNCTIONS,
    INPLACE_POSITION,
    OUTPUT_SAVING_FUNCTIONS,
    OUTPUT_SAVING_FUNCTIONS_WHEN_INPLACE,
    OUTPUT_SAVING_METHODS,
    OUTPUT_SAVING_MODULES,
    OUTPUT_SAVING_WHEN_INPLACE,
)


def nn_class(call: cst.BaseExpression, names: ImportTable) -> str | None:
    """``"ReLU"`` for ``nn.ReLU(...)`` / ``torch.nn.ReLU(...)`` / ``ReLU(...)``
    imported from torch.nn; None for anything else."""
    if not isinstance(call, cst.Call):
        return None
    qn = names.call_name(call) or ""
    for prefix in ("torch.nn.modules.activation.", "torch.nn.modules.", "torch.nn."):
        if qn.startswith(prefix):
            rest = qn[len(prefix) :]
            last = rest.rsplit(".", 1)[-1]
            return last if last[:1].isupper() else None
    return None


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def inplace_arg(call: cst.Call, cls: str) -> cst.Arg | None:
    """The argument that sets ``inplace`` on a module constructor, if any."""
    arg = keyword(call, "inplace")
    if arg is not None:
        return arg
    position = INPLACE_POSITION.get(cls)
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if position is not None and len(positional) > position:
        return positional[position]
    return None


def is_true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def runs_inplace(call: cst.Call, cls: str) -> bool:
    arg = inplace_arg(call, cls)
    return arg is not None and is_true(arg.value)


def module_saves_output(call: cst.BaseExpression, names: ImportTable) -> bool:
    cls = nn_class(call, names)
    if cls is None:
        return False
    if cls in OUTPUT_SAVING_MODULES:
        return True
    return cls in OUTPUT_SAVING_WHEN_INPLACE and runs_inplace(call, cls)  # type: ignore[arg-type]


def sequential_elements(call: cst.Call, names: ImportTable) -> list[cst.BaseExpression] | None:
    """The modules of ``nn.Sequential(a, b, c)`` or
    ``nn.Sequential(OrderedDict([("a", a), ...]))``, in order; None when
    ``call`` is not a Sequential or its elements are not listed literally."""
    if names.call_name(call) not in ("torch.nn.Sequential", "torch.nn.modules.container.Sequential"):
        return None
    if any(a.star for a in call.args) or any(a.keyword is not None for a in call.args):
        return None
    args = [a.value for a in call.args]
    if len(args) == 1 and isinstance(args[0], cst.Call):
        inner = args[0]
        if (names.call_name(inner) or "").endswith("OrderedDict") and len(inner.args) == 1:
            items = inner.args[0].value
            if isinstance(items, (cst.List, cst.Tuple)):
                out = []
                for el in items.elements:
                    pair = el.value
                    if not isinstance(pair, cst.Tuple) or len(pair.elements) != 2:
                        return None
                    out.append(pair.elements[1].value)
                return out
            return None
    return args


def unpacked_layers(
    call: cst.Call, names: ImportTable, scope: cst.CSTNode, assigned: list[cst.BaseExpression | None]
) -> list[cst.BaseExpression] | None:
    """The modules of ``nn.Sequential(*layers)`` when ``scope`` binds
    ``layers`` once (``assigned``: what it assigns there), to a list display,
    and reads it otherwise only to add at its end (``layers.append(m)``,
    ``.extend``, ``+=``): the display's neighbours are neighbours in the
    container. None for anything else (a list handed to a helper, indexed,
    inserted into: its order is not known)."""
    if names.call_name(call) not in ("torch.nn.Sequential", "torch.nn.modules.container.Sequential"):
        return None
    if len(call.args) != 1 or call.args[0].star != "*" or not isinstance(call.args[0].value, cst.Name):
        return None
    name = call.args[0].value.value
    if len(assigned) != 1 or not isinstance(assigned[0], cst.List):
        return None
    display = assigned[0]
    if any(isinstance(el, cst.StarredElement) for el in display.elements):
        return None
    uses = _ListUses(name)
    visit_fast(scope, uses)
    if uses.other:
        return None
    return [el.value for el in display.elements]


class _ListUses(cst.CSTVisitor):
    """Whether a function reads the list ``name`` otherwise than to bind it,
    add at its end or unpack it into a call."""

    _ADDS = frozenset({"append", "extend"})

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.allowed: set[int] = set()
        self.other = False

    def _is(self, node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Name) and node.value == self.name

    def visit_Assign(self, node: cst.Assign) -> None:
        self.allowed.update(id(t.target) for t in node.targets if self._is(t.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self._is(node.target) and isinstance(node.operator, cst.AddAssign):
            self.allowed.add(id(node.target))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self._is(node.value) and node.attr.value in self._ADDS:
            self.allowed.add(id(node.value))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.star == "*" and self._is(node.value):
            self.allowed.add(id(node.value))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name and id(node) not in self.allowed:
            self.other = True


def function_saves_output(call: cst.BaseExpression, names: ImportTable) -> bool:
    """``torch.sigmoid(x)``, ``F.softmax(x, -1)``, ``x.exp()``,
    ``F.elu(x, inplace=True)``: the result is saved for the backward."""
    if not isinstance(call, cst.Call):
        return False
    qn = names.call_name(call)
    if qn is not None:
        if qn in OUTPUT_SAVING_FUNCTIONS:
            return True
        if qn in OUTPUT_SAVING_FUNCTIONS_WHEN_INPLACE:
            arg = keyword(call, "inplace")
            return arg is not None and is_true(arg.value)
        return False
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in OUTPUT_SAVING_METHODS:
        # A method of a value, not of an import (``np.exp`` resolved above).
        return names.qualified_name(func.value) is None
    return False


def inplace_function_target(call: cst.Call, names: ImportTable) -> cst.BaseExpression | None:
    """The tensor ``F.relu(h, inplace=True)`` / ``torch.relu_(h)`` modifies."""
    qn = names.call_name(call)
    if qn is None or not call.args or call.args[0].keyword is not None:
        return None
    if qn in ALWAYS_INPLACE_FUNCTIONS:
        return call.args[0].value
    if qn in INPLACE_FUNCTIONS:
        arg = keyword(call, "inplace")
        if arg is not None and is_true(arg.value):
            return call.args[0].value
    return None
