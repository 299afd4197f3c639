"""MEM203 across modules: an imported ``validate`` that switches its model to
eval at the top of each epoch, before the training phase, with nothing
switching back (univnet's shape), is a validation, not a linear probe."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

_VAL = """\
    import torch

    def validate(generator, loader, writer):
        generator.eval()
        for mel, audio in loader:
            fake = generator(mel)
            writer.log(fake.sum().item())
"""

_TRAIN = """\
    import torch
    from val import validate

    def train(model_g, optim_g, loader, val_loader, writer, criterion, interval):
        model_g.train()
        for epoch in range(100):
            if epoch % interval == 0:
                with torch.no_grad():
                    validate(model_g, val_loader, writer)
            for mel, audio in loader:
                optim_g.zero_grad()
                loss = criterion(model_g(mel), audio)
                loss.backward()
                optim_g.step()
"""


def test_an_imported_validate_at_the_top_of_the_epoch_is_never_undone(tmp_path):
    write_project(tmp_path, {"val.py": _VAL, "train.py": _TRAIN})
    assert finding_lines(tmp_path / "train.py", "MEM203") == [9]


def test_a_train_call_after_the_imported_validate_undoes_it(tmp_path):
    undone = _TRAIN.replace(
        "            for mel, audio in loader:\n",
        "            model_g.train()\n            for mel, audio in loader:\n",
    )
    write_project(tmp_path, {"val.py": _VAL, "train.py": undone})
    assert finding_lines(tmp_path / "train.py", "MEM203") == []


def test_a_helper_not_named_for_evaluation_that_switches_to_eval_first_stays_a_probe(tmp_path):
    """``freeze_bn(model)`` before the training phase: eval mode on purpose."""
    frozen = _VAL.replace("def validate(", "def freeze_bn(")
    write_project(
        tmp_path,
        {"val.py": frozen, "train.py": _TRAIN.replace("validate", "freeze_bn")},
    )
    assert finding_lines(tmp_path / "train.py", "MEM203") == []
