"""MEM501 deprecated-cuda-amp."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from memlint.analysis.scope.names import dotted_name
from memlint.analysis.training.loops import ends_with_jump
from memlint.fix.call_args import (
    append_keyword,
    has_star_args,
    has_star_kwargs,
    make_keyword,
    positional_args,
    positional_to_keywords,
    prepend_positional,
)
from memlint.parse.traversal import visit_fast
from memlint.rule import Fix, Invalid, Rule, Safety, Valid
from memlint.rule.migrations import needed_by_fix, rows, torch_verdict


def _modules() -> dict[str, tuple[str, str, frozenset[str]]]:
    """Deprecated module -> (its torch.amp counterpart, device type, names it
    holds that have a torch.amp replacement), from the migration table's rows
    (memlint/rule/migrations.py): a row there is a name this rule knows."""
    modules: dict[str, tuple[str, str, frozenset[str]]] = {}
    for row in rows("MEM501"):
        module, _, name = row.symbol.rpartition(".")
        new, device, names = modules.get(module, (row.replacement.rpartition(".")[0], row.device or "", frozenset()))
        modules[module] = (new, device, names | {name})
    return modules


MODULES = _modules()
SINCE = rows("MEM501")[0].since  # one release for every row (tests/test_migrations.py)
# The old signatures, whose positional arguments become keywords.
OLD_POSITIONAL = {
    "autocast": ("enabled", "dtype", "cache_enabled"),
    "GradScaler": ("init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled"),
}
OLD_KEYWORDS = {**OLD_POSITIONAL, "custom_fwd": ("fwd", "cast_inputs"), "custom_bwd": ("bwd",)}
DECORATORS = ("custom_fwd", "custom_bwd")
COMPAT_EXCEPTIONS = ("ImportError", "ModuleNotFoundError", "AttributeError")

# A test that picks code by torch version: ``version.parse(torch.__version__)``,
# ``hasattr(torch, "amp")``, ``_TORCH_GREATER_EQUAL_2_4``, ``is_torch_less_than("2.4")``.
_COMPAT_TEST = re.compile(r"version|hasattr|greater|less|torch\w*\d", re.IGNORECASE)


class _Names(cst.CSTVisitor):
    # A module-level class, not one per call: a class is a reference cycle,
    # and its methods' closures would keep what they capture alive with it.
    def __init__(self) -> None:
        super().__init__()
        self.found: list[cst.Name] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.found.append(node)


def _names_in(expr: cst.BaseExpression) -> list[cst.Name]:
    visitor = _Names()
    visit_fast(expr, visitor)
    return visitor.found


def deprecated(qualified: str | None) -> tuple[str, str] | None:
    """(name, device type) for a deprecated amp object, else None."""
    if qualified is None:
        return None
    module, _, name = qualified.rpartition(".")
    entry = MODULES.get(module)
    return (name, entry[1]) if entry and name in entry[2] else None


def _new_code(module: cst.Module, fix: Fix) -> list[str]:
    """The code a fix writes, to see which torch.amp names it needs."""
    return [module.code_for_node(new) for _, new in fix.replacements if isinstance(new, cst.CSTNode)]


def _device(device: str) -> cst.SimpleString:
    return cst.SimpleString(f'"{device}"')


def rewrite_call(call: cst.Call, name: str, device: str, func: cst.BaseExpression | None = None) -> cst.Call | None:
    """The torch.amp form of a call of the deprecated ``name``; None when the
    arguments cannot be mapped for sure."""
    if has_star_args(call) or any(a.keyword and a.keyword.value not in OLD_KEYWORDS[name] for a in call.args):
        return None
    if func is not None:
        call = call.with_changes(func=func)
    if name in OLD_POSITIONAL:
        named = positional_to_keywords(call, OLD_POSITIONAL[name])
        return None if named is None else prepend_positional(named, _device(device))
    if has_star_kwargs(call) or len(positional_args(call)) > 1:
        return None
    return append_keyword(call, "device_type", _device(device))


def _decorator_call(func: cst.BaseExpression, device: str) -> cst.Call:
    """``@custom_fwd`` -> ``@custom_fwd(device_type="cuda")``."""
    return cst.Call(func=func, args=[make_keyword("device_type", _device(device))])


def _import_locals(stmts: list[cst.Import | cst.ImportFrom]):
    """The names these import statements bind."""
    for stmt in stmts:
        if isinstance(stmt.names, cst.ImportStar):
            continue
        for alias in stmt.names:
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                yield alias.asname.name.value
            elif isinstance(alias.name, cst.Name):
                yield alias.name.value


def _head(expr: cst.BaseExpression) -> cst.Name | None:
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return expr if isinstance(expr, cst.Name) else None


@dataclass
class _Alias:
    """One imported name of a deprecated amp import statement."""

    local: str
    qualified: str
    name: str  # "module" for an imported module, else the object's name
    device: str
    new_base: str  # the module the statement imports from after the fix
    sites: list[tuple[cst.CSTNode, cst.CSTNode]] = field(default_factory=list)
    uses: int = 0  # calls and decorators, rewritable or not
    rewritable: bool = True


@dataclass
class _Stored:
    """A deprecated class stored to be called later: ``ref`` (the reference),
    ``holder`` (the node the fix replaces: ``ref`` or the ``partial`` call
    around it) and ``target``, the name it is stored in, if a plain name."""

    ref: cst.Attribute
    holder: cst.BaseExpression
    qualified: str
    name: str
    device: str
    target: str | None


class _NameUses(cst.CSTVisitor):
    """Every read of the given names (a module-level class: see _Names)."""

    def __init__(self, names: set[str]) -> None:
        super().__init__()
        self.names = names
        self.found: dict[str, list[cst.Name]] = {}

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.names:
            self.found.setdefault(node.value, []).append(node)


class DeprecatedCudaAmp(Rule):
    """
    ## What it does
    Flags the device-specific mixed-precision API that torch 2.4 deprecated:
    `torch.cuda.amp.autocast`, `torch.cuda.amp.GradScaler`,
    `torch.cuda.amp.custom_fwd`/`custom_bwd`, `torch.cpu.amp.autocast`,
    `torch.cpu.amp.GradScaler`, whether reached through `torch.cuda.amp.X`,
    `from torch.cuda.amp import X`, `from torch.cuda import amp` or `import
    torch.cuda.amp as amp`: at the import and at each use (the call where the
    warning is raised and the device type goes), whatever the spelling.

    ## Why it matters
    Each use emits a `FutureWarning`, and deprecated aliases can be removed
    in a later release, at which point the training script stops working.
    `torch.amp` is the one API for every device, and the device type in the
    call says which device the region or the scaler is for.

    ## Example
    ```python
    from torch.cuda.amp import autocast, GradScaler

    scaler = GradScaler(init_scale=1024)
    with autocast(dtype=torch.bfloat16):
        loss = model(x)
    ```

    ## Use instead
    ```python
    from torch.amp import autocast, GradScaler

    scaler = GradScaler("cuda", init_scale=1024)
    with autocast("cuda", dtype=torch.bfloat16):
        loss = model(x)
    ```

    ## Fix safety
    Safe: the deprecated classes are thin wrappers that call the `torch.amp`
    ones with the device type, so results are identical (the one nuance: an
    omitted `cache_enabled` now follows `torch.is_autocast_cache_enabled()`,
    which is true unless the program switched the cast cache off globally; the
    cache never changes values). Positional arguments become keywords
    (`autocast(True, torch.float16)` -> `autocast("cuda", enabled=True,
    dtype=torch.float16)`) because the new signatures order them differently.

    ## Details
    A class stored to be called later (`amp_autocast = torch.cuda.amp.autocast`,
    `functools.partial(torch.cuda.amp.autocast, ...)`) is reported where it is
    stored.

    An import is rewritten together with every call that uses its names, in one
    edit, so that the device type is added exactly where it is needed; when some
    use cannot be rewritten (the name passed around as a value, `*args`) the
    import is reported without a fix. A stored class becomes
    `functools.partial(torch.amp.autocast, "cuda")` only when every read of the
    name it is stored in is a call with keyword arguments (a positional one
    would land on another parameter of the new signature; a name passed on may
    be called anywhere); otherwise it is reported without a fix. Code on a
    compatibility path (in a branch of an `if` or conditional expression on the
    torch version, `hasattr`, or a flag computed from them; after an early
    `return` under such a test; in an `except ImportError/AttributeError`
    handler) is left alone; the import in the `try` body before such a handler
    is the main path: where the handler defines a stand-in of the same name
    (`class GradScaler: ...`) and the module uses the name, the import is
    reported without a fix (which binding a use sees depends on the torch
    installed).

    The fix follows the torch the project declares (its requirements,
    pyproject, setup.py/setup.cfg, environment.yml, or the `torch-version`
    setting; `memlint check --show-settings FILE` shows what was found):
    `torch.amp.autocast("cuda")` needs torch 1.10, `torch.amp.GradScaler`
    2.3, `torch.amp.custom_fwd`/`custom_bwd` 2.4. Where the project still
    supports an older torch, the finding stays and the fix is withheld
    with the reason and the two ways out (`fix withheld: the project
    supports torch 1.8 (requirements.txt:3); torch.amp.GradScaler needs
    torch 2.3: raise the floor to torch>=2.3, or keep the old spelling until
    then (ignore MEM501)`). Where every
    torch it accepts predates 2.4 (`torch==1.8.1`, `torch<2.4`), nothing is
    deprecated there and nothing is reported.

    ## References
    - https://pytorch.org/docs/stable/amp.html
    - https://pytorch.org/docs/stable/notes/amp_examples.html
    """

    code = "MEM501"
    name = "deprecated-cuda-amp"
    message = f"torch.cuda.amp / torch.cpu.amp are deprecated since torch {SINCE}: use torch.amp with a device type"
    fix_safety = Safety.SAFE
    project_facts = (
        "Deprecated names that reach the file through `from common import *` of a project module that "
        "imports them (`from torch.cuda import amp`): each use is reported where it is, with its own fix "
        '(`torch.amp.autocast("cuda")`), since there is no import here to rewrite.'
    )

    def __init__(self, context) -> None:
        super().__init__(context)
        self._in_import = 0
        self._tracked: dict[str, str] = {}
        self._refs: dict[str, list[cst.Name]] = {}
        self._imports: list[cst.Import | cst.ImportFrom] = []
        # Uses already reported: two imports of one name (in two functions)
        # share its uses, which are reported once.
        self._reported_sites: set[int] = set()
        # Names two deprecated imports bind (one per function): the uses of
        # either are not all one import's, so each use is fixed alone.
        self._bound_twice: set[str] = set()
        # Stored references (``amp_autocast = torch.cuda.amp.autocast``),
        # reported once every use of the name they are stored in is known.
        self._stored: list[_Stored] = []

    def report(self, node: cst.CSTNode, message: str | None = None, fix: Fix | None = None) -> None:
        """Every finding passes the project's torch range: a project whose
        every torch predates the deprecation hears nothing, and a fix that
        needs a newer torch than the project supports is withheld (the
        finding stays, and says why)."""
        if self.context.torch is not None:
            code = "" if fix is None else "\n".join(_new_code(self.context.module, fix))
            verdict = torch_verdict(SINCE, needed_by_fix(self.code, code), self.context.torch)
            if not verdict.report:
                return
            if verdict.withheld and fix is not None:
                message, fix = f"{message or self.message} ({verdict.withheld})", None
        super().report(node, message, fix)

    # -- compatibility paths ------------------------------------------------
    def _guarded(self, node: cst.CSTNode) -> bool:
        """On a compatibility path: in a branch of an ``if`` or conditional
        expression that picks by torch version, in an ``except ImportError``,
        or after an ``if <torch version>: return ...`` in the same block."""
        child, cur = node, self.parent(node)
        while cur is not None:
            if isinstance(cur, (cst.If, cst.IfExp)) and child is not cur.test and self._compat_test(cur.test):
                return True
            if isinstance(cur, cst.ExceptHandler) and child is cur.body:
                caught = "" if cur.type is None else self.context.module.code_for_node(cur.type)
                if cur.type is None or any(e in caught for e in COMPAT_EXCEPTIONS):
                    return True
            if isinstance(cur, (cst.IndentedBlock, cst.Module)) and self.facts.blocks.any_before(
                child, self._early_exit
            ):
                return True
            child, cur = cur, self.parent(cur)
        return False

    def _early_exit(self, stmt: cst.CSTNode) -> bool:
        """``if hasattr(torch.amp, "autocast"): return torch.amp.autocast(...)``"""
        if not isinstance(stmt, cst.If) or stmt.orelse is not None or not self._compat_test(stmt.test):
            return False
        return ends_with_jump(stmt.body, (cst.Return, cst.Raise))

    def _compat_test(self, test: cst.BaseExpression) -> bool:
        """The test names the torch version, or a flag this module computes
        from it (``_NEW_AMP = version.parse(torch.__version__) >= ...``)."""
        code = self.context.module.code_for_node
        if _COMPAT_TEST.search(code(test)):
            return True
        flags = [n.value for n in _names_in(test)]
        return any(
            value is not None and _COMPAT_TEST.search(code(value))
            for flag in flags
            for value in self.facts.bindings.values(flag)
        )

    # -- collection ---------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self._tracked = {
            local: target
            for local, target in self.facts.names.bindings.items()
            if target in MODULES or deprecated(target)
        }

    def visit_Import(self, node: cst.Import) -> None:
        self._in_import += 1
        if not self._guarded(node) and any(a.asname is not None and dotted_name(a.name) in MODULES for a in node.names):
            self._imports.append(node)

    def leave_Import(self, original_node: cst.Import) -> None:
        self._in_import -= 1

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._in_import += 1
        if self._guarded(node) or node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        base = dotted_name(node.module)
        imported = [f"{base}.{a.name.value}" for a in node.names if isinstance(a.name, cst.Name)]
        if any(q in MODULES or deprecated(q) for q in imported):
            self._imports.append(node)

    def leave_ImportFrom(self, original_node: cst.ImportFrom) -> None:
        self._in_import -= 1

    def visit_Name(self, node: cst.Name) -> None:
        if node.value not in self._tracked or self._in_import:
            return
        parent = self.parent(node)
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return
        if isinstance(parent, cst.Arg) and parent.keyword is node:
            return
        self._refs.setdefault(node.value, []).append(node)

    # ``torch.cuda.amp.autocast(...)`` reached through torch itself (not an
    # imported amp module, whose uses are fixed with its import).
    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute):
            self._check_site(node.func, node)

    def visit_Decorator(self, node: cst.Decorator) -> None:
        # Only the custom_fwd/custom_bwd decorators are used without a call.
        if isinstance(node.decorator, cst.Attribute) and node.decorator.attr.value in DECORATORS:
            self._check_site(node.decorator, node.decorator)

    # ``amp_autocast = torch.cuda.amp.autocast`` (or ``... if use_amp else
    # suppress``, or ``functools.partial(torch.cuda.amp.autocast, ...)``): a
    # reference stored to be called later, where the warning is raised.
    def visit_Assign(self, node: cst.Assign) -> None:
        target = node.targets[0].target if len(node.targets) == 1 else None
        local = target.value if isinstance(target, cst.Name) else None
        values = [node.value]
        if isinstance(node.value, cst.IfExp):
            values = [node.value.body, node.value.orelse]
        for value in values:
            self._check_stored(value, local)

    def _check_stored(self, value: cst.BaseExpression, target: str | None) -> None:
        ref: cst.BaseExpression = value
        if isinstance(value, cst.Call) and self.facts.names.call_name(value) == "functools.partial":
            if not value.args or value.args[0].keyword is not None or any(a.star for a in value.args):
                return
            ref = value.args[0].value
        if not isinstance(ref, cst.Attribute):
            return
        qualified = self.facts.names.qualified_name(ref)
        found = deprecated(qualified)
        # Only the classes: a decorator stored by reference is rare, and its
        # fix (a call with the device type) changes what the name holds.
        if found is None or found[0] not in OLD_POSITIONAL or self._guarded(ref):
            return
        head = _head(ref)
        if head is None or head.value in self._tracked:
            return  # an imported amp module's attribute: its import is reported
        self._stored.append(_Stored(ref, value, qualified or "", found[0], found[1], target))

    def _finish_stored(self) -> None:
        """Reports each stored reference; its fix binds the device type with
        ``functools.partial`` when every read of the name it is stored in is a
        call with keyword arguments of the old signature only: a positional
        argument would land on another parameter of the new signature, and
        a name passed on may be called anywhere."""
        if not self._stored:
            return
        uses = _NameUses({s.target for s in self._stored if s.target is not None})
        visit_fast(self.context.module, uses)
        for stored in self._stored:
            fix = None
            if stored.target is not None and self._called_by_keywords(uses.found.get(stored.target, []), stored.name):
                fix = self._stored_fix(stored)
            use = f'functools.partial(torch.amp.{stored.name}, "{stored.device}")'
            message = (
                f"`{stored.qualified}` is deprecated since torch {SINCE}, and this stored reference is called "
                f"later: use `{use}`"
            )
            self.report(stored.ref, message=message, fix=fix)

    def _called_by_keywords(self, names: list[cst.Name], name: str) -> bool:
        calls = 0
        for node in names:
            parent = self.parent(node)
            if isinstance(parent, (cst.AssignTarget, cst.Param)) or (
                isinstance(parent, cst.Arg) and parent.keyword is node
            ):
                continue  # a binding, or a keyword's name
            if isinstance(parent, cst.Attribute) and parent.attr is node:
                continue  # ``obj.amp_autocast``: another name
            if not (isinstance(parent, cst.Call) and parent.func is node):
                return False
            if any(a.keyword is None or a.keyword.value not in OLD_KEYWORDS[name] for a in parent.args):
                return False
            calls += 1
        return calls > 0

    def _stored_fix(self, stored: _Stored) -> Fix | None:
        torch, imports = self._torch()
        func = cst.parse_expression(f"{torch}.amp.{stored.name}")
        partial = self.facts.names.local_name_for("functools.partial")
        if partial is None:
            partial, imports = "functools.partial", (*imports, "functools")
        if stored.holder is stored.ref:
            new: cst.BaseExpression = cst.Call(
                func=cst.parse_expression(partial), args=[cst.Arg(func), cst.Arg(_device(stored.device))]
            )
        else:
            holder = stored.holder
            assert isinstance(holder, cst.Call)
            # The partial's own arguments, mapped as a call's would be.
            bound = rewrite_call(cst.Call(func=func, args=holder.args[1:]), stored.name, stored.device)
            if bound is None:
                return None
            new = holder.with_changes(args=[holder.args[0].with_changes(value=func), *bound.args])
        return Fix(
            f'Bind the device type: `functools.partial(torch.amp.{stored.name}, "{stored.device}")`',
            ((stored.holder, new),),
            imports=imports,
        )

    def _check_site(self, expr: cst.Attribute, site: cst.BaseExpression) -> None:
        qualified = self.facts.names.qualified_name(expr)
        found = deprecated(qualified)
        if found is None or self._guarded(site):
            return
        head = _head(expr)
        if head is None or head.value in self._tracked:
            return
        new = self._site_fix(site, *found)
        self.report(site, message=self._site_message(qualified, *found), fix=new)

    def _torch(self) -> tuple[str, tuple[str, ...]]:
        local = self.facts.names.local_name_for("torch")
        return (local, ()) if local else ("torch", ("torch",))

    def _site_fix(self, site: cst.CSTNode, name: str, device: str) -> Fix | None:
        torch, imports = self._torch()
        func = cst.parse_expression(f"{torch}.amp.{name}")
        if isinstance(site, cst.Call):
            new = rewrite_call(site, name, device, func)
        else:
            new = _decorator_call(func, device) if name in DECORATORS else None
        if new is None:
            return None
        return Fix(f'Use `torch.amp.{name}` with device type "{device}"', ((site, new),), imports=imports)

    @staticmethod
    def _site_message(qualified: str | None, name: str, device: str) -> str:
        use = f'{name}(device_type="{device}")' if name in DECORATORS else f'{name}("{device}", ...)'
        return f"`{qualified}` is deprecated since torch {SINCE}: use `torch.amp.{use}`"

    # -- imports and their uses, decided once everything is seen ------------
    def leave_Module(self, original_node: cst.Module) -> None:
        seen: set[str] = set()
        for local in _import_locals(self._imports):
            (self._bound_twice if local in seen else seen).add(local)
        for stmt in self._imports:
            if isinstance(stmt, cst.ImportFrom):
                self._finish_import_from(stmt)
            else:
                for alias in stmt.names:
                    self._finish_import_alias(alias)
        self._finish_star_names()
        self._finish_stored()

    def _finish_star_names(self) -> None:
        """Deprecated names that arrive through ``from utils import *`` (a
        project module that imports ``amp`` from ``torch.cuda``): there is
        no import here to rewrite, so each use is reported and fixed alone."""
        project = self.facts.project
        if project is None or not project.star_bindings:
            return
        star = dict(project.star_bindings)
        imported_here = set(_import_locals(self._imports))
        for local, target in self._tracked.items():
            if local in imported_here or star.get(local) != target:
                continue
            if target in MODULES:
                self._report_sites(_Alias(local, target, "module", MODULES[target][1], ""))
            elif deprecated(target):
                name, device = deprecated(target)  # type: ignore[misc]
                self._report_sites(_Alias(local, target, name, device, ""))

    def _finish_import_from(self, stmt: cst.ImportFrom) -> None:
        base = dotted_name(stmt.module)  # type: ignore[arg-type]
        aliases: list[_Alias | None] = []
        for alias in stmt.names:  # type: ignore[union-attr]
            imported = alias.name.value if isinstance(alias.name, cst.Name) else ""
            local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else imported
            qualified = f"{base}.{imported}"
            if qualified in MODULES:
                new_base = MODULES[qualified][0].rpartition(".")[0]
                aliases.append(self._collect(local, qualified, "module", MODULES[qualified][1], new_base))
            elif deprecated(qualified):
                name, device = deprecated(qualified)  # type: ignore[misc]
                aliases.append(self._collect(local, qualified, name, device, MODULES[base][0]))
            else:
                aliases.append(None)  # a name torch.amp may not have
        known = [a for a in aliases if a is not None]
        module = base if base in MODULES else known[0].qualified
        if not any(a.uses for a in known):
            if self._used_beside_fallback(stmt, {a.local for a in known}):
                self._report_import(stmt, module, None)
            return  # nothing here constructs the deprecated objects (a re-export, a type check)
        fixable = (
            len(known) == len(aliases) and len({a.new_base for a in known}) == 1 and all(a.rewritable for a in known)
        )
        if fixable:
            new_stmt = stmt.with_changes(module=cst.parse_expression(known[0].new_base))
            fix = self._report_import(stmt, module, ((stmt, new_stmt),) + tuple(s for a in known for s in a.sites))
            for alias in known:
                self._report_sites(alias, fix)
            return
        # Fix the uses one by one instead (``torch.amp.X("cuda")``), each
        # where it is, as the spelled-out ``torch.cuda.amp.X()`` is.
        for alias in known:
            if alias.name == "module" or self.facts.names.bindings.get(alias.local) == alias.qualified:
                self._report_sites(alias)
        if any(a.name != "module" and a.uses for a in known):
            self._report_import(stmt, module, None)

    def _finish_import_alias(self, node: cst.ImportAlias) -> None:
        qualified = dotted_name(node.name)
        if node.asname is None or qualified not in MODULES or not isinstance(node.asname.name, cst.Name):
            return
        alias = self._collect(node.asname.name.value, qualified, "module", MODULES[qualified][1], "")
        if alias.rewritable and alias.uses:
            new = node.with_changes(name=cst.parse_expression(MODULES[qualified][0]))
            fix = self._report_import(node, qualified, ((node, new),) + tuple(alias.sites))
            self._report_sites(alias, fix)
        else:
            self._report_sites(alias)

    def _used_beside_fallback(self, stmt: cst.ImportFrom, locals_: set[str]) -> bool:
        """``try: from torch.cuda.amp import GradScaler`` / ``except: class
        GradScaler: ...``: the import is the main path (only the handler is
        the compatibility one), and the module reads the name outside that
        ``try``. Which binding a read sees is not known: reported, no fix."""
        line = self.parent(stmt)
        block = self.parent(line) if line is not None else None
        node = self.parent(block) if block is not None else None
        if not (isinstance(node, cst.Try) and node.body is block):
            return False
        fallback = set()
        for handler in node.handlers:
            for inner in handler.body.body:
                if isinstance(inner, (cst.ClassDef, cst.FunctionDef)) and inner.name.value in locals_:
                    fallback.add(inner.name.value)
        if not fallback:
            return False
        uses = _NameUses(fallback)
        for top in self.context.module.body:
            if top is not node:
                visit_fast(top, uses)
        return bool(uses.found)

    def _report_import(self, node: cst.CSTNode, module: str, replacements) -> Fix | None:
        """Reports the import; returns its fix (the import and every use, one
        edit), which each use's finding carries too."""
        fix = None
        if replacements is not None and not self._nested([old for old, _ in replacements[1:]]):
            fix = Fix("Import from `torch.amp` and pass the device type", replacements)
        message = (
            f"the `{module}` API is deprecated since torch {SINCE}: import from `torch.amp` and pass the device type"
        )
        self.report(node, message=message, fix=fix)
        return fix

    def _collect(self, local: str, qualified: str, name: str, device: str, new_base: str) -> _Alias:
        """The uses of an imported name and their rewrites."""
        alias = _Alias(local, qualified, name, device, new_base)
        if self.facts.names.bindings.get(local) != qualified:
            alias.rewritable = False  # rebound somewhere: its uses are not all this import
            return alias
        if local in self._bound_twice:
            alias.rewritable = False  # its uses are counted, and fixed one by one
        source = self.context.source
        if "__all__" in source and (f'"{local}"' in source or f"'{local}'" in source):
            alias.rewritable = False  # re-exported: other modules call it the old way
        for ref in self._refs.get(local, []):
            if self._in_annotation(ref):
                continue  # the torch.amp class is the base class: the annotation still holds
            if name == "module":
                parent = self.parent(ref)
                attr = parent.attr.value if isinstance(parent, cst.Attribute) and parent.value is ref else None
                if attr is None or attr not in MODULES[qualified][2]:
                    alias.rewritable = False
                    continue
                self._add_site(alias, parent, attr)
            else:
                self._add_site(alias, ref, name)
        return alias

    def _add_site(self, alias: _Alias, expr: cst.BaseExpression, name: str) -> None:
        parent = self.parent(expr)
        if isinstance(parent, cst.Call) and parent.func is expr:
            alias.uses += 1
            new = rewrite_call(parent, name, alias.device)
            if new is None:
                alias.rewritable = False
            else:
                alias.sites.append((parent, new))
        elif isinstance(parent, cst.Decorator) and parent.decorator is expr and name in DECORATORS:
            alias.uses += 1
            alias.sites.append((expr, _decorator_call(expr, alias.device)))
        else:
            alias.rewritable = False

    def _report_sites(self, alias: _Alias, whole: Fix | None = None) -> None:
        """A finding at each call (or decorator) of an imported deprecated
        name, as the spelled-out ``torch.cuda.amp.autocast()`` gets: it is
        where the FutureWarning comes from and where the device type goes.
        ``whole``: the import's fix (import and uses in one edit), carried by
        each use; without it each use gets its own ``torch.amp.X("cuda")``."""
        for ref in self._refs.get(alias.local, []):
            expr: cst.BaseExpression = ref
            if alias.name == "module":
                parent = self.parent(ref)
                if not (isinstance(parent, cst.Attribute) and parent.value is ref):
                    continue
                expr = parent
            qualified = self.facts.names.qualified_name(expr)
            found = deprecated(qualified)
            site = self.parent(expr)
            if found is None:
                continue
            if isinstance(site, cst.Call) and site.func is expr:
                node: cst.CSTNode = site
            elif isinstance(site, cst.Decorator) and found[0] in DECORATORS:
                node = expr
            else:
                continue
            if id(node) in self._reported_sites:
                continue
            self._reported_sites.add(id(node))
            fix = whole if whole is not None else self._site_fix(node, *found)
            self.report(node, message=self._site_message(qualified, *found), fix=fix)

    def _in_annotation(self, node: cst.CSTNode) -> bool:
        parent = self.parent(node)
        while parent is not None and not isinstance(parent, (cst.BaseStatement, cst.BaseSmallStatement)):
            if isinstance(parent, cst.Annotation):
                return True
            parent = self.parent(parent)
        return False

    def _nested(self, nodes: list[cst.CSTNode]) -> bool:
        """Whether one replaced node lies inside another (their rewrites would clash)."""
        ids = {id(n) for n in nodes}
        for node in nodes:
            parent = self.parent(node)
            while parent is not None:
                if id(parent) in ids:
                    return True
                parent = self.parent(parent)
        return False

    valid = [
        Valid(
            """\
import torch
from packaging import version
_NEW_AMP_API = version.parse(torch.__version__) >= version.parse("2.4")
def get_autocast():
    if hasattr(torch.amp, "autocast"):
        return torch.amp.autocast("cuda")
    return torch.cuda.amp.autocast()
def get_scaler():
    if _NEW_AMP_API:
        return torch.amp.GradScaler("cuda")
    else:
        return torch.cuda.amp.GradScaler()
""",
            "an early return on the torch version; a flag computed from it",
        ),
        Valid(
            """\
import torch
scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
    loss = model(x)
with torch.amp.autocast("cpu"):
    loss = model(x)
""",
            "the torch.amp API",
        ),
        Valid(
            """\
from apex import amp
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
with amp.scale_loss(loss, optimizer) as scaled_loss:
    scaled_loss.backward()
""",
            "apex.amp is another library",
        ),
        Valid(
            """\
try:
    from torch.amp import GradScaler
except ImportError:  # torch < 2.3
    from torch.cuda.amp import GradScaler
scaler = GradScaler()
""",
            "compatibility import for old torch",
        ),
        Valid(
            """\
import torch
if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
    scaler = torch.amp.GradScaler("cuda")
else:
    scaler = torch.cuda.amp.GradScaler()
if version.parse(torch.__version__) < version.parse("2.4"):
    ctx = torch.cuda.amp.autocast()
""",
            "compatibility branches on the torch version",
        ),
        Valid(
            """\
import torch
from lightning_fabric.utilities.imports import _TORCH_GREATER_EQUAL_2_4
scaler = torch.amp.GradScaler(device="cuda") if _TORCH_GREATER_EQUAL_2_4 else torch.cuda.amp.GradScaler()
if not _TORCH_GREATER_EQUAL_2_4:
    autocast = torch.cuda.amp.autocast
""",
            "a conditional expression or flag that picks by torch version",
        ),
        Valid(
            """\
import torch
from timm.utils import NativeScaler
loss_scaler = NativeScaler()
assert isinstance(scaler, torch.cuda.amp.GradScaler)
# torch.cuda.amp.autocast() is deprecated
""",
            "timm's scaler; a class named but not constructed; a comment",
        ),
        Valid(
            """\
from torch.cuda.amp import GradScaler
def is_scaler(obj):
    return isinstance(obj, GradScaler)
""",
            "an import used only to check a type",
        ),
        Valid(
            """\
from torch.cuda.amp import autocast, GradScaler
__all__ = ["autocast", "GradScaler"]
""",
            "a re-export: the modules that call it are where the finding belongs",
        ),
        Valid(
            """\
from torch.cuda.amp import autocast
def run(model, x, autocast=autocast):
    with autocast():
        return model(x)
""",
            "the imported name is shadowed by a parameter",
        ),
        Valid(
            """\
import torch
from contextlib import suppress
autocast_cls = torch.amp.autocast
if version.parse(torch.__version__) < version.parse("2.4"):
    amp_autocast = torch.cuda.amp.autocast
scaler_type = type(scaler) is torch.cuda.amp.GradScaler
""",
            "a stored reference to torch.amp, or on a compatibility path; a class compared, not stored",
        ),
    ]
    invalid = [
        Invalid(
            """\
import torch
try:
    from torch.cuda.amp import GradScaler
except ImportError:
    class GradScaler:
        def scale(self, loss):
            return loss
scaler = GradScaler()
"""
        ),
        Invalid(
            """\
import torch
from torch.cuda import amp

def train(model, loader, optimizer, device):
    cuda = device.type != "cpu"
    scaler = amp.GradScaler(enabled=cuda)
    for imgs, targets in loader:
        with amp.autocast(enabled=cuda):
            loss = model(imgs.to(device), targets)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
            """\
import torch
from torch import amp

def train(model, loader, optimizer, device):
    cuda = device.type != "cpu"
    scaler = amp.GradScaler("cuda", enabled=cuda)
    for imgs, targets in loader:
        with amp.autocast("cuda", enabled=cuda):
            loss = model(imgs.to(device), targets)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
            count=3,
        ),
        Invalid(
            """\
import torch
from torch.cuda.amp import autocast, GradScaler

scaler = GradScaler()
for x, y in loader:
    optimizer.zero_grad()
    with autocast():
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
            """\
import torch
from torch.amp import autocast, GradScaler

scaler = GradScaler("cuda")
for x, y in loader:
    optimizer.zero_grad()
    with autocast("cuda"):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
            count=3,
        ),
        Invalid(
            """\
import torch as T
scaler = T.cuda.amp.GradScaler(2.0**16, 2.0, 0.5, 2000, use_amp)
with T.cuda.amp.autocast(use_amp, T.bfloat16):
    out = model(x)
with T.cpu.amp.autocast(cache_enabled=False):
    out = model(x)
""",
            """\
import torch as T
scaler = T.amp.GradScaler("cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=use_amp)
with T.amp.autocast("cuda", enabled=use_amp, dtype=T.bfloat16):
    out = model(x)
with T.amp.autocast("cpu", cache_enabled=False):
    out = model(x)
""",
            count=3,
        ),
        Invalid(
            """\
from torch.cuda import amp

scaler = amp.GradScaler(
    init_scale=1024,
    growth_interval=100,  # grow fast
)

@amp.autocast()
def forward(model, x):
    return model(x)
""",
            """\
from torch import amp

scaler = amp.GradScaler(
    "cuda",
    init_scale=1024,
    growth_interval=100,  # grow fast
)

@amp.autocast("cuda")
def forward(model, x):
    return model(x)
""",
            count=3,
        ),
        Invalid(
            """\
import torch
import torch.cuda.amp as amp

class ScaledMatmul(torch.autograd.Function):
    @staticmethod
    @amp.custom_fwd(cast_inputs=torch.float16)
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    @amp.custom_bwd
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad @ b.t(), a.t() @ grad
""",
            """\
import torch
import torch.amp as amp

class ScaledMatmul(torch.autograd.Function):
    @staticmethod
    @amp.custom_fwd(cast_inputs=torch.float16, device_type="cuda")
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    @amp.custom_bwd(device_type="cuda")
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad @ b.t(), a.t() @ grad
""",
            count=3,
        ),
        Invalid(
            """\
import torch

@torch.cuda.amp.autocast()
def predict(model, x):
    return model(x)

class Clamp(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd
    def forward(ctx, x):
        return x.clamp(0, 1)
""",
            """\
import torch

@torch.amp.autocast("cuda")
def predict(model, x):
    return model(x)

class Clamp(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda")
    def forward(ctx, x):
        return x.clamp(0, 1)
""",
            count=2,
        ),
        Invalid(
            """\
from torch import cuda
from torch import nn

def step(model: nn.Module, x):
    with cuda.amp.autocast(dtype=bf16):
        return model(x)
""",
            """\
from torch import cuda
from torch import nn
import torch

def step(model: nn.Module, x):
    with torch.amp.autocast("cuda", dtype=bf16):
        return model(x)
""",
        ),
        Invalid(
            """\
from torch.cuda.amp import autocast as amp_autocast, GradScaler as Scaler

def train(model, loader, scaler: Scaler):
    for x in loader:
        with amp_autocast(enabled=True):
            loss = model(x)
        scaler.scale(loss).backward()

train(model, loader, Scaler(enabled=use_amp))
""",
            """\
from torch.amp import autocast as amp_autocast, GradScaler as Scaler

def train(model, loader, scaler: Scaler):
    for x in loader:
        with amp_autocast("cuda", enabled=True):
            loss = model(x)
        scaler.scale(loss).backward()

train(model, loader, Scaler("cuda", enabled=use_amp))
""",
            count=3,
        ),
        Invalid(
            """\
import contextlib
from torch.cuda.amp import autocast
ctx = autocast if use_amp else contextlib.nullcontext
with autocast(enabled=use_amp):
    loss = model(x)
""",
            """\
import contextlib
from torch.cuda.amp import autocast
import torch
ctx = autocast if use_amp else contextlib.nullcontext
with torch.amp.autocast("cuda", enabled=use_amp):
    loss = model(x)
""",
            count=2,
        ),
        Invalid(
            """\
def evaluate(model, x):
    from torch.cuda.amp import autocast
    with autocast():
        return model(x)


def predict(model, x):
    from torch.cuda.amp import autocast
    with autocast():
        return model(x)
""",
            """\
import torch
def evaluate(model, x):
    from torch.cuda.amp import autocast
    with torch.amp.autocast("cuda"):
        return model(x)


def predict(model, x):
    from torch.cuda.amp import autocast
    with torch.amp.autocast("cuda"):
        return model(x)
""",
            count=4,
        ),
        Invalid(
            """\
import functools
import torch
from contextlib import suppress

def main(model, loader, use_amp):
    amp_autocast = torch.cuda.amp.autocast if use_amp else suppress
    bf16 = functools.partial(torch.cuda.amp.autocast, dtype=torch.bfloat16)
    for x in loader:
        with amp_autocast(enabled=use_amp):
            loss = model(x)
        with bf16():
            out = model(x)
""",
            """\
import functools
import torch
from contextlib import suppress

def main(model, loader, use_amp):
    amp_autocast = functools.partial(torch.amp.autocast, "cuda") if use_amp else suppress
    bf16 = functools.partial(torch.amp.autocast, "cuda", dtype=torch.bfloat16)
    for x in loader:
        with amp_autocast(enabled=use_amp):
            loss = model(x)
        with bf16():
            out = model(x)
""",
            count=2,
        ),
        Invalid(
            """\
import torch
from contextlib import suppress

def train_one_epoch(model, loader, amp_autocast=suppress):
    for x in loader:
        with amp_autocast():
            loss = model(x)

amp_autocast = suppress
if args.amp:
    amp_autocast = torch.cuda.amp.autocast
train_one_epoch(model, loader, amp_autocast=amp_autocast)
""",
            None,
        ),
    ]
