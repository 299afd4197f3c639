"""Loops over a model's layers, not data (issue 29, slimmable_networks' ``slimming``).

``layers = get_conv_layers(model)`` then ``for i in range(len(layers)):``
narrows one layer per iteration and measures the whole model on one fixed
batch: each iteration is one candidate of a search over the model's layers,
not a training or evaluation step. ``for m in model.modules():`` walks the
same way. What such a loop does once per iteration (``empty_cache()``) it
does once per layer of the model, a count fixed by the architecture, not
by the data. Only the iterable's own words count: a layer word (``layers``,
``modules``, ``blocks``, ``convs``) or a walk of a module's children
(``.modules()``, ``.children()`` and their ``named_`` forms), and no data
word (``loader``, ``batch``, ``val``...), through ``enumerate``/``range``/
``len``/``list``/``zip``.
"""

from __future__ import annotations

import libcst as cst

from memlint.vocabulary.tokens import DATA_TOKENS

_LAYER_TOKENS = frozenset({"layer", "layers", "module", "modules", "block", "blocks", "conv", "convs"})
# nn.Module's walks over its own submodules.
_WALKS = frozenset({"modules", "children", "named_modules", "named_children"})
# Calls that hand on their argument's items (or count up to its length).
_PASS_ON = frozenset({"enumerate", "range", "len", "list", "sorted", "tqdm", "reversed", "tuple", "zip"})


def _walks_modules(expr: cst.BaseExpression) -> bool:
    """The iterable is a name, an attribute or a module walk under pass-on
    calls only (a computed iterable says nothing about what it yields)."""
    while isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in _WALKS and not expr.args:
            return True
        if not (isinstance(func, cst.Name) and func.value in _PASS_ON and expr.args):
            return False
        expr = expr.args[0].value
    return isinstance(expr, (cst.Name, cst.Attribute))


def iterates_layers(loop: cst.For | cst.While, tokens: set[str]) -> bool:
    """``loop`` walks a model's layers: a ``for`` over a name, an attribute
    or a module walk whose words (``tokens``, the iterable's name tokens)
    name layers and no data."""
    if not isinstance(loop, cst.For) or not _walks_modules(loop.iter):
        return False
    return bool(tokens & (_LAYER_TOKENS | _WALKS)) and not tokens & DATA_TOKENS
