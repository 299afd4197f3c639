"""The fixes a report carries (JSON ``fix.edits``, SARIF
``fixes[].artifactChanges[].replacements``) can be applied together: each is
its fix's smallest replacements, so the edits of different findings of a file
do not overlap, and applying all of them (identical ones once, in reverse
order) writes what ``memlint check --fix`` writes. Through the real program."""

from __future__ import annotations

import difflib
import json
import shutil
import textwrap
from pathlib import Path

import pytest

from memlint.fix.fixer import apply_edits
from memlint.fix.minimal_edits import minimal_edits
from memlint.rule import Edit

ROOT = Path(__file__).resolve().parent.parent

# A loop MEM201 wraps in `with torch.no_grad():` (every line re-indented)
# holding a MEM501 call: one span per fix made the two overlap.
WRAPPED = textwrap.dedent(
    """\
    import torch


    def run(model, loader, optimizer, scheduler):
        for x, y in loader:
            loss = model(x).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        model.eval()
        scores = []
        for x, y in loader:
            with torch.cuda.amp.autocast():
                scores.append(model(x).argmax(1).eq(y).float().mean().item())
        return scores
    """
)

# A validate function MEM201 decorates, holding a MEM101 and a MEM102 that
# the decorator ends (`--fix` writes no `.detach()` for them), and a training
# loop whose MEM102 the decorator does not reach.
COVERED = textwrap.dedent(
    """\
    import torch


    def train(model, loader, optimizer):
        losses = []
        for x, y in loader:
            loss = model(x).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss)
        return losses


    def validate(model, loader, criterion):
        model.eval()
        total = 0
        outs = []
        for x, y in loader:
            out = model(x)
            total += criterion(out, y)
            outs.append(out)
        return total / len(loader), torch.cat(outs)
    """
)

# Shipped files with several fixes in one file, none of which changes what
# another reports.
SHIPPED = (
    "fixtures/lint/mem501_deprecated_amp.py",
    "fixtures/lint/mem804_scheduler_verbose.py",
    "tests/corpus/autocast_eval.py",
    "tests/corpus/running_stats_accumulators.py",
    "tests/corpus/inplace_sequential_models.py",
    "tests/corpus/benchmark_and_ensemble.py",
    "tests/corpus/kaggle_kfold.py",
)


def _offset(text: str, line: int, column: int) -> int:
    lines = text.splitlines(keepends=True)
    return sum(len(x) for x in lines[: line - 1]) + column


def _json_edits(text: str, report: list[dict]) -> list[list[Edit]]:
    return [
        [
            Edit(
                _offset(text, e["location"]["row"], e["location"]["column"] - 1),
                _offset(text, e["end_location"]["row"], e["end_location"]["column"] - 1),
                e["content"],
            )
            for e in f["fix"]["edits"]
        ]
        for f in report
        if f["fix"] is not None
    ]


