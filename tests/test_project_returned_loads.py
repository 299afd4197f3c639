"""MEM701 across modules: a load helper's returned ``torch.load`` that a
caller in another module loads into a model it moved to a device (open-reid
``reid/utils/serialization.py``'s ``load_checkpoint``, fed to
``model.module.load_state_dict`` in ``examples/*.py``). Reported at the load,
in the helper's module; silent where the caller's model is still on the CPU
or the helper's module saves CPU tensors only."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

_HELPER = """\
    import os.path as osp
    import torch

    def save_checkpoint(state, fpath):
        torch.save(state, fpath)

    def load_checkpoint(fpath):
        if osp.isfile(fpath):
            checkpoint = torch.load(fpath)
            return checkpoint
        raise ValueError(fpath)
"""

_GPU_CALLER = """\
    import torch.nn as nn
    from reid.utils.serialization import load_checkpoint

    def main(path):
        model = nn.Linear(4, 2)
        model = nn.DataParallel(model).cuda()
        checkpoint = load_checkpoint(path)
        model.module.load_state_dict(checkpoint["state_dict"])
"""

_CPU_CALLER = """\
    import torch.nn as nn
    from reid.utils.serialization import load_checkpoint

    def main(path):
        model = nn.Linear(4, 2)
        checkpoint = load_checkpoint(path)
        model.load_state_dict(checkpoint["state_dict"])
        model = nn.DataParallel(model).cuda()
"""


def _project(tmp_path, caller: str, helper: str = _HELPER):
    write_project(
        tmp_path,
        {
            "setup.py": "",
            "reid/__init__.py": "",
            "reid/utils/__init__.py": "",
            "reid/utils/serialization.py": helper,
            "examples/train.py": caller,
        },
    )
    return tmp_path / "reid/utils/serialization.py"


def test_a_returned_load_fed_to_a_gpu_model_in_another_module_is_reported_at_the_load(tmp_path):
    assert finding_lines(_project(tmp_path, _GPU_CALLER), "MEM701") == [9]


def test_the_message_names_the_caller(tmp_path):
    from memlint.lint.engine import lint_text
    from memlint.project.index import view_from_disk
    from memlint.rule.registry import all_rules

    path = _project(tmp_path, _GPU_CALLER)
    found = lint_text(path.read_text(), str(path), all_rules(), project=lambda: view_from_disk(str(path)))
    (finding,) = [f for f in found if f.code == "MEM701"]
    assert "examples/train.py:7" in finding.message and finding.fix is None


def test_a_caller_loading_into_a_model_still_on_the_cpu_is_silent(tmp_path):
    assert finding_lines(_project(tmp_path, _CPU_CALLER), "MEM701") == []


def test_a_load_with_map_location_is_silent(tmp_path):
    helper = _HELPER.replace("torch.load(fpath)", 'torch.load(fpath, map_location="cpu")')
    assert finding_lines(_project(tmp_path, _GPU_CALLER, helper), "MEM701") == []


def test_a_helper_module_saving_cpu_tensors_only_is_silent(tmp_path):
    helper = _HELPER.replace("torch.save(state, fpath)", "torch.save({k: v.cpu() for k, v in state.items()}, fpath)")
    assert finding_lines(_project(tmp_path, _GPU_CALLER, helper), "MEM701") == []


def test_a_model_moved_to_the_cpu_is_not_on_a_gpu(tmp_path):
    caller = _GPU_CALLER.replace("nn.DataParallel(model).cuda()", 'model.to("cpu")')
    assert finding_lines(_project(tmp_path, caller), "MEM701") == []
