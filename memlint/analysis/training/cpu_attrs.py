"""Attributes of a plain class that hold a model on the CPU in every method.

SimGNN's trainer builds ``self.model = SimGNN(...)`` in ``setup_model`` and
loads into it in ``load``; nothing moves it. A load in any method of the
class is then into a model on the CPU (MEM701's CPU-model trap), whatever
ran before on the instance, when:

- the class is plain (no base but ``object``-like ones, no metaclass) and no
  class of this module subclasses it: no ``nn.Module.cuda()`` of an owner
  moves its attributes, no subclass method touches them;
- every store of ``self.<attr>`` in its methods is a plain assignment of a
  model built on the CPU (the caller's ``built`` judge: a class that moves
  nothing, no device argument);
- every other use of it there is a call of it (``self.model(x)``) or of a
  method that leaves it where it is (``eval``, ``state_dict``,
  ``load_state_dict``...: ``stays``): never handed to a call, aliased,
  moved, nor a part of it read (``self.model.fc.cuda()``);
- no other code of the module spells ``.<attr>`` and the class uses no
  ``setattr``/``getattr``/``__dict__``/``vars``.

Other modules are the caller's to check (the project view's
``switched_attrs``: attributes another module switches, moves or hands over).
"""

from __future__ import annotations

from collections.abc import Callable, Collection

import libcst as cst

from memlint.analysis.scope.names import dotted_name
from memlint.parse.traversal import visit_fast

_DYNAMIC = frozenset({"setattr", "getattr", "delattr", "vars", "__dict__", "__setattr__", "__getattribute__"})


def _no_instance(fn: cst.FunctionDef) -> bool:
    """A static or class method: its first parameter is no instance."""
    return any((dotted_name(d.decorator) or "") in ("staticmethod", "classmethod") for d in fn.decorators)


class _AttrUses(cst.CSTVisitor):
    def __init__(self, cls: cst.ClassDef, stays: Collection[str], built: Callable[[cst.BaseExpression], bool]) -> None:
        self.cls = cls
        self.stays = stays
        self.built = built
        # The class's own methods (not static, not class methods; another
        # decorator keeps the instance first): their instance name.
        self.own = {
            id(fn): fn.params.params[0].name.value
            for fn in cls.body.body
            if isinstance(fn, cst.FunctionDef) and fn.params.params and not _no_instance(fn)
        }
        self.selves: list[str | None] = [None]  # per scope: the name of the class's instance there
        self.in_class = 0
        self.ok: set[int] = set()  # ``self.<attr>`` nodes in a harmless place
        self.stored: set[str] = set()
        self.bad: set[str] = set()
        self.dynamic = False

    def _own(self, node: cst.BaseExpression) -> str | None:
        """``attr`` for ``self.attr`` in a method of the class."""
        this = self.selves[-1]
        if (
            this is not None
            and isinstance(node, cst.Attribute)
            and isinstance(node.value, cst.Name)
            and node.value.value == this
        ):
            return node.attr.value
        return None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.in_class += node is self.cls
        self.selves.append(None)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.in_class -= original_node is self.cls
        self.selves.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        # A method of the class: its first parameter; a function nested in
        # one keeps the method's (a closure over it) unless it rebinds it.
        this = self.own.get(id(node), self.selves[-1])
        params = node.params
        if any(p.name.value == this for p in (*params.posonly_params, *params.params, *params.kwonly_params)):
            this = self.own.get(id(node))
        self.selves.append(this)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.selves.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.selves.append(None)  # ``self.model`` in a lambda: handed around

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.selves.pop()

    def visit_Name(self, node: cst.Name) -> None:
        if self.in_class and node.value in _DYNAMIC:
            self.dynamic = True

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1:
            attr = self._own(node.targets[0].target)
            if attr is not None and self.built(node.value):
                self.ok.add(id(node.targets[0].target))
                self.stored.add(attr)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if self._own(func) is not None:
            self.ok.add(id(func))  # ``self.model(x)``: a forward
        elif isinstance(func, cst.Attribute) and func.attr.value in self.stays and self._own(func.value):
            self.ok.add(id(func.value))  # ``self.model.eval()``

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in _DYNAMIC and self.in_class:
            self.dynamic = True
        if id(node) not in self.ok:
            self.bad.add(node.attr.value)


def stable_cpu_attrs(
    module: cst.Module,
    cls: cst.ClassDef,
    stays: Collection[str],
    built: Callable[[cst.BaseExpression], bool],
) -> frozenset[str]:
    """The attributes of ``cls`` (a plain class of ``module``) on the CPU in
    every method (see the module's docstring)."""
    name = cls.name.value
    for other in module.body:
        if isinstance(other, cst.ClassDef) and any(dotted_name(b.value) == name for b in other.bases):
            return frozenset()
    uses = _AttrUses(cls, stays, built)
    visit_fast(module, uses)
    if uses.dynamic:
        return frozenset()
    return frozenset(uses.stored - uses.bad)
