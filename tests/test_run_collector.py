"""The runner freezes what a run gathers (reports, the index) so the cyclic
collector stops walking it, and hands the collector back as it found it."""

from __future__ import annotations

import gc
from pathlib import Path

from memlint.run.runner import Settings, run

_TRAIN = "import torch\n\ndef train(model, loader, opt):\n    for x, y in loader:\n        loss = model(x)\n        loss.backward()\n        opt.step()\n"
_EVAL = "from train import train\n\ndef evaluate(model, loader):\n    model.eval()\n    for x in loader:\n        model(x)\n"


def _project(tmp_path: Path) -> list[str]:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(_TRAIN)
    (tmp_path / "evaluate.py").write_text(_EVAL)
    return [str(tmp_path / "train.py"), str(tmp_path / "evaluate.py")]


def test_a_run_leaves_nothing_frozen_and_the_collector_on(tmp_path: Path) -> None:
    paths = _project(tmp_path)
    assert gc.get_freeze_count() == 0
    reports = run(paths, Settings(), jobs=1)
    assert all(r.error is None for r in reports)
    assert gc.get_freeze_count() == 0
    assert gc.isenabled()


def test_an_application_s_own_freeze_is_left_as_it_is(tmp_path: Path) -> None:
    paths = _project(tmp_path)
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        run(paths, Settings(), jobs=1)
        assert gc.get_freeze_count() >= frozen
    finally:
        gc.unfreeze()
