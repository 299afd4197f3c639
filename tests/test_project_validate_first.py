"""MEM203 across modules: an imported ``validate`` that switches the model to
eval at the top of each epoch, before the training phase, with nothing
switching it back, is a validation, not a linear probe: reported when the
model is known to hold dropout or batch norm, silent when it holds neither
or when its layers cannot be read (melgan's and univnet's weight-norm
vocoders compute the same in both modes)."""

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
    import torch.nn as nn
    from val import validate

    class Gen(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Conv1d(80, 1, 7), nn.Dropout(0.1))

        def forward(self, x):
            return self.body(x)

    def train(optim_g, loader, val_loader, writer, criterion, interval):
        model_g = Gen()
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
    assert finding_lines(tmp_path / "train.py", "MEM203") == [19]


def test_a_train_call_after_the_imported_validate_undoes_it(tmp_path):
    undone = _TRAIN.replace(
        "            for mel, audio in loader:\n",
        "            model_g.train()\n            for mel, audio in loader:\n",
    )
    write_project(tmp_path, {"val.py": _VAL, "train.py": undone})
    assert finding_lines(tmp_path / "train.py", "MEM203") == []


def test_a_model_without_dropout_or_batch_norm_computes_the_same_in_both_modes(tmp_path):
    mode_free = _TRAIN.replace(", nn.Dropout(0.1)", ", nn.ReLU()")
    write_project(tmp_path, {"val.py": _VAL, "train.py": mode_free})
    assert finding_lines(tmp_path / "train.py", "MEM203") == []


def test_a_model_of_another_module_whose_layers_cannot_be_read_stays_silent(tmp_path):
    """melgan's shape: ``Generator`` is imported, its mode dependence is not
    carried across modules, so the linear-probe reading stands."""
    start, end = _TRAIN.index("    class Gen("), _TRAIN.index("    def train(")
    gen = "    import torch.nn as nn\n\n" + _TRAIN[start:end]
    train = _TRAIN[:start].replace("from val import validate\n", "from val import validate\n    from gen import Gen\n")
    write_project(tmp_path, {"val.py": _VAL, "gen.py": gen, "train.py": train + _TRAIN[end:]})
    assert finding_lines(tmp_path / "train.py", "MEM203") == []


def test_a_helper_not_named_for_evaluation_that_switches_to_eval_first_stays_a_probe(tmp_path):
    """``freeze_bn(model)`` before the training phase: eval mode on purpose."""
    frozen = _VAL.replace("def validate(", "def freeze_bn(")
    write_project(tmp_path, {"val.py": frozen, "train.py": _TRAIN.replace("validate", "freeze_bn")})
    assert finding_lines(tmp_path / "train.py", "MEM203") == []
