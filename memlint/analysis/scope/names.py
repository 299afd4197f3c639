"""What imported names resolve to: ``F`` -> ``torch.nn.functional``.

libcst's QualifiedNameProvider resolves every name through full scope analysis,
which costs more than parsing. Rules only ever ask about names that come from
imports (torch and friends), so an import table is enough. A name that is both
imported and rebound elsewhere in the module (assignment, def, class, loop or
with target) is ambiguous and resolves to nothing: precision first.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import libcst as cst

from memlint.parse.traversal import visit_fast


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    # Exact class tests: isinstance() against libcst's ABC-based node classes
    # runs Python code on every miss, and this is the analyses' hottest helper.
    kind = node.__class__
    if kind is _NAME:
        return node.value  # type: ignore[attr-defined]
    parts: list[str] = []
    while kind is _ATTRIBUTE:
        parts.append(node.attr.value)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
        kind = node.__class__
    if kind is not _NAME:
        return None
    parts.append(node.value)  # type: ignore[attr-defined]
    return ".".join(reversed(parts))


_NAME, _ATTRIBUTE = cst.Name, cst.Attribute


def _head_name(node: cst.BaseExpression) -> cst.BaseExpression:
    """The ``a`` of ``a.b.c``."""
    while node.__class__ is _ATTRIBUTE:
        node = node.value  # type: ignore[attr-defined]
    return node


def flat_targets(target: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The single targets of an assignment target: ``a, (b, *c)`` -> a, b, c."""
    if isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            yield from flat_targets(el.value)
    elif isinstance(target, cst.StarredElement):
        yield from flat_targets(target.value)
    else:
        yield target


def bound_names(target: cst.BaseExpression) -> Iterator[str]:
    """The names an assignment target binds: ``a, (b.c, *d)`` -> a, d
    (an attribute or a subscript binds no name)."""
    return (t.value for t in flat_targets(target) if isinstance(t, cst.Name))


def binds_name(target: cst.BaseExpression, name: str) -> bool:
    """``target`` binds ``name``, alone or in a tuple or list (``a, (name, *b)``)."""
    return any(isinstance(t, cst.Name) and t.value == name for t in flat_targets(target))


def mentions(expr: cst.CSTNode, key: str) -> bool:
    """Whether the dotted name ``key`` (``self.h``) occurs anywhere in ``expr``."""
    from memlint.parse.traversal import visit_fast

    finder = _Mention(key)
    visit_fast(expr, finder)
    return finder.found


class _Mention(cst.CSTVisitor):
    # Module-level: a class defined per call costs more than the walk.
    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.found:
            return False
        if isinstance(node, (cst.Name, cst.Attribute)) and dotted_name(node) == self.key:
            self.found = True
            return False
        return True


