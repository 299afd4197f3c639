"""The fix a report gives a finding that another finding's fix ends.

``--fix`` applies the fixes that turn autograd off (MEM201's
``@torch.no_grad()``, ``Rule.fix_turns_grad_off``) in a round of their own
and lints again: a MEM101/MEM102 in the code they cover is gone, so its own
``.detach()`` is never written. A report (JSON ``fix.edits``, SARIF
``fixes``, an editor's quick fix) that gave that finding its own fix would
ask for a needless ``.detach()`` when every reported fix is applied. Here
such a finding carries the covering fix instead, under a title that says
so: applying it ends the finding, and applying every reported fix of a file
(identical edits once, as ruff does) writes what ``--fix`` writes
(docs/cli.md, Fixes).

Only files with a grad-off fix and another fix pay for it: one more lint
per grad-off fix, of the text with that fix applied.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from memlint.fix.fixer import apply_edits, fix_allowed, fix_edits
from memlint.fix.minimal_edits import back_line, line_shifts
from memlint.lint.engine import ParseError, ProjectSource, lint
from memlint.rule import Finding, Rule

if TYPE_CHECKING:
    import libcst as cst

    from memlint.find.torch_floor import TorchRange


def with_covering_fixes(
    findings: list[Finding],
    module: cst.Module | None,
    path: str,
    rules: Sequence[type[Rule]],
    *,
    torch: TorchRange | None = None,
    project: ProjectSource = None,
) -> list[Finding]:
    """``findings`` (of ``module``), each one that a safe grad-off fix of
    another finding ends carrying that fix; the others as they are."""
    if module is None or len(findings) < 2:  # most files: nothing to cover
        return findings
    codes = {r.code for r in rules if r.fix_turns_grad_off}
    covering = [f for f in findings if f.code in codes and fix_allowed(f, False)]
    others = [f for f in findings if f.code not in codes and f.fix is not None]
    if not covering or not others:
        return findings
    text = module.code
    moot: dict[int, Finding] = {}  # id of an ended finding -> the finding whose fix ends it
    for cover in covering:
        open_ = [f for f in others if id(f) not in moot]
        if not open_:
            break
        ended = _ended_by(cover, open_, text, module, path, rules, torch, project)
        moot.update((id(f), cover) for f in ended)
    if not moot:
        return findings
    return [_covered(f, moot[id(f)]) if id(f) in moot else f for f in findings]


def _ended_by(
    cover: Finding,
    others: list[Finding],
    text: str,
    module: cst.Module,
    path: str,
    rules: Sequence[type[Rule]],
    torch: TorchRange | None,
    project: ProjectSource,
) -> list[Finding]:
    """The findings of ``others`` that linting the text with ``cover``'s fix
    applied no longer reports (at the lines they had before it)."""
    edits = fix_edits(text, module, cover, None)
    if not edits:
        return []
    fixed = apply_edits(text, edits)
    try:
        after, _ = lint(fixed, path, rules, torch=torch, project=project)
    except ParseError:
        return []
    shifts = line_shifts(text, fixed)
    left = Counter((f.code, back_line(f.line, shifts), f.message) for f in after)
    ended = []
    for f in others:
        key = (f.code, f.line, f.message)
        if left[key]:
            left[key] -= 1
        else:
            ended.append(f)
    return ended


def _covered(finding: Finding, cover: Finding) -> Finding:
    assert cover.fix is not None
    title = f"{cover.fix.title} ({cover.code}'s fix, which ends this finding too)"
    return replace(finding, fix=replace(cover.fix, title=title))
