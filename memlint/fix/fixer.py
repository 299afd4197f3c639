"""Applying fixes: node replacements -> text edits -> fixed point.

Each fix is rendered on its own into one text edit (the span where the
regenerated module differs from the original), so fixes compose like ruff's
edits: non-overlapping edits are applied together, the result must parse, then
the text is linted again, up to ``MAX_ROUNDS`` times.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import libcst as cst

from memlint.analysis.scope.names import ImportTable
from memlint.fix.minimal_edits import back_line, line_shifts, minimal_edits
from memlint.fix.parser_config import parser_config
from memlint.lint.engine import ParseError, ProjectSource, lint_module, parse_module, rules_to_run, with_project
from memlint.lint.noqa import file_is_exempt
from memlint.read.compiles import compiles
from memlint.read.text_view import TextView, same_column
from memlint.rule import Edit, Finding, Fix, Rule, Safety

if TYPE_CHECKING:
    from memlint.find.torch_floor import TorchRange

MAX_ROUNDS = 10


@dataclass
class FixResult:
    text: str
    applied: list[Finding] = field(default_factory=list)
    remaining: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # how the text was read (a view), said once
    found: int = 0  # findings of the text as given

    @property
    def moot(self) -> int:
        """Findings gone without their own fix: another fix ended them
        (MEM101's accumulation once ``@torch.no_grad()`` covers its loop)."""
        return max(0, self.found - len(self.applied) - len(self.remaining))

    @property
    def changed(self) -> bool:
        return bool(self.applied)


class _Replacer(cst.CSTTransformer):
    """Applies a fix's replacements. A removed statement hands the comment
    lines above it to the next statement that stays (or to the end of its
    block), so removing code never removes the user's comments with it."""

    def __init__(self, fix: Fix) -> None:
        super().__init__()
        self._map = {id(old): new for old, new in fix.replacements}
        self._removed = {key for key, new in self._map.items() if isinstance(new, cst.RemovalSentinel)}
        self._moved_lines: set[int] = set()
        if self._removed:
            # A statement removed here but reused in a replacement was moved:
            # its comments travel with it.
            reused = {id(n) for _, new in fix.replacements if isinstance(new, cst.CSTNode) for n in _subtree(new)}
            self._removed -= reused
            self._moved_lines = reused
        self._prefix: dict[int, list[cst.EmptyLine]] = {}
        self._footer: dict[int, list[cst.EmptyLine]] = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        body = getattr(node, "body", None)
        if self._removed and isinstance(node, (cst.Module, cst.IndentedBlock)) and isinstance(body, (list, tuple)):
            pending: list[cst.EmptyLine] = []
            for stmt in body:
                if id(stmt) in self._removed:
                    pending.extend(
                        line
                        for line in getattr(stmt, "leading_lines", ())
                        if line.comment is not None and id(line) not in self._moved_lines
                    )
                elif pending:
                    self._prefix[id(stmt)] = pending
                    pending = []
            if pending:
                self._footer[id(node)] = pending
        return True

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        key = id(original_node)
        new = self._map.get(key)
        node = updated_node if new is None else new
        if key in self._prefix and hasattr(node, "leading_lines"):
            node = node.with_changes(leading_lines=[*self._prefix[key], *node.leading_lines])
        if key in self._footer and hasattr(node, "footer"):
            node = node.with_changes(footer=[*self._footer[key], *node.footer])
        return node


def _subtree(node: cst.CSTNode):
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children)


def render_fix(module: cst.Module, fix: Fix) -> str:
    return module.visit(_Replacer(fix)).code


def text_edit(old: str, new: str) -> Edit:
    """The single span where ``new`` differs from ``old``."""
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    return Edit(start, end_old, new[start:end_new])


def fix_allowed(finding: Finding, unsafe: bool) -> bool:
    if finding.fix is None:
        return False
    return finding.fix.safety is Safety.SAFE or (unsafe and finding.fix.safety is Safety.UNSAFE)


def _overlaps(a: Edit, b: Edit) -> bool:
    if a.start == a.end == b.start == b.end:
        return True
    return a.start < b.end and b.start < a.end or (a.start == b.start)


