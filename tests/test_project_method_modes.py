"""The grad mode other modules call a method in, by its name
(project/method_modes.py): XLM's ``TransformerModel.generate_beam``, whose
decoding loop no call of its own module reaches and whose only caller,
``decoder.generate_beam(...)`` in evaluator.py, runs under the
``torch.no_grad()`` of the method that calls it (MEM201, eighth batch)."""

from __future__ import annotations

import textwrap

from project_helpers import finding_lines, write_project

from memlint.project.summary import summarise_text

_MODEL = """
    import torch
    import torch.nn as nn
    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)
        def generate_beam(self, src, max_len):
            out = []
            cur_len = 0
            while cur_len < max_len:
                scores = self.proj(src)
                out.append(scores.argmax(-1))
                cur_len += 1
            return out
"""

_EVALUATOR = """
    import torch
    class Evaluator:
        def __init__(self, decoder):
            self.decoder = decoder
        def run_all_evals(self, data):
            with torch.no_grad():
                self.evaluate_mt(data)
        def evaluate_mt(self, data):
            for src in data:
                self.decoder.generate_beam(src, 10)
"""


def _summary(text: str):
    found = summarise_text(textwrap.dedent(text), always=True)
    assert found is not None
    return found


def test_a_method_called_only_from_a_method_entered_under_no_grad_is_called_off():
    summary = _summary(_EVALUATOR)
    assert "generate_beam" in summary.methods_off
    assert "generate_beam" not in summary.methods_on


def test_a_method_named_for_evaluation_called_with_grad_on_is_called_on():
    summary = _summary("import torch\ndef main(decoder, x):\n    return decoder.generate_beam(x, 10)\n")
    # with the receiver the project may type (test_project_dispatched_methods.py)
    assert summary.methods_on == ["generate_beam@main:decoder"]
    assert "generate_beam" not in summary.methods_off


def test_a_call_on_an_instance_of_a_class_defining_the_name_itself_is_not_counted_on():
    """``b = Beam(); b.generate()`` and ``self.generate()`` in ``Beam`` run
    ``Beam.generate``: they say nothing of another module's ``generate``."""
    summary = _summary(
        """
        import torch
        class Beam:
            def generate(self, x):
                return x
            def run(self, x):
                return self.generate(x)
        def main(x):
            b = Beam()
            return b.generate(x)
        """
    )
    assert summary.methods_on == []  # neither the name nor a typed call of it


def test_a_method_other_modules_call_only_under_no_grad_is_silent(tmp_path):
    write_project(tmp_path, {"transformer.py": _MODEL, "evaluator.py": _EVALUATOR})
    assert finding_lines(tmp_path / "transformer.py", "MEM201") == []


def test_a_method_another_module_calls_with_grad_on_stays_reported(tmp_path):
    translate = """
        import torch
        from transformer import Decoder
        def main(batches):
            decoder = Decoder().eval()
            for src in batches:
                decoder.generate_beam(src, 10)
    """
    write_project(tmp_path, {"transformer.py": _MODEL, "evaluator.py": _EVALUATOR, "translate.py": translate})
    assert finding_lines(tmp_path / "transformer.py", "MEM201") == [11]


def test_a_method_nobody_in_the_project_calls_is_judged_by_its_own_body(tmp_path):
    """A helper is judged by its callers (RULES.md, MEM201): with none, its
    decoding loop (no data, no ``.eval()``) runs in a mode nobody can tell
    (s25, SymbolicMathematics' ``generate``); switched to eval, it is an
    evaluation by itself."""
    write_project(tmp_path, {"transformer.py": _MODEL})
    assert finding_lines(tmp_path / "transformer.py", "MEM201") == []
    switched = _MODEL.replace("            out = []\n", "            self.eval()\n            out = []\n")
    write_project(tmp_path, {"transformer.py": switched})
    assert finding_lines(tmp_path / "transformer.py", "MEM201") == [12]


def test_a_method_its_own_module_calls_with_grad_on_is_judged_there(tmp_path):
    """A call in the method's own module decides its mode as before; the
    name's callers elsewhere are asked only when none here reaches it."""
    model = _MODEL + "\n    def sample(model, src):\n        return model.generate_beam(src, 5)\n"
    write_project(tmp_path, {"transformer.py": model, "evaluator.py": _EVALUATOR})
    assert finding_lines(tmp_path / "transformer.py", "MEM201") == [11]


def test_the_language_servers_view_says_the_same(tmp_path):
    import memlint.project.index as index
    from memlint.project.index import view_from_disk
    from memlint.project.live import Workspace

    write_project(tmp_path, {"transformer.py": _MODEL, "evaluator.py": _EVALUATOR, "setup.py": ""})
    index._MEMO.clear()
    disk = view_from_disk(str(tmp_path / "transformer.py"))
    assert disk is not None and disk.methods_off_elsewhere == ("generate_beam",)
    assert Workspace().view(str(tmp_path / "transformer.py")) == disk


# flowtron: the model's ``infer`` calls its encoder's ``infer`` through an
# attribute; the only grad-on call of ``self.infer`` sits in a method nothing
# calls. inference.py runs ``model.infer`` under ``torch.no_grad()``.
_FLOW_MODEL = """
    import torch
    import torch.nn as nn
    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = nn.ModuleList([nn.Conv1d(4, 4, 3) for _ in range(3)])
        def infer(self, x):
            outs = []
            for conv in self.convs:
                outs.append(conv(x))
            return outs
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder()
        def infer(self, x):
            return self.encoder.infer(x)
        def check(self, x):
            return self.infer(x)
"""

_FLOW_INFERENCE = """
    import torch
    from model import Net
    def main(x):
        model = Net()
        with torch.no_grad():
            return model.infer(x)
"""


def test_a_method_reached_through_an_attribute_from_a_method_called_off_elsewhere_is_silent(tmp_path):
    write_project(tmp_path, {"model.py": _FLOW_MODEL, "inference.py": _FLOW_INFERENCE})
    assert finding_lines(tmp_path / "model.py", "MEM201") == []


def test_the_attribute_call_stays_reported_without_the_no_grad_caller(tmp_path):
    write_project(tmp_path, {"model.py": _FLOW_MODEL})
    assert finding_lines(tmp_path / "model.py", "MEM201") == [10]


def test_a_grad_on_call_in_a_called_function_of_the_module_still_decides(tmp_path):
    model = _FLOW_MODEL + "\n    def run(net, batches):\n        for x in batches:\n            net.infer(x)\n"
    model += "\n    run(Net(), [])\n"
    write_project(tmp_path, {"model.py": model, "inference.py": _FLOW_INFERENCE})
    assert 10 in finding_lines(tmp_path / "model.py", "MEM201")
