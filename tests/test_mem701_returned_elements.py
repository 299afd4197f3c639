"""MEM701 where a helper's load reaches the model as a tuple's element, past
an early ``return None``, copied key by key, or through a method handing on
an attribute ``__init__`` moved.

- ARFlow's ``load_checkpoint`` returns ``epoch, state_dict``; a trainer of
  another module unpacks it and copies the weights key by key into the model
  it moved (``CallSite.gpu_items``, state_feeds.py).
- CondenseNet's ``load_checkpoint`` returns ``None`` when no checkpoint is
  there: no tensors, as a bare ``return`` (returned_loads.py and the rule).
- RESA's ``Runner.resume()`` hands ``self.net``, which ``__init__`` wrapped
  and moved before calling it, to ``load_network`` of another module
  (project/init_moves.py, ``CallSite.gpu_args``).
"""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
from project_helpers import finding_lines, write_project

from memlint.analysis.training.state_flow import loop_copies
from memlint.project.init_moves import init_placed
from memlint.project.returned_loads import unmapped_return
from memlint.project.state_feeds import gpu_state_calls
from memlint.project.summary import CallSite, summarise_text


def _body(source: str) -> list[ast.stmt]:
    return ast.parse(textwrap.dedent(source)).body


# -- the caller's walk (state_feeds.py) -----------------------------------------


def test_an_unpacked_element_copied_key_by_key_into_a_moved_model_is_recorded():
    body = _body(
        """
        model = model.to(self.device)
        epoch, weights = load_checkpoint(path)
        new_weights = OrderedDict()
        for a, b in zip(model_keys, weight_keys):
            new_weights[a] = weights[b]
        weights = new_weights
        model.load_state_dict(weights)
        """
    )
    call = body[1].value  # type: ignore[attr-defined]
    assert gpu_state_calls(body) == {id(call): {1}}


def test_a_key_of_a_held_value_is_the_same_tensors():
    body = _body(
        """
        model.cuda()
        checkpoint = load_checkpoint(path)
        state = checkpoint["state_dict"]
        model.load_state_dict(state)
        """
    )
    call = body[1].value  # type: ignore[attr-defined]
    assert gpu_state_calls(body) == {id(call): {-1}}


def test_elements_not_loaded_or_a_model_not_moved_record_nothing():
    unmoved = """
        epoch, weights = load_checkpoint(path)
        model.load_state_dict(weights)
    """
    other = """
        model.cuda()
        epoch, weights = load_checkpoint(path)
        weights = fresh_weights()
        model.load_state_dict(weights)
    """
    starred = """
        model.cuda()
        epoch, *rest = load_checkpoint(path)
        model.load_state_dict(rest)
    """
    for source in (unmoved, other, starred):
        body = _body(source)
        unpacked = next(s.value for s in body if isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Tuple))
        assert id(unpacked) not in gpu_state_calls(body)


def test_the_summary_keeps_the_elements_and_round_trips():
    source = """
        import torch
        from utils import load_checkpoint
        def init_model(model, path, device):
            model = model.to(device)
            epoch, weights = load_checkpoint(path)
            model.load_state_dict(weights)
    """
    summary = summarise_text(textwrap.dedent(source))
    assert summary is not None
    [site] = [c for c in summary.calls if c.written == "load_checkpoint"]
    assert (site.gpu_state, site.gpu_items) == (False, (1,))
    assert CallSite.from_json(dict(site.__dict__)) == site


# -- the helper's side ----------------------------------------------------------


def test_an_early_return_none_still_returns_the_load():
    source = """
        def load_checkpoint(args):
            if not exists(args.path):
                return None
            state = torch.load(args.path)
            return state
    """
    fn = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert unmapped_return(fn, {"torch": "torch"}) == 5


