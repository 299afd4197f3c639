"""The objects a loop variable takes from a literal display.

``_, _ = [x.eval() for x in (embedding_net, cls_head)]`` (MetaOptNet) or
``for net in [netG, netD]: net.eval()``: ``x`` is each element in turn, so
what is true of every element is true of ``x``. Only a tuple or list display
of names and attributes counts: any other iterable is a value the analysis
cannot read."""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp)
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Module, cst.Lambda)


def _elements(target: cst.BaseExpression, it: cst.BaseExpression, name: str) -> list[cst.BaseExpression] | None:
    if not (isinstance(target, cst.Name) and target.value == name and isinstance(it, (cst.Tuple, cst.List))):
        return None
    items = [el.value for el in it.elements]
    if not items or any(
        not isinstance(el, cst.Element) or not isinstance(el.value, (cst.Name, cst.Attribute)) for el in it.elements
    ):
        return None
    return items


def literal_items(name: cst.Name, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> list[cst.BaseExpression] | None:
    """The elements of the tuple or list display the innermost comprehension
    or ``for`` loop binding ``name`` iterates (``name`` read in its element or
    body), else None."""
    child: cst.CSTNode = name
    cur = parents.get(name)
    while cur is not None and not isinstance(cur, _SCOPES):
        if isinstance(cur, _COMPREHENSIONS) and child is cur.elt:
            comp: cst.CompFor | None = cur.for_in
            while comp is not None:
                if isinstance(comp.target, cst.Name) and comp.target.value == name.value:
                    return _elements(comp.target, comp.iter, name.value)
                comp = comp.inner_for_in
        elif isinstance(cur, cst.For) and child is cur.body:
            if isinstance(cur.target, cst.Name) and cur.target.value == name.value:
                return _elements(cur.target, cur.iter, name.value)
        child, cur = cur, parents.get(cur)
    return None
