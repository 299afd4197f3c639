"""A forward decorated with grad off, seen through an attribute typed across
modules (LLaMA's ``generation.py``: ``LLaMA.__init__(self, model)`` keeps
``self.model``, ``generate`` calls ``self.model.forward(tokens)`` in its
decoding loop, and ``Transformer.forward`` in ``model.py`` is decorated
``@torch.inference_mode()``): the loop builds no graph (MEM201, MEM102
silent), nor do callers of ``generate`` (MEM201 through the object)."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

_MODEL = """\
    import torch
    from torch import nn

    class Transformer(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.out = nn.Linear(dim, dim)

        @torch.inference_mode()
        def forward(self, tokens):
            return self.out(tokens)
"""

_GENERATION = """\
    import torch

    class LLaMA:
        def __init__(self, model):
            self.model = model

        def generate(self, prompts):
            kept = []
            for tokens in prompts:
                logits = self.model.forward(tokens)
                kept.append(logits)
            return kept
"""

_EXAMPLE = """\
    import torch
    from model import Transformer
    from generation import LLaMA

    def main(batches):
        generator = LLaMA(Transformer(4).eval())
        for prompts in batches:
            print(generator.generate(prompts))

    main([[torch.zeros(1, 4)]])
"""


def _lint(tmp_path, model: str = _MODEL) -> dict[str, list[int]]:
    write_project(
        tmp_path,
        {"setup.py": "", "model.py": model, "generation.py": _GENERATION, "example.py": _EXAMPLE},
    )
    return {
        "generation 201": finding_lines(tmp_path / "generation.py", "MEM201"),
        "generation 102": finding_lines(tmp_path / "generation.py", "MEM102"),
        "example 201": finding_lines(tmp_path / "example.py", "MEM201"),
    }


def test_a_forward_decorated_inference_mode_through_a_typed_attribute_builds_no_graph(tmp_path):
    assert _lint(tmp_path) == {"generation 201": [], "generation 102": [], "example 201": []}


def test_no_grad_decorator_counts_too(tmp_path):
    model = _MODEL.replace("@torch.inference_mode()", "@torch.no_grad()")
    assert _lint(tmp_path, model) == {"generation 201": [], "generation 102": [], "example 201": []}


def test_a_forward_inherited_from_a_decorated_project_base_builds_no_graph(tmp_path):
    model = _MODEL + ("\n    class Small(Transformer):\n        pass\n")
    write_project(tmp_path, {"setup.py": "", "model.py": model, "generation.py": _GENERATION})
    (tmp_path / "example.py").write_text(
        "import torch\nfrom model import Small\nfrom generation import LLaMA\n\n"
        "def main(batches):\n    generator = LLaMA(Small(4).eval())\n"
        "    for prompts in batches:\n        print(generator.generate(prompts))\n"
    )
    assert finding_lines(tmp_path / "generation.py", "MEM201") == []
    assert finding_lines(tmp_path / "example.py", "MEM201") == []


def test_an_undecorated_forward_still_builds_a_graph(tmp_path):
    # The trap: the same shape without the decorator is the bug.
    found = _lint(tmp_path, _MODEL.replace("        @torch.inference_mode()\n", ""))
    assert found["generation 102"] and found["example 201"]


def test_a_subclass_overriding_forward_without_the_decorator_builds_a_graph(tmp_path):
    model = _MODEL + (
        "\n    class Tuned(Transformer):\n        def forward(self, tokens):\n            return self.out(tokens) * 2\n"
    )
    write_project(tmp_path, {"setup.py": "", "model.py": model, "generation.py": _GENERATION})
    (tmp_path / "example.py").write_text(
        "import torch\nfrom model import Transformer, Tuned\nfrom generation import LLaMA\n\n"
        "def main(batches, big):\n    generator = LLaMA((Tuned(4) if big else Transformer(4)).eval())\n"
        "    for prompts in batches:\n        print(generator.generate(prompts))\n"
    )
    assert finding_lines(tmp_path / "generation.py", "MEM102")


def test_an_untyped_construction_site_keeps_the_finding(tmp_path):
    write_project(tmp_path, {"setup.py": "", "model.py": _MODEL, "generation.py": _GENERATION})
    (tmp_path / "example.py").write_text(
        "import torch\nfrom model import Transformer\nfrom generation import LLaMA\n\n"
        "def main(batches, model):\n    generator = LLaMA(model)\n"
        "    for prompts in batches:\n        print(generator.generate(prompts))\n"
        "    LLaMA(Transformer(4))\n"
    )
    # ``model`` may be any module: nothing proves its forward is decorated.
    assert finding_lines(tmp_path / "generation.py", "MEM102")