def test_a_loop_copying_entries_of_a_name_by_key():
    loop = cst.parse_module("for a, b in zip(keys, names):\n    new[a] = weights[b]\n").body[0]
    assert isinstance(loop, cst.For)
    assert [(name, cst.Module([]).code_for_node(src)) for name, src in loop_copies(loop)] == [("new", "weights")]
    itself = cst.parse_module("for k in keys:\n    d[k] = d[k]\n").body[0]
    other = cst.parse_module("for k in keys:\n    d[k] = f(w[k])\n").body[0]
    assert isinstance(itself, cst.For) and isinstance(other, cst.For)
    assert loop_copies(itself) == [] and loop_copies(other) == []


_TORCH_UTILS = """
    import torch
    def load_checkpoint(model_path):
        weights = torch.load(model_path)
        epoch = None
        if "epoch" in weights:
            epoch = weights.pop("epoch")
        if "state_dict" in weights:
            state_dict = weights["state_dict"]
        else:
            state_dict = weights
        return epoch, state_dict
"""

_TRAINER = """
    from collections import OrderedDict
    from utils.torch_utils import load_checkpoint
    class BaseTrainer:
        def __init__(self, model, device, path):
            self.device = device
            self.model = self._init_model(model, path)
        def _init_model(self, model, path):
            model = model.to(self.device)
            epoch, weights = load_checkpoint(path)
            new_weights = OrderedDict()
            for a, b in zip(list(model.state_dict()), list(weights)):
                new_weights[a] = weights[b]
            weights = new_weights
            model.load_state_dict(weights)
            return model
"""


def _arflow(tmp_path, trainer: str = _TRAINER) -> list[int]:
    write_project(
        tmp_path,
        {
            "pyproject.toml": "",
            "utils/__init__.py": "",
            "utils/torch_utils.py": _TORCH_UTILS,
            "trainer/__init__.py": "",
            "trainer/base_trainer.py": trainer,
        },
    )
    assert finding_lines(tmp_path / "trainer" / "base_trainer.py", "MEM701") == []
    return finding_lines(tmp_path / "utils" / "torch_utils.py", "MEM701")


def test_a_returned_element_loaded_into_a_moved_model_in_another_module_is_reported(tmp_path):
    assert _arflow(tmp_path) == [4]


def test_a_returned_element_loaded_into_a_model_not_moved_is_silent(tmp_path):
    assert _arflow(tmp_path, _TRAINER.replace("model = model.to(self.device)", "pass")) == []


def test_a_returned_element_the_caller_does_not_load_is_silent(tmp_path):
    assert _arflow(tmp_path, _TRAINER.replace("model.load_state_dict(weights)", "print(epoch)")) == []


# -- a method handing on an attribute __init__ moved (init_moves.py) ------------


def _class(source: str) -> ast.ClassDef:
    cls = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(cls, ast.ClassDef)
    return cls


def test_an_attribute_moved_in_init_before_the_method_runs_is_placed():
    cls = _class(
        """
        class Runner:
            def __init__(self, net):
                self.net = net
                self.net = DataParallel(self.net).cuda()
                self.resume()
            def resume(self):
                load_network(self.net, path)
            def validate(self):
                run(self.net)
        """
    )
    assert init_placed(cls) == {"resume": frozenset({"self.net"}), "validate": frozenset({"self.net"})}


def test_traps_place_nothing():
    called_first = """
        class Runner:
            def __init__(self, net):
                self.net = net
                self.resume()
                self.net = DataParallel(self.net).cuda()
            def resume(self):
                load_network(self.net, path)
    """
    through_another = """
        class Runner:
            def __init__(self, net):
                self.net = net
                self.setup()
                self.net = DataParallel(self.net).cuda()
            def setup(self):
                self.resume()
            def resume(self):
                load_network(self.net, path)
    """
    rebound = """
        class Runner:
            def __init__(self, net):
                self.net = net.cuda()
            def swap(self, other):
                self.net = other
            def resume(self):
                load_network(self.net, path)
    """
    branch = """
        class Runner:
            def __init__(self, net, gpu):
                self.net = net.cuda()
                if not gpu:
                    self.net = net
            def resume(self):
                load_network(self.net, path)
    """
    to_cpu = """
        class Runner:
            def __init__(self, net):
                self.net = net.cuda()
            def offload(self):
                self.net.cpu()
            def resume(self):
                load_network(self.net, path)
    """
    assert init_placed(_class(called_first)) == {}
    assert init_placed(_class(through_another)) == {}
    assert init_placed(_class(rebound)) == {}
    assert init_placed(_class(branch)) == {}
    assert "resume" not in init_placed(_class(to_cpu))


