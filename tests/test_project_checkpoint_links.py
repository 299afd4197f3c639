"""MEM701 links a load to a writer in another folder when an import ties
their modules (one process, one working folder): ``models/learner.py``
imports ``nets/net.py`` and saves ``"{}_{}.pkl".format(name, task)`` from a
``copy.deepcopy(net)`` moved ``.cpu()``; ``nets/net.py`` reads
``f"checkpoints/finetune_{name}_0.pkl"`` (the tenth batch's PyCIL
``utils/inc_net.py``). Every writer of the project that may write the file
must save CPU state; a writer no import ties to the load decides nothing."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

from memlint.project.checkpoint_links import linked_writers, may_write

# A module that moves a model: these projects are not CPU-only (cpu_projects.py would silence MEM701).
_ROOT = {
    "pyproject.toml": "[project]\nname = 'p'\n",
    "gpu.py": "import torch\n\n\ndef to_gpu(model):\n    return model.cuda()\n",
}

_NET = """
    import torch
    import torch.nn as nn
    class Net(nn.Module):
        def load_checkpoint(self, args):
            checkpoint_name = f"checkpoints/finetune_{args['name']}_0.pkl"
            infos = torch.load(checkpoint_name)
            self.fc.load_state_dict(infos["fc"])
            return infos["test_acc"]
"""

_LEARNER = """
    import copy
    import torch
    from nets.net import Net
    class Learner:
        def save_checkpoint(self, test_acc):
            name = f"checkpoints/finetune_{self.args['name']}"
            cpu = copy.deepcopy(self._network)
            cpu.cpu()
            save_dict = {"tasks": self._cur_task, "fc": cpu.fc.state_dict(), "test_acc": test_acc}
            torch.save(save_dict, "{}_{}.pkl".format(name, self._cur_task))
"""

_GPU_SAVE = """
    import torch
    def save(net, name, task):
        torch.save({"fc": net.fc.state_dict()}, f"{name}_{task}.pkl")
"""


def test_a_load_written_from_the_cpu_by_a_module_importing_it_is_silent(tmp_path):
    write_project(tmp_path, {**_ROOT, "nets/net.py": _NET, "models/learner.py": _LEARNER})
    assert finding_lines(tmp_path / "nets" / "net.py", "MEM701") == []


def test_a_load_written_by_a_module_it_imports_is_silent(tmp_path):
    net = _NET.replace("import torch.nn as nn\n", "import torch.nn as nn\n    from models import learner\n")
    write_project(
        tmp_path,
        {**_ROOT, "nets/net.py": net, "models/learner.py": _LEARNER.replace("    from nets.net import Net\n", "")},
    )
    assert finding_lines(tmp_path / "nets" / "net.py", "MEM701") == []


def test_a_writer_no_import_ties_to_the_load_decides_nothing(tmp_path):
    """Before this link, the answer for every load: another folder's writer."""
    learner = _LEARNER.replace("    from nets.net import Net\n", "")
    write_project(tmp_path, {**_ROOT, "nets/net.py": _NET, "models/learner.py": learner})
    assert finding_lines(tmp_path / "nets" / "net.py", "MEM701") == [7]


def test_a_gpu_writer_of_the_same_name_anywhere_keeps_the_finding(tmp_path):
    files = {**_ROOT, "nets/net.py": _NET, "models/learner.py": _LEARNER, "tools/save.py": _GPU_SAVE}
    write_project(tmp_path, files)
    assert finding_lines(tmp_path / "nets" / "net.py", "MEM701") == [7]


def test_a_linked_writer_saving_gpu_state_keeps_the_finding(tmp_path):
    learner = _LEARNER.replace("            cpu.cpu()\n", "")
    write_project(tmp_path, {**_ROOT, "nets/net.py": _NET, "models/learner.py": learner})
    assert finding_lines(tmp_path / "nets" / "net.py", "MEM701") == [7]


def test_a_folder_with_its_own_writer_is_not_linked_elsewhere(tmp_path):
    """The folder's own GPU writer decides; the linked CPU writer does not override it."""
    files = {**_ROOT, "nets/net.py": _NET, "models/learner.py": _LEARNER, "nets/save.py": _GPU_SAVE}
    write_project(tmp_path, files)
    assert finding_lines(tmp_path / "nets" / "net.py", "MEM701") == [7]


def test_linked_writers_needs_an_import_to_another_folder():
    savers = {("/p/models", "*_*.pkl"): [("/p/models/learner.py", True)], ("/p/x", "a.pth"): [("/p/x/a.py", False)]}
    imports = {"/p/models/learner.py": frozenset({"/p/nets/net.py"})}

    def imported(path: str) -> frozenset[str]:
        return imports.get(path, frozenset())

    assert linked_writers("/p/nets/net.py", "finetune_*_0.pkl", savers, imported) == [("/p/models/learner.py", True)]
    assert linked_writers("/p/nets/net.py", "best.pth", savers, imported) == []
    assert linked_writers("/p/other/net.py", "finetune_*_0.pkl", savers, imported) == []
    assert may_write("*_*.pkl", "finetune_*_0.pkl") and not may_write("*_*.pkl", "best.pth")
