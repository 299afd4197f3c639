"""Every call site of a method in this module, including ``inst.method(...)``
on a local instance of the method's class.

``facts.calls`` follows ``self.method(...)`` only. A script often builds one
object and calls it: ``cam = GradCam(model)`` then ``cam.generate_cam(img)``
in its ``__main__`` block. ``inst.method(...)`` is resolved only when the
answer cannot be wrong within the module:

- ``inst`` is bound in the scope of the call, and only ever by
  ``inst = Cls(...)`` (no parameter, loop target, ``with ... as``, tuple
  unpacking, walrus, import, ``except ... as``, a lambda's parameter,
  ``global``/``nonlocal``);
- ``Cls`` is the one undecorated class of that name, defined at the top of
  the module or of a function the call is in, never rebound or imported,
  without a metaclass or ``__new__``, so that ``Cls(...)`` makes an instance
  of it;
- ``method`` is what ``Cls`` gets by that name: defined in ``Cls`` itself, or
  inherited along single bases defined in this module that do not define it
  first (a subclass that overrides the method calls its own).

``sites(method)`` answers None (unknown) unless every call of an attribute
spelled like the method in the module resolves: to it, through ``self`` or
an instance as above, or provably to another function. A receiver we cannot
resolve (``super().method()``, a parameter, an instance handed to a helper)
may be one of ours, and a method read without a call (``f = cam.method``) may
be called from anywhere. Callers in other modules are not seen here: the
rules that use this say so in their fix safety.

API (through ``facts.instance_calls``): ``sites(method)``, ``instance_class(call)``.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.autograd.history import param_names
from memlint.analysis.scope.names import dotted_name, flat_targets
from memlint.parse.traversal import visit_fast


class InstanceCalls:
    def __init__(self, facts) -> None:
        self.facts = facts
        self._other_binds: set[str] | None = None
        self._method_reads: set[str] | None = None
        self._escaping: set[str] | None = None

    def sites(self, method: cst.FunctionDef) -> list[cst.Call] | None:
        calls = self.facts.calls
        cls = calls.class_of.get(method)
        if cls is None or method.decorators:
            return None  # not a plain method: staticmethod, property, a wrapper
        params = param_names(method)
        if not params or params[0] != "self":
            return None
        name = method.name.value
        if name in self._read_without_call():
            return None
        found: list[cst.Call] = []
        for scope_calls in calls.calls_in.values():
            for call in scope_calls:
                func = call.func
                if not (isinstance(func, cst.Attribute) and func.attr.value == name):
                    continue
                callee = calls.resolve(call)
                if callee is None:
                    owner = self.instance_class(call)
                    if owner is None:
                        return None  # a receiver we cannot resolve may be one of ours
                    callee = self._lookup(owner, name)
                    if callee is None:
                        return None
                if callee is method:
                    found.append(call)
        return found

    def instance_class(self, call: cst.Call) -> cst.ClassDef | None:
        """The class of this module ``inst`` surely is an instance of, for
        ``inst.attr(...)``."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
            return None
        inst = func.value.value
        calls = self.facts.calls
        scope = calls.scope_of_call(call)
        if scope is None or inst in self._bound_otherwise() or inst in self._used_plainly():
            return None
        if isinstance(scope, cst.FunctionDef) and inst in param_names(scope):
            return None
        bindings = self.facts.recurrent.bindings_in(scope).get(inst, ())
        if not bindings:
            return None  # a global or a closure variable: bound elsewhere
        owner: cst.ClassDef | None = None
        for b in bindings:
            value = b.value
            if b.kind != "assign" or not isinstance(b.stmt, cst.Assign) or not isinstance(value, cst.Call):
                return None
            if not any(isinstance(t.target, cst.Name) and t.target.value == inst for t in b.stmt.targets):
                return None  # ``inst, other = ...`` or ``inst.attr = ...``
            cls = self._module_class(value.func, scope)
            if cls is None or (owner is not None and cls is not owner):
                return None
            owner = cls
        return owner

    def _module_class(self, func: cst.BaseExpression, scope) -> cst.ClassDef | None:
        """The class ``func`` names where ``scope`` reads it: the one class
        of that name, defined at the top of the module or of a function
        that ``scope`` is (or is nested in), never rebound on the way."""
        if not isinstance(func, cst.Name):
            return None
        name = func.value
        calls = self.facts.calls
        defs = calls.classes.get(name, [])
        if len(defs) != 1:
            return None
        cls = defs[0]
        home = self._defined_in(cls)
        if home is None or cls.decorators or any(k.keyword for k in cls.keywords):
            return None
        if name in self._bound_otherwise():
            return None  # an import of the same name, ``global``, ...
        chain = [calls.module]
        while True:
            chain.append(scope)
            if scope is home:
                break
            if isinstance(scope, cst.Module):
                return None  # defined in a function this scope is not in
            scope = calls.owner[scope]
        if any(name in self.facts.recurrent.bindings_in(s) for s in chain):
            return None  # ``GradCam = wrap(GradCam)``
        if self._lookup(cls, "__new__") is not None:
            return None
        return cls

    def _defined_in(self, cls: cst.ClassDef):
        """The module or function whose body holds ``cls`` directly."""
        parents = self.facts.calls.parents
        parent = parents.get(cls)
        if parent is self.facts.calls.module:
            return parent
        owner = parents.get(parent) if isinstance(parent, cst.IndentedBlock) else None
        return owner if isinstance(owner, cst.FunctionDef) else None

    def _lookup(self, cls: cst.ClassDef, name: str, depth: int = 0) -> cst.FunctionDef | None:
        """What ``cls`` gets by ``name``, when its bases (if it needs them)
        form a single chain of classes of this module."""
        found = self.facts.calls.methods.get(cls, {}).get(name)
        if found is not None or depth > 20:
            return found
        bases = [b.value for b in cls.bases if not (isinstance(b.value, cst.Name) and b.value.value == "object")]
        if len(bases) != 1:
            return None
        home = self._defined_in(cls)
        base = self._module_class(bases[0], home) if home is not None else None
        return self._lookup(base, name, depth + 1) if base is not None else None

    def _bound_otherwise(self) -> set[str]:
        """Names bound anywhere by something other than an assignment the
        per-scope bindings index sees, or declared global/nonlocal."""
        if self._other_binds is None:
            self._scan()
        assert self._other_binds is not None
        return self._other_binds

    def _read_without_call(self) -> set[str]:
        """Attribute names read somewhere other than as the callee of a call."""
        if self._method_reads is None:
            self._scan()
        assert self._method_reads is not None
        return self._method_reads

    def _used_plainly(self) -> set[str]:
        """Names read somewhere other than as ``name.attr`` or bound: an
        instance handed to a call, stored, returned, captured."""
        if self._escaping is None:
            self._scan()
        assert self._escaping is not None
        return self._escaping

    def _scan(self) -> None:
        scan = _Scan(self.facts.calls.parents)
        visit_fast(self.facts.module, scan)
        names, reads, plain = scan.names, scan.reads, scan.plain
        if "*" in names:
            # ``from x import *`` may bind any name, the class's included.
            names.update(self.facts.calls.classes)
        self._other_binds, self._method_reads, self._escaping = names, reads, plain


