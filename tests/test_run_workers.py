"""A check runs its two passes in the same worker processes: the second
pass's pool is not forked from a parent that has built the project index
since, so no worker carries a copy of it (the process tree's peak RSS)."""

from __future__ import annotations

import concurrent.futures
import textwrap
from pathlib import Path

from memlint.run import runner
from memlint.run.runner import Settings, run

# MEM304 reads the project (another module's function may be the step): every
# such file waits for the second pass.
TRAINS = textwrap.dedent(
    """\
    import torch

    def train(model, loader, optimizer):
        for x in loader:
            loss = model(x).sum()
            loss.backward()
            optimizer.step()
    """
)


def test_the_second_pass_reuses_the_first_pass_workers(tmp_path: Path, monkeypatch) -> None:
    files = []
    for i in range(runner.PARALLEL_THRESHOLD + 4):
        path = tmp_path / "pkg" / f"m{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(TRAINS)
        files.append(str(path))
    alone = run(files, Settings(), jobs=1)
    pools: list[int] = []
    submitted: list[int] = []
    original = concurrent.futures.ProcessPoolExecutor

    class Counted(original):  # type: ignore[valid-type, misc]
        def __init__(self, *args, **kwargs) -> None:
            pools.append(1)
            super().__init__(*args, **kwargs)

        def submit(self, *args, **kwargs):
            submitted.append(len(args[1]))  # the chunk's files
            return super().submit(*args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Counted)
    together = run(files, Settings(), jobs=2)
    assert sum(submitted) == 2 * len(files)  # both passes ran in workers
    assert len(pools) == 1
    assert [(r.path, r.error, r.findings) for r in together] == [(r.path, r.error, r.findings) for r in alone]
    assert any(r.findings for r in together)


# No training word, but it calls into the module above: the index summarises
# it for its calls (index.summary_from_disk with needles).
CALLER = textwrap.dedent(
    """\
    from pkg.steps import train

    def main(model, loader, opt):
        model.cuda()
        train(model, loader, opt)
    """
)


def test_a_word_less_callers_summary_comes_from_its_worker_not_the_disk(tmp_path: Path, monkeypatch) -> None:
    from memlint.project import index

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "steps.py").write_text(TRAINS)
    (tmp_path / "pkg" / "main.py").write_text(CALLER)
    files = [str(tmp_path / "pkg" / "steps.py"), str(tmp_path / "pkg" / "main.py")]
    parent: list[str] = []
    original = index.summarise_text

    def counted(text: str, always: bool = False):
        parent.append(text)
        return original(text, always)

    monkeypatch.setattr(index, "summarise_text", counted)
    monkeypatch.setattr(index, "_MEMO", {})
    reports = run(files, Settings(), jobs=1)
    assert CALLER not in parent  # the worker's tree was summarised, the parent parsed nothing again
    # ... and the view is the one the disk gives: the same findings as each file viewed from disk.
    monkeypatch.setattr(runner, "_views", _views_from_disk(runner._views))
    again = run(files, Settings(), jobs=1)
    assert [(r.path, r.findings) for r in reports] == [(r.path, r.findings) for r in again]


def _views_from_disk(views):
    def without_prepared(paths, waiting, reports, *args, **kwargs):
        for r in reports:
            if r is not None:
                r.needle_summary = None
        return views(paths, waiting, reports, *args, **kwargs)

    return without_prepared
