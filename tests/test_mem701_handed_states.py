"""MEM701 on loads that reach a model on a device by ways the fifteenth batch
showed: a model alias in the caller (``pure_model = model.module if ... else
model``: project/state_feeds.py), a model parameter handed on by a caller of
the same module (analysis/training/device_params.py), a project helper that
copies a state into ``model.state_dict()`` entry by entry (project/
state_copies.py) reached through a package's star re-export (project/
index.py), an attribute aliasing a model moved in ``__init__`` (the rule's
``_Moves``); and a load read at a key only CPU saves write (analysis/
training/cpu_saves.py ``_SavedKeys``)."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
from project_helpers import finding_lines, write_project

from memlint.analysis.scope.names import ImportTable
from memlint.analysis.training.cpu_saves import cpu_saves
from memlint.project.gpu_args import gpu_arg_calls
from memlint.project.state_copies import copied_params
from memlint.project.summary import summarise_text

# -- the caller's alias of a moved model (gpu_args.py via state_feeds.py) ----------


def _args(text: str) -> dict[int, list[str]]:
    tree = ast.parse(textwrap.dedent(text))
    found = gpu_arg_calls(tree.body)
    return {
        c.lineno: [key for key, _via in found[id(c)]]
        for c in ast.walk(tree)
        if isinstance(c, ast.Call) and id(c) in found
    }


def test_an_alias_of_a_moved_model_in_every_arm_is_handed_on_a_device():
    assert _args(
        """\
        model = build()
        model.cuda()
        pure_model = model.module if isinstance(model, DataParallel) else model
        load_part(pure_model, path)
        inner = model.module
        load_part(inner, path)
        """
    ) == {3: ["0"], 4: ["0"], 6: ["0"]}  # isinstance(model, ...) too: any call is asked


def test_an_alias_with_an_arm_not_moved_says_nothing():
    assert (
        _args(
            """\
        model = build()
        model.cuda()
        other = build()
        either = model if flag else other
        load_part(either, path)
        before = other
        other.cuda()
        load_part(before, path)
        device = model.device
        load_part(device, path)
        """
        )
        == {}
    )


# -- an entry-wise copy into a parameter's state (state_copies.py) -------------


def _copied(text: str) -> set[tuple[str, str]]:
    fn = ast.parse(textwrap.dedent(text)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    return copied_params(fn)


def test_a_loop_copying_each_value_into_the_models_own_state_is_a_load():
    assert _copied(
        """\
        def load_state_dict(model, state_dict, no_ignore=False):
            own_state = model.state_dict()
            for name, param in state_dict.items():
                if name not in own_state:
                    continue
                if isinstance(param, torch.nn.Parameter):
                    param = param.data
                try:
                    own_state[name].copy_(param)
                except RuntimeError as e:
                    raise e
        """
    ) == {("state_dict", "model")}
    assert _copied(
        """\
        def copy_in(net, sd):
            for k, v in list(sd.items()):
                net.state_dict()[k].copy_(v)
        """
    ) == {("sd", "net")}


def test_copies_of_other_values_or_into_other_models_are_not():
    for text in (
        # the value transformed on its way (a CPU copy)
        """\
        def f(model, sd):
            own = model.state_dict()
            for k, v in sd.items():
                v = v.cpu()
                own[k].copy_(v)
        """,
        # the receiver handed to a call first: it may come back elsewhere
        """\
        def f(model, sd):
            model = wrap(model)
            own = model.state_dict()
            for k, v in sd.items():
                own[k].copy_(v)
        """,
        """\
        def f(model, sd):
            own = model.state_dict()
            prepare(model)
            for k, v in sd.items():
                own[k].copy_(v)
        """,
        # the state rebound: not the caller's any more
        """\
        def f(model, sd):
            sd = convert(sd)
            own = model.state_dict()
            for k, v in sd.items():
                own[k].copy_(v)
        """,
        # a copy into a dict of no parameter's state
        """\
        def f(model, sd):
            own = {}
            for k, v in sd.items():
                own[k].copy_(v)
        """,
    ):
        assert _copied(text) == set(), text


def test_the_summary_keeps_the_copy_as_a_state_parameter():
    summary = summarise_text(
        textwrap.dedent(
            """\
            def load_state_dict(model, state_dict):
                own_state = model.state_dict()
                for name, param in state_dict.items():
                    own_state[name].copy_(param)
            """
        ),
        always=True,
    )
    assert summary is not None
    assert {f.name: f.state_params for f in summary.functions} == {"load_state_dict": (("state_dict", "model"),)}


# -- across modules -------------------------------------------------------------------

_UTIL = """\
    import torch
    def load_state_dict(model, state_dict):
        own_state = model.state_dict()
        for name, param in state_dict.items():
            own_state[name].copy_(param)