class _Scan(cst.CSTVisitor):
    """The names bound other than by plain assignment, the attributes read
    other than as a call, and the names used as plain values (InstanceCalls._scan)."""

    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self, parents) -> None:
        super().__init__()
        self.parents = parents
        self.names: set[str] = set()
        self.reads: set[str] = set()
        self.plain: set[str] = set()

    def target_names(self, node: cst.BaseExpression) -> None:
        self.names.update(t.value for t in flat_targets(node) if isinstance(t, cst.Name))

    def visit_Global(self, node: cst.Global) -> None:
        self.names.update(n.name.value for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.names.update(n.name.value for n in node.names)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.target_names(node.target)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is not None:
            self.target_names(node.asname.name)
        else:
            self.names.add((dotted_name(node.name) or "").split(".")[0])

    def visit_ImportStar(self, node: cst.ImportStar) -> None:
        self.names.add("*")

    def visit_Lambda(self, node: cst.Lambda) -> None:
        p = node.params
        for param in (*p.posonly_params, *p.params, *p.kwonly_params, p.star_arg, p.star_kwarg):
            if isinstance(param, cst.Param):
                self.names.add(param.name.value)  # ``lambda cam: cam.generate(x)``: not the local

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self.target_names(node.name.name)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self.target_names(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self.target_names(node.target)

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self.names.add(node.name.value)

    def visit_Name(self, node: cst.Name) -> None:
        parent = self.parents.get(node)
        if isinstance(parent, cst.Attribute):
            return  # ``inst.attr`` (or ``x.inst``, another name)
        if isinstance(parent, cst.AssignTarget) and parent.target is node:
            return
        if isinstance(parent, cst.Arg) and node is parent.keyword:
            return
        if isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef)) and node is parent.name:
            return
        self.plain.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        parent = self.parents.get(node)
        if not (isinstance(parent, cst.Call) and parent.func is node):
            self.reads.add(node.attr.value)
