"""A named method of a model held in ``self.<attr>``, whatever the
attribute's name says (issue 29, Wav2Lip's SyncNetInstance:
``self.__S__ = S(...).cuda()`` in ``__init__``, ``S`` from a star import,
then ``self.__S__.forward_aud(x)`` in an evaluation loop): the call is a
forward when the class assigns the attribute only a project class and every
project class defining the method is an ``nn.Module`` running a layer in it."""

from __future__ import annotations

import ast

from project_helpers import finding_lines, write_project

from memlint.gate.facts import GateFacts
from memlint.project.object_types import ObjectTypes
from memlint.project.typed_objects import model_methods

_MODEL = """\
    import torch.nn as nn

    class S(nn.Module):
        def __init__(self, width=1024):
            super().__init__()
            self.netfcaud = nn.Linear(64, width)

        def forward_aud(self, x):
            return self.netfcaud(x)
"""

_INSTANCE = """\
    import torch
    from SyncNetModel import *

    class SyncNetInstance(torch.nn.Module):
        def __init__(self, width=1024):
            super().__init__()
            self.__S__ = S(width=width).cuda()

        def evaluate(self, batches):
            self.__S__.eval()
            feats = []
            for i in range(0, len(batches)):
                out = self.__S__.forward_aud(batches[i].cuda())
                feats.append(out.data.cpu())
            return torch.cat(feats, 0)
"""


def test_a_self_attribute_built_from_a_project_model_runs_its_named_forward(tmp_path):
    write_project(tmp_path, {"SyncNetModel.py": _MODEL, "instance.py": _INSTANCE})
    assert finding_lines(tmp_path / "instance.py", "MEM201") == [12]


def test_a_named_method_of_a_plain_class_is_no_forward(tmp_path):
    plain = _MODEL.replace("class S(nn.Module):", "class S:").replace("super().__init__()", "pass")
    write_project(tmp_path, {"SyncNetModel.py": plain, "instance.py": _INSTANCE})
    assert finding_lines(tmp_path / "instance.py", "MEM201") == []


def test_an_attribute_also_given_a_value_from_outside_is_not_typed(tmp_path):
    handed = _INSTANCE.replace(
        "        def evaluate(self, batches):",
        "        def use(self, other):\n            self.__S__ = other\n\n        def evaluate(self, batches):",
    ).replace("            self.__S__.eval()\n", "")
    write_project(tmp_path, {"SyncNetModel.py": _MODEL, "instance.py": handed})
    assert finding_lines(tmp_path / "instance.py", "MEM201") == []


def test_an_attribute_given_a_value_from_outside_and_switched_to_eval_runs_the_named_forward(tmp_path):
    """Not typed, but ``self.__S__.eval()`` in the same function says it is
    a module, and every project class defining ``forward_aud`` runs a layer
    in it (ObjectTable._switched_before)."""
    handed = _INSTANCE.replace(
        "        def evaluate(self, batches):",
        "        def use(self, other):\n            self.__S__ = other\n\n        def evaluate(self, batches):",
    )
    write_project(tmp_path, {"SyncNetModel.py": _MODEL, "instance.py": handed})
    assert finding_lines(tmp_path / "instance.py", "MEM201") == [15]


def test_a_method_not_named_for_evaluation_is_not_judged(tmp_path):
    """Other modules call a method through an instance, and the project
    reads the mode of those calls only for names of evaluation: MUNIT's
    ``sample()``, wrapped in ``no_grad`` by train.py, stays silent."""
    sampled = _INSTANCE.replace("def evaluate(self, batches):", "def sample(self, batches):")
    caller = """\
        import torch
        from instance import SyncNetInstance

        def main(batches):
            inst = SyncNetInstance()
            with torch.no_grad():
                inst.sample(batches)
    """
    write_project(tmp_path, {"SyncNetModel.py": _MODEL, "instance.py": sampled, "train.py": caller})
    assert finding_lines(tmp_path / "instance.py", "MEM201") == []


def test_model_methods_reads_typed_self_attributes():
    objects = ObjectTypes(
        receivers=[
            ("Inst.evaluate", "self.__S__", "forward_aud"),
            ("Inst.evaluate", "self.__S__", "eval"),
            ("Inst.evaluate", "self.reader", "read_all"),
            ("Other.run", "self.__S__", "forward_lip"),
        ],
        attr_types=[("Inst", "__S__", ("*S",))],
    )
    # ``eval`` is nn.Module's own; ``self.reader`` has no type; ``Other`` assigns no ``__S__``.
    assert model_methods(objects) == {"forward_aud"}


def test_the_gate_lets_a_bound_receivers_method_through():
    facts = GateFacts(
        ast.parse(
            "class I:\n    def __init__(self):\n        self.__S__ = S()\n    def f(self, x):\n        return self.__S__.forward_aud(x)\n"
        )
    )
    assert facts.calls_a_model_method
    facts = GateFacts(ast.parse("def f(reader, x):\n    return reader.forward_aud(x)\n"))
    assert not facts.calls_a_model_method
    # a name bound to a call not spelled as a class (a forward's output) is no built module
    facts = GateFacts(ast.parse("def f(model, x):\n    out = model(x)\n    return out.sum()\n"))
    assert not facts.calls_a_model_method
