"""MEM701 in a load helper whose every caller hands it a model wrapped in
``DataParallel`` and not moved (issue 29, the sixteenth batch:
obman_train's ``modelio.load_checkpoint``): the device depends on the GPU
count, and the helper's checkpoint is freed before the caller moves the
model, so the load is not known to double the weights."""

from __future__ import annotations

import ast

from project_helpers import finding_lines, write_project

from memlint.project.wrapped_args import PASSED, WRAPPED, wrapped_args

_HELPER = """\
import torch


def load_checkpoint(model, resume_path, optimizer=None, strict=True):
    checkpoint = torch.load(resume_path)
    model.load_state_dict(checkpoint["state_dict"], strict=strict)
    if optimizer is not None:
        optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint["epoch"]
"""

_TRAIN = """\
import torch
import torch.nn as nn
import modelio


class HandNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)


def main(args):
    model = HandNet()
    params = filter(lambda p: p.requires_grad, model.parameters())
    if args.optimizer == "adam":
        optimizer = torch.optim.Adam(params, lr=args.lr)
    else:
        optimizer = torch.optim.SGD(params, lr=args.lr)
    model = torch.nn.DataParallel(model)
    if args.resume:
        modelio.load_checkpoint(model, args.resume, optimizer=optimizer)
    model.cuda()
"""

_RELOAD = """\
import torch
import modelio
from train import HandNet


def reload_model(path):
    model = HandNet()
    model = torch.nn.DataParallel(model)
    model.eval()
    modelio.load_checkpoint(model, resume_path=path, strict=False)
    return model
"""


def _calls(source: str) -> dict[int, tuple[tuple[str, str], ...]]:
    tree = ast.parse(source)
    fn = next(s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name in ("main", "reload_model"))
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and "load_checkpoint" in ast.unparse(n.func)]
    found = wrapped_args(fn, fn.body, calls)
    return {calls.index(c): found[id(c)] for c in calls if id(c) in found}


def test_a_wrapped_model_and_its_optimizer_are_proven_with_the_keys_passed():
    assert _calls(_TRAIN) == {
        0: (("0", WRAPPED), ("optimizer", WRAPPED), ("0", PASSED), ("1", PASSED), ("optimizer", PASSED))
    }
    assert _calls(_RELOAD)[0][0] == ("0", WRAPPED)


def test_a_model_moved_rebound_in_a_loop_or_wrapped_with_devices_is_not_proven():
    moved = _TRAIN.replace(
        "    model = torch.nn.DataParallel(model)\n", "    model = torch.nn.DataParallel(model)\n    model.cuda()\n"
    )
    before = _TRAIN.replace("    model = HandNet()\n", "    model = HandNet()\n    model.to(args.device)\n")
    devices = _TRAIN.replace("DataParallel(model)", "DataParallel(model, device_ids=[0])")
    handed = _TRAIN.replace("def main(args):\n    model = HandNet()\n", "def main(args, model):\n")
    looped = _TRAIN.replace(
        "    if args.resume:\n        modelio", "    for path in args.resume:\n        modelio"
    ).replace("args.resume, optimizer", "path, optimizer")
    for source in (moved, before, devices, handed, looped):
        assert _calls(source) == {}, source


def test_a_helper_every_caller_hands_a_wrapped_unmoved_model_loads_silently(tmp_path):
    files = {".git/HEAD": "", "modelio.py": _HELPER, "train.py": _TRAIN, "reload.py": _RELOAD}
    write_project(tmp_path, files)
    assert finding_lines(tmp_path / "modelio.py", "MEM701") == []
    # A caller wrapping a model it moved first: the helper loads beside a GPU copy.
    write_project(
        tmp_path, {"reload.py": _RELOAD.replace("    model = torch.nn", "    model.cuda()\n    model = torch.nn")}
    )
    assert finding_lines(tmp_path / "modelio.py", "MEM701") == [5]
    # An optimizer over another model's parameters: its state is not known on the CPU.
    write_project(
        tmp_path, {"reload.py": _RELOAD, "train.py": _TRAIN.replace("(params, lr", "(other.parameters(), lr")}
    )
    assert finding_lines(tmp_path / "modelio.py", "MEM701") == [5]
