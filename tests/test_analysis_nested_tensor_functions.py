"""A model class defined in a function (a script's code wrapped in
``main()``) calls the functions beside it: one returning a tensor there
(``future_mask(n).to(d)``) moves a copy, as one of the module does, and the
model is still on the CPU at its load (state_loads._class_moves, MEM701). A
name defined both beside it and at module level is trusted in neither."""

from __future__ import annotations

import textwrap

from memlint.lint.engine import lint_text
from memlint.rule.registry import all_rules

_MASK = """\
    def future_mask(n):
        return torch.ones(n, n).triu(1) == 0
"""

_CLASS = """\
    class Sampler(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.fc = nn.Linear(n, n)

        def forward(self, x):
            mask = future_mask(x.size(1)).to(x.device)
            return self.fc(x * mask)

    model = Sampler(4)
    model.load_state_dict(torch.load("sampler.pt"))
    model.cuda()
"""

_HEAD = "import torch\nimport torch.nn as nn\n\n\n"


def _loads(source: str) -> list[int]:
    rules = [r for r in all_rules() if r.code == "MEM701"]
    return [f.line for f in lint_text(source, "script.py", rules)]


def _in_main(body: str) -> str:
    return _HEAD + "def main():\n" + textwrap.indent(textwrap.dedent(body), "    ") + "\n\nmain()\n"


def test_a_tensor_function_beside_the_class_in_its_function_moves_a_copy():
    assert _loads(_in_main(_MASK + "\n" + _CLASS)) == []


def test_at_module_level_as_before():
    assert _loads(_HEAD + textwrap.dedent(_MASK) + "\n\n" + _in_main(_CLASS)[len(_HEAD) :]) == []


def test_a_function_beside_it_returning_anything_may_move_the_model():
    other = _MASK.replace("return torch.ones(n, n).triu(1) == 0", "return n")
    assert _loads(_in_main(other + "\n" + _CLASS)) == [19]  # the load


def test_a_name_defined_beside_it_and_at_module_level_is_trusted_in_neither():
    other = textwrap.dedent(_MASK.replace("return torch.ones(n, n).triu(1) == 0", "return n"))
    assert _loads(_HEAD + other + "\n\n" + _in_main(_MASK + "\n" + _CLASS)[len(_HEAD) :]) == [23]  # the load
