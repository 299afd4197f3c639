"""MEM701 where the load's flow crosses a helper or a renaming loop.

- A loop copying a checkpoint's entries into a new dict inside ``try`` /
  ``except`` blocks, reading them back by key (univnet's inference.py:
  ``try: new[k] = sd["module." + k] except: new[k] = v``): state_flow.loop_copies.
- ``model = nn.DataParallel(model)`` after ``model = model.to(device)``:
  the caller's walk reads the wrapped value before the name is rebound
  (state_feeds.py), so the model is still on the GPU.
- A function of another module returning an unmapped load whose callers
  load it into models on the CPU and on a GPU (aster's ``load_checkpoint``):
  the GPU caller is reported at its call, naming the load
  (project/returned_loads.py, ProjectView.mixed_loaders), the helper silent.
"""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
from project_helpers import finding_lines, write_project

from memlint.analysis.training.state_flow import loop_copies
from memlint.project.returned_loads import unmapped_return
from memlint.project.state_feeds import gpu_state_calls


def _loop(source: str) -> cst.For:
    stmt = cst.parse_module(textwrap.dedent(source)).body[0]
    assert isinstance(stmt, cst.For)
    return stmt


def _copies(source: str) -> list[str]:
    return [name for name, _source in loop_copies(_loop(source))]


def test_a_loop_copies_entries_stored_in_try_blocks():
    source = """
        for k, v in sd.items():
            try:
                new[k] = sd["module." + k]
            except KeyError:
                new[k] = v
    """
    assert _copies(source) == ["new", "new"]


def test_a_loop_storing_other_values_copies_nothing():
    moved = """
        for k, v in sd.items():
            try:
                new[k] = sd["module." + k].cpu()
            except KeyError:
                new[k] = v.cpu()
    """
    other = """
        for k, v in sd.items():
            new[k] = defaults[k]
    """
    assert _copies(moved) == []
    assert _copies(other) == []


def _returned(source: str) -> int:
    tree = ast.parse(textwrap.dedent(source))
    fn = tree.body[-1]
    assert isinstance(fn, ast.FunctionDef)
    return unmapped_return(fn, {"torch": "torch"})


def test_a_function_returning_an_unmapped_load():
    assert _returned("def f(p):\n    return torch.load(p)\n") == 2
    named = """
        def f(p):
            if remote:
                ck = torch.load(p)
                return ck
            ck = torch.load(p, map_location="cpu")
            return ck
    """
    assert _returned(named) == 4


def test_a_function_returning_anything_else_says_nothing():
    assert _returned("def f(p):\n    return torch.load(p, map_location='cpu')\n") == 0
    assert _returned("def f(p):\n    ck = torch.load(p)\n    ck = fix(ck)\n    return ck\n") == 0
    assert _returned("def f(p):\n    if p:\n        return torch.load(p)\n    return {}\n") == 0
    assert _returned("def f(p):\n    def g():\n        return torch.load(p)\n    return g\n") == 0
    assert unmapped_return(ast.parse("def f(p):\n    return torch.load(p)\n").body[0], {}) == 0  # type: ignore[arg-type]


def test_a_wrapper_rebinding_the_moved_model_keeps_it_on_the_device():
    """Before, ``model = nn.DataParallel(model)`` dropped ``model`` from the
    moved names before reading its argument."""
    body = ast.parse(
        textwrap.dedent(
            """
            model = model.to(device)
            model = nn.DataParallel(model)
            checkpoint = load_checkpoint(path)
            model.module.load_state_dict(checkpoint["state_dict"])
            """
        )
    ).body
    load = body[2].value  # type: ignore[attr-defined]
    assert gpu_state_calls(body) == {id(load): {-1}}


_SERIALIZATION = """
    import torch
    def save_checkpoint(state, fpath):
        torch.save(state, fpath)
    def load_checkpoint(fpath):
        checkpoint = torch.load(fpath)
        return checkpoint
"""

_MAIN = """
    import torch
    import torch.nn as nn
    from lib.serialization import load_checkpoint
    def main(args):
        model = nn.Linear(4, 2)
        if args.resume:
            checkpoint = load_checkpoint(args.resume)
            model.load_state_dict(checkpoint["state_dict"])
        if args.cuda:
            device = torch.device("cuda")
            model = model.to(device)
            model = nn.DataParallel(model)
        train(model)
        checkpoint = load_checkpoint("model_best.pth.tar")
        model.module.load_state_dict(checkpoint["state_dict"])
"""


def test_a_gpu_caller_of_a_mixed_helper_is_reported_at_its_call(tmp_path):
    write_project(
        tmp_path,
        {"pyproject.toml": "", "lib/__init__.py": "", "lib/serialization.py": _SERIALIZATION, "main.py": _MAIN},
    )
    assert finding_lines(tmp_path / "main.py", "MEM701") == [15]
    # The helper alone does not say which caller doubles the weights.
    assert finding_lines(tmp_path / "lib" / "serialization.py", "MEM701") == []


def test_a_gpu_caller_of_a_helper_every_caller_loads_on_a_gpu_is_reported_at_the_helper(tmp_path):
    main = _MAIN.replace("            checkpoint = load_checkpoint(args.resume)\n", "            pass\n").replace(
        '            model.load_state_dict(checkpoint["state_dict"])\n', ""
    )
    write_project(
        tmp_path, {"pyproject.toml": "", "lib/__init__.py": "", "lib/serialization.py": _SERIALIZATION, "main.py": main}
    )
    assert finding_lines(tmp_path / "main.py", "MEM701") == []
    assert finding_lines(tmp_path / "lib" / "serialization.py", "MEM701") == [6]


def test_a_caller_of_a_mixed_helper_loading_into_a_model_not_moved_is_silent(tmp_path):
    main = _MAIN.replace("            model = model.to(device)\n", "").replace(
        "            model = nn.DataParallel(model)\n", "            model = nn.DataParallel(model)\n"
    )
    write_project(
        tmp_path, {"pyproject.toml": "", "lib/__init__.py": "", "lib/serialization.py": _SERIALIZATION, "main.py": main}
    )
    assert finding_lines(tmp_path / "main.py", "MEM701") == []
    assert finding_lines(tmp_path / "lib" / "serialization.py", "MEM701") == []


def test_a_mixed_helper_mapping_its_load_is_silent(tmp_path):
    mapped = _SERIALIZATION.replace("torch.load(fpath)", 'torch.load(fpath, map_location="cpu")')
    write_project(
        tmp_path, {"pyproject.toml": "", "lib/__init__.py": "", "lib/serialization.py": mapped, "main.py": _MAIN}
    )
    assert finding_lines(tmp_path / "main.py", "MEM701") == []


def test_a_mixed_helper_of_a_module_saving_cpu_state_is_silent(tmp_path):
    cpu = _SERIALIZATION.replace(
        "torch.save(state, fpath)", 'net.cpu()\n        torch.save(net.state_dict(), "model_best.pth.tar")'
    ).replace("def save_checkpoint(state, fpath):", "def save_checkpoint(net, fpath):")
    write_project(
        tmp_path, {"pyproject.toml": "", "lib/__init__.py": "", "lib/serialization.py": cpu, "main.py": _MAIN}
    )
    assert finding_lines(tmp_path / "main.py", "MEM701") == []