def add_imports(text: str, modules: Sequence[str]) -> str:
    """Add ``import X`` for each module the text does not bind under its own name."""
    if not modules:
        return text
    module = parse_module(text)
    table = ImportTable(module)
    missing = [m for m in dict.fromkeys(modules) if table.bindings.get(m.split(".")[0]) != m.split(".")[0]]
    if not missing:
        return text
    body = list(module.body)
    index = 0
    for i, stmt in enumerate(body):
        if _is_docstring(stmt) and i == 0:
            index = 1
        elif isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
        ):
            index = i + 1
        else:
            break
    config = parser_config(module)
    new = [cst.parse_statement(f"import {m}{module.default_newline}", config=config) for m in missing]
    if index < len(body) and index > 0 and not _is_import(body[index - 1]):
        # after a docstring, keep a blank line between it and the import
        new[0] = new[0].with_changes(leading_lines=[cst.EmptyLine()])
    return module.with_changes(body=body[:index] + new + body[index:]).code


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_import(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and any(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
    )


def fix_text(
    text: str,
    path: str,
    rules: Sequence[type[Rule]],
    *,
    unsafe: bool = False,
    view_of: Callable[[str], TextView | None] | None = None,
    torch: TorchRange | None = None,
    project: ProjectSource = None,
) -> FixResult:
    """Apply every allowed fix until none is left (or MAX_ROUNDS).

    Raises ParseError when the input itself does not parse. A fix whose result
    would not parse is dropped, and its finding stays in ``remaining``.

    ``view_of``: the text to analyse in place of the file's own, made afresh
    from the file's text each round (memlint.read.text_view); each round's
    fixed text goes back through its ``restore``, and a fix it refuses stays
    unapplied: its finding is reported without a fix and a note says why.
    Findings are at the file's own positions.
    """
    result = FixResult(text=text)
    shifts: list[list[tuple[int, int]]] = []  # each round's moves of lines, to report applied fixes where they were
    if file_is_exempt(text):
        return result
    rejected: set[tuple[str, int, int]] = set()
    unmapped: set[tuple[str, int, int]] = set()  # fixes a view could not restore
    must_compile: bool | None = None  # computed once, when a fix is first tried
    view: TextView | None = None
    for _ in range(MAX_ROUNDS):
        view = view_of(result.text) if view_of is not None else None
        analysed = view.text if view is not None else result.text
        active, tree = rules_to_run(analysed, rules)
        if not active:
            result.remaining = []
            return _finish(result, view, unmapped)
        project_view, active = with_project(analysed, rules, active, project)
        module = parse_module(analysed, tree)
        findings = lint_module(module, analysed, path, active, torch=torch, project=project_view)
        result.remaining = findings
        if not result.found and not result.applied:
            result.found = len(findings)
        candidates = [f for f in findings if fix_allowed(f, unsafe) and _key(f) not in rejected]
        if not candidates:
            return _finish(result, view, unmapped)
        narrowed = _grad_off_first(candidates, rules)
        chosen: list[tuple[Edit, Finding]] = []
        source = module.code
        # libcst drops a final lone "\r" (old Mac newlines); edits are made on
        # its text and the lost tail is put back. Anything else it does not
        # reproduce cannot be fixed without touching bytes outside the fix.
        if not analysed.startswith(source):
            return _finish(result, view, unmapped)
        tail = analysed[len(source) :]
        if must_compile is None:
            must_compile = compiles(analysed)
        # Findings that carry one shared fix (MEM501: an import and each of
        # its uses, rewritten in one edit) ride with the first one chosen:
        # the edit is rendered once and counts for all of them.
        riders: dict[int, list[Finding]] = {}
        for finding in narrowed or candidates:
            if id(finding.fix) in riders:
                riders[id(finding.fix)].append(finding)
                continue
            try:
                edit = text_edit(source, render_fix(module, finding.fix))  # type: ignore[arg-type]
            except Exception:
                rejected.add(_key(finding))
                continue
            if edit.start == edit.end and not edit.content:
                rejected.add(_key(finding))
                continue
            if any(_overlaps(edit, other) for other, _ in chosen):
                continue  # next round
            chosen.append((edit, finding))
            riders[id(finding.fix)] = []
        if not chosen:
            if narrowed:  # every grad-off fix was rejected: the others get their turn
                continue
            return _finish(result, view, unmapped)
        new_text = apply_edits(source, [e for e, _ in chosen])
        imports = [m for _, f in chosen for m in f.fix.imports]  # type: ignore[union-attr]
        try:
            new_text = add_imports(new_text, imports) + tail
            _check_fixed(new_text, must_compile)
            new_text = _restored(view, new_text)
        except ParseError as exc:
            # Try the fixes one at a time next round; a fix that breaks code
            # on its own is rejected for good.
            if len(chosen) == 1:
                f = chosen[0][1]
                rejected.add(_key(f))
                if isinstance(exc, _Unrestorable):
                    unmapped.add(_key(f))
                continue
            edit, f = chosen[0]
            try:
                new_text = add_imports(apply_edits(source, [edit]), f.fix.imports) + tail  # type: ignore[union-attr]
                _check_fixed(new_text, must_compile)
                new_text = _restored(view, new_text)
            except ParseError as exc_one:
                rejected.add(_key(f))
                if isinstance(exc_one, _Unrestorable):
                    unmapped.add(_key(f))
                continue
            chosen = chosen[:1]
        applied = [_at_file_position(g, view) for _, f in chosen for g in (f, *riders[id(f.fix)])]
        result.applied.extend(_at_original_lines(g, shifts) for g in applied)
        shifts.append(line_shifts(result.text, new_text))
        result.text = new_text
    # Bounded: report what is left after the last round.
    view = view_of(result.text) if view_of is not None else None
    analysed = view.text if view is not None else result.text
    active, tree = rules_to_run(analysed, rules)
    result.remaining = lint_module(parse_module(analysed, tree), analysed, path, active, torch=torch) if active else []
    return _finish(result, view, unmapped)


def _grad_off_first(candidates: list[Finding], rules: Sequence[type[Rule]]) -> list[Finding]:
    """The fixes that turn autograd off (``Rule.fix_turns_grad_off``), when
    there are any: they go in a round of their own, because the findings of
    other rules in the code they touch are made with grad on (MEM101's
    ``total += loss.detach()`` in a loop that ``@torch.no_grad()`` now covers
    is no longer reported). Empty when there are none."""
    codes = {r.code for r in rules if r.fix_turns_grad_off}
    if not codes:
        return []
    first = [f for f in candidates if f.code in codes]
    return first if len(first) < len(candidates) else []


def _at_original_lines(finding: Finding, shifts: list[list[tuple[int, int]]]) -> Finding:
    """A finding of a later round at the lines of the text ``--fix`` was given
    (an earlier round's ``@torch.no_grad()`` moved it down a line)."""
    if not shifts:
        return finding
    line, end_line = finding.line, finding.end_line
    for round_shifts in reversed(shifts):
        line, end_line = back_line(line, round_shifts), back_line(end_line, round_shifts)
    return replace(finding, line=line, end_line=end_line)


def _key(finding: Finding) -> tuple[str, int, int]:
    return finding.code, finding.line, finding.column


class _Unrestorable(ParseError):
    """A view could not bring the fixed text back to the file's own."""


def _restored(view: TextView | None, fixed: str) -> str:
    if view is None:
        return fixed
    restored = view.restore(fixed)
    if restored is None:
        raise _Unrestorable(view.why_unfixable)
    return restored


def _at_file_position(finding: Finding, view: TextView | None) -> Finding:
    """The finding at the file's own columns (a view may have moved them)."""
    if view is None or view.column is same_column:
        return finding
    return replace(
        finding,
        column=view.column(finding.line, finding.column),
        end_column=view.column(finding.end_line, finding.end_column),
    )


def _finish(result: FixResult, view: TextView | None, unmapped: set[tuple[str, int, int]]) -> FixResult:
    """The remaining findings at the file's positions; a fix the view refused
    is dropped from its finding, and a note says why."""
    if view is None:
        return result
    withheld = 0
    remaining = []
    for finding in result.remaining:
        if _key(finding) in unmapped and finding.fix is not None:
            finding = replace(finding, fix=None)
            withheld += 1
        remaining.append(_at_file_position(finding, view))
    result.remaining = remaining
    result.notes.append(view.note)
    if withheld:
        result.notes.append(f"{withheld} fix{'es' if withheld != 1 else ''} not applied: {view.why_unfixable}")
    return result


def _check_fixed(text: str, must_compile: bool) -> None:
    """Raise ParseError unless the fixed text parses, and compiles when the
    original did (code in syntax newer than this Python is only parsed)."""
    parse_module(text)
    if must_compile and not compiles(text):
        raise ParseError("the fixed text does not compile")


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.content + text[edit.end :]
    return text


def offset_to_position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    start = text.rfind("\n", 0, offset) + 1
    return line, offset - start


def detach(findings: Sequence[Finding], module: cst.Module | None, with_edits: bool) -> list[Finding]:
    """Findings without node references (picklable), optionally with each fix
    rendered to its edits against ``module``: the smallest replacements,
    the import it needs included, as one round of ``--fix`` would write it
    alone (so the edits of different findings do not overlap where their
    changes do not)."""
    out = []
    for f in findings:
        if f.fix is None:
            out.append(f)
            continue
        edits: tuple[Edit, ...] = ()
        if with_edits and module is not None:
            code = module.code
            # Not parsed again to be checked, as --fix does: a report's cost
            # stays one render per fix (and a parse where an import is added).
            found = fix_edits(code, module, f, None) or []
            edits = tuple(
                replace(e, start_pos=offset_to_position(code, e.start), end_pos=offset_to_position(code, e.end))
                for e in found
            )
        fix = Fix(title=f.fix.title, replacements=(), safety=f.fix.safety, imports=f.fix.imports, edits=edits)
        out.append(replace(f, fix=fix))
    return out


def single_fix_edits(text: str, module: cst.Module, finding: Finding) -> list[Edit] | None:
    """The edits (against ``text``, in order, not overlapping) that apply
    ``finding``'s fix alone, as one round of :func:`fix_text` would, with the
    import it needs; None when the fix cannot be applied or its result would
    not parse (or compile when ``text`` does). For an editor's quick fix under
    the cursor."""
    return fix_edits(text, module, finding, compiles(text))


def fix_edits(text: str, module: cst.Module, finding: Finding, must_compile: bool | None) -> list[Edit] | None:
    """:func:`single_fix_edits` with whether ``text`` compiles already known;
    ``None``: the fixed text is not checked."""
    if finding.fix is None or not text.startswith(module.code):
        return None
    try:
        edit = text_edit(module.code, render_fix(module, finding.fix))
        if edit.start == edit.end and not edit.content:
            return None
        with_imports = add_imports(apply_edits(text, [edit]), finding.fix.imports)
        if must_compile is not None:
            _check_fixed(with_imports, must_compile)
    except Exception:  # a fix that cannot be rendered or breaks the code is not offered
        return None
    return minimal_edits(text, with_imports)
