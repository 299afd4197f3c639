"""The summary's helpers read each part of a module's tree once: class_moves.py
and parameterless.py ask of the same methods (node_lists.py)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import textwrap
from collections import Counter

from memlint.project.arg_modes import ModeTrace
from memlint.project.summary import summarise

# A model class with a move in a method (the summary asks class_moves.py
# whether it moves itself; not of its input: forward_copies.py) that is also a parameterless candidate (its
# methods are read again by parameterless.py).
MOVING_MODULE = textwrap.dedent(
    """
    import torch
    from torch import nn

    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.k = 2

        def forward(self, x):
            return x * self.k.to(x.device)

    class Shift(nn.Module):
        def forward(self, x):
            return self.cuda()(x) + 1
    """
)


def _count_walks(monkeypatch) -> Counter:
    walked: Counter = Counter()
    names = ["memlint.project.class_moves", "memlint.project.parameterless", "memlint.project.node_lists"]
    for name in names:
        if importlib.util.find_spec(name) is None:
            continue  # before node_lists.py
        module = importlib.import_module(name)
        real = module.nodes

        def recording(part, real=real):
            walked[id(part)] += 1
            return real(part)

        monkeypatch.setattr(module, "nodes", recording)
    return walked


def test_each_method_is_walked_once_for_class_moves_and_parameterless(monkeypatch):
    tree = ast.parse(MOVING_MODULE)
    methods = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    walked = _count_walks(monkeypatch)
    summary = summarise(tree)
    assert summary.model_classes == ["Scale", "Shift"]
    assert summary.parameterless == ["Scale", "Shift"]  # both read to the end
    assert summary.cpu_classes == []  # both walked by class_moves
    assert all(walked[id(m)] == 1 for m in methods), [walked[id(m)] for m in methods]
    assert max(walked.values()) == 1


def test_summary_of_the_same_tree_twice_is_the_same():
    # The kept node lists belong to one summary: a second one of the same
    # tree reads the same facts.
    tree = ast.parse(MOVING_MODULE)
    assert summarise(tree).to_json() == summarise(tree).to_json()


def test_a_mode_event_is_a_slotted_object():
    # One per call the walk cannot read (most calls of every module): no
    # instance dict, no frozen dataclass's object.__setattr__ per field.
    trace = ModeTrace()
    trace.run((1, 0), ast.parse("f(x)").body[0].value)  # type: ignore[attr-defined]
    event = trace.events[0]
    assert event.kind == "run" and event.pos == (1, 0)
    assert not hasattr(event, "__dict__")


def test_checkpoint_files_read_only_a_module_that_saves_or_loads_with_torch(monkeypatch):
    # ``np.load``/``json.load`` make the walk ask for checkpoint files; the
    # second walk of the whole module (checkpoint_files) runs only when some
    # callee is torch.save/torch.load under the module's imports.
    from memlint.project import summary as summary_module

    calls: list[ast.Module] = []
    real = summary_module.checkpoint_facts

    def counting(tree, bindings):
        calls.append(tree)
        return real(tree, bindings)

    monkeypatch.setattr(summary_module, "checkpoint_facts", counting)
    plain = "import json\nimport numpy as np\nimport torch\nw = np.load('w.npy')\ncfg = json.load(open('c'))\n"
    assert summarise(ast.parse(plain)).other_saved == []
    assert calls == []
    # ``save`` imported from torch, called bare; the trigger is another module's ``.load``.
    saving = plain + "from torch import save\ndef dump(net):\n    save(net.state_dict(), 'net.pt')\n"
    summary = summarise(ast.parse(saving))
    assert len(calls) == 1 and summary.other_saved == ["net.pt"]
    # In a lambda (a part the walk does not enter) under an alias bound after it.
    late = plain + "dump = lambda net: T.save(net.cpu().state_dict(), 'cpu.pt')\nimport torch as T\n"
    summary = summarise(ast.parse(late))
    assert len(calls) == 2 and summary.cpu_saved == ["cpu.pt"]


def test_may_set_mode_splits_a_name_once(monkeypatch):
    # Asked of most calls of every module: each distinct name is split into
    # tokens once, and the answers stay what they were.
    from memlint.project import arg_modes

    split: list[str] = []
    real = arg_modes.name_tokens

    def counting(name):
        split.append(name)
        return real(name)

    monkeypatch.setattr(arg_modes, "name_tokens", counting)
    # An empty memo: another test in the same worker may have asked ``apply``.
    monkeypatch.setattr(arg_modes, "_MAY_SET_MODE", {})
    names = ["enable_dropout_xq", "set_eval_mode_xq", "get_loader_xq", "apply", "Linear"]
    first = [arg_modes.may_set_mode(n) for n in names]
    assert first == [True, True, False, True, False]
    assert [arg_modes.may_set_mode(n) for n in names] == first
    assert sorted(split) == sorted(n for n in names if not n[:1].isupper())