"""


def _ride(tmp_path, trainer: str):
    write_project(
        tmp_path,
        {
            "setup.py": "",
            "utils/__init__.py": "from .util import *\n",
            "utils/util.py": _UTIL,
            "base/__init__.py": "",
            "base/base_trainer.py": trainer,
        },
    )
    return tmp_path / "base" / "base_trainer.py"


def test_a_load_handed_to_a_star_exported_copying_helper_into_a_moved_alias_is_reported(tmp_path):
    trainer = """\
        import torch
        from utils import load_state_dict
        class BaseTrainer:
            def __init__(self, model, device):
                self.model = model
                self.model = self.model.to(device)
                self.real_model = self.model
                if device.index:
                    self.model = torch.nn.DataParallel(self.model)
            def _load_crt(self, path):
                state_dict = torch.load(path)["state_dict"]
                load_state_dict(self.real_model, state_dict)
    """
    assert finding_lines(_ride(tmp_path, trainer), "MEM701") == [11]


def test_the_copying_helper_into_a_model_not_known_on_a_device_stays_silent(tmp_path):
    trainer = """\
        import torch
        from utils import load_state_dict
        class BaseTrainer:
            def __init__(self, model, device):
                self.model = model
                self.real_model = self.model
                self.model = self.model.to(device)
            def _load_crt(self, path):
                state_dict = torch.load(path)["state_dict"]
                load_state_dict(self.real_model, state_dict)
    """
    assert finding_lines(_ride(tmp_path, trainer), "MEM701") == []


_TRAIN_UTILS = """\
    import torch
    def load_part_ckpt(model, filename):
        checkpoint = torch.load(filename)
        part = {k: v for k, v in checkpoint["model_state"].items() if k in model.state_dict()}
        state_dict = model.state_dict()
        state_dict.update(part)
        model.load_state_dict(state_dict)
"""


def _pointrcnn(tmp_path, train: str):
    write_project(tmp_path, {"setup.py": "", "train_utils.py": _TRAIN_UTILS, "train.py": train})
    return tmp_path / "train_utils.py"


def test_a_caller_handing_an_alias_of_its_moved_model_makes_the_drawn_load_reported(tmp_path):
    train = """\
        import torch
        import train_utils
        def main(args):
            model = build(args)
            if args.mgpus:
                model = torch.nn.DataParallel(model)
            model.cuda()
            pure_model = model.module if isinstance(model, torch.nn.DataParallel) else model
            train_utils.load_part_ckpt(pure_model, filename=args.rpn_ckpt)
    """
    assert finding_lines(_pointrcnn(tmp_path, train), "MEM701") == [3]


def test_a_caller_handing_an_alias_of_a_model_not_moved_stays_silent(tmp_path):
    train = """\
        import torch
        import train_utils
        def main(args):
            model = build(args)
            pure_model = model.module if isinstance(model, torch.nn.DataParallel) else model
            train_utils.load_part_ckpt(pure_model, filename=args.rpn_ckpt)
            model.cuda()
    """
    assert finding_lines(_pointrcnn(tmp_path, train), "MEM701") == []


# -- keys only CPU saves write (cpu_saves.py) ------------------------------------------


def _keys(text: str) -> frozenset[str]:
    module = cst.parse_module(textwrap.dedent(text))
    return cpu_saves(module, ImportTable(module)).cpu_keys


def test_keys_of_a_cpu_dict_beside_a_bare_optimizer_state_are_cpu_only():
    assert _keys(
        """\
        import torch
        def save(model, opt, field, p):
            torch.save({"model_state_dict": {k: v.cpu() for k, v in model.state_dict().items()}, "field": field}, p)
            torch.save(opt.state_dict(), p + "_optim")
        """
    ) == {"model_state_dict", "field"}


def test_a_key_also_saved_otherwise_or_a_save_of_unknown_shape_proves_nothing():
    assert _keys(
        """\
        import torch
        def save(model, opt, p):
            torch.save({"model": {k: v.cpu() for k, v in model.state_dict().items()}, "epoch": 1}, p)
            torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, p + ".full")
        """
    ) == {"epoch"}
    assert (
        _keys(
            """\
        import torch
        def save(model, state, p):
            torch.save({"model": {k: v.cpu() for k, v in model.state_dict().items()}}, p)
            torch.save(state, p + ".full")
        """
        )
        == frozenset()
    )
