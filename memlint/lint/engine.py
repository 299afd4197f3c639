"""Lint one text: the screening (screen.py), one parse, one batched
traversal, suppressions.

This is the single entry point shared by the CLI, the flake8 plugin, notebooks
and the verifier, so every interface reports the same findings. It imports
libcst: a caller that may have nothing to lint screens first, with the rules'
cards (screen.py), and imports this module only when some rule may run.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Union

import libcst as cst
from libcst.metadata import MetadataWrapper

from memlint.analysis.facts import ModuleFacts
from memlint.lint import screen
from memlint.lint.noqa import is_suppressed, noqa_map

# The screening's functions, for the callers that always lint (tests, benches).
from memlint.lint.screen import applicable_rules as applicable_rules
from memlint.lint.screen import rules_to_run as rules_to_run
from memlint.parse.budget import file_budget
from memlint.parse.collector import collector_paused
from memlint.parse.errors import LibcstLimitation as LibcstLimitation
from memlint.parse.errors import ParseError as ParseError
from memlint.parse.guard import TooDeep, check_nesting, python_tree
from memlint.parse.traversal import run_batched
from memlint.parse.unvalidated import parse_unvalidated
from memlint.rule import Finding, Rule, RuleContext

if TYPE_CHECKING:
    from memlint.find.torch_floor import TorchRange
    from memlint.project.view import ProjectView

# What a lint is told of the file's project: the view itself, or a callable
# that gives it (None when unknown) only if a rule may read it.
ProjectSource = Union["ProjectView", Callable[[], "ProjectView | None"], None]


def parse_module(text: str, python_tree: ast.Module | None = None) -> cst.Module:
    try:
        python_error = check_nesting(text, python_tree)  # texts that would crash or hang libcst's parser
    except TooDeep as exc:
        raise ParseError(str(exc)) from None
    try:
        # Validation finds nothing in text Python has parsed (parse/unvalidated.py).
        return cst.parse_module(text) if python_error is not None else parse_unvalidated(text)
    except cst.ParserSyntaxError as exc:
        if python_error is not None:  # Python places and words it better
            where = f"{python_error.lineno}:{max((python_error.offset or 1) - 1, 0)}"
            raise ParseError(f"syntax error at {where}: {python_error.msg}") from None
        if _python_parses(text):
            raise LibcstLimitation(
                f"cannot parse code that Python accepts (a libcst limitation): {exc.message}"
            ) from None
        raise ParseError(f"syntax error at {exc.raw_line}:{exc.raw_column}: {exc.message}") from None
    except (RecursionError, MemoryError) as exc:
        raise ParseError(f"cannot parse: {type(exc).__name__}") from None
    except Exception as exc:  # libcst raises a few other types on odd input
        raise ParseError(f"cannot parse: {exc}") from None


def _python_parses(text: str) -> bool:
    """check_nesting returns None both when Python parsed the text and when it
    could not tell; this tells them apart (only on the rare failure path)."""
    return python_tree(text) is not None


def with_project(
    text: str,
    rules: Sequence[type[Rule]],
    active: list[type[Rule]],
    project: ProjectSource,
    tree: ast.Module | None = None,
) -> tuple[ProjectView | None, list[type[Rule]]]:
    """The file's project view when a rule may read it, and the rules to run
    with it. Asked for (``project`` called) only when an active rule reads
    the project or the file star-imports: most files never need it. With
    names arriving through a star import, the gate (which read the file's own
    imports) no longer proves anything: every pre-filtered rule runs."""
    star = "import *" in text
    if project is None or not (star or any(rule.reads_project for rule in active)):
        return None, _without_project(active, None, tree)
    view = project() if callable(project) else project
    if view is None:
        return None, _without_project(active, None, tree)
    if star and view.star_bindings and screen.GATE:
        return view, applicable_rules(text, rules)  # the gate read the file's own imports only
    return view, _without_project(active, view, tree)


def _without_project(active: list[type[Rule]], view: ProjectView | None, tree: ast.Module | None) -> list[type[Rule]]:
    """``active`` less the rules whose gate let the file through only for
    what its project might hold, when the view (None: no project) holds
    none of it: MEM203's loop calls functions of other modules, but none of
    them switches a mode or trains; MEM202's helper, but no caller hands it
    a model in training mode; MEM703's method, but no module runs its class
    once per batch. The screening's facts are read again (gate/facts.py's
    facts_of), not walked again."""
    if tree is None or not screen.GATE:
        return active
    from memlint.gate.cards import CARDS

    # A card with project paths may hold its view's project part for a path its file cannot take.
    waiting = [
        r
        for r in active
        if r.project_matters is not None
        and (view is None or not r.project_matters(view) or (r.code in CARDS and CARDS[r.code].project_parts))
    ]
    if not waiting:
        return active
    from memlint.gate.facts import facts_of
    from memlint.gate.project_gate import held_parts, parts_matter

    facts = facts_of(tree)  # the screening's, not walked again

    def dropped(rule: type[Rule]) -> bool:
        if rule.local_gate is None or rule.local_gate(facts):
            return False
        card = CARDS.get(rule.code)
        return card is None or not parts_matter(card, held_parts(card, facts), view)

    return [r for r in active if not (r in waiting and dropped(r))]


def lint_module(
    module: cst.Module,
    text: str,
    path: str,
    rules: Sequence[type[Rule]],
    *,
    noqa: bool = True,
    torch: TorchRange | None = None,
    project: ProjectView | None = None,
    python_tree: ast.Module | None = None,
) -> list[Finding]:
    """``torch``: the torch releases the file's project accepts, for the
    migration rules (None: unknown). ``python_tree``: the text's ``ast``
    tree, when the caller has one (the analyses read it, not parse again)."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    context = RuleContext(
        path=path,
        source=text,
        module=module,
        facts_factory=lambda: ModuleFacts(wrapper, project, python_tree),
        torch=torch,
    )
    visitors = [rule(context) for rule in rules]
    try:
        with file_budget(path):  # raises budget.BudgetExceeded: the file is not checked
            run_batched(wrapper, visitors, text)
    finally:
        context.release()
    # flake8 applies its own noqa and may be told not to (--disable-noqa).
    # Tokenizing for noqa comments is only worth it when there is a finding.
    mapping = noqa_map(text) if noqa and context.findings else {}
    findings = [f for f in context.findings if not is_suppressed(f.code, f.line, mapping)]
    findings.sort(key=lambda f: (f.line, f.column, f.code))
    return findings


