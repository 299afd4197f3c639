"""The second pass's view building does per file what per file suffices."""

import os

import memlint.run.runner as runner
from memlint.run.results import Settings

PROJECT = os.path.join(os.path.dirname(__file__), "..", "fixtures", "projects", "split_training")


def test_each_module_a_view_reads_is_made_relative_once(monkeypatch):
    """Every view lists the project files it read (its deps); the views of
    a project read the same modules, and os.path.relpath once per read was
    143,000 calls on transformers."""
    real = os.path.relpath
    asked: list[tuple[str, str]] = []

    def counted(path, start=None):
        import sys

        if sys._getframe(1).f_code.co_filename == runner.__file__:
            asked.append((path, start))
        return real(path, start)

    monkeypatch.setattr(os.path, "relpath", counted)
    paths = sorted(os.path.join(PROJECT, f) for f in os.listdir(PROJECT) if f.endswith(".py"))
    reports = runner.run(paths, Settings(), jobs=1)
    assert sum(1 for r in reports if r.deps) >= 2  # views were built, reading modules
    assert asked and len(asked) == len(set(asked))
