"""What was assigned to a name, by its spelling, across the whole module.

``scheduler = ReduceLROnPlateau(opt)`` and ``self.scaler = GradScaler(enabled=False)``
are facts a rule needs about the object itself (which class, which arguments),
beyond the kind ``facts.objects`` gives. Names are matched by their code
(``scheduler``, ``self.scaler``): the bindings in the function asking win,
then module-level ones, then those of any function (a parameter is usually
built by the caller). A rule acts only when the values all agree, so two
unrelated variables with one spelling make the answer ambiguous, never wrong.

API (through ``facts.bindings``), ``scope`` being the function (or module)
the name is read in:

- ``values(text, scope=None)``: the expressions assigned to ``text``; a
  ``None`` entry is a binding we cannot evaluate (loop target, tuple
  unpacking, ``with ... as``).
- ``unpacked_in(text, scope)``: the calls ``scope`` unpacks into ``text``
  (``a, b = f(x)``), one per such None entry; ``augmented_in(text, scope)``
  the augmented assignments (``loss += extra``), one per such None entry.
- ``constructors(text, scope=None)``: the qualified (or, for local classes,
  plain) names of the calls assigned to ``text``, or None when any binding is
  not a call (``None`` itself is ignored).
- ``call_of(text, scope=None)``: the single call assigned to ``text``, if all agree.
- ``binds_in(text, scope)``: ``scope`` assigns ``text`` itself;
  ``values_in(text, scope)`` what it assigns there.
"""

from __future__ import annotations

from collections import defaultdict

import libcst as cst

from memlint.analysis.scope.names import ImportTable, dotted_name
from memlint.parse.traversal import visit_fast

# Calls that return their receiver (or a copy of its kind): ``Net().cuda()``.
_PASS_THROUGH = frozenset({"to", "cuda", "cpu", "half", "float", "double", "bfloat16", "train", "eval"})


