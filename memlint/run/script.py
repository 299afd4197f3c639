"""A ``.py`` file whose own text libcst cannot read, checked through a view
(memlint.read.text_view): a notebook export with IPython lines, when they are
the only reason it does not parse, or indentation mixing tabs and spaces that
Python accepts. Findings come back at the file's own positions; a fix whose
result the view cannot write back exactly is reported without its fix."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from memlint.fix.covered_fixes import with_covering_fixes
from memlint.fix.fixer import add_imports, apply_edits, offset_to_position, render_fix, text_edit
from memlint.fix.minimal_edits import minimal_edits
from memlint.lint.engine import LibcstLimitation, ParseError, lint
from memlint.parse.guard import python_tree
from memlint.read.notebook_magics import masked_view
from memlint.read.tab_indent import expanded_view
from memlint.read.text_view import TextView
from memlint.rule import Edit, Finding, Fix, Rule


def view_maker(text: str, error: ParseError) -> Callable[[str], TextView | None] | None:
    """How to read ``text``, which failed to parse with ``error``: a function
    making the view from a text (fixing makes it afresh each round), or None
    when no view reads it either (the error stands)."""
    if isinstance(error, LibcstLimitation):
        return expanded_view if expanded_view(text) is not None else None
    view = masked_view(text)
    if view is not None and python_tree(view.text) is not None:
        return masked_view
    return None


def lint_view(
    view: TextView, path: str, rules: Sequence[type[Rule]], with_edits: bool, torch=None, project=None
) -> tuple[list[Finding], list[str]]:
    """Findings (detached, at the file's positions) and the notes to say.
    ``torch`` and ``project`` as lint() takes them: the file is a module of
    its project like any other (the view changes its text, not its place)."""
    findings, module = lint(view.text, path, rules, torch=torch, project=project)
    findings = with_covering_fixes(findings, module, path, rules, torch=torch, project=project)
    out: list[Finding] = []
    withheld = 0
    for f in findings:
        placed = replace(f, column=view.column(f.line, f.column), end_column=view.column(f.end_line, f.end_column))
        if f.fix is None or module is None:
            out.append(placed)
            continue
        restored = _restored_alone(view, module, f)
        if restored is None:
            withheld += 1
            out.append(replace(placed, fix=None))
            continue
        edits: tuple[Edit, ...] = ()
        if with_edits:
            edits = tuple(
                replace(
                    e,
                    start_pos=offset_to_position(view.original, e.start),
                    end_pos=offset_to_position(view.original, e.end),
                )
                for e in minimal_edits(view.original, restored)
            )
        fix = Fix(title=f.fix.title, replacements=(), safety=f.fix.safety, imports=f.fix.imports, edits=edits)
        out.append(replace(placed, fix=fix))
    notes = [view.note]
    if withheld:
        notes.append(f"{withheld} fix{'es' if withheld != 1 else ''} not applied: {view.why_unfixable}")
    return out, notes


def _restored_alone(view: TextView, module, finding: Finding) -> str | None:
    """The file's text with this one fix applied, as --fix would write it, or
    None when the view cannot write it back exactly."""
    fix = finding.fix
    try:
        source = module.code
        if fix is None or not view.text.startswith(source):
            return None
        edit = text_edit(source, render_fix(module, fix))
        fixed = add_imports(apply_edits(source, [edit]), fix.imports) + view.text[len(source) :]
    except Exception:  # a fix that cannot be rendered is not offered
        return None
    return view.restore(fixed)