def lint(
    text: str,
    path: str,
    rules: Sequence[type[Rule]],
    *,
    noqa: bool = True,
    python_tree: ast.Module | None = None,
    torch: TorchRange | None = None,
    project: ProjectSource = None,
    active: Sequence[type[Rule]] | None = None,
) -> tuple[list[Finding], cst.Module | None]:
    """Findings for ``text`` and the module they refer to (None when it was not
    parsed). Raises ParseError when a rule applies but the text does not parse;
    a text no enabled rule can match (pre-filter, gate) is never parsed by libcst. ``python_tree``: the
    ``ast`` tree of ``text``, when the caller already has one. ``project``:
    what the rest of the file's project says (project/view.py), or None.
    ``active``: the rules of ``rules`` that the caller's screening of this
    text let through (screen.screen), so the text is not screened again."""
    with collector_paused():
        if active is None:
            chosen, python_tree = screen.screen(text, rules, python_tree)
        else:
            chosen = list(active)
        if not chosen:
            return [], None
        view, chosen = with_project(text, rules, chosen, project, python_tree)
        if not chosen:
            return [], None
        module = parse_module(text, python_tree)
        findings = lint_module(
            module, text, path, chosen, noqa=noqa, torch=torch, project=view, python_tree=python_tree
        )
        return findings, module


def lint_text(text: str, path: str, rules: Sequence[type[Rule]], project: ProjectSource = None) -> list[Finding]:
    return lint(text, path, rules, project=project)[0]
