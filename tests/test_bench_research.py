"""The lookup and scoring of bench/research_findings.py, on a made-up review (the research trees are not in CI)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

_BENCH = Path(__file__).resolve().parent.parent / "bench"
_SPEC = importlib.util.spec_from_file_location("research_findings", _BENCH / "research_findings.py")
rf = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault("research_findings", rf)  # dataclasses look their module up there
_SPEC.loader.exec_module(rf)

HEADER = "repo\tpath\tcode\tline\tverdict\twhy\n"


def write_review(path: Path, *rows: tuple[str, ...]) -> Path:
    path.write_text("# a comment\n" + HEADER + "".join("\t".join(r) + "\n" for r in rows), encoding="utf-8")
    return path


def record(root: Path, rel: str, row: int, code: str, cell: int | None = None) -> dict:
    out = {"filename": str(root / rel), "code": code, "message": f"{code} message", "location": {"row": row}}
    if cell is not None:
        out["cell"] = cell
    return out


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "o__r"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "train.py").write_text(
        'import torch\n\nckpt = torch.load("m.pt")\nnames = {"a": 1}\nmodel.load_state_dict(ckpt)\n', encoding="utf-8"
    )
    notebook = {
        "cells": [
            {"cell_type": "markdown", "source": ["# title\n"]},
            {"cell_type": "code", "source": ["model.eval()\n", "for x, y in loader:\n", "    out = model(x)\n"]},
        ]
    }
    (root / "nb.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    return root


def test_review_is_keyed_by_repo_path_code_and_line_text_with_quotes_kept(tmp_path):
    review = rf.load_review(
        write_review(
            tmp_path / "r.tsv",
            ("o/r", "pkg/train.py", "MEM701", 'ckpt = torch.load("m.pt")', "TP", "saved from the GPU"),
            ("o/r", "pkg/train.py", "MEM102", 'names = {"a": 1}', "FP", "constant key"),
        )
    )
    assert set(review) == {
        ("o/r", "pkg/train.py", "MEM701", 'ckpt = torch.load("m.pt")'),
        ("o/r", "pkg/train.py", "MEM102", 'names = {"a": 1}'),
    }


def test_review_refuses_unknown_verdicts_two_verdicts_and_wrong_columns(tmp_path):
    with pytest.raises(SystemExit, match="unknown verdict"):
        rf.load_review(write_review(tmp_path / "a.tsv", ("o/r", "p.py", "MEM101", "x += y", "maybe", "")))
    with pytest.raises(SystemExit, match="two verdicts"):
        rf.load_review(
            write_review(
                tmp_path / "b.tsv",
                ("o/r", "p.py", "MEM101", "x += y", "TP", ""),
                ("o/r", "p.py", "MEM101", "x += y", "FP", ""),
            )
        )
    (tmp_path / "c.tsv").write_text("repo\tpath\tcode\tverdict\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="columns"):
        rf.load_review(tmp_path / "c.tsv")
    assert rf.load_review(tmp_path / "missing.tsv") == {}


def test_score_looks_up_the_line_text_so_a_shifted_line_keeps_its_verdict(tree, tmp_path):
    review = rf.load_review(
        write_review(
            tmp_path / "r.tsv",
            ("o/r", "pkg/train.py", "MEM701", 'ckpt = torch.load("m.pt")', "TP", "saved from the GPU"),
        )
    )
    scored = rf.score("o/r", [record(tree, "pkg/train.py", 3, "MEM701")], tree, review)
    assert [(s.verdict, s.why, s.where) for s in scored] == [("TP", "saved from the GPU", "pkg/train.py:3")]
    # two lines inserted above: the same text, the same verdict
    text = (tree / "pkg" / "train.py").read_text()
    (tree / "pkg" / "train.py").write_text("# one\n# two\n" + text)
    assert rf.score("o/r", [record(tree, "pkg/train.py", 5, "MEM701")], tree, review)[0].verdict == "TP"
    # another code, another repository or another line text: NEW
    assert rf.score("o/r", [record(tree, "pkg/train.py", 5, "MEM702")], tree, review)[0].verdict == "NEW"
    assert rf.score("x/y", [record(tree, "pkg/train.py", 5, "MEM701")], tree, review)[0].verdict == "NEW"
    assert rf.score("o/r", [record(tree, "pkg/train.py", 6, "MEM701")], tree, review)[0].verdict == "NEW"


def test_a_notebook_finding_is_keyed_by_the_line_of_its_cell(tree, tmp_path):
    review = rf.load_review(
        write_review(tmp_path / "r.tsv", ("o/r", "nb.ipynb", "MEM201", "for x, y in loader:", "TP", "no no_grad"))
    )
    [s] = rf.score("o/r", [record(tree, "nb.ipynb", 2, "MEM201", cell=2)], tree, review)
    assert (s.line, s.verdict, s.where) == ("for x, y in loader:", "TP", "nb.ipynb:cell2:2")
    assert rf.line_text(tree / "nb.ipynb", 9, 2) == ""
    assert rf.line_text(tree / "nb.ipynb", 1, 7) == ""


def test_tally_per_family_and_per_rule_and_the_markdown_totals(tree, tmp_path):
    review = rf.load_review(
        write_review(
            tmp_path / "r.tsv",
            ("o/r", "pkg/train.py", "MEM701", 'ckpt = torch.load("m.pt")', "TP", ""),
            ("o/r", "pkg/train.py", "MEM102", 'names = {"a": 1}', "FP", ""),
            ("o/r", "pkg/train.py", "MEM101", "model.load_state_dict(ckpt)", "judgment", ""),
        )
    )
    found = [
        record(tree, "pkg/train.py", 3, "MEM701"),
        record(tree, "pkg/train.py", 4, "MEM102"),
        record(tree, "pkg/train.py", 5, "MEM101"),
        record(tree, "nb.ipynb", 2, "MEM201", cell=2),
    ]
    scored = rf.score("o/r", found, tree, review)
    families = rf.tally(scored)
    assert list(families) == ["MEM1xx", "MEM2xx", "MEM7xx"]
    assert families["MEM1xx"] == {"findings": 2, "FP": 1, "judgment": 1}
    assert families["MEM2xx"] == {"findings": 1, "NEW": 1}
    assert rf.tally(scored, key=lambda s: s.code)["MEM701"] == {"findings": 1, "TP": 1}
    table = rf.markdown_table(families)
    assert "| MEM7xx | 1 | 1 | 0 | 0 | 0 |" in table
    assert table.splitlines()[-1] == "| **all** | **4** | **1** | **1** | **1** | **1** |"


def test_gone_lists_reviewed_rows_of_the_repositories_run_that_came_back_no_more(tree, tmp_path):
    review = rf.load_review(
        write_review(
            tmp_path / "r.tsv",
            ("o/r", "pkg/train.py", "MEM701", 'ckpt = torch.load("m.pt")', "TP", ""),
            ("o/r", "pkg/train.py", "MEM102", 'names = {"a": 1}', "FP", "fixed"),
            ("x/y", "a.py", "MEM102", "a.append(b)", "FP", "not run"),
        )
    )
    scored = rf.score("o/r", [record(tree, "pkg/train.py", 3, "MEM701")], tree, review)
    assert [(r["code"], r["verdict"]) for r in rf.gone(scored, review, ["o/r"])] == [("MEM102", "FP")]


def test_only_notebooks_whose_broken_cells_were_left_out_pass_as_checked():
    assert rf.BROKEN_CELLS.search("o/r: /t/nb.ipynb: cell 5: syntax error at 3:6: invalid syntax")
    assert rf.BROKEN_CELLS.search("o/r: /t/nb.ipynb: cell 5: syntax error at 3:6: x; cell 9: syntax error at 1:1: y")
    assert not rf.BROKEN_CELLS.search("o/r: /t/train.py: syntax error at 3:6: invalid syntax")
    assert not rf.BROKEN_CELLS.search("o/r: /t/nb.ipynb: not a notebook memlint can read")


def test_main_exits_1_when_a_reviewed_false_alarm_comes_back(tree, tmp_path, monkeypatch, capsys):
    (tree / ".complete").write_text("c" * 40 + "\n")
    manifest = tmp_path / "repos.tsv"
    manifest.write_text("repo\tcommit\tkind\twhat\no/r\t" + "c" * 40 + "\tgan\ta test\n", encoding="utf-8")
    review = write_review(
        tmp_path / "r.tsv",
        ("o/r", "pkg/train.py", "MEM701", 'ckpt = torch.load("m.pt")', "TP", ""),
        ("o/r", "pkg/train.py", "MEM102", 'names = {"a": 1}', "FP", "constant key"),
    )
    monkeypatch.setattr(rf, "MANIFEST", manifest)
    monkeypatch.setattr(rf, "REVIEW", review)
    reported = [record(tree, "pkg/train.py", 3, "MEM701")]
    monkeypatch.setattr(rf, "findings", lambda root: (reported, []))
    assert rf.main(["--trees", str(tree.parent)]) == 0
    out = capsys.readouterr().out
    assert "GONE      MEM102 o/r pkg/train.py [FP]" in out
    reported.append(record(tree, "pkg/train.py", 4, "MEM102"))
    assert rf.main(["--trees", str(tree.parent), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [f["verdict"] for f in data["findings"]] == ["TP", "FP"]
    # a tree at another commit is missing, not clean
    (tree / ".complete").write_text("d" * 40 + "\n")
    assert rf.main(["--trees", str(tree.parent)]) == 1
    assert "MISSING o/r" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_export_keeps_sources_notebooks_and_packaging_files_of_the_pinned_commit(tmp_path):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    for name, text in {
        "pkg/train.py": "x = 1\n",
        "nb.ipynb": "{}",
        "requirements-dev.txt": "torch>=1.8\n",
        "setup.py": "",
        "README.md": "no",
        "data.bin": "no",
    }.items():
        (src / name).write_text(text)
    git = ["git", "-C", str(src), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    (src / "pkg" / "train.py").write_text("x = 2\n")
    subprocess.run([*git, "commit", "-qam", "two"], check=True)
    dest = tmp_path / "out"
    assert rf.export(src / ".git", commit, dest) == 4
    kept = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert kept == ["nb.ipynb", "pkg/train.py", "requirements-dev.txt", "setup.py"]
    assert (dest / "pkg" / "train.py").read_text() == "x = 1\n"
