"""bench/summary_reads.py on a small project: summaries made against those its views read."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from memlint.project import index as project_index
from memlint.project.summary import ModuleSummary

_ROOT = Path(__file__).resolve().parent.parent
_SPEC = importlib.util.spec_from_file_location("summary_reads", _ROOT / "bench" / "summary_reads.py")
summary_reads = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(summary_reads)


def test_counts_the_summaries_made_and_read(capsys):
    build, getattribute = project_index.build_index, ModuleSummary.__getattribute__
    assert summary_reads.main([str(_ROOT / "fixtures" / "projects" / "split_training"), "--fields"]) == 0
    out = capsys.readouterr().out
    assert "summaries made in the first pass: 5 (5 with a training word, 0 needle)" in out
    assert "read by some view: 4 (80 %); of those waiting for no view: 0 of 1" in out
    assert "fields the index read of them (of 1): " in out and "calls 1" in out
    # The counting hooks are gone once it is done.
    assert project_index.build_index is build
    assert ModuleSummary.__getattribute__ is getattribute
