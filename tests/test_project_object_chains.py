"""MEM201 through a receiver chain typed by the project and through a
bound-method alias (MUNIT ``test_batch.py``: ``trainer.eval()``, then
``encode = trainer.gen_a.encode if a2b else trainer.gen_b.encode`` and
``encode(images)`` in the loop): ``trainer`` is a project class whose
``__init__`` assigns ``self.gen_a = Gen(...)``, and ``Gen.encode`` runs a
project ``nn.Module`` with grad on."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

_NETWORKS = """\
    import torch.nn as nn

    class Encoder(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.conv = nn.Conv2d(dim, dim, 3)

        def forward(self, x):
            return self.conv(x)

    class Gen(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.enc = Encoder(dim)
            self.dec = Encoder(dim)

        def encode(self, images):
            return self.enc(images)

        def decode(self, content):
            return self.dec(content)

        def describe(self):
            return str(self)
"""

_TRAINER = """\
    import torch
    import torch.nn as nn
    from networks import Gen

    class Trainer(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.gen_a = Gen(dim)
            self.gen_b = Gen(dim)
"""

_SCRIPT = """\
    import sys
    import torch
    from trainer import Trainer

    a2b = len(sys.argv) > 1
    loader = [torch.zeros(1, 3, 8, 8)]
    trainer = Trainer(3)
    trainer.eval()
    encode = trainer.gen_a.encode if a2b else trainer.gen_b.encode
    for images in loader:
        content = encode(images)
        print(content.mean().item())
"""


def _lint(tmp_path, script: str) -> list[int]:
    write_project(tmp_path, {"setup.py": "", "networks.py": _NETWORKS, "trainer.py": _TRAINER, "test_batch.py": script})
    return finding_lines(tmp_path / "test_batch.py", "MEM201")


def test_a_bound_method_alias_of_typed_submodules_is_a_forward(tmp_path):
    assert _lint(tmp_path, _SCRIPT) == [10]


def test_a_method_called_through_a_typed_attribute_chain_is_a_forward(tmp_path):
    script = _SCRIPT.replace("content = encode(images)", "content = trainer.gen_a.encode(images)")
    assert _lint(tmp_path, script) == [10]


def test_an_alias_one_arm_of_which_runs_no_layer_is_silent(tmp_path):
    script = _SCRIPT.replace("else trainer.gen_b.encode", "else trainer.gen_b.describe")
    assert _lint(tmp_path, script) == []


def test_an_object_switched_back_to_train_is_silent(tmp_path):
    script = _SCRIPT.replace("trainer.eval()", "trainer.eval()\n    trainer.train()")
    assert _lint(tmp_path, script) == []


def test_a_loop_that_backpropagates_through_it_is_silent(tmp_path):
    script = _SCRIPT.replace("print(content.mean().item())", "content.mean().backward()")
    assert _lint(tmp_path, script) == []


def test_an_opaque_call_before_the_switch_to_eval_is_no_mc_dropout(tmp_path):
    script = _SCRIPT.replace("trainer = Trainer(3)", "set_train_mode(loader)\n    trainer = Trainer(3)")
    script = script.replace("import sys", "import sys\n    from helpers import set_train_mode")
    assert _lint(tmp_path, script) == [12]


def test_dropout_enabled_after_the_switch_to_eval_is_silent(tmp_path):
    script = _SCRIPT.replace("trainer.eval()", "trainer.eval()\n    enable_dropout(trainer)")
    script = script.replace("import sys", "import sys\n    from helpers import enable_dropout")
    assert _lint(tmp_path, script) == []
