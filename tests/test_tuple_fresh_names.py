"""A model's ``forward`` that binds a name only to fresh values and returns
it in its tuple (few-shot-meta-baseline's ``MetaBaseline``: ``acc =
....item()``, then ``return loss, acc``): that element keeps no graph
(project/tuple_returns.py). Before, only an element spelled in the
``return`` itself was read."""

from __future__ import annotations

import ast
import textwrap

from project_helpers import finding_lines, write_project

from memlint.project.summary import summarise_text
from memlint.project.tuple_returns import forward_items

_META = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    class Meta(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
        def forward(self, x, y):
            logits = self.fc(x)
            loss = F.cross_entropy(logits, y)
            acc = (torch.argmax(logits, dim=1) == y).float().mean().item()
            return loss, acc
"""

_TRAIN = """
    import torch
    from meta import Meta
    def train(loader):
        model = torch.nn.DataParallel(Meta()).cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        accs = []
        for x, y in loader:
            loss, acc = model(x, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            accs.append(acc)
"""


def _items(source: str) -> dict[str, list[int]]:
    return forward_items(ast.parse(textwrap.dedent(source)), {"torch": "torch"})


def test_a_name_bound_only_to_a_number_is_a_fresh_element():
    assert _items(_META) == {"Meta": [2, 1]}
    summary = summarise_text(textwrap.dedent(_META), always=True)
    assert summary is not None and summary.forward_items == {"Meta": [2, 1]}


def test_a_name_bound_otherwise_too_is_not():
    line = "            acc = (torch.argmax(logits, dim=1) == y).float().mean().item()\n"
    others = [
        "            acc = logits.mean()\n",  # a second binding with history
        "            acc += loss\n",
        "            acc.add_(loss)\n",
        "            for acc in [loss]:\n                pass\n",
        "            acc, _ = loss, loss\n",
        "            with torch.enable_grad() as acc:\n                pass\n",
        "            def inner():\n                nonlocal acc\n                acc = loss\n",
    ]
    for extra in others:
        assert _items(_META.replace(line, line + extra)) == {}, extra
    as_parameter = _META.replace("def forward(self, x, y):", "def forward(self, x, y, acc=0):").replace(line, "")
    assert _items(as_parameter) == {}


def test_the_stored_number_of_a_project_model_keeps_no_graph(tmp_path):
    write_project(tmp_path, {"setup.py": "", "meta.py": _META, "train.py": _TRAIN})
    assert finding_lines(tmp_path / "train.py", "MEM102") == []


def test_an_element_bound_to_a_tensor_with_history_stays_reported(tmp_path):
    meta = _META.replace(".float().mean().item()", ".float().mean() * loss")
    write_project(tmp_path, {"setup.py": "", "meta.py": meta, "train.py": _TRAIN})
    assert finding_lines(tmp_path / "train.py", "MEM102") == [13]
