"""The twin of a script's project: what ``memlint check --fix`` on the
project would change in the modules the script runs.

A leak's fix often lies in another module than the script (``train.py``
calls ``engine.evaluate()``, whose missing ``no_grad`` is reported in
``engine.py``), and whether a finding is reported at all may depend on
another module (a caller that wraps the call in ``no_grad``). So the twin is
made as ``check`` makes its findings: the script's project read by the
runner's two passes (memlint/run/runner.py, memlint/project/), each file with
its own configuration, and the fixes of ``check --diff`` (the same code path
as ``--fix``, which writes nothing). Only the modules the script imports,
transitively and inside the project, are fixed: the others never run.

The original files are never touched: the fixed modules reach the twin's run
through an import overlay (overlay.py).
"""

from __future__ import annotations

import ast
import collections
import os
from dataclasses import replace

from memlint.verify.twin import FixedFinding, LeftFinding, Twin, why_left


def import_closure(script: str, text: str, root: str) -> list[str]:
    """The script and every project module it imports, transitively (absolute
    paths, the script first). An import memlint cannot resolve inside the
    project (an installed package, a name built at run time) adds nothing."""
    from memlint.project.modules import ModuleMap, project_files
    from memlint.project.roots import root_limit

    script = os.path.abspath(script)
    files = project_files(root, root_limit(root)) or []
    modules = ModuleMap(root, [*files, script])
    order = [script]
    seen = {script}
    for path in order:  # grows as modules are found: each file is read once
        body = text if path == script else _read(path)
        for found in _imported_files(body, path, modules):
            if found not in seen:
                seen.add(found)
                order.append(found)
    return order


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8-sig") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return ""


def _imported_files(text: str, importer: str, modules) -> list[str]:
    """The project files an import statement of ``text`` (at any depth: a
    ``main()`` importing lazily runs it too) names, with the packages above them."""
    from memlint.project.summary import summarise

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    # The summary of the tree just parsed (summarise_text would parse the text again).
    summary = summarise(tree)
    here = os.path.dirname(importer)
    extra = tuple(os.path.normpath(os.path.join(here, p)) for p in (summary.sys_paths if summary else ()))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            if node.module:
                names.append(base)
            sep = "" if base.endswith(".") else "."
            # ``from pkg import engine`` imports the module pkg/engine.py.
            names.extend(base + sep + alias.name for alias in node.names if alias.name != "*")
    out: list[str] = []
    for name in names:
        found = modules.resolve(name, importer, extra)
        if found is None:
            continue
        out.extend(_packages_above(found[0], modules))
        out.append(found[0])
    return out


def _packages_above(path: str, modules) -> list[str]:
    """The ``__init__.py`` files Python runs before the module at ``path``."""
    out: list[str] = []
    folder = os.path.dirname(path)
    while folder.startswith(modules.root) and os.path.join(folder, "__init__.py") in modules.files:
        init = os.path.join(folder, "__init__.py")
        if init != path:
            out.append(init)
        folder = os.path.dirname(folder)
    return out[::-1]


def _gone(original, fixed, remaining) -> set[int]:
    """The findings of ``original`` the twin no longer has (ids): those a fix
    applied (matched by code and line: the fixer reports them at the lines
    of the text it was given), then, per code, as many of the others as the
    twin reports fewer (a fix made them moot: MEM101's accumulation in a loop
    another fix put under ``torch.no_grad()``)."""
    applied = collections.Counter((f.code, f.line) for f in fixed)
    left = collections.Counter(f.code for f in remaining)
    gone: set[int] = set()
    unmatched: dict[str, list] = {}
    for f in sorted(original, key=lambda f: (f.line, f.column, f.code)):
        if applied[(f.code, f.line)]:
            applied[(f.code, f.line)] -= 1
            gone.add(id(f))
        else:
            unmatched.setdefault(f.code, []).append(f)
    for code, rest in unmatched.items():
        gone.update(id(f) for f in rest[: max(0, len(rest) - left[code])])
    return gone


def project_twin(script: str, text: str, select: list[str] | None, unsafe: bool) -> Twin:
    """Fix the script's project as ``memlint check --fix`` would (``--select``
    on the command line's layer, ``--unsafe-fixes`` when given, else the
    configuration's), in the script and the modules it imports. Raises
    memlint.lint.engine.ParseError when the script does not parse. The
    findings fixed and left are exactly those ``memlint check`` reports on
    those files."""
    from memlint.find.discovery import discover
    from memlint.find.resolver import ConfigResolver
    from memlint.lint.engine import ParseError
    from memlint.project.roots import project_root
    from memlint.rule.registry import rules_by_code
    from memlint.run.runner import run

    script = os.path.abspath(script)
    root = project_root(script)
    closure = import_closure(script, text, root)
    resolver = ConfigResolver()
    # As on the tree: a file its configuration excludes is not checked.
    files = list(discover(closure, resolver, force_exclude=True))
    checks = [check_settings(resolver.config_for(f), select, unsafe) for f in files]
    settings = dict(zip(files, checks))
    reports = dict(zip(files, run(files, checks)))
    own = reports.get(script)
    if own is not None and own.error and not _parses(text):
        raise ParseError(own.error)
    with_findings = [f for f in files if reports[f].findings]
    diffs = [replace(settings[f], mode="diff") for f in with_findings]
    fixed = dict(zip(with_findings, run(with_findings, diffs)))

    names = {code: rule.name for code, rule in rules_by_code().items()}
    twin = Twin(text=text, findings=[], remaining=[], root=root)
    for path in with_findings:
        shown = os.path.relpath(path, root).replace(os.sep, "/")
        made = fixed[path]
        left_unsafe = settings[path].unsafe_fixes
        gone = _gone(reports[path].findings, made.fixed, made.findings)
        remaining = {f.code: f for f in made.findings}
        for finding in sorted(reports[path].findings, key=lambda f: (f.line, f.column, f.code)):
            name = names.get(finding.code, "")
            if id(finding) in gone:
                twin.findings.append(
                    FixedFinding(
                        finding.code, name, finding.line, finding.fix_safety.value, finding.message, path=shown
                    )
                )
                continue
            why = why_left(remaining.get(finding.code, finding), left_unsafe)
            if made.error:
                why = f"was not fixed: {made.error}"
            twin.left.append(LeftFinding(finding.code, name, shown, finding.line, why))
            twin.remaining.append(finding.code)
            twin.why_unfixed.setdefault(finding.code, why)
        if made.fixed_text is None or made.error:
            continue
        if path == script:
            twin.text = made.fixed_text
        else:
            twin.modules[path] = made.fixed_text
    return twin


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return False
    return True


def check_settings(config, select: list[str] | None, unsafe: bool):
    """The file's settings as ``memlint check [--select ...] [--unsafe-fixes]``
    gives them under ``config`` (frontends/cli.py's _settings, which imports
    this stage: a test holds the two equal)."""
    from memlint.run.results import Settings

    return Settings(
        select=tuple(config.select) if config.select is not None else None,
        extend_select=tuple(config.extend_select),
        ignore=tuple(config.ignore),
        override=(tuple(select) if select else None, (), ()),
        per_file_ignores=tuple((k, tuple(v)) for k, v in config.per_file_ignores.items()),
        root=str(config.root),
        mode="check",
        unsafe_fixes=True if unsafe else bool(config.unsafe_fixes),
        torch_version=config.torch_version,
        torch_version_where=f"{_shown(str(config.path))} [tool.memlint] torch-version" if config.path else "",
    )


def _shown(path: str) -> str:
    """As ``check`` names a file: relative to the working folder when inside it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith("..") else relative
