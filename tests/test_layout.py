"""The package's shape: every module sits in a folder named for its pipeline
stage, no import circle (lazy imports inside functions count: they are circles
waiting for a caller), and no module imports another module's private name."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "memlint"
# find -> read -> project -> gate -> parse -> analysis -> rule -> lint -> fix -> run -> reporters; the front-ends on top.
STAGES = {
    "vocabulary",  # not a stage: the plain word lists gate/ and analysis/ share (a leaf)
    "find",
    "read",
    "project",
    "gate",
    "parse",
    "analysis",
    "rule",
    "lint",
    "fix",
    "run",
    "reporters",
    "frontends",
    "server",
    "verify",
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}


def _imports(path: Path, modules: dict[str, Path]) -> list[tuple[str, list[str]]]:
    """(module imported, names taken from it) for every import in the file."""
    found = []
    this = _module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            names = [a.name for a in node.names]
            found.append((base, [n for n in names if f"{base}.{n}" not in modules]))
            found += [(f"{base}.{n}", []) for n in names if f"{base}.{n}" in modules]
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for target, _ in _imports(path, modules):
            # importing a.b.c runs a/__init__ and a/b/__init__ first
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                prefix = ".".join(parts[:i])
                # the module's own packages are loaded before it: no edge back to them
                if prefix in modules and prefix != name and not name.startswith(prefix + "."):
                    graph[name].add(prefix)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_every_module_sits_in_a_stage_folder():
    flat = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in {"__init__.py", "__main__.py"})
    assert flat == []
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert folders == STAGES


def test_no_import_circle():
    assert _circles(_graph()) == []


def test_the_circle_finder_sees_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_private_name_imported_across_modules():
    modules = _modules()
    private = sorted(
        f"{_module_name(path)} takes {target}.{n}"
        for path in modules.values()
        for target, names in _imports(path, modules)
        if target.startswith("memlint")
        for n in names
        if n.startswith("_") and not n.startswith("__")
    )
    assert private == []


def test_rule_authors_import_the_contract_from_memlint_rule():
    from memlint.rule import Fix, Invalid, Rule, Safety, Valid  # noqa: F401


def _imports_of(folder: str) -> dict[str, set[str]]:
    """module -> every module it imports (memlint's and third parties'), lazy imports included."""
    modules = _modules()
    return {
        name: {target for target, _ in _imports(path, modules)}
        for name, path in modules.items()
        if name == f"memlint.{folder}" or name.startswith(f"memlint.{folder}.")
    }


def _offending(imports: dict[str, set[str]], allowed) -> list[str]:
    return sorted(f"{m} imports {t}" for m, targets in imports.items() for t in targets if not allowed(t))


def _memlint_module_allowed(prefixes: tuple[str, ...]):
    def allowed(target: str) -> bool:
        if target.split(".")[0] == "libcst":
            return False
        if not target.startswith("memlint"):
            return True
        return any(target == p or target.startswith(p + ".") for p in prefixes)

    return allowed


def test_the_vocabulary_is_a_leaf():
    """The words both stages share import nothing of memlint and nothing of libcst."""
    assert _offending(_imports_of("vocabulary"), _memlint_module_allowed(("memlint.vocabulary",))) == []


def test_the_gate_reads_only_pythons_tree():
    """gate/ runs before libcst parses: it never imports libcst, the analysis or a later stage."""
    assert _offending(_imports_of("gate"), _memlint_module_allowed(("memlint.gate", "memlint.vocabulary"))) == []


def test_the_analysis_never_imports_a_later_stage():
    later = (
        "memlint.lint",
        "memlint.fix",
        "memlint.run",
        "memlint.reporters",
        "memlint.frontends",
        "memlint.server",
        "memlint.verify",
        "memlint.rules",
        "memlint.rule",
    )

    def allowed(target: str) -> bool:
        return not any(target == p or target.startswith(p + ".") for p in later)

    assert _offending(_imports_of("analysis"), allowed) == []


def test_rules_import_the_contract_the_facts_and_the_fix_helpers_only():
    modules = _modules()
    allowed = ("memlint.rule", "memlint.analysis", "memlint.vocabulary", "memlint.fix", "memlint.parse.traversal")
    found = sorted(
        f"{path.name} imports {target}"
        for path in (ROOT / "rules").glob("*.py")
        for target, _ in _imports(path, modules)
        if target.startswith("memlint") and not any(target == p or target.startswith(p + ".") for p in allowed)
    )
    assert found == []


def test_the_direction_tests_see_a_wrong_import():
    imports = {"memlint.gate.x": {"libcst", "memlint.analysis.scope.names", "memlint.gate.y", "ast"}}
    assert _offending(imports, _memlint_module_allowed(("memlint.gate",))) == [
        "memlint.gate.x imports libcst",
        "memlint.gate.x imports memlint.analysis.scope.names",
    ]


# The screening (read -> pre-filter -> gate -> which rules may run) and the
# ways into it: none of them may import libcst, a rule, the engine or the
# fixer when loaded, so a file no rule can match is checked without them
# (lint/screen.py). They import those lazily, for a file that reaches a rule.
SCREENING = (
    "memlint.__main__",
    "memlint.gate.cards",
    "memlint.lint.screen",
    "memlint.parse.errors",
    "memlint.run.selection",
    "memlint.run.runner",
    "memlint.frontends.cli",
    "memlint.frontends.flake8_plugin",
    "memlint.project.index",
    "memlint.project.store",
)
NOT_WHILE_SCREENING = (
    "libcst",
    "memlint.rules",
    "memlint.rule",
    "memlint.lint.engine",
    "memlint.fix",
    "memlint.analysis",
)


def _loaded_imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """What loading the module imports: its module-level imports, not those
    inside functions or under ``if TYPE_CHECKING:``."""
    this = _module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    found: set[str] = set()

    def walk(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                found.add(base)
                found.update(f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules)
            elif isinstance(node, ast.If):
                if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                    walk(node.body)
                walk(node.orelse)
            elif isinstance(node, ast.Try):
                walk(node.body + [s for h in node.handlers for s in h.body] + node.orelse + node.finalbody)

    walk(ast.parse(path.read_text(encoding="utf-8")).body)
    return found


def _loaded_with(module: str, modules: dict[str, Path]) -> set[str]:
    """Every module loading ``module`` loads (its packages' ``__init__`` included)."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix in seen:
                continue
            seen.add(prefix)
            if prefix in modules:
                todo.extend(_loaded_imports(modules[prefix], modules))
    return seen


def test_the_screening_loads_neither_libcst_nor_a_rule():
    modules = _modules()
    offending = sorted(
        f"{m} loads {t}"
        for m in SCREENING
        for t in _loaded_with(m, modules)
        if any(t == p or t.startswith(p + ".") for p in NOT_WHILE_SCREENING)
    )
    assert offending == []


def test_the_screening_test_sees_a_module_that_loads_libcst():
    modules = _modules()
    assert "libcst" in _loaded_with("memlint.lint.engine", modules)
    assert "libcst" in _loaded_with("memlint.rule.registry", modules)  # through memlint/rule/__init__.py