class ImportTable(cst.CSTVisitor):
    """Collects import bindings of a whole module (functions included)."""

    def __init__(self, module: cst.Module, star_bindings: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__()
        # Names a ``from module import *`` of the project brings
        # (project/view.py); the module's own imports and bindings win.
        self.bindings: dict[str, str] = dict(star_bindings)
        self._ambiguous: set[str] = set()
        self._rebound: set[str] = set()
        # A class attribute (``amp = False`` in a class body) shadows an import
        # only in that body, not in its methods: kept unless the body reads it.
        self._class_bound: set[str] = set()
        self._class_reads: set[str] = set()
        self._class_targets: set[int] = set()
        self._scopes: list[bool] = [False]  # per scope open now: a class body
        # A name a function binds is its local there only (``checkpoint =
        # torch.hub.load(...)`` in one function leaves ``checkpoint.checkpoint``
        # of the imported module in another): per open function, the names it
        # binds and the ids of the names read in it (its nested functions'
        # free ones included), so the reads of its locals are known on leaving it.
        self._frames: list[tuple[set[str], dict[str, list[int]]]] = []
        self._local_rebound: set[str] = set()
        self._shadowed: set[int] = set()  # ids of names that read a function's local
        self._scoped: dict[str, str] = {}  # imports shadowed by some function's local only
        # Top-level ``import X`` statements: where the engine adds imports.
        self.top_level_imports: list[cst.SimpleStatementLine] = []
        self._call_names: dict[int, tuple[cst.CSTNode, str | None]] = {}
        visit_fast(module, self)
        for name in self._rebound | self._ambiguous | (self._class_bound & self._class_reads):
            self.bindings.pop(name, None)
        # ``bindings`` stays what every scope sees (readers spell code with it);
        # ``qualified_name`` alone reads a name shadowed in some functions only.
        for name in self._local_rebound:
            target = self.bindings.pop(name, None)
            if target is not None:
                self._scoped[name] = target

    # -- collection -------------------------------------------------------
    def _bind(self, local: str, qualified: str) -> None:
        old = self.bindings.get(local)
        if old is not None and old != qualified:
            self._ambiguous.add(local)
        self.bindings[local] = qualified

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self._bind(alias.asname.name.value, full)
            else:
                head = full.split(".")[0]
                self._bind(head, head)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        base = dotted_name(node.module)
        if base is None:
            return
        for alias in node.names:
            if not isinstance(alias.name, cst.Name):
                continue
            local = alias.name.value
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self._bind(local, f"{base}.{alias.name.value}")

    def _rebind_name(self, name: str) -> None:
        if self._frames and not self._scopes[-1]:
            self._frames[-1][0].add(name)
            self._local_rebound.add(name)
        else:
            self._rebound.add(name)

    def _rebind_target(self, target: cst.BaseExpression) -> None:
        for name in bound_names(target):
            self._rebind_name(name)

    def _assign_target(self, target: cst.BaseExpression) -> None:
        if self._scopes[-1] and isinstance(target, cst.Name):
            self._class_bound.add(target.value)
            self._class_targets.add(id(target))  # a binding, not a read
        else:
            self._rebind_target(target)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._assign_target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._assign_target(node.target)

    def visit_Name(self, node: cst.Name) -> None:
        if self._scopes[-1] and id(node) not in self._class_targets:
            self._class_reads.add(node.value)
        if self._frames:
            self._frames[-1][1].setdefault(node.value, []).append(id(node))

    def _open_frame(self) -> None:
        self._frames.append((set(), {}))

    def _close_frame(self) -> None:
        bound, reads = self._frames.pop()
        outer = self._frames[-1][1] if self._frames else None
        for name, ids in reads.items():
            if name in bound:
                self._shadowed.update(ids)
            elif outer is not None:
                outer.setdefault(name, []).extend(ids)

    def _declared_outside(self, node: cst.Global | cst.Nonlocal) -> None:
        # ``global x`` / ``nonlocal x``: an assignment in the function binds
        # another scope's name; read as before, rebound everywhere.
        for item in node.names:
            self._rebound.add(item.name.value)

    def visit_For(self, node: cst.For) -> None:
        self._rebind_target(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        # ``with x as name`` / ``except E as name``; import aliases are
        # handled above and also pass through here, so only non-import parents.
        pass

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._rebind_target(node.asname.name)

    # Parameters, handler names, walrus and comprehension targets shadow an
    # import too (``def forward(self, x, checkpoint=True)``).
    def visit_Param(self, node: cst.Param) -> None:
        self._rebind_name(node.name.value)

    def visit_Global(self, node: cst.Global) -> None:
        self._declared_outside(node)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self._declared_outside(node)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._rebind_target(node.name.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._rebind_target(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._rebind_target(node.target)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._rebind_name(node.name.value)
        self._scopes.append(False)
        self._open_frame()

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scopes.pop()
        self._close_frame()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._scopes.append(False)
        self._open_frame()

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self._scopes.pop()
        self._close_frame()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._rebind_name(node.name.value)
        self._scopes.append(True)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._scopes.pop()

    def visit_Module(self, node: cst.Module) -> None:
        for stmt in node.body:
            if isinstance(stmt, cst.SimpleStatementLine) and any(
                isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
            ):
                self.top_level_imports.append(stmt)

    # -- queries ----------------------------------------------------------
    def imported_only(self, name: str) -> bool:
        """``name`` is bound by imports alone, perhaps to several targets (one
        per function, ``from a import A as net`` here, ``from b import B as
        net`` there): no assignment, parameter, loop, ``def`` or class binds it."""
        if name in self.bindings:
            return True
        return (
            name in self._ambiguous
            and name not in self._local_rebound
            and name not in self._rebound
            and name not in self._class_bound
        )

    def qualified_name(self, node: cst.BaseExpression) -> str | None:
        """``torch.cuda.amp.autocast`` for ``amp.autocast`` after
        ``from torch.cuda import amp``; None when the head is not an import."""
        name = dotted_name(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        target = self.bindings.get(head)
        if target is None:
            target = self._scoped.get(head)
            if target is None or id(_head_name(node)) in self._shadowed:
                return None
        return f"{target}.{rest}" if rest else target

    def call_name(self, node: cst.CSTNode) -> str | None:
        """Qualified name of the function a Call calls."""
        if node.__class__ is not cst.Call:
            return None
        # Every analysis asks this of the same calls, ten times per call in a
        # training script. Keyed by id, with the node kept so the id stays its own.
        found = self._call_names.get(id(node))
        if found is None or found[0] is not node:
            found = self._call_names[id(node)] = (node, self.qualified_name(node.func))  # type: ignore[attr-defined]
        return found[1]

    def local_name_for(self, qualified: str) -> str | None:
        """The expression text this module uses for ``qualified`` (a module or
        object), e.g. ``T`` after ``import torch as T``; None when not bound."""
        best: str | None = None
        for local, target in self.bindings.items():
            if target == qualified:
                return local
            if qualified.startswith(target + ".") and best is None:
                best = local + qualified[len(target) :]
        return best

    def imports_torch(self) -> bool:
        return any(t == "torch" or t.startswith("torch.") for t in self.bindings.values())


def is_lightning_module(cls: cst.ClassDef, names: ImportTable) -> bool:
    """``class M(pl.LightningModule)`` (any import spelling): Lightning runs
    its ``training_step`` once per batch and backpropagates what it returns."""
    return any(
        (names.qualified_name(b.value) or dotted_name(b.value) or "").endswith("LightningModule") for b in cls.bases
    )