class Bindings(cst.CSTVisitor):
    def __init__(self, module: cst.Module, names: ImportTable) -> None:
        super().__init__()
        self._module = module
        self._names = names
        self._values: dict[str, list[tuple[cst.CSTNode, cst.BaseExpression | None]]] = defaultdict(list)
        # ``fake, code = D(G(z))``: the call each unpacked name was taken from.
        self._unpacked: dict[str, list[tuple[cst.CSTNode, cst.Call]]] = defaultdict(list)
        # ``loss += extra``: the augmented assignments, each one of the None entries.
        self._augmented: dict[str, list[tuple[cst.CSTNode, cst.AugAssign]]] = defaultdict(list)
        self._scopes: list[cst.CSTNode] = [module]
        visit_fast(module, self)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scopes.pop()

    def _text(self, target: cst.BaseExpression) -> str | None:
        if isinstance(target, (cst.Name, cst.Attribute)):
            return dotted_name(target)
        return None

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._bind(el.value, None)
            return
        if isinstance(target, cst.StarredElement):
            self._bind(target.value, None)
            return
        text = self._text(target)
        if text is not None:
            self._values[text].append((self._scopes[-1], value))

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._bind(t.target, node.value)
            if isinstance(t.target, (cst.Tuple, cst.List)) and isinstance(node.value, cst.Call):
                for el in t.target.elements:
                    text = self._text(el.value) if isinstance(el, cst.Element) else None
                    if text is not None:
                        self._unpacked[text].append((self._scopes[-1], node.value))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, None)
        text = self._text(node.target)
        if text is not None:
            self._augmented[text].append((self._scopes[-1], node))

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, None)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name, None)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, node.value)

    # -- queries ----------------------------------------------------------
    def values(self, text: str, scope: cst.CSTNode | None = None) -> list[cst.BaseExpression | None]:
        entries = self._values.get(text, ())
        if not text.startswith("self."):
            for wanted in (scope, self._module):
                local = [v for s, v in entries if s is wanted]
                if local:
                    return local
        return [v for _, v in entries]

    def values_in(self, text: str, scope: cst.CSTNode) -> list[cst.BaseExpression | None]:
        """The expressions ``scope`` itself (a function, or the module's own
        statements) assigns to ``text``."""
        return [v for s, v in self._values.get(text, ()) if s is scope]

    def stores(self, text: str) -> list[tuple[cst.CSTNode, cst.BaseExpression | None]]:
        """Every (scope, value) the module binds to ``text``, whatever the scope
        (None: a value not followed, an unpacking or an augmented assignment)."""
        return list(self._values.get(text, ()))

    def unpacked_in(self, text: str, scope: cst.CSTNode) -> list[cst.Call]:
        """The calls whose results ``scope`` unpacks into ``text``
        (``D_fake, D_cont = self.D(G_)``): each is one of the bindings
        ``values`` gives as None."""
        return [v for s, v in self._unpacked.get(text, ()) if s is scope]

    def augmented_in(self, text: str, scope: cst.CSTNode) -> list[cst.AugAssign]:
        """``scope``'s augmented assignments of ``text`` (``loss += extra``):
        each is one of the bindings ``values`` gives as None."""
        return [v for s, v in self._augmented.get(text, ()) if s is scope]

    def binds_in(self, text: str, scope: cst.CSTNode) -> bool:
        """``scope`` itself assigns ``text`` (it is a local variable there)."""
        return any(s is scope for s, _ in self._values.get(text, ()))

    def call_name(self, call: cst.Call) -> str | None:
        """Qualified name of the callee, or its dotted spelling for callees
        that are not imports (local classes)."""
        return self._names.call_name(call) or dotted_name(call.func)

    def constructors(self, text: str, scope: cst.CSTNode | None = None) -> set[str] | None:
        values = self.values(text, scope)
        if not values:
            return None
        names: set[str] = set()
        # ``scheduler = None`` beside ``scheduler = StepLR(...)``: no object, no class.
        values = [v for v in values if not (isinstance(v, cst.Name) and v.value == "None")]
        if not values:
            return None
        for value in values:
            call = unwrap_pass_through(value)
            if call is None:
                return None
            name = self.call_name(call)
            if name is None:
                return None
            names.add(name)
        return names

    def call_of(self, text: str, scope: cst.CSTNode | None = None) -> cst.Call | None:
        values = self.values(text, scope)
        calls = [unwrap_pass_through(v) for v in values]
        if len(calls) != 1 or calls[0] is None:
            return None
        return calls[0]


def unwrap_pass_through(value: cst.BaseExpression | None) -> cst.Call | None:
    """The constructor call under ``X(...).to(dev).cuda()``."""
    while (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in _PASS_THROUGH
        and isinstance(value.func.value, cst.Call)
    ):
        value = value.func.value
    return value if isinstance(value, cst.Call) else None


def parameters_owners(call: cst.Call) -> list[cst.BaseExpression]:
    """``X`` for every ``X.parameters()`` / ``X.named_parameters()`` in the
    arguments of ``call`` (an optimizer constructor)."""
    return [owner for arg in call.args for owner in parameters_owners_in(arg.value)]


def parameters_owners_in(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """``X`` for every ``X.parameters()`` / ``X.named_parameters()`` in ``expr``:
    ``itertools.chain(a.parameters(), b.parameters())``, ``list(m.parameters())``,
    ``[{"params": m.parameters()}]``."""
    finder = _ParametersOwners()
    visit_fast(expr, finder)
    return finder.found


class _ParametersOwners(cst.CSTVisitor):
    # Module-level: a class defined per call costs more than the walk.
    def __init__(self) -> None:
        super().__init__()
        self.found: list[cst.BaseExpression] = []

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if isinstance(f, cst.Attribute) and f.attr.value in ("parameters", "named_parameters"):
            self.found.append(f.value)
