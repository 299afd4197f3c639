"""``self.<attr> = <local>``: an attribute typed through a name of the
method that assigns it (pointer_summarizer's ``Model.__init__``:
``encoder = Encoder()``, ``encoder = encoder.cuda()``, ``self.encoder =
encoder``). The local is typed as the scope's other names are (every
binding a typed value); a local with one untyped binding types nothing."""

from __future__ import annotations

import ast
import textwrap

from project_helpers import finding_lines, write_project

from memlint.project.object_types import object_types

_BINDINGS = {"torch": "torch", "nn": "torch.nn", "Gen": "networks.Gen"}


def _facts(source: str):
    return object_types(ast.parse(textwrap.dedent(source)), _BINDINGS, False)


_HOLDER = """\
    class Holder:
        def __init__(self, dim, flag):
            gen = Gen(dim)
            if flag:
                gen = gen.cuda()
            self.gen = gen
            self.wrapped = nn.DataParallel(gen)

        def run(self, x):
            return self.gen(x)
"""


def test_an_attribute_assigned_a_typed_local_is_typed():
    facts = _facts(_HOLDER)
    assert ("Holder", "gen", ("networks.Gen",)) in facts.attr_types
    assert ("Holder", "wrapped", ("networks.Gen",)) in facts.attr_types
    assert [f[:2] for f in facts.forwards] == [("Holder.run", "gen")]


def test_a_local_with_an_untyped_binding_types_nothing():
    source = _HOLDER.replace("gen = gen.cuda()", "gen = self.pretrained")
    facts = _facts(source)
    assert not [t for t in facts.attr_types if t[1] in ("gen", "wrapped")]
    assert facts.forwards == []


def test_a_parameter_is_no_typed_local():
    facts = _facts(
        """\
        class Holder:
            def __init__(self, gen):
                self.gen = gen

            def run(self, x):
                return self.gen(x)
        """
    )
    assert not [t for t in facts.attr_types if t[1] == "gen"]
    assert ("Holder", "gen", "gen") in facts.init_attrs


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

        def encode(self, images):
            return self.enc(images)
"""

_TRAINER = """\
    import torch
    import torch.nn as nn
    from networks import Gen

    class Trainer(nn.Module):
        def __init__(self, dim):
            super().__init__()
            gen = Gen(dim)
            gen = gen.cuda()
            self.gen_a = gen
"""

_SCRIPT = """\
    import torch
    from trainer import Trainer

    loader = [torch.zeros(1, 3, 8, 8)]
    trainer = Trainer(3)
    trainer.eval()
    for images in loader:
        content = trainer.gen_a.encode(images)
        print(content.mean().item())
"""


def _lint(tmp_path, trainer: str) -> list[int]:
    write_project(tmp_path, {"setup.py": "", "networks.py": _NETWORKS, "trainer.py": trainer, "test_batch.py": _SCRIPT})
    return finding_lines(tmp_path / "test_batch.py", "MEM201")


def test_a_method_run_through_an_attribute_typed_from_a_local_is_a_forward(tmp_path):
    assert _lint(tmp_path, _TRAINER) == [7]


def test_an_attribute_from_a_local_bound_to_an_unknown_value_is_silent(tmp_path):
    trainer = _TRAINER.replace("gen = gen.cuda()", "if dim > 3:\n                gen = self.pretrained")
    assert _lint(tmp_path, trainer) == []
