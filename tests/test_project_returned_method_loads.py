"""MEM701 across modules: a method returning a ``torch.load`` without
``map_location`` (DropEdge's ``EarlyStopping.load_checkpoint``) whose every
call in another module, on an instance built there, loads the value into a
model moved to a device. Reported at the load; silent when one call loads it
into a model not known on a device, or the class's own module calls it."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

_STOPPER = """\
    import torch

    class EarlyStopping:
        def __init__(self, fname):
            self.fname = fname

        def save_checkpoint(self, model):
            torch.save(model.state_dict(), self.fname)

        def load_checkpoint(self):
            return torch.load(self.fname)
"""

_GPU_CALLER = """\
    import torch.nn as nn
    from earlystopping import EarlyStopping

    model = nn.Linear(4, 2)
    if use_cuda:
        model.cuda()
    stopper = EarlyStopping("best.pt")
    for epoch in range(10):
        stopper.save_checkpoint(model)
    model.load_state_dict(stopper.load_checkpoint())
"""


def _project(tmp_path, caller: str = _GPU_CALLER, stopper: str = _STOPPER, other: str = ""):
    files = {"setup.py": "", "earlystopping.py": stopper, "train.py": caller}
    if other:
        files["evaluate.py"] = other
    write_project(tmp_path, files)
    return tmp_path / "earlystopping.py"


def test_a_method_whose_every_caller_loads_into_a_gpu_model_is_reported_at_the_load(tmp_path):
    assert finding_lines(_project(tmp_path), "MEM701") == [11]


def test_the_message_names_the_method_and_its_callers(tmp_path):
    from memlint.lint.engine import lint_text
    from memlint.project.index import view_from_disk
    from memlint.rule.registry import all_rules

    path = _project(tmp_path)
    found = lint_text(path.read_text(), str(path), all_rules(), project=lambda: view_from_disk(str(path)))
    (finding,) = [f for f in found if f.code == "MEM701"]
    assert "EarlyStopping.load_checkpoint" in finding.message and "train.py:10" in finding.message
    assert finding.fix is None


def test_a_caller_loading_into_a_model_still_on_the_cpu_is_silent(tmp_path):
    caller = _GPU_CALLER.replace("    if use_cuda:\n        model.cuda()\n", "")
    assert finding_lines(_project(tmp_path, caller), "MEM701") == []


def test_one_caller_on_the_cpu_among_gpu_callers_keeps_it_silent(tmp_path):
    other = _GPU_CALLER.replace("    if use_cuda:\n        model.cuda()\n", "")
    assert finding_lines(_project(tmp_path, other=other), "MEM701") == []


def test_a_call_of_the_method_in_its_own_module_keeps_it_silent(tmp_path):
    stopper = _STOPPER + "\n        def best(self):\n            return self.load_checkpoint()\n"
    assert finding_lines(_project(tmp_path, stopper=stopper), "MEM701") == []


def test_a_method_loading_with_map_location_is_silent(tmp_path):
    stopper = _STOPPER.replace("torch.load(self.fname)", 'torch.load(self.fname, map_location="cpu")')
    assert finding_lines(_project(tmp_path, stopper=stopper), "MEM701") == []


def test_a_class_saving_cpu_tensors_only_is_silent(tmp_path):
    stopper = _STOPPER.replace("model.state_dict()", "{k: v.cpu() for k, v in model.state_dict().items()}")
    assert finding_lines(_project(tmp_path, stopper=stopper), "MEM701") == []


def test_a_call_not_tied_to_an_instance_in_the_calling_module_keeps_it_silent(tmp_path):
    # ``finish`` calls the method on a module-level instance from another
    # scope, on a model the summary does not see moved: the module's calls
    # of the name are not all claimed, so none is.
    caller = _GPU_CALLER + "\n    def finish(net):\n        net.load_state_dict(stopper.load_checkpoint())\n"
    assert finding_lines(_project(tmp_path, caller), "MEM701") == []
