"""MEM701 on AoANet's shape (issue 29, the twenty-second batch): caption
models whose only moves are of tensors they draw or index (project/
class_moves.py with project/array_indexes.py), built by ``setup(opt)`` from
command-line options read as an optimizer's name (project/cpu_builders.py,
analysis/training/optimizer_args.py), loaded on the CPU and moved after."""

from __future__ import annotations

import ast
import textwrap

from project_helpers import finding_lines, write_project

from memlint.project.array_indexes import array_values, indexes_an_array
from memlint.project.cpu_builders import builders
from memlint.project.summary import summarise_text

_BEAMS = """
    import torch
    import torch.nn as nn
    class Beams(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.fc = nn.Linear(n, n)
        def search(self, n, steps):
            table = [torch.zeros(steps, n).long() for _ in range(2)]
            for t in range(steps):
                for g in range(2):
                    table[g] = self.step(table[g], t)
                    best = table[g][:, 0]
                    it = table[g][t]
                    self.fc(it.cuda().float())
            return best
        def step(self, beams, t):
            return beams
"""


def _cpu_classes(source: str) -> list[str]:
    summary = summarise_text(textwrap.dedent(source), always=True)
    assert summary is not None
    return summary.cpu_classes


def test_a_row_of_a_value_indexed_as_an_array_moves_a_copy():
    """Before, ``it.cuda()`` of ``it = table[g][t]`` counted as a move of the model."""
    assert _cpu_classes(_BEAMS) == ["Beams"]


def test_a_row_of_a_value_not_indexed_as_an_array_or_of_a_part_still_moves():
    unread = _BEAMS.replace("best = table[g][:, 0]", "best = table[g]")
    part = _BEAMS.replace("it = table[g][t]", "it = self.fc")
    kept = _BEAMS.replace("self.fc(it.cuda().float())", 'self.register_buffer("kept", it.cuda())')
    for source in (unread, part, kept):
        assert _cpu_classes(source) == []


def test_array_values_are_the_values_subscripted_by_a_tuple_with_a_slice():
    tree = ast.parse("a[:, 0]\nb[1, 2]\nc[0]\nd.e[:t, k]\n")
    found = array_values(ast.walk(tree))
    assert found == {ast.dump(ast.parse(s, mode="eval").body) for s in ("a", "d.e")}
    assert indexes_an_array(ast.parse("a[3]", mode="eval").body, found)
    assert not indexes_an_array(ast.parse("b[3]", mode="eval").body, found)
    assert not indexes_an_array(ast.parse("a", mode="eval").body, found)


_SAMPLER = """
    import numpy as np
    import torch
    import torch.nn as nn
    def future_mask(n):
        return torch.from_numpy(np.triu(np.ones((1, n, n)), k=1)) == 0
    class Sampler(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.fc = nn.Linear(n, n)
        def sample(self, probs, x):
            it = torch.multinomial(probs.cpu(), 1).cuda()
            mask = future_mask(x.size(1)).to(x.device)
            return self.fc(x * mask) + it
"""


def test_a_draw_of_torch_and_a_module_function_returning_a_tensor_move_copies():
    """Before, ``torch.multinomial(...).cuda()`` (FCModel) and
    ``subsequent_mask(n).to(d)`` (TransformerModel) moved the model."""
    assert _cpu_classes(_SAMPLER) == ["Sampler"]


def test_a_module_function_returning_a_layer_or_torch_load_still_moves():
    layer = _SAMPLER.replace("return torch.from_numpy(np.triu(np.ones((1, n, n)), k=1)) == 0", "return nn.Linear(n, n)")
    loaded = _SAMPLER.replace("torch.multinomial(probs.cpu(), 1)", "torch.load(probs)")
    for source in (layer, loaded):
        assert _cpu_classes(source) == []


_SETUP = """\
import torch.nn as nn
class Fc(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.fc = nn.Linear(opt.size, opt.size)
class Att(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.fc = nn.Linear(opt.size, 2)
def setup(opt):
    if opt.kind == "fc":
        model = Fc(opt)
    elif opt.kind == "att":
        model = Att(opt)
    else:
        raise Exception(opt.kind)
    return model
"""


def _builders(source: str) -> list[str]:
    tree = ast.parse(source)
    functions = [s.name for s in tree.body if isinstance(s, ast.FunctionDef)]
    classes = [s.name for s in tree.body if isinstance(s, ast.ClassDef)]
    return builders(tree, classes, functions)[0]


def test_a_builder_handing_its_classes_an_optimizer_named_value_builds_on_the_cpu():
    """Before, ``Fc(opt)`` might wrap a model (``opt`` read as an optimizer)."""
    assert _builders(_SETUP) == ["setup"]


def test_a_builder_handing_its_classes_a_model_named_value_is_no_builder():
    assert _builders(_SETUP.replace("model = Att(opt)", "model = Att(net)")) == []


_EVAL = """\
import torch
import models
def main(opt):
    model = models.setup(opt)
    model.load_state_dict(torch.load(opt.path))
    model.cuda()
"""


def test_a_model_from_a_project_setup_of_cpu_classes_is_on_the_cpu_at_the_load(tmp_path):
    write_project(tmp_path, {"models/__init__.py": _SETUP, "eval.py": _EVAL})
    assert finding_lines(tmp_path / "eval.py", "MEM701") == []


def test_a_model_from_a_setup_with_a_moving_class_keeps_the_finding(tmp_path):
    moving = _SETUP.replace("self.fc = nn.Linear(opt.size, 2)", "self.fc = nn.Linear(opt.size, 2).cuda()")
    write_project(tmp_path, {"models/__init__.py": moving, "eval.py": _EVAL})
    assert finding_lines(tmp_path / "eval.py", "MEM701") == [5]


_HOLDER = """\
import torch
import torch.nn as nn
class Holder(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.opt = opt
        self.fc = nn.Linear(2, 2)
def load(opt, path):
    holder = Holder(opt)
    holder.load_state_dict(torch.load(path))
    return holder
def run(x):
    return x.cuda()
"""


def test_a_class_handed_an_optimizer_parameter_is_built_on_the_cpu(tmp_path):
    write_project(tmp_path, {"load.py": _HOLDER})
    assert finding_lines(tmp_path / "load.py", "MEM701") == []


def test_a_class_handed_an_optimizer_built_here_is_not_claimed(tmp_path):
    built = _HOLDER.replace(
        "def load(opt, path):\n", "def load(net, path):\n    opt = torch.optim.Adam(net.parameters())\n"
    )
    write_project(tmp_path, {"load.py": built})
    assert finding_lines(tmp_path / "load.py", "MEM701") == [11]