_NET_UTILS = """
    import torch
    def load_network_specified(net, model_dir):
        pretrained = torch.load(model_dir)["net"]
        state = {}
        for k, v in pretrained.items():
            state[k] = v
        net.load_state_dict(state, strict=False)
    def load_network(net, model_dir, finetune_from=None):
        if finetune_from:
            load_network_specified(net, finetune_from)
            return
        net.load_state_dict(torch.load(model_dir)["net"])
"""

_RUNNER = """
    import torch
    from .net_utils import load_network
    class Runner:
        def __init__(self, net, cfg):
            self.cfg = cfg
            self.net = torch.nn.DataParallel(net).cuda()
            self.resume()
        def resume(self):
            if not self.cfg.load_from:
                return
            load_network(self.net, self.cfg.load_from, finetune_from=self.cfg.finetune_from)
"""


def _resa(tmp_path, runner: str) -> list[int]:
    write_project(
        tmp_path,
        {
            "pyproject.toml": "",
            "runner/__init__.py": "",
            "runner/net_utils.py": _NET_UTILS,
            "runner/runner.py": runner,
        },
    )
    return finding_lines(tmp_path / "runner" / "net_utils.py", "MEM701")


def test_a_copied_load_reached_through_a_method_handing_a_moved_attribute_is_reported(tmp_path):
    assert _resa(tmp_path, _RUNNER) == [4, 13]


def test_the_method_called_before_the_move_keeps_the_copied_load_silent(tmp_path):
    before = _RUNNER.replace(
        "            self.net = torch.nn.DataParallel(net).cuda()\n            self.resume()\n",
        "            self.net = net\n            self.resume()\n            self.net = torch.nn.DataParallel(net).cuda()\n",
    )
    assert _resa(tmp_path, before) == [13]  # the direct load is reported whatever the model


# -- a tuple of ``None`` for a missing checkpoint (the rule's _ReturnedLoads) ---

_RESTORE = """
    import os
    import torch
    def restore(folder):
        net_file = os.path.join(folder, "net.pt")
        opt_file = os.path.join(folder, "opt.pt")
        if not os.path.exists(net_file):
            return None, None
        net_state = torch.load(net_file)
        opt_state = torch.load(opt_file)
        return net_state, opt_state
"""

_RESUME = """
    import torch
    from tools.store import restore
    net = torch.nn.Linear(4, 4).cuda()
    if RESUME:
        net_state, opt_state = restore("runs/last")
        net.load_state_dict(net_state)
"""


def _restore(tmp_path, resume: str) -> list[int]:
    write_project(
        tmp_path,
        {"pyproject.toml": "", "tools/__init__.py": "", "tools/store.py": _RESTORE, "train.py": resume},
    )
    return finding_lines(tmp_path / "tools" / "store.py", "MEM701")


def test_an_element_beside_a_tuple_of_none_loaded_into_a_moved_model_is_reported(tmp_path):
    assert _restore(tmp_path, _RESUME) == [9]


def test_an_element_beside_a_tuple_of_none_loaded_into_a_model_not_moved_is_silent(tmp_path):
    assert _restore(tmp_path, _RESUME.replace(".cuda()", "")) == []


def test_a_tuple_holding_another_value_than_none_at_the_load_is_silent(tmp_path):
    other = _RESTORE.replace("return None, None", "return fresh_state(), None")
    write_project(
        tmp_path, {"pyproject.toml": "", "tools/__init__.py": "", "tools/store.py": other, "train.py": _RESUME}
    )
    assert finding_lines(tmp_path / "tools" / "store.py", "MEM701") == []
