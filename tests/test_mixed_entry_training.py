"""A function that backpropagates and is run both for training (grad on) and
for validation (under ``no_grad``): its training calls record, so what it
keeps across its loop keeps graphs (grad_mode._trains_on_some_call)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
from analysis_helpers import facts_of, find

from memlint.analysis.autograd.grad_mode import GradMode
from memlint.project.index import view_from_disk

EPOCH = """\
import torch

def run_epoch(loader, model, criterion, optimizer):
    loss_sum = 0
    for x, y in loader:
        loss = criterion(model(x), y)
        if model.training:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        loss_sum += len(x) * loss
    return loss_sum / len(loader)
"""


def _mode(src: str, text: str) -> GradMode:
    facts = facts_of(src)
    return facts.grad_mode.mode_at(find(facts.module, text, cst.Call))


def test_a_training_function_with_one_grad_on_call_runs_with_grad_on():
    src = """
    import torch
    def run(model, x):
        out = model(x)
        out.sum().backward()
        track(out)
    run(model, x)
    with torch.no_grad():
        run(model, x)
    """
    assert _mode(src, "track(out)") is GradMode.ENABLED


def test_without_a_backward_mixed_callers_stay_unknown():
    src = """
    import torch
    def run(model, x):
        track(model(x))
    run(model, x)
    with torch.no_grad():
        run(model, x)
    """
    assert _mode(src, "track(model(x))") is GradMode.UNKNOWN


def test_a_default_or_a_closure_is_not_a_grad_on_call():
    src = """
    import torch
    def run(model, x):
        out = model(x)
        out.sum().backward()
        track(out)
    with torch.no_grad():
        run(model, x)
    callbacks.append(run)
    """
    # Passed around by name: its unseen callers' mode is unknown, not on.
    assert _mode(src, "track(out)") is GradMode.UNKNOWN


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text))


def _lint(path: Path):
    from memlint.lint.engine import lint_text
    from memlint.rule.registry import all_rules

    return [
        (f.code, f.line)
        for f in lint_text(path.read_text(), str(path), all_rules(), project=lambda: view_from_disk(str(path)))
    ]


def test_callers_in_another_module_one_training_one_validating(tmp_path):
    train = """\
        import torch
        from engine import run_epoch

        def main(model, train_loader, val_loader, criterion, optimizer):
            for epoch in range(10):
                model.train()
                run_epoch(train_loader, model, criterion, optimizer)
                with torch.no_grad():
                    model.eval()
                    run_epoch(val_loader, model, criterion, optimizer)
        """
    _write(tmp_path, {"setup.cfg": "", "engine.py": EPOCH, "train.py": train})
    assert ("MEM101", 11) in _lint(tmp_path / "engine.py")


def test_callers_in_another_module_all_validating_stay_silent(tmp_path):
    val = """\
        import torch
        from engine import run_epoch

        def main(model, val_loader, criterion, optimizer):
            with torch.no_grad():
                run_epoch(val_loader, model, criterion, optimizer)
        """
    _write(tmp_path, {"setup.cfg": "", "engine.py": EPOCH, "val.py": val})
    assert ("MEM101", 11) not in _lint(tmp_path / "engine.py")