def _sarif_edits(text: str, log: dict) -> list[list[Edit]]:
    run = log["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    out = []
    for result in run["results"]:
        for fix in result.get("fixes", ()):
            if "unsafe fix" in fix["description"]["text"]:
                continue  # --fix leaves it
            (change,) = fix["artifactChanges"]
            out.append(
                [
                    Edit(
                        _offset(text, r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"] - 1),
                        _offset(text, r["deletedRegion"]["endLine"], r["deletedRegion"]["endColumn"] - 1),
                        r["insertedContent"]["text"],
                    )
                    for r in change["replacements"]
                ]
            )
    return out


def _applied_together(text: str, per_finding: list[list[Edit]]) -> str:
    """Every finding's edits at once, identical ones once; none may overlap."""
    edits = sorted({(e.start, e.end, e.content) for edits in per_finding for e in edits})
    for (s1, e1, _), (s2, _, _) in zip(edits, edits[1:]):
        assert e1 <= s2 and s1 < s2, f"edits of different findings overlap: {edits}"
    return apply_edits(text, [Edit(*e) for e in edits])


def _check_report_edits_give_the_fix(run_memlint, path: Path) -> int:
    """The number of safe fixes the report carries; applying them all gives
    what ``--fix`` writes, and ``--diff`` shows that change."""
    text = path.read_text(encoding="utf-8")
    report = json.loads(run_memlint("check", "--no-cache", "--output-format", "json", path).stdout)
    sarif = json.loads(run_memlint("check", "--no-cache", "--output-format", "sarif", path).stdout)
    safe = [f for f in report if f["fix"] is not None and f["fix"]["applicability"] == "safe"]
    by_json = _applied_together(text, _json_edits(text, safe))
    by_sarif = _applied_together(text, _sarif_edits(text, sarif))
    copy = path.with_name("fixed_" + path.name)
    shutil.copy(path, copy)
    run_memlint("check", "--no-cache", "--fix", copy)
    fixed = copy.read_text(encoding="utf-8")
    copy.unlink()
    assert fixed != text
    assert by_json == fixed
    assert by_sarif == fixed
    shown = run_memlint("check", "--no-cache", "--diff", path).stdout
    assert _diff_body(shown) == _diff_body("".join(difflib.unified_diff(text.splitlines(True), fixed.splitlines(True))))
    return len(safe)


def _diff_body(diff: str) -> list[str]:
    """The hunks of a unified diff, without its file names or any summary."""
    return [line for line in diff.splitlines() if line[:1] in "+- @" and not line.startswith(("---", "+++"))]


def test_a_finding_a_grad_off_fix_ends_reports_that_fix(tmp_path, run_memlint):
    path = tmp_path / "loops.py"
    path.write_text(COVERED)
    report = json.loads(run_memlint("check", "--no-cache", "--output-format", "json", path).stdout)
    fixes = {(f["code"], f["location"]["row"]): f["fix"] for f in report}
    assert sorted(fixes) == [("MEM101", 21), ("MEM102", 11), ("MEM102", 22), ("MEM201", 19)]
    decorator = fixes["MEM201", 19]["edits"]
    assert [e["content"] for e in decorator] == ["@torch.no_grad()\n"]
    for key in (("MEM101", 21), ("MEM102", 22)):  # ended by the decorator: its fix, said so
        assert fixes[key]["edits"] == decorator
        assert fixes[key]["message"].endswith("(MEM201's fix, which ends this finding too)")
        assert fixes[key]["applicability"] == "safe"
    assert [e["content"] for e in fixes["MEM102", 11]["edits"]] == [".detach()"]  # out of its reach
    text = run_memlint("check", "--no-cache", path).stdout  # the text report names the same fix
    assert text.count("safe fix: Decorate `validate` with `@torch.no_grad()` (MEM201's fix, which") == 2
    assert _check_report_edits_give_the_fix(run_memlint, path) == 4


def test_a_wrapped_loop_and_a_fix_inside_it_apply_together(tmp_path, run_memlint):
    path = tmp_path / "evaluate.py"
    path.write_text(WRAPPED)
    assert _check_report_edits_give_the_fix(run_memlint, path) == 2


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_files_report_edits_that_give_the_fix(tmp_path, run_memlint, name):
    path = tmp_path / Path(name).name
    shutil.copy(ROOT / name, path)
    assert _check_report_edits_give_the_fix(run_memlint, path) >= 2


def test_minimal_edits_keep_a_reindent_apart_from_the_line_it_moves():
    old = "for x in xs:\n    y(x)\n"
    new = "with g():\n    for x in xs:\n        y(x)\n"
    edits = minimal_edits(old, new)
    assert apply_edits(old, edits) == new
    assert [(e.start, e.end, e.content) for e in edits] == [(0, 0, "with g():\n    "), (13, 13, "    ")]


@pytest.mark.parametrize(
    "old, new",
    [
        ("", "a\n"),
        ("a\n", ""),
        ("a\nb\nc", "a\nB\nc"),
        ("\tx\n\n", "x\n\n\n"),
        ("a = f(1)\nb = 2\n", "import torch\na = f(1, c=3)\nb = 2\n"),
        ("x\r\ny\r\n", "  x\r\n  y\r\n"),
    ],
)
def test_minimal_edits_apply_to_the_new_text_without_overlap(old, new):
    edits = minimal_edits(old, new)
    assert apply_edits(old, edits) == new
    assert all(a.end <= b.start and a.start < b.start for a, b in zip(edits, edits[1:]))


def test_server_quick_fixes_are_the_reports_edits(tmp_path):
    # An editor applies a code action's TextEdits against the document as it
    # is: they must not overlap, and they are the edits a report carries.
    from memlint.fix.fixer import detach
    from memlint.rule.registry import all_rules
    from memlint.server.actions import fix_all, quick_fixes
    from memlint.server.linting import lint_document

    path = tmp_path / "evaluate.py"
    path.write_text(WRAPPED)
    rules = [r for r in all_rules() if r.default_enabled]
    result = lint_document(WRAPPED, str(path), rules)
    actions = quick_fixes(result, result.findings, unsafe=False)
    assert len(actions) == 2
    reported = detach(result.findings, result.module, True)
    for action, finding in zip(actions, reported):
        assert [(e.start, e.end, e.content) for e in action.edits] == [
            (e.start, e.end, e.content) for e in finding.fix.edits
        ]
        assert all(a.end <= b.start and a.start < b.start for a, b in zip(action.edits, action.edits[1:]))
    every = fix_all(result, str(path), rules)
    assert every is not None and len(every.edits) > 1  # the fix-all action is minimal edits too
    assert apply_edits(WRAPPED, list(every.edits)) == _applied_together(WRAPPED, [list(a.edits) for a in actions])


def test_server_quick_fix_of_a_finding_a_grad_off_fix_ends_is_that_fix(tmp_path):
    from memlint.rule.registry import all_rules
    from memlint.server.actions import fix_all, quick_fixes
    from memlint.server.linting import lint_document

    path = tmp_path / "loops.py"
    path.write_text(COVERED)
    rules = [r for r in all_rules() if r.default_enabled]
    result = lint_document(COVERED, str(path), rules)
    actions = {(a.findings[0].code, a.findings[0].line): a for a in quick_fixes(result, result.findings, unsafe=False)}
    decorator = actions["MEM201", 19].edits
    assert actions["MEM101", 21].edits == actions["MEM102", 22].edits == decorator
    assert "which ends this finding too" in actions["MEM102", 22].title
    every = fix_all(result, str(path), rules)
    assert every is not None
    assert apply_edits(COVERED, list(every.edits)) == _applied_together(
        COVERED, [list(a.edits) for a in actions.values()]
    )
